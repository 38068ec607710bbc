// policy.cpp - the allocation policy rules (see policy.hpp and docs/policy.md).
#include "allot/policy.hpp"

#include "allot/units.hpp"

namespace allot {

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

Decision reject(Rule rule, std::string message)
{
    Decision d;
    d.accepted = false;
    d.rule = rule;
    d.message = std::move(message);
    return d;
}

std::string gpus_text(uint64_t n)
{
    return std::to_string(n) + (n == 1 ? " GPU" : " GPUs");
}

bool governs_partition(const JobRequest& job, const Config& config)
{
    return config.cluster.partition.empty() || job.partition.empty() ||
           job.partition == config.cluster.partition;
}

// Which tier a QOS name means for this account; sets `other_team` when the
// QOS is some other team's project QOS.
Tier tier_of(std::string_view qos, const TeamConfig& team, const Config& config,
             const TeamConfig** other_team)
{
    *other_team = nullptr;
    if (qos.empty() || qos == team.qos) return Tier::Project;
    if (qos == config.tiers.general.qos) return Tier::General;
    if (qos == config.tiers.spot.qos) return Tier::Spot;
    *other_team = config.team_by_qos(qos);
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

// Rules shared by submit and modify, on the merged view of the job.
Decision decide(const JobRequest& job, const Config& config, const LimitsView& limits, bool submit)
{
    Decision d;
    if (!governs_partition(job, config)) return d;

    auto gpus = count_gpus(job.gpus);
    if (!gpus)
        return reject(Rule::BadGpuRequest,
                      "allot: cannot read the GPU request (" + gpus.error().message +
                          "); use --gpus=N, --gpus-per-node=N or --gres=gpu:N");
    d.gpus = gpus.value().total;

    if (job.account == config.cluster.default_account) {
        if (d.gpus > 0)
            return reject(Rule::ZeroGpuAccount,
                          "allot: you are not yet in a team with a GPU allocation (account '" +
                              job.account + "' has 0 GPUs); " + config.cluster.join_hint +
                              ", then submit with -A <team>");
        return d;
    }
    const TeamConfig* team = config.team_by_account(job.account);
    if (!team) return d;  // not an allot account: Slurm's own limits apply

    const TeamConfig* other_team = nullptr;
    d.tier = tier_of(job.qos, *team, config, &other_team);
    if (d.tier == Tier::None) {
        if (other_team)
            return reject(Rule::ForeignQos,
                          "allot: QOS '" + job.qos + "' is the project QOS of account '" +
                              other_team->account + "', not of '" + job.account +
                              "'; leave --qos out to use " + team->qos + ", or use --qos=" +
                              config.tiers.general.qos + " or --qos=" + config.tiers.spot.qos);
        return d;  // a site QOS allot does not manage
    }
    const std::string qos_name = d.tier == Tier::Project ? team->qos : job.qos;
    if (submit && job.qos.empty()) d.changes.qos = team->qos;

    const auto qos_limits = limits.qos(qos_name);
    const TierConfig& tier_cfg = tier_config(d.tier, config);

    // Walltime: default when missing, reject above the tier's maximum.
    std::optional<uint32_t> time = job.time_minutes;
    if (!time && submit && tier_cfg.default_minutes) {
        time = tier_cfg.default_minutes;
        d.changes.time_minutes = time;
    }
    if (const auto max = max_minutes(d.tier, qos_limits, config)) {
        if (time && *time > *max)
            return reject(
                Rule::Walltime,
                "allot: " + std::string(tier_name(d.tier)) + " jobs may run at most " +
                    format_minutes(*max) + " but this job asks for " + format_minutes(*time) +
                    "; use --time=" + format_minutes(*max) + " or less" +
                    (d.tier == Tier::Spot ? "" : ", or split the work into shorter jobs"));
        if (!time && submit) d.changes.time_minutes = *max;
    }

    // A job bigger than its tier's whole cap would pend forever: reject it now.
    if (const auto cap = gpu_cap(d.tier, qos_limits); cap && d.gpus > *cap) {
        const auto general =
            d.tier == Tier::Project ? limits.qos(config.tiers.general.qos) : qos_limits;
        std::string what = d.tier == Tier::Project
                               ? "team " + team->account + "'s project share is " + gpus_text(*cap)
                               : "the " + config.tiers.general.qos + " tier allows " +
                                     gpus_text(*cap) + " per team";
        return reject(Rule::GpuCap, "allot: this job asks for " + gpus_text(d.gpus) + " but " +
                                        what +
                                        " running at once, so it could never start; ask for " +
                                        std::to_string(*cap) + " or fewer" +
                                        alternatives(d.tier, config, general));
    }

    // Per-GPU defaults so teams sharing a node do not starve each other.
    if (submit && d.gpus > 0) {
        if (config.cluster.mem_per_gpu_mb && !job.mem_set && !job.mem_per_gpu_set)
            d.changes.mem_per_gpu_mb = config.cluster.mem_per_gpu_mb;
        if (config.cluster.cpus_per_gpu && !job.cpus_set && !job.cpus_per_gpu_set)
            d.changes.cpus_per_gpu = config.cluster.cpus_per_gpu;
    }

    // Spot jobs are requeued on preemption and their batch script hears the grace window.
    if (d.tier == Tier::Spot) {
        if (!job.requeue) d.changes.set_requeue = true;
        if (!job.signal_set)
            d.changes.batch_signal =
                JobChanges::Signal{config.tiers.spot.signal, config.tiers.spot.grace_seconds};
    }
    return d;
}

}  // namespace

Decision decide_submit(const JobRequest& job, const Config& config, const LimitsView& limits)
{
    return decide(job, config, limits, /*submit=*/true);
}

Decision decide_modify(const JobRequest& current, const JobRequest& update, const Config& config,
                       const LimitsView& limits)
{
    JobRequest merged = current;
    if (!update.qos.empty()) merged.qos = update.qos;
    if (!update.account.empty()) merged.account = update.account;
    if (!update.partition.empty()) merged.partition = update.partition;
    if (update.time_minutes) merged.time_minutes = update.time_minutes;
    if (!update.gpus.per_job.empty()) merged.gpus.per_job = update.gpus.per_job;
    if (!update.gpus.per_node.empty()) merged.gpus.per_node = update.gpus.per_node;
    if (!update.gpus.per_task.empty()) merged.gpus.per_task = update.gpus.per_task;
    if (!update.gpus.per_socket.empty()) merged.gpus.per_socket = update.gpus.per_socket;
    if (update.gpus.nodes) merged.gpus.nodes = update.gpus.nodes;
    if (update.gpus.tasks) merged.gpus.tasks = update.gpus.tasks;
    if (update.signal_set) merged.signal_set = true;
    return decide(merged, config, limits, /*submit=*/false);
}

}  // namespace allot
