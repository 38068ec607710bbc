// clang-format off
// fuzz-sources: lib/policy.cpp lib/gpu_request.cpp lib/units.cpp lib/result.cpp plugins/job_submit/node_table.cpp
// clang-format on
//
// job_desc_fuzz.cpp - what job_submit/allot decides on any job a user can send: the GPU
// count over every field (TRES strings, node/task/socket counts, ranges, --ntasks-per-gpu,
// --exclusive), the policy on submit and on update (merged job), and the node shape read
// from slurm.conf text. Properties: nothing crashes or overflows; a rejection carries a
// policy code and a message starting "allot: "; an accepted job never gets a time limit
// above its tier's maximum; an accepted spot job is requeueable; a per-GPU default never
// exceeds the node's share; a node shape's per-GPU share fits its largest node.
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>

#include "allot/policy.hpp"
#include "allot/units.hpp"
#include "node_table.hpp"

using namespace allot;

namespace {

// Reads the fuzz input as a sequence of numbers and strings.
struct Reader {
    const uint8_t* data;
    size_t size;
    uint32_t number(uint32_t limit)
    {
        uint32_t v = 0;
        for (int i = 0; i < 4 && size; ++i, ++data, --size) v = (v << 8) | *data;
        return limit ? v % limit : v;
    }
    bool flag() { return number(2) == 1; }
    std::string text()
    {
        const size_t n = std::min<size_t>(number(64), size);
        std::string s(reinterpret_cast<const char*>(data), n);
        data += n;
        size -= n;
        return s;
    }
    std::optional<uint32_t> count()
    {
        const uint32_t kind = number(4);
        if (kind == 0) return std::nullopt;
        if (kind == 1) return number(0);  // anything, UINT32_MAX included
        return number(40);
    }
};

const char* kTres[] = {"gres:gpu:4",
                       "gres/gpu:h100:2",
                       "gpu:2,gpu:9",
                       "gres:gpu:a:1,gres:gpu:b:2",
                       "gres:shard:3",
                       "gres:gpu",
                       ""};

std::string tres(Reader& r)
{
    const uint32_t pick = r.number(9);
    if (pick < 7) return kTres[pick];
    return r.text();  // raw bytes, as a libslurm client may send
}

GpuFields gpu_fields(Reader& r)
{
    GpuFields f;
    f.per_job = tres(r);
    f.per_node = tres(r);
    f.per_task = tres(r);
    f.per_socket = tres(r);
    f.nodes = r.count();
    f.max_nodes = r.count();
    f.tasks = r.count();
    f.tasks_per_node = r.count();
    f.sockets_per_node = r.count();
    f.tasks_per_socket = r.count();
    f.cpus_per_task = r.count();
    f.tasks_per_gpu = r.count();
    f.exclusive = r.flag();
    return f;
}

JobRequest job(Reader& r)
{
    static const char* accounts[] = {"team-a", "TEAM-A", "default", "team-b", "other", ""};
    static const char* qoses[] = {"", "general", "SPOT", "spot", "proj-b", "team-a", "odd"};
    static const char* partitions[] = {"", "main", "main,main", "cpu,main", "cpu", "MAIN"};
    JobRequest j;
    j.account = accounts[r.number(6)];
    j.qos = r.flag() ? std::string(qoses[r.number(7)]) : r.text();
    j.partition = partitions[r.number(6)];
    j.gpus = gpu_fields(r);
    j.mem_set = r.flag();
    j.mem_per_gpu_set = r.flag();
    j.cpus_set = r.flag();
    j.cpus_per_gpu_set = r.flag();
    if (r.flag()) j.time_minutes = r.flag() ? kUnlimitedMinutes : r.number(10000);
    j.signal_set = r.flag();
    j.requeue_set = r.flag();
    j.requeue = r.flag();
    if (r.flag()) j.user_teams = {"team-a"};
    if (r.flag()) j.het_component = r.number(4);
    j.het_gpus_before = r.number(20);
    return j;
}

class Limits : public LimitsView {
public:
    std::map<std::string, QosLimits, std::less<>> qos_by_name;
    NodeShape shape;
    std::optional<QosLimits> qos(std::string_view name) const override
    {
        auto it = qos_by_name.find(name);
        if (it == qos_by_name.end()) return std::nullopt;
        return it->second;
    }
    NodeShape node_shape() const override { return shape; }
};

TeamConfig team(const char* account, const char* qos, uint32_t gpus)
{
    TeamConfig t;
    t.group = account;
    t.account = account;
    t.qos = qos;
    t.gpus = gpus;
    return t;
}

// The lab's policy, built in place (the YAML reader is tested on its own).
const Config& config()
{
    static const Config* c = [] {
        auto* config = new Config;
        config->cluster.partition = "main";
        config->cluster.default_account = "default";
        config->cluster.mem_per_gpu_mb = 8192;
        config->cluster.cpus_per_gpu = 2;
        config->tiers.general.default_minutes = 1440;
        config->tiers.spot.default_minutes = 240;
        config->tiers.spot.grace_seconds = 600;
        config->teams = {team("team-a", "team-a", 8), team("team-b", "proj-b", 4)};
        return config;
    }();
    return *c;
}

// `requeue`: whether the job (as merged, for an update) already asked for requeue.
void check(const Decision& d, const JobRequest& j, bool requeue, const Limits& limits)
{
    if (!d.accepted) {
        if (d.error.code.category() != policy::category() || d.message.rfind("allot: ", 0) != 0)
            std::abort();
        return;
    }
    if (d.tier == Tier::Spot && !d.changes.set_requeue && !requeue) std::abort();
    if (d.changes.time_minutes && d.tier != Tier::None) {
        const auto qos = limits.qos(d.qos);
        if (qos && qos->max_wall_minutes && *d.changes.time_minutes > *qos->max_wall_minutes)
            std::abort();
    }
    const NodeShape& node = j.gpus.node.gpus || j.gpus.node.cpus ? j.gpus.node : limits.shape;
    if (d.changes.mem_per_gpu_mb && node.mem_per_gpu_mb &&
        *d.changes.mem_per_gpu_mb > node.mem_per_gpu_mb)
        std::abort();
    if (d.changes.cpus_per_gpu && node.cpus_per_gpu && *d.changes.cpus_per_gpu > node.cpus_per_gpu)
        std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    Reader r{data, size};
    Limits limits;
    limits.qos_by_name["team-a"] = {8, std::nullopt, std::nullopt};
    limits.qos_by_name["proj-b"] = {4, std::nullopt, std::nullopt};
    limits.qos_by_name["general"] = {8, 4, r.flag() ? 600u : 3 * 1440u};
    limits.qos_by_name["spot"] = {std::nullopt, std::nullopt, 1440};
    limits.shape.gpus = r.number(17);
    limits.shape.cpus = r.number(129);
    limits.shape.cpus_per_gpu = r.number(9);
    limits.shape.mem_per_gpu_mb = r.number(20000);

    const JobRequest submitted = job(r);
    const auto count = count_gpus(submitted.gpus, limits.shape);
    if (count && submitted.gpus.exclusive && limits.shape.gpus &&
        count.value().total < limits.shape.gpus)
        std::abort();  // a whole node holds all its GPUs
    check(decide_submit(submitted, config(), limits), submitted, submitted.requeue, limits);

    const JobRequest update = job(r);
    check(decide_modify(submitted, update, config(), limits), update,
          update.requeue_set ? update.requeue : submitted.requeue, limits);

    const std::string conf = r.text() + "\nNodeName=" + r.text() + " CPUs=" + r.text() +
                             " Gres=" + r.text() + "\nPartitionName=main Nodes=" + r.text();
    const NodeShape shape =
        job_submit::node_shape_from_conf(conf, "main", job_submit::expand_hostlist);
    if (shape.gpus && shape.cpus_per_gpu > shape.cpus) std::abort();
    return 0;
}
