// pending_reason.hpp - Slurm's pending-reason names (squeue %r) sorted into the few causes
// the policy's users care about, and the short words for each.
//
// mylimits explains each cause in a sentence with the numbers that matter; allot-exporter
// exports the short words as a bounded `reason` label. Both sort by this one table, so a
// dashboard's "project cap" is the job mylimits says waits for "your team's project cap".
#pragma once

#include <string>

#include "allot/policy.hpp"

namespace allot {

enum class PendingCause {
    TierGroupCap,     // QOSGrpGRES: the project cap, the general pool, a QOS's group limit
    TeamBurstCap,     // MaxGRESPerAccount: a team's share of the general tier
    UserCap,          // MaxGRESPerUser
    JobTooLarge,      // MaxGRESPerJob: can never start
    AccountGpuLimit,  // AssocGrpGRES: the account's own GPU limit (0 for the default account)
    TimeLimit,        // above the tier's or partition's wall-time maximum: can never start
    BeginTime,        // not eligible yet (Slurm's requeue hold after a preemption too)
    Priority,
    Resources,
    Dependency,
    DependencyNeverMet,
    HeldByUser,
    HeldByAdmin,
    HeldAfterLaunchFailure,
    NodeDown,
    PartitionDown,
    Reservation,
    InvalidQos,
    InvalidAccount,
    QosNotAllowed,
    JobCountLimit,  // jobs per user/team/QOS, not GPUs
    OtherLimit,     // a CPU, memory or time limit, not GPUs
    None,           // not yet considered by the scheduler
    Other,          // a reason name this table does not know
};

// The cause of Slurm's reason name ("QOSGrpGRES", "Priority", ...); Other when unknown.
PendingCause pending_cause(const std::string& slurm_reason);

// The cause in a few bounded words ("project cap", "general pool", "team burst cap", ...).
// A group cap is worded after the job's tier; BeginTime after whether Slurm requeued it.
std::string pending_label(PendingCause cause, Tier tier, bool requeued);

}  // namespace allot
