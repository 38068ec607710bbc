// policy_bench.cpp - nanoseconds per policy decision (allot::decide_submit).
//
// The same job mix as policy_bench.lua runs through the Lua peer, so run.sh can print
// the two side by side. Usage: policy_bench <allot.yaml> [iterations]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "allot/config.hpp"
#include "allot/policy.hpp"

namespace {

class MapLimits : public allot::LimitsView {
public:
    std::map<std::string, allot::QosLimits, std::less<>> qos_by_name;
    std::optional<allot::QosLimits> qos(std::string_view name) const override
    {
        auto it = qos_by_name.find(name);
        if (it == qos_by_name.end()) return std::nullopt;
        return it->second;
    }
};

}  // namespace

int main(int argc, char** argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: policy_bench <allot.yaml> [iterations]\n");
        return 2;
    }
    auto load = allot::load_config(argv[1]);
    if (!load.ok()) {
        std::fprintf(stderr, "%s", load.errors.joined().c_str());
        return 1;
    }
    const long iterations = argc > 2 ? std::strtol(argv[2], nullptr, 10) : 1000000;
    MapLimits limits;
    limits.qos_by_name["team-a"] = {8, std::nullopt, std::nullopt};
    limits.qos_by_name["team-b"] = {4, std::nullopt, std::nullopt};
    limits.qos_by_name["general"] = {8, 4, 3 * 1440};
    limits.qos_by_name["spot"] = {std::nullopt, std::nullopt, 1440};

    // The mix: project GPU job, general job, spot job, rejected default-account job.
    allot::JobRequest jobs[4];
    jobs[0].account = "team-a";
    jobs[0].gpus.per_job = "gres:gpu:2";
    jobs[1] = jobs[0];
    jobs[1].qos = "general";
    jobs[2] = jobs[0];
    jobs[2].qos = "spot";
    jobs[3].account = "default";
    jobs[3].gpus.per_node = "gres:gpu:1";
    long accepted = 0;
    const auto start = std::chrono::steady_clock::now();
    for (long i = 0; i < iterations; ++i)
        accepted += allot::decide_submit(jobs[i & 3], *load.config, limits).accepted;
    const double ns =
        std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
    std::printf("%.0f\n", ns / static_cast<double>(iterations));
    return accepted == iterations - iterations / 4 ? 0 : 1;
}
