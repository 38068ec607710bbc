// limits.hpp - the model behind mylimits: what one user may use and why their jobs wait.
//
// mylimits fetches plain facts from Slurm (the user record, associations, QOS
// limits and live usage, the user's own jobs) and from quota sources, and
// build_report() turns them, with allot.yaml, into a Report: teams,
// tiers with caps and usage, jobs with their pending reason in words, and
// storage. Everything here is pure so that every number and sentence is
// unit-tested (tests/limits_test.cpp); the Slurm side is slurm_query.cpp.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "allot/config.hpp"
#include "allot/policy.hpp"
#include "quota.hpp"

namespace allot::limits {

// ---------------------------------------------------------------- inputs (as Slurm has them)

struct UserFacts {
    std::string name;
    uint32_t uid = 0;
    std::string default_account;  // empty when Slurm has no record of the user
    bool known_to_slurm = true;
};

// One association of the user (user + account), with the account's own GPU limit.
struct AssocFacts {
    std::string account;
    std::vector<std::string> qos;      // QOS the user may request in this account
    std::string default_qos;           // empty: none set
    std::optional<uint64_t> grp_gpus;  // account GrpTRES=gres/gpu=N (nullopt: none)
    // GPUs running in the whole account (all QOS), when slurmctld shows it.
    std::optional<uint64_t> account_gpus_in_use;
};

struct QosFacts {
    std::string name;
    std::optional<uint64_t> grp_gpus;              // GrpTRES=gres/gpu=N
    std::optional<uint64_t> max_gpus_per_account;  // MaxTRESPerAccount=gres/gpu=N
    std::optional<uint64_t> max_gpus_per_user;     // MaxTRESPerUser=gres/gpu=N
    std::optional<uint64_t> max_gpus_per_job;      // MaxTRESPerJob=gres/gpu=N
    std::optional<uint32_t> max_wall_minutes;      // MaxWall
    std::vector<std::string> preempt;              // Preempt= (QOS this one may preempt)
    bool preempt_requeue = false;                  // PreemptMode includes REQUEUE
    std::optional<uint32_t> grace_seconds;         // GraceTime
    // Live usage from slurmctld's QOS cache; nullopt when not available.
    std::optional<uint64_t> gpus_in_use;
    std::map<std::string, uint64_t> gpus_in_use_by_account;  // used_limits per account
    bool usage_known = false;
};

struct JobFacts {
    uint32_t job_id = 0;
    std::string display_id;  // "1234" or "1230_4" for array tasks
    std::string name;
    std::string state;   // Slurm's base state name: PENDING, RUNNING, SUSPENDED, ...
    std::string reason;  // Slurm's reason name: QOSGrpGRES, Priority, ... ("None" when none)
    std::string account;
    std::string qos;
    std::string partition;
    uint64_t gpus = 0;
    uint32_t restarts = 0;            // requeues (restart_cnt)
    int64_t submit_time = 0;          // unix seconds, 0: unknown
    int64_t start_time = 0;           // expected start when pending (0: unknown)
    int64_t eligible_time = 0;        // when a requeued job becomes eligible again
    int64_t preempt_time = 0;         // when the job was last preempted (0: never/unknown)
    uint32_t time_limit_minutes = 0;  // kUnlimitedMinutes for UNLIMITED, 0: not set
};

struct Facts {
    UserFacts user;
    std::vector<AssocFacts> assocs;
    std::vector<QosFacts> qos;
    std::vector<JobFacts> jobs;
    std::vector<quota::SourceResult> storage;
    std::vector<std::string> notes;  // partial-data remarks from the fetcher
    int64_t now = 0;                 // unix seconds
    bool storage_skipped = false;    // mylimits --no-quota
};

// ---------------------------------------------------------------- the report

struct TierView {
    Tier tier = Tier::None;
    std::string qos;
    bool allowed = false;  // QOS is in the association's list
    bool qos_exists = true;
    std::optional<uint64_t> cap_gpus;       // project share or general pool (GrpTRES)
    std::optional<uint64_t> team_cap_gpus;  // general burst cap (MaxTRESPerAccount)
    std::optional<uint64_t> user_cap_gpus;  // MaxTRESPerUser, when the site set one
    std::optional<uint32_t> max_wall_minutes;
    bool preemptible = false;
    std::optional<uint64_t> pool_in_use;  // all teams (the QOS as a whole)
    std::optional<uint64_t> team_in_use;  // this account in this QOS
    uint64_t user_in_use = 0;             // the user's running jobs in this account+QOS
    uint32_t running_jobs = 0, pending_jobs = 0;
    uint64_t running_gpus = 0, pending_gpus = 0;
};

struct AccountView {
    std::string account;
    bool is_default = false;
    bool zero_gpu = false;  // the cluster's default (landing) account or GrpTRES gpu=0
    bool is_team = false;   // named in allot.yaml teams[]
    std::string description;
    std::optional<uint64_t> grp_gpus;
    std::optional<uint64_t> account_gpus_in_use;
    std::vector<TierView> tiers;  // project, general, spot (those that exist)
};

struct JobView {
    JobFacts job;
    Tier tier = Tier::None;
    bool pending = false;
    bool running = false;
    bool requeued_after_preemption = false;
    std::string explanation;  // the pending reason in words (empty for running jobs)
};

struct Report {
    std::string cluster;
    UserFacts user;
    std::vector<AccountView> accounts;
    bool only_default_account = false;  // in no team: zero GPUs until assigned
    std::string join_hint;
    std::string support;  // cluster.support: who to contact ("" when not configured)
    std::vector<JobView> jobs;
    std::vector<quota::SourceResult> storage;
    bool storage_skipped = false;
    std::vector<std::string> notes;
    int64_t generated_at = 0;
};

Report build_report(const Facts& facts, const Config& config);

// The tier a QOS belongs to under this config.
Tier tier_of_qos(const Config& config, const std::string& qos);

// The pending reason of `job` in plain words, with the numbers that matter.
// `report` supplies caps and usage; the Slurm name is kept by the renderers.
std::string explain_reason(const JobView& job, const Report& report);

// GPUs in a TRES string as slurmctld prints it ("cpu=4,mem=8G,gres/gpu=2",
// "gres/gpu:a100=2", 22.05's "gres:gpu:2" or "gpu:2"); 0 when none or malformed.
uint64_t gpus_in_tres_string(const std::string& tres);

// The GPU count in a TRES string keyed by TRES id, as slurmdbd stores limits
// ("1=16,1001=8"); nullopt when the id is absent or the value means "no limit"
// (Slurm's INFINITE64/NO_VAL64) or is malformed.
std::optional<uint64_t> tres_id_value(const std::string& tres, uint32_t id);

}  // namespace allot::limits
