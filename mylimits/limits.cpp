// limits.cpp - builds the mylimits report and words the pending reasons (see limits.hpp).
#include "limits.hpp"

#include <algorithm>
#include <cctype>
#include <ctime>

#include "allot/pending_reason.hpp"
#include "allot/units.hpp"

namespace allot::limits {
namespace {

std::string gpus_word(uint64_t n)
{
    return std::to_string(n) + (n == 1 ? " GPU" : " GPUs");
}

const QosFacts* find_qos(const Facts& facts, const std::string& name)
{
    for (const auto& q : facts.qos)
        if (q.name == name) return &q;
    return nullptr;
}

bool contains(const std::vector<std::string>& list, const std::string& item)
{
    return std::find(list.begin(), list.end(), item) != list.end();
}

// The account's view and the tier's view a job falls under, for the reason texts.
const AccountView* account_view(const Report& report, const std::string& account)
{
    for (const auto& a : report.accounts)
        if (a.account == account) return &a;
    return nullptr;
}

const TierView* tier_view(const Report& report, const std::string& account, const std::string& qos)
{
    const AccountView* a = account_view(report, account);
    if (!a) return nullptr;
    for (const auto& t : a->tiers)
        if (t.qos == qos) return &t;
    return nullptr;
}

std::string in_use(const std::optional<uint64_t>& n, const std::string& who)
{
    if (!n) return "usage of " + who + " not visible";
    return std::to_string(*n) + " in use by " + who;
}

std::string format_time(int64_t t)
{
    if (t <= 0) return "an unknown time";
    std::time_t tt = static_cast<std::time_t>(t);
    std::tm tm{};
    if (!localtime_r(&tt, &tm)) return "an unknown time";
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
    return buf;
}

// The join hint starts a sentence in the reason texts.
std::string sentence(std::string text)
{
    if (!text.empty() && text[0] >= 'a' && text[0] <= 'z')
        text[0] = static_cast<char>(text[0] - 32);
    return text;
}

bool is_pending_state(const std::string& s)
{
    return s == "PENDING" || s == "REQUEUED";
}
bool is_running_state(const std::string& s)
{
    return s == "RUNNING" || s == "SUSPENDED" || s == "COMPLETING" || s == "CONFIGURING";
}

}  // namespace

Tier tier_of_qos(const Config& config, const std::string& qos)
{
    if (qos.empty()) return Tier::None;
    if (!config.tiers.general.qos.empty() && qos == config.tiers.general.qos) return Tier::General;
    if (!config.tiers.spot.qos.empty() && qos == config.tiers.spot.qos) return Tier::Spot;
    for (const auto& team : config.teams)
        if (team.qos == qos) return Tier::Project;
    return Tier::None;
}

uint64_t gpus_in_tres_string(const std::string& tres)
{
    if (tres.size() > 4096) return 0;
    uint64_t untyped = 0, typed = 0;
    bool have_untyped = false;
    size_t pos = 0;
    while (pos <= tres.size()) {
        size_t end = tres.find(',', pos);
        if (end == std::string::npos) end = tres.size();
        std::string item = tres.substr(pos, end - pos);
        pos = end + 1;
        // Normalise "gres:gpu:2" / "gpu:2" / "gres/gpu:a100=2" / "gres/gpu=2".
        std::string name, count;
        if (auto eq = item.find('='); eq != std::string::npos) {
            name = item.substr(0, eq);
            count = item.substr(eq + 1);
        } else if (auto colon = item.rfind(':'); colon != std::string::npos) {
            name = item.substr(0, colon);
            count = item.substr(colon + 1);
        } else {
            if (end == tres.size()) break;
            continue;
        }
        for (auto& c : name)
            if (c == ':') c = '/';
        if (name.rfind("gres/", 0) == 0) name = name.substr(5);
        if (name == "gpu" || name.rfind("gpu/", 0) == 0) {
            auto n = parse_count(count, 1000000);
            if (n) {
                if (name == "gpu") {
                    untyped += *n;
                    have_untyped = true;
                } else {
                    typed += *n;
                }
            }
        }
        if (end == tres.size()) break;
    }
    // slurmctld lists the untyped total and then each type; never count twice.
    return have_untyped ? untyped : typed;
}

std::optional<uint64_t> tres_id_value(const std::string& tres, uint32_t id)
{
    if (tres.size() > 4096) return std::nullopt;
    size_t pos = 0;
    while (pos < tres.size()) {
        size_t end = tres.find(',', pos);
        if (end == std::string::npos) end = tres.size();
        const std::string item = tres.substr(pos, end - pos);
        pos = end + 1;
        const size_t eq = item.find('=');
        if (eq == std::string::npos) continue;
        auto key = parse_count(item.substr(0, eq), UINT32_MAX);
        if (!key || *key != id) continue;
        auto value = parse_count(item.substr(eq + 1));
        // 0xfffffffffffffffe/f are NO_VAL64/INFINITE64: no limit.
        if (!value || *value >= 0xfffffffffffffffeULL) return std::nullopt;
        return value;
    }
    return std::nullopt;
}

Report build_report(const Facts& facts, const Config& config)
{
    Report report;
    report.cluster = config.cluster.name;
    report.user = facts.user;
    report.join_hint = config.cluster.join_hint;
    report.support = config.cluster.support;
    report.storage = facts.storage;
    report.storage_skipped = facts.storage_skipped;
    report.notes = facts.notes;
    report.generated_at = facts.now;

    for (const auto& assoc : facts.assocs) {
        AccountView av;
        av.account = assoc.account;
        av.is_default = assoc.account == facts.user.default_account;
        const TeamConfig* team = config.team_by_account(assoc.account);
        av.is_team = team != nullptr;
        if (team) av.description = team->description;
        av.grp_gpus = assoc.grp_gpus;
        av.account_gpus_in_use = assoc.account_gpus_in_use;
        av.zero_gpu = assoc.account == config.cluster.default_account ||
                      (assoc.grp_gpus && *assoc.grp_gpus == 0);

        auto add_tier = [&](Tier tier, const std::string& qos_name) {
            if (qos_name.empty()) return;
            TierView tv;
            tv.tier = tier;
            tv.qos = qos_name;
            tv.allowed = contains(assoc.qos, qos_name);
            const QosFacts* q = find_qos(facts, qos_name);
            tv.qos_exists = q != nullptr;
            if (q) {
                tv.cap_gpus = q->grp_gpus;
                tv.team_cap_gpus = q->max_gpus_per_account;
                tv.user_cap_gpus = q->max_gpus_per_user;
                tv.max_wall_minutes = q->max_wall_minutes;
                // Preemptible when some other QOS may preempt this one.
                for (const auto& other : facts.qos)
                    if (contains(other.preempt, qos_name)) tv.preemptible = true;
                if (q->usage_known) {
                    tv.pool_in_use = q->gpus_in_use.value_or(0);
                    auto it = q->gpus_in_use_by_account.find(assoc.account);
                    tv.team_in_use = it == q->gpus_in_use_by_account.end() ? 0 : it->second;
                    // A project QOS belongs to one team: the whole QOS is the team's.
                    if (tier == Tier::Project)
                        tv.team_in_use = std::max(*tv.team_in_use, *tv.pool_in_use);
                }
            } else if (tier == Tier::Spot) {
                tv.preemptible = true;
            }
            for (const auto& job : facts.jobs) {
                if (job.account != assoc.account || job.qos != qos_name) continue;
                if (is_running_state(job.state)) {
                    ++tv.running_jobs;
                    tv.running_gpus += job.gpus;
                    tv.user_in_use += job.gpus;
                } else if (is_pending_state(job.state)) {
                    ++tv.pending_jobs;
                    tv.pending_gpus += job.gpus;
                }
            }
            // Usage counters can lag a few seconds; the user's own jobs are a floor.
            if (tv.team_in_use && *tv.team_in_use < tv.user_in_use) tv.team_in_use = tv.user_in_use;
            if (tv.pool_in_use && tv.team_in_use && *tv.pool_in_use < *tv.team_in_use)
                tv.pool_in_use = tv.team_in_use;
            av.tiers.push_back(std::move(tv));
        };
        if (team) add_tier(Tier::Project, team->qos.empty() ? team->account : team->qos);
        add_tier(Tier::General, config.tiers.general.qos);
        add_tier(Tier::Spot, config.tiers.spot.qos);
        // QOS of the association that are no tier of allot (site extras) are left out.
        report.accounts.push_back(std::move(av));
    }
    // Default account first, then teams, then the rest, each alphabetically.
    std::stable_sort(report.accounts.begin(), report.accounts.end(),
                     [](const AccountView& a, const AccountView& b) {
                         if (a.is_default != b.is_default) return a.is_default;
                         if (a.is_team != b.is_team) return a.is_team;
                         return a.account < b.account;
                     });
    report.only_default_account =
        !report.accounts.empty() && std::all_of(report.accounts.begin(), report.accounts.end(),
                                                [](const AccountView& a) { return a.zero_gpu; });
    if (report.accounts.empty() && facts.user.known_to_slurm) report.only_default_account = false;

    report.jobs.reserve(facts.jobs.size());
    for (const auto& job : facts.jobs) {
        JobView jv;
        jv.pending = is_pending_state(job.state);
        jv.running = is_running_state(job.state);
        // Finished jobs linger in slurmctld for MinJobAge; they use and wait for nothing.
        if (!jv.pending && !jv.running) continue;
        jv.job = job;
        jv.tier = tier_of_qos(config, job.qos);
        jv.requeued_after_preemption =
            job.restarts > 0 && (jv.tier == Tier::Spot || job.preempt_time > 0);
        report.jobs.push_back(std::move(jv));
    }
    const auto running_first = [](const JobView& a, const JobView& b) {
        if (a.running != b.running) return a.running;
        return a.job.job_id < b.job.job_id;
    };
    // slurmctld lists jobs by id and the running ones are mostly the oldest, so the
    // order is usually right already: checking is one pass, sorting thousands of
    // JobViews is many moves.
    if (!std::is_sorted(report.jobs.begin(), report.jobs.end(), running_first))
        std::stable_sort(report.jobs.begin(), report.jobs.end(), running_first);
    for (auto& jv : report.jobs)
        if (jv.pending) jv.explanation = explain_reason(jv, report);
    return report;
}

std::string explain_reason(const JobView& jv, const Report& report)
{
    const JobFacts& job = jv.job;
    const std::string& r = job.reason;
    // Empty views stand in for a job outside the user's associations (all nullopt).
    static const TierView kNoTier;
    static const AccountView kNoAccount;
    const TierView* tvp = tier_view(report, job.account, job.qos);
    const AccountView* avp = account_view(report, job.account);
    const TierView& t = tvp ? *tvp : kNoTier;
    const AccountView& a = avp ? *avp : kNoAccount;
    const std::string tier_word = jv.tier == Tier::Project   ? "project"
                                  : jv.tier == Tier::General ? "general"
                                  : jv.tier == Tier::Spot    ? "spot"
                                                             : "QOS " + job.qos;
    auto cap_text = [](const std::optional<uint64_t>& cap) {
        return cap ? gpus_word(*cap) : std::string("(limit not visible)");
    };

    const PendingCause cause = pending_cause(r);
    if (cause == PendingCause::TierGroupCap) {
        const auto& cap = t.cap_gpus;
        if (jv.tier == Tier::Project)
            return "waiting for your team's project cap of " + cap_text(cap) + "; " +
                   in_use(t.team_in_use, "your team") +
                   ". It starts when your team's running jobs free GPUs";
        if (jv.tier == Tier::General)
            return "waiting for the shared general pool of " + cap_text(cap) + "; " +
                   in_use(t.pool_in_use, "all teams");
        return "waiting for the group GPU limit of " + tier_word + " (" + cap_text(cap) + "); " +
               in_use(t.pool_in_use, "everyone in it");
    }
    if (cause == PendingCause::TeamBurstCap) {
        const auto& cap = t.team_cap_gpus;
        return "waiting for your team's " + tier_word + " burst cap of " + cap_text(cap) + "; " +
               in_use(t.team_in_use, "your team in " + tier_word);
    }
    if (cause == PendingCause::UserCap) {
        const auto& cap = t.user_cap_gpus;
        return "waiting for your own " + tier_word + " limit of " + cap_text(cap) + " per user; " +
               std::to_string(t.user_in_use) + " in use by you";
    }
    if (cause == PendingCause::JobTooLarge)
        return "asks for " + gpus_word(job.gpus) + ", more than one job may use in " + tier_word +
               "; it will never start: cancel it (scancel " + job.display_id +
               ") and resubmit with fewer GPUs";
    if (cause == PendingCause::AccountGpuLimit) {
        if (a.zero_gpu)
            return "account " + job.account +
                   " has no GPU allocation (0 GPUs); this job will never start. " +
                   sentence(report.join_hint) + ", then cancel it (scancel " + job.display_id +
                   ") and resubmit with your team's account";
        return "waiting for account " + job.account + "'s GPU limit of " + cap_text(a.grp_gpus) +
               "; " + in_use(a.account_gpus_in_use, "the account");
    }
    if (cause == PendingCause::TimeLimit) {
        std::string limit =
            t.max_wall_minutes ? format_minutes(*t.max_wall_minutes) : std::string("the limit");
        std::string asked = job.time_limit_minutes == kUnlimitedMinutes ? "UNLIMITED"
                            : job.time_limit_minutes ? format_minutes(job.time_limit_minutes)
                                                     : std::string("its time limit");
        const char* whose = r == "PartitionTimeLimit" ? "the partition's" : "the tier's";
        return "asks for " + asked + ", more than " + whose + " limit of " + limit +
               "; it will never start: scontrol update jobid=" + job.display_id +
               " TimeLimit=" + limit;
    }
    if (cause == PendingCause::BeginTime) {
        if (jv.requeued_after_preemption || job.restarts > 0)
            return "requeued after preemption (restart " + std::to_string(job.restarts) +
                   "); Slurm holds a requeued job briefly, eligible again at " +
                   format_time(job.eligible_time);
        return "asked to start no earlier than " + format_time(job.eligible_time);
    }
    if (cause == PendingCause::Priority)
        return "queued behind jobs of higher priority that are waiting for the same GPUs; your "
               "caps are not the problem";
    if (cause == PendingCause::Resources)
        return "next in line; waiting for nodes or GPUs to become free" +
               (job.start_time > 0 ? ", expected start " + format_time(job.start_time)
                                   : std::string()) +
               (jv.tier == Tier::Project ? " (spot jobs on them are preempted for it)"
                                         : std::string());
    if (cause == PendingCause::Dependency)
        return "waiting for the jobs it depends on (--dependency) to finish";
    if (cause == PendingCause::DependencyNeverMet)
        return "its dependency can never be met; it will never start: scancel " + job.display_id;
    if (cause == PendingCause::HeldByUser) return "held by you: scontrol release " + job.display_id;
    if (cause == PendingCause::HeldByAdmin)
        return "held by an administrator; ask them to release it";
    if (cause == PendingCause::HeldAfterLaunchFailure)
        return "held after failing to launch repeatedly; check the job's output, then "
               "scontrol release " +
               job.display_id;
    if (cause == PendingCause::NodeDown)
        return "a node it needs is down, drained or reserved; it starts when the node returns";
    if (cause == PendingCause::PartitionDown)
        return "partition " + job.partition + " is not accepting jobs right now";
    if (cause == PendingCause::Reservation) return "waiting for its reservation to start";
    if (cause == PendingCause::InvalidQos || cause == PendingCause::InvalidAccount)
        return "Slurm does not accept the " +
               std::string(cause == PendingCause::InvalidQos ? "QOS " + job.qos
                                                             : "account " + job.account) +
               " for you; it will never start: scancel " + job.display_id;
    if (cause == PendingCause::QosNotAllowed)
        return "you may not use QOS " + job.qos + " in account " + job.account +
               "; resubmit with --qos of a tier listed above";
    if (cause == PendingCause::JobCountLimit)
        return "the number of jobs you or your team may run at once in " + tier_word +
               " is reached; it starts when one finishes";
    if (cause == PendingCause::OtherLimit)
        return "a CPU, memory or time limit of " + tier_word + " or account " + job.account +
               " is reached; GPUs are not the limit";
    if (cause == PendingCause::None) return "about to be considered by the scheduler";
    return "Slurm reason " + r + " (see `man squeue`, JOB REASON CODES)";
}

}  // namespace allot::limits
