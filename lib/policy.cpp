// policy.cpp - the allocation policy rules (see policy.hpp and docs/policy.md).
#include "allot/policy.hpp"

#include <algorithm>

#include "allot/units.hpp"

namespace allot {

namespace policy {
namespace {
constexpr const char* kTexts[] = {
    "success",
    "GPU job in the zero-GPU default account",
    "time limit above the tier's maximum",
    "more GPUs than the tier could ever run",
    "another team's project QOS",
    "unreadable GPU request",
    "spot jobs must stay requeueable",
    "a job moved into spot would have no checkpoint signal",
};
}  // namespace

const std::error_category& category() noexcept
{
    static const ErrorArea area("policy", kTexts);
    return area;
}
}  // namespace policy

const char* tier_name(Tier tier)
{
    switch (tier) {
        case Tier::Project: return "project";
        case Tier::General: return "general";
        case Tier::Spot: return "spot";
        case Tier::None: break;
    }
    return "none";
}

namespace {
// ASCII only, as Slurm's xstrtolower and xstrcasecmp in the C locale.
char ascii_lower(char c)
{
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}
}  // namespace

std::string lower(std::string_view s)
{
    std::string out(s);
    for (char& c : out) c = ascii_lower(c);
    return out;
}

bool same_qos(std::string_view a, std::string_view b)
{
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
    return true;
}

bool partition_governed(std::string_view request, std::string_view governed)
{
    if (governed.empty() || request.empty()) return true;
    size_t start = 0;
    while (start <= request.size()) {
        size_t end = request.find(',', start);
        if (end == std::string_view::npos) end = request.size();
        if (request.substr(start, end - start) == governed) return true;
        start = end + 1;
    }
    return false;
}

namespace {

using policy::Errc;

// Account names: slurmctld stores them in lower case, so any spelling names the same one.
bool same_name(std::string_view a, std::string_view b)
{
    return same_qos(a, b);
}

// Turns `d` into a rejection; the GPUs and tier it counted stay for the caller's log.
// The text lives in d.message (error carries the code the plugin decides on).
bool reject(Decision& d, Errc code, std::string message)
{
    d.accepted = false;
    d.error = Error(code, std::string());
    d.message = std::move(message);
    return false;
}

std::string gpus_text(uint64_t n)
{
    return std::to_string(n) + (n == 1 ? " GPU" : " GPUs");
}

// "heterogeneous job component 1: " when the job is one, so the user knows which.
std::string component_prefix(const JobRequest& job)
{
    if (!job.het_component) return {};
    return "heterogeneous job component " + std::to_string(*job.het_component) + ": ";
}

std::string allot_prefix(const JobRequest& job)
{
    return "allot: " + component_prefix(job);
}

// Which tier a QOS name means for this account; sets `other_team` when the
// QOS is some other team's project QOS.
Tier tier_of(std::string_view qos, const TeamConfig& team, const Config& config,
             const TeamConfig** other_team)
{
    *other_team = nullptr;
    if (qos.empty() || same_qos(qos, team.qos)) return Tier::Project;
    if (same_qos(qos, config.tiers.general.qos)) return Tier::General;
    if (same_qos(qos, config.tiers.spot.qos)) return Tier::Spot;
    for (const auto& other : config.teams)
        if (same_qos(qos, other.qos)) *other_team = &other;
    return Tier::None;
}

const TierConfig& tier_config(Tier tier, const Config& config)
{
    switch (tier) {
        case Tier::General: return config.tiers.general;
        case Tier::Spot: return config.tiers.spot;
        default: return config.tiers.project;
    }
}

// Max walltime: Slurm's QOS MaxWall when set (syncd writes it), else the config.
std::optional<uint32_t> max_minutes(Tier tier, const std::optional<QosLimits>& qos,
                                    const Config& config)
{
    if (qos && qos->max_wall_minutes) return qos->max_wall_minutes;
    const uint32_t configured = tier_config(tier, config).max_minutes;
    if (configured) return configured;
    return std::nullopt;
}

// The config's default time, whether the config keeps it as a number (0: none)
// or as an optional.
[[maybe_unused]] std::optional<uint32_t> configured_minutes(uint32_t minutes)
{
    if (minutes) return minutes;
    return std::nullopt;
}
[[maybe_unused]] std::optional<uint32_t> configured_minutes(const std::optional<uint32_t>& minutes)
{
    if (minutes && *minutes) return minutes;
    return std::nullopt;
}

// The tier's default time, never above what the QOS really allows: a default
// the user did not choose must not turn into a rejection.
std::optional<uint32_t> default_minutes(Tier tier, const std::optional<uint32_t>& max,
                                        const Config& config)
{
    const auto configured = configured_minutes(tier_config(tier, config).default_minutes);
    if (!configured) return max;
    if (max && *configured > *max) return max;
    return configured;
}

std::string alternatives(Tier tier, const Config& config, const std::optional<QosLimits>& general)
{
    std::string out;
    if (tier == Tier::Project) {
        std::string cap;
        if (general && general->max_gpus_per_account)
            cap = " (up to " + gpus_text(*general->max_gpus_per_account) + " per team)";
        out += " or burst with --qos=" + config.tiers.general.qos + cap;
    }
    if (tier != Tier::Spot)
        out += " or run preemptible with --qos=" + config.tiers.spot.qos +
               " (no GPU cap, may be requeued)";
    return out;
}

// The whole-job GPU cap of a tier, from Slurm's cache: a job above it could never start.
std::optional<uint64_t> gpu_cap(Tier tier, const std::optional<QosLimits>& qos)
{
    if (!qos || tier == Tier::Spot) return std::nullopt;
    std::optional<uint64_t> cap = qos->grp_gpus;
    if (tier == Tier::General && qos->max_gpus_per_account &&
        (!cap || *qos->max_gpus_per_account < *cap))
        cap = qos->max_gpus_per_account;
    return cap;
}

std::string team_options(const std::vector<std::string>& teams)
{
    std::string out;
    for (size_t i = 0; i < teams.size(); ++i) {
        if (i) out += i + 1 == teams.size() ? " or " : ", ";
        out += "-A " + teams[i];
    }
    return out;
}

void default_account_rule(const JobRequest& job, const Config& config, Decision& d)
{
    if (d.gpus == 0) return;
    if (!job.user_teams.empty()) {
        reject(d, Errc::ZeroGpuAccount,
               allot_prefix(job) + "account '" + job.account +
                   "' has no GPU allocation (0 GPUs) and this job asks for " + gpus_text(d.gpus) +
                   "; charge one of your teams instead: " + team_options(job.user_teams));
        return;
    }
    reject(d, Errc::ZeroGpuAccount,
           allot_prefix(job) + "you are not yet in a team with a GPU allocation (account '" +
               job.account + "' has 0 GPUs); " + config.cluster.join_hint +
               ", then submit with -A <team>");
}

struct Context {
    Context(const Config& c, const LimitsView& l) : config(c), limits(l) {}
    const Config& config;
    const LimitsView& limits;
    bool submit = true;              // a new job (defaults apply) rather than an update
    bool tier_changed = false;       // an update moved the job into another tier or account
    bool update_sets_time = false;   // the update itself names a time limit
    bool update_no_requeue = false;  // the update sets Requeue=0
    NodeShape node;                  // the partition's nodes (the request's, else Slurm's)
};

// Walltime: default when missing (or when an update moved the job into a tier
// and its old limit does not fit there), reject above the tier's maximum.
bool apply_walltime(const JobRequest& job, const Context& ctx,
                    const std::optional<QosLimits>& qos_limits, Decision& d)
{
    const auto max = max_minutes(d.tier, qos_limits, ctx.config);
    const auto fallback = default_minutes(d.tier, max, ctx.config);
    std::optional<uint32_t> time = job.time_minutes;
    const bool defaulted = !time && (ctx.submit || ctx.tier_changed);
    const bool moved_over =
        ctx.tier_changed && !ctx.update_sets_time && time && max && *time > *max;
    if ((defaulted || moved_over) && fallback) {
        time = fallback;
        d.changes.time_minutes = time;
    }
    if (max && time && *time > *max)
        return reject(d, Errc::Walltime,
                      allot_prefix(job) + tier_name(d.tier) + " jobs may run at most " +
                          format_minutes(*max) + " but this job asks for " + format_minutes(*time) +
                          "; use --time=" + format_minutes(*max) + " or less" +
                          (d.tier == Tier::Spot ? "" : ", or split the work into shorter jobs"));
    return true;
}

// A job bigger than its tier's whole cap would pend forever: reject it now. A
// heterogeneous job is one job: its components in the same QOS add up.
bool apply_gpu_cap(const JobRequest& job, const TeamConfig& team, const Context& ctx,
                   const std::optional<QosLimits>& qos_limits, Decision& d)
{
    const auto cap = gpu_cap(d.tier, qos_limits);
    const uint64_t whole = d.gpus + job.het_gpus_before;
    if (!cap || whole <= *cap) return true;
    const auto general =
        d.tier == Tier::Project ? ctx.limits.qos(ctx.config.tiers.general.qos) : qos_limits;
    const std::string what = d.tier == Tier::Project
                                 ? "team " + team.account + "'s project share is " + gpus_text(*cap)
                                 : "the " + ctx.config.tiers.general.qos + " tier allows " +
                                       gpus_text(*cap) + " per team";
    const std::string asks = job.het_component && job.het_gpus_before
                                 ? "this heterogeneous job asks for " + gpus_text(whole) +
                                       " in all (" + gpus_text(d.gpus) + " in this component)"
                                 : "this job asks for " + gpus_text(d.gpus);
    return reject(d, Errc::GpuCap,
                  allot_prefix(job) + asks + " but " + what +
                      " running at once, so it could never start; ask for " + std::to_string(*cap) +
                      " or fewer" + alternatives(d.tier, ctx.config, general));
}

// Per-GPU defaults so teams sharing a node do not starve each other, never
// more than a node of the partition can give per GPU.
void apply_per_gpu_defaults(const JobRequest& job, const Context& ctx, Decision& d)
{
    if (!ctx.submit || d.gpus == 0) return;
    const NodeShape& node = ctx.node;
    const ClusterConfig& cluster = ctx.config.cluster;
    if (cluster.mem_per_gpu_mb && !job.mem_set && !job.mem_per_gpu_set) {
        uint64_t mem = cluster.mem_per_gpu_mb;
        if (node.mem_per_gpu_mb && mem > node.mem_per_gpu_mb) mem = node.mem_per_gpu_mb;
        d.changes.mem_per_gpu_mb = mem;
    }
    if (cluster.cpus_per_gpu && !job.cpus_set && !job.cpus_per_gpu_set) {
        uint32_t cpus = cluster.cpus_per_gpu;
        if (node.cpus_per_gpu && cpus > node.cpus_per_gpu) cpus = node.cpus_per_gpu;
        d.changes.cpus_per_gpu = cpus;
    }
}

// Spot jobs are requeued on preemption and their batch script hears the grace window.
void apply_spot(const JobRequest& job, const Context& ctx, Decision& d)
{
    if (d.tier != Tier::Spot) return;
    if (ctx.update_no_requeue) {
        reject(d, Errc::SpotRequeue,
               allot_prefix(job) + "spot jobs are requeued when preempted, so Requeue=0 " +
                   "is not allowed in --qos=" + ctx.config.tiers.spot.qos +
                   "; move the job to another tier first");
        return;
    }
    // slurmctld sets a job's --signal only at submission (its update ignores it): a job
    // moved here without one would be preempted with no warning, breaking spot's promise.
    if (!ctx.submit && !job.signal_set) {
        const auto& spot = ctx.config.tiers.spot;
        const std::string signal =
            "--signal=B:" + spot.signal + "@" + std::to_string(spot.grace_seconds);
        reject(d, Errc::SpotSignal,
               allot_prefix(job) + "a job moved into --qos=" + spot.qos +
                   " cannot get spot's checkpoint signal (Slurm sets --signal only at " +
                   "submission); submit it with --qos=" + spot.qos + ", or with " + signal +
                   " before moving it");
        return;
    }
    if (!job.requeue || ctx.tier_changed) d.changes.set_requeue = true;
    if (!job.signal_set)
        d.changes.batch_signal =
            JobChanges::Signal{ctx.config.tiers.spot.signal, ctx.config.tiers.spot.grace_seconds};
}

bool has_upper(std::string_view s)
{
    for (char c : s)
        if (c >= 'A' && c <= 'Z') return true;
    return false;
}

// Rules shared by submit and modify, on the merged view of the job (account in lower case).
Decision decide_normalized(const JobRequest& job, const Context& ctx)
{
    Decision d;
    const Config& config = ctx.config;
    auto gpus = count_gpus(job.gpus, ctx.node);
    if (!gpus) {
        reject(d, Errc::BadGpuRequest,
               allot_prefix(job) + "cannot read the GPU request (" + gpus.error().message +
                   "); use --gpus=N, --gpus-per-node=N or --gres=gpu:N");
        return d;
    }
    d.gpus = gpus.value().total;

    if (same_name(job.account, config.cluster.default_account)) {
        default_account_rule(job, config, d);
        return d;
    }
    const TeamConfig* team = nullptr;
    for (const auto& t : config.teams)
        if (same_name(t.account, job.account)) team = &t;
    if (!team) return d;  // not an allot account: Slurm's own limits apply

    const TeamConfig* other_team = nullptr;
    d.tier = tier_of(job.qos, *team, config, &other_team);
    if (d.tier == Tier::None) {
        if (other_team)
            reject(d, Errc::ForeignQos,
                   allot_prefix(job) + "QOS '" + job.qos + "' is the project QOS of account '" +
                       other_team->account + "', not of '" + job.account +
                       "'; leave --qos out to use " + team->qos + ", or use --qos=" +
                       config.tiers.general.qos + " or --qos=" + config.tiers.spot.qos);
        return d;  // a site QOS allot does not manage
    }
    d.qos = d.tier == Tier::Project   ? team->qos
            : d.tier == Tier::General ? config.tiers.general.qos
                                      : config.tiers.spot.qos;
    // Write the canonical spelling back (slurmctld matches QOS without case, its record
    // and accounting keep the name as written).
    if ((ctx.submit && job.qos.empty()) || (!job.qos.empty() && job.qos != d.qos))
        d.changes.qos = d.qos;

    const auto qos_limits = ctx.limits.qos(d.qos);
    if (!apply_walltime(job, ctx, qos_limits, d) || !apply_gpu_cap(job, *team, ctx, qos_limits, d))
        return d;
    apply_per_gpu_defaults(job, ctx, d);
    apply_spot(job, ctx, d);
    return d;
}

Decision decide(const JobRequest& job, Context ctx)
{
    if (!partition_governed(job.partition, ctx.config.cluster.partition)) return {};
    ctx.node = job.gpus.node.gpus || job.gpus.node.cpus ? job.gpus.node : ctx.limits.node_shape();
    if (!has_upper(job.account)) return decide_normalized(job, ctx);
    // slurmctld lowers the account after job_submit: decide on, and write back, that name.
    JobRequest lowered = job;
    lowered.account = lower(job.account);
    Decision d = decide_normalized(lowered, ctx);
    d.changes.account = lowered.account;
    return d;
}

Tier plain_tier(const JobRequest& job, const Config& config)
{
    for (const auto& t : config.teams) {
        if (!same_name(t.account, job.account)) continue;
        const TeamConfig* other = nullptr;
        return tier_of(job.qos, t, config, &other);
    }
    return Tier::None;
}

}  // namespace

Decision decide_submit(const JobRequest& job, const Config& config, const LimitsView& limits)
{
    return decide(job, Context{config, limits});
}

Decision decide_modify(const JobRequest& current, const JobRequest& update, const Config& config,
                       const LimitsView& limits)
{
    JobRequest merged = current;
    if (!update.qos.empty()) merged.qos = update.qos;
    if (!update.account.empty()) merged.account = update.account;
    if (!update.partition.empty()) merged.partition = update.partition;
    if (update.time_minutes) merged.time_minutes = update.time_minutes;
    const GpuFields& u = update.gpus;
    GpuFields& m = merged.gpus;
    if (!u.per_job.empty()) m.per_job = u.per_job;
    if (!u.per_node.empty()) m.per_node = u.per_node;
    if (!u.per_task.empty()) m.per_task = u.per_task;
    if (!u.per_socket.empty()) m.per_socket = u.per_socket;
    for (auto field :
         {&GpuFields::nodes, &GpuFields::max_nodes, &GpuFields::tasks, &GpuFields::tasks_per_node,
          &GpuFields::sockets_per_node, &GpuFields::tasks_per_socket, &GpuFields::cpus_per_task,
          &GpuFields::tasks_per_gpu})
        if (u.*field) m.*field = u.*field;
    if (update.signal_set) merged.signal_set = true;
    if (update.requeue_set) {
        merged.requeue = update.requeue;
        merged.requeue_set = true;
    }
    if (!update.user_teams.empty()) merged.user_teams = update.user_teams;
    const bool tier_changed = plain_tier(merged, config) != plain_tier(current, config) ||
                              !same_name(merged.account, current.account);
    Context ctx{config, limits};
    ctx.submit = false;
    ctx.tier_changed = tier_changed;
    ctx.update_sets_time = update.time_minutes.has_value();
    ctx.update_no_requeue = update.requeue_set && !update.requeue;
    return decide(merged, ctx);
}

}  // namespace allot
