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
};

struct JobRequest {
    uint32_t uid = 0;
    std::string account;  // effective account: explicit -A or the user's default
    bool account_explicit = false;
    std::string qos;        // empty: not given
    std::string partition;  // empty: default partition
    GpuFields gpus;
    bool mem_set = false;          // --mem or --mem-per-cpu
    bool mem_per_gpu_set = false;  // --mem-per-gpu
    bool cpus_set = false;         // -c/--cpus-per-task
    bool cpus_per_gpu_set = false;
    std::optional<uint32_t> time_minutes;  // --time (kUnlimitedMinutes for INFINITE)
    bool signal_set = false;               // --signal given
    bool requeue = false;
};

enum class Tier { None, Project, General, Spot };

// Which rule rejected a job; shims map it to their host's error code.
enum class Rule { None, ZeroGpuAccount, Walltime, GpuCap, ForeignQos, BadGpuRequest };
const char* tier_name(Tier tier);

// Changes the shim writes back into the job description.
struct JobChanges {
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
        return qos || time_minutes || mem_per_gpu_mb || cpus_per_gpu || set_requeue || batch_signal;
    }
};

struct Decision {
    bool accepted = true;
    Rule rule = Rule::None;  // set when rejected
    std::string message;     // rejection text, or empty
    Tier tier = Tier::None;
    uint64_t gpus = 0;
    JobChanges changes;
};

Decision decide_submit(const JobRequest& job, const Config& config, const LimitsView& limits);

// `current` is the job as slurmctld has it; `update` holds only the fields the
// update sets (qos, account, time, GPU strings). Operators bypass the shim.
Decision decide_modify(const JobRequest& current, const JobRequest& update, const Config& config,
                       const LimitsView& limits);

}  // namespace allot
