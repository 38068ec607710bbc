// slurm_snapshot.cpp - take_snapshot() through libslurm (see slurm_snapshot.hpp).
//
// Every message Slurm hands back is owned by a move-only holder freed with
// Slurm's own destructor; only plain copies leave this file.
#include "slurm_snapshot.hpp"

#include <ctime>
#include <memory>
#include <mutex>

#include "allot/gpu_request.hpp"
#include "compat/slurm_job.hpp"
#include "compat/slurm_msg.hpp"

namespace allot::exporter {
namespace {

using slurm_compat::JobMsgPtr;
using slurm_compat::NodeMsgPtr;
using PartMsgPtr = slurm_compat::PartitionMsgPtr;

std::string str(const char* s)
{
    return s ? s : "";
}

void init_once()
{
    static std::once_flag once;
    std::call_once(once, [] { slurm_init(nullptr); });
}

Error ctld_down(const char* what)
{
    const int e = slurm_compat::last_errno();
    return make_error(Errc::SlurmctldDown, std::string("cannot reach slurmctld: ") + what + ": " +
                                               (e ? slurm_strerror(e) : "no answer"));
}

// GPUs of a job: allocated once it ran, requested while pending, the --gpus*
// options as a last resort (some releases leave tres_req_str empty).
uint64_t job_gpus(const slurm_job_info_t& j, bool pending)
{
    auto tres = [](const char* s) -> uint64_t {
        if (!s) return 0;
        auto n = gpus_in_tres(s);
        return n.ok() ? n.value() : 0;
    };
    uint64_t n = pending ? 0 : tres(j.tres_alloc_str);
    if (!n) n = tres(j.tres_req_str);
    if (n) return n;
    auto c = count_gpus(slurm_compat::gpu_fields_of(j));
    return c.ok() ? c.value().total : 0;
}

JobSample job_sample(const slurm_job_info_t& j)
{
    JobSample s;
    s.job_id = j.job_id;
    const uint32_t base = j.job_state & JOB_STATE_BASE;
    s.state = str(slurm_job_state_string(base));
    s.reason = str(slurm_compat::job_reason_string(static_cast<job_state_reason>(j.state_reason)));
    s.account = str(j.account);
    s.qos = str(j.qos);
    s.partition = str(j.partition);
    s.gpus = job_gpus(j, base == JOB_PENDING);
    s.restarts = j.restart_cnt;
    s.start_time = base == JOB_PENDING ? 0 : j.start_time;
    s.end_time = j.end_time;
    s.submit_time = j.submit_time;
    return s;
}

std::vector<std::string> split_commas(const std::string& s)
{
    std::vector<std::string> out;
    size_t start = 0;
    while (start <= s.size()) {
        size_t comma = s.find(',', start);
        if (comma == std::string::npos) comma = s.size();
        if (comma > start) out.push_back(s.substr(start, comma - start));
        start = comma + 1;
    }
    return out;
}

// GPUs allocated on a node: what scontrol shows as AllocTRES; GresUsed, which slurmctld
// leaves empty, is the fallback.
uint64_t node_gpus_allocated(const node_info_t& n)
{
    uint64_t gpus = 0;
    if (auto g = gpus_in_tres(slurm_compat::node_alloc_tres(n)); g.ok()) gpus = g.value();
    return gpus ? gpus : gpus_in_gres(str(n.gres_used));
}

NodeSample node_sample(const node_info_t& n)
{
    NodeSample s;
    s.name = str(n.name);
    s.partitions = split_commas(str(n.partitions));
    s.gpus = gpus_in_gres(str(n.gres));
    s.gpus_allocated = node_gpus_allocated(n);
    const uint32_t base = n.node_state & NODE_STATE_BASE;
    s.down = base == NODE_STATE_DOWN || base == NODE_STATE_FUTURE ||
             (n.node_state & (NODE_STATE_DRAIN | NODE_STATE_FAIL | NODE_STATE_NO_RESPOND));
    return s;
}

}  // namespace

Result<Snapshot> take_snapshot()
{
    init_once();
    Snapshot snap;
    snap.taken_at = std::time(nullptr);
    job_info_msg_t* jobs_raw = nullptr;
    if (slurm_load_jobs(0, &jobs_raw, SHOW_ALL) != SLURM_SUCCESS)
        return ctld_down("slurm_load_jobs");
    JobMsgPtr jobs(jobs_raw);
    node_info_msg_t* nodes_raw = nullptr;
    if (slurm_load_node(0, &nodes_raw, SHOW_ALL) != SLURM_SUCCESS)
        return ctld_down("slurm_load_node");
    NodeMsgPtr nodes(nodes_raw);
    // slurmctld does not send a node's partitions: the client fills them in, as sinfo does.
    partition_info_msg_t* parts_raw = nullptr;
    if (slurm_load_partitions(0, &parts_raw, SHOW_ALL) != SLURM_SUCCESS)
        return ctld_down("slurm_load_partitions");
    PartMsgPtr parts(parts_raw);
    slurm_populate_node_partitions(nodes.get(), parts.get());
    snap.jobs.reserve(jobs->record_count);
    for (uint32_t i = 0; i < jobs->record_count; ++i)
        snap.jobs.push_back(job_sample(jobs->job_array[i]));
    for (uint32_t i = 0; i < nodes->record_count; ++i)
        if (nodes->node_array[i].name) snap.nodes.push_back(node_sample(nodes->node_array[i]));
    return snap;
}

}  // namespace allot::exporter
