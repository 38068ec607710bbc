// pending_reason.cpp - the pending-reason table (see allot/pending_reason.hpp).
#include "allot/pending_reason.hpp"

#include <initializer_list>

namespace allot {

namespace {

struct Name {
    const char* slurm;
    PendingCause cause;
};

// Exact names first; the prefixes below catch the families of per-resource limits.
constexpr Name kExact[] = {
    {"QOSGrpGRES", PendingCause::TierGroupCap},
    {"QOSGrpGRESRunMinutes", PendingCause::TierGroupCap},
    {"QOSMaxGRESPerAccount", PendingCause::TeamBurstCap},
    {"MaxGRESPerAccount", PendingCause::TeamBurstCap},
    {"QOSMaxGRESPerUser", PendingCause::UserCap},
    {"MaxGRESPerUser", PendingCause::UserCap},
    {"QOSMaxGRESPerJob", PendingCause::JobTooLarge},
    {"MaxGRESPerJob", PendingCause::JobTooLarge},
    {"AssocGrpGRES", PendingCause::AccountGpuLimit},
    {"AssocGrpGRESRunMinutes", PendingCause::AccountGpuLimit},
    {"QOSMaxWallDurationPerJobLimit", PendingCause::TimeLimit},
    {"PartitionTimeLimit", PendingCause::TimeLimit},
    {"AssocMaxWallDurationPerJobLimit", PendingCause::TimeLimit},
    {"BeginTime", PendingCause::BeginTime},
    {"Priority", PendingCause::Priority},
    {"Resources", PendingCause::Resources},
    {"Dependency", PendingCause::Dependency},
    {"DependencyNeverSatisfied", PendingCause::DependencyNeverMet},
    {"JobHeldUser", PendingCause::HeldByUser},
    {"JobHeldAdmin", PendingCause::HeldByAdmin},
    {"launch_failed_requeued_held", PendingCause::HeldAfterLaunchFailure},
    {"JobHoldMaxRequeue", PendingCause::HeldAfterLaunchFailure},
    {"ReqNodeNotAvail", PendingCause::NodeDown},
    {"NodeDown", PendingCause::NodeDown},
    {"PartitionDown", PendingCause::PartitionDown},
    {"PartitionInactive", PendingCause::PartitionDown},
    {"Reservation", PendingCause::Reservation},
    {"InvalidQOS", PendingCause::InvalidQos},
    {"InvalidAccount", PendingCause::InvalidAccount},
    {"QOSNotAllowed", PendingCause::QosNotAllowed},
    {"None", PendingCause::None},
    {"", PendingCause::None},
};

bool starts_with_any(const std::string& s, std::initializer_list<const char*> prefixes)
{
    for (const char* p : prefixes)
        if (s.rfind(p, 0) == 0) return true;
    return false;
}

}  // namespace

PendingCause pending_cause(const std::string& r)
{
    for (const Name& n : kExact)
        if (r == n.slurm) return n.cause;
    // Job-count limits before the general limit families they share a prefix with.
    if (starts_with_any(r, {"QOSMaxJobsPerUser", "QOSMaxSubmitJob", "AssocMaxJobs", "AssocGrpJobs",
                            "QOSGrpJobs"}))
        return PendingCause::JobCountLimit;
    if (starts_with_any(r, {"QOSGrp", "AssocGrp", "QOSMax", "AssocMax", "MaxCpu", "MaxMem"}))
        return PendingCause::OtherLimit;
    return PendingCause::Other;
}

std::string pending_label(PendingCause cause, Tier tier, bool requeued)
{
    switch (cause) {
        case PendingCause::TierGroupCap:
            return tier == Tier::Project   ? "project cap"
                   : tier == Tier::General ? "general pool"
                                           : "group limit";
        case PendingCause::TeamBurstCap: return "team burst cap";
        case PendingCause::UserCap: return "user limit";
        case PendingCause::JobTooLarge: return "more GPUs than a job may use";
        case PendingCause::AccountGpuLimit: return "account GPU limit";
        case PendingCause::TimeLimit: return "time limit above the maximum";
        case PendingCause::BeginTime: return requeued ? "requeued after preemption" : "begin time";
        case PendingCause::Priority: return "priority";
        case PendingCause::Resources: return "waiting for nodes or GPUs";
        case PendingCause::Dependency: return "dependency";
        case PendingCause::DependencyNeverMet: return "dependency never met";
        case PendingCause::HeldByUser: return "held by user";
        case PendingCause::HeldByAdmin: return "held by an administrator";
        case PendingCause::HeldAfterLaunchFailure: return "held after failing to launch";
        case PendingCause::NodeDown: return "node down";
        case PendingCause::PartitionDown: return "partition not accepting jobs";
        case PendingCause::Reservation: return "reservation";
        case PendingCause::InvalidQos:
        case PendingCause::InvalidAccount:
        case PendingCause::QosNotAllowed: return "not allowed";
        case PendingCause::JobCountLimit: return "job count limit";
        case PendingCause::OtherLimit: return "cpu, memory or time limit";
        case PendingCause::None: return "none";
        case PendingCause::Other: break;
    }
    return "other";
}

}  // namespace allot
