// policy_bench.cpp - nanoseconds per policy decision (allot::decide_submit).
//
// The same job mix as policy_bench.lua runs through the Lua peer, so run.sh can print
// the two side by side; both read the process CPU clock (Lua's os.clock is clock(3)).
// Usage: policy_bench <allot.yaml> [iterations]
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include <time.h>

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

double cpu_seconds()
{
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

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
    const double start = cpu_seconds();
    for (long i = 0; i < iterations; ++i)
        accepted += allot::decide_submit(jobs[i & 3], *load.config, limits).accepted;
    const double ns = (cpu_seconds() - start) * 1e9;
    std::printf("%.0f\n", ns / static_cast<double>(iterations));
    return accepted == iterations - iterations / 4 ? 0 : 1;
}
