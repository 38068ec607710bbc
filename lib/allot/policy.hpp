// policy.hpp - the allocation policy, as a pure function.
//
// decide_submit() takes a job request (already translated from Slurm's
// job_desc by the plugin shim), the loaded config and a read-only view of the
// caps Slurm holds for the tier QOS, and returns accept-with-changes or a
// rejection whose message tells a researcher what to do. decide_modify() does
// the same for `scontrol update`. Nothing here touches Slurm, files or the
// clock, so every rule is unit-tested (lib/tests/policy_test.cpp) and timed
// (bench/policy-decision).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "allot/config.hpp"
#include "allot/gpu_request.hpp"

namespace allot {

// Caps as Slurm's QOS cache has them; nullopt means "no limit set".
struct QosLimits {
    std::optional<uint64_t> grp_gpus;              // GrpTRES=gres/gpu=N
    std::optional<uint64_t> max_gpus_per_account;  // MaxTRESPerAccount=gres/gpu=N
    std::optional<uint32_t> max_wall_minutes;      // MaxWall
};

// Read-only view of slurmctld's QOS cache (the plugin) or a fake (tests).
class LimitsView {
public:
    virtual ~LimitsView() = default;
    virtual std::optional<QosLimits> qos(std::string_view name) const = 0;
    // The governed partition's nodes as slurmctld's node table has them.
    virtual NodeShape node_shape() const { return {}; }
};

struct JobRequest {
    uint32_t uid = 0;
    std::string account;  // effective account: explicit -A or the user's default
    bool account_explicit = false;
    std::string qos;        // empty: not given
    std::string partition;  // empty: default partition; else one name or a comma list
    GpuFields gpus;
    bool mem_set = false;          // --mem or --mem-per-cpu
    bool mem_per_gpu_set = false;  // --mem-per-gpu
    bool cpus_set = false;         // -c/--cpus-per-task
    bool cpus_per_gpu_set = false;
    std::optional<uint32_t> time_minutes;  // --time (kUnlimitedMinutes for INFINITE)
    bool signal_set = false;               // --signal given
    bool requeue = false;
    bool requeue_set = false;  // --requeue/--no-requeue or Requeue= given
    // Allot team accounts the user has an association in (for the default-account message).
    std::vector<std::string> user_teams;
    // Heterogeneous jobs: this component's offset, and the GPUs the earlier
    // components asked for in each QOS (the plugin keeps the tally).
    std::optional<uint32_t> het_component;
    uint64_t het_gpus_before = 0;
};

enum class Tier { None, Project, General, Spot };
const char* tier_name(Tier tier);

// Changes the shim writes back into the job description.
struct JobChanges {
    std::optional<std::string> account;  // canonical (lower-case) spelling
    std::optional<std::string> qos;
    std::optional<uint32_t> time_minutes;
    std::optional<uint64_t> mem_per_gpu_mb;
    std::optional<uint32_t> cpus_per_gpu;
    bool set_requeue = false;
    struct Signal {
        std::string name;  // e.g. "TERM"
        uint32_t seconds;  // before the end of the grace window
    };
    std::optional<Signal> batch_signal;  // --signal=B:<name>@<seconds>
    bool any() const
    {
        return account || qos || time_minutes || mem_per_gpu_mb || cpus_per_gpu || set_requeue ||
               batch_signal;
    }
};

struct Decision {
    bool accepted = true;
    Error error;          // when rejected: its policy::Errc code (the text is `message`)
    std::string message;  // rejection text, or empty
    Tier tier = Tier::None;
    std::string qos;  // the tier's QOS the job runs in (canonical name), when governed
    uint64_t gpus = 0;
    JobChanges changes;
};

Decision decide_submit(const JobRequest& job, const Config& config, const LimitsView& limits);

// `current` is the job as slurmctld has it; `update` holds only the fields the
// update sets (qos, account, partition, time, requeue, GPU, node and task
// fields). The merged job is decided as if it were submitted anew: a job moved
// into a tier gets that tier's time default and limit and requeue; a move into
// spot needs a --signal the job already has (Slurm sets none at an update).
// Operators bypass the shim.
Decision decide_modify(const JobRequest& current, const JobRequest& update, const Config& config,
                       const LimitsView& limits);

// Names as slurmctld will hold them: accounts lower-case (slurmctld lowers
// them after job_submit), QOS compared without case (assoc_mgr does).
std::string lower(std::string_view s);
bool same_qos(std::string_view a, std::string_view b);
// Whether a partition request ("" = the default partition, or "a,b") can put
// the job in `governed`: a list is governed if any member is.
bool partition_governed(std::string_view request, std::string_view governed);

}  // namespace allot

// Why a job was refused; the plugin maps each kind to its host's error code.
namespace allot::policy {
enum class Errc {
    Ok = 0,
    ZeroGpuAccount,  // GPUs in the zero-GPU default account
    Walltime,        // --time above the tier's maximum
    GpuCap,          // more GPUs than the tier could ever run
    ForeignQos,      // another team's project QOS
    BadGpuRequest,   // a GPU request that cannot be read
    SpotRequeue,     // Requeue=0 on a spot job
    SpotSignal,      // moved into spot by an update, with no --signal
};
}  // namespace allot::policy
ALLOT_ERROR_AREA(allot::policy, Errc);
