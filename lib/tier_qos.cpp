// tier_qos.cpp - see allot/tier_qos.hpp.
#include "allot/tier_qos.hpp"

#include <cstdio>

namespace allot {

std::string slurm_list(const std::set<std::string>& names)
{
    std::string out;
    for (const auto& n : names) out += (out.empty() ? "" : ",") + n;
    return out;
}

std::string tres_string(const Tres& tres)
{
    std::string out;
    for (const auto& [k, v] : tres) out += (out.empty() ? "" : ",") + k + "=" + std::to_string(v);
    return out;
}

std::string minutes_text(uint32_t m)
{
    if (m == 0) return "none";
    char buf[32];
    snprintf(buf, sizeof buf, "%u-%02u:%02u:00", m / 1440, (m / 60) % 24, m % 60);
    return buf;
}

bool QosSpec::same_settings(const QosSpec& o) const
{
    return description == o.description && grp_tres == o.grp_tres && max_tres_pa == o.max_tres_pa &&
           max_wall_minutes == o.max_wall_minutes && priority == o.priority &&
           grace_seconds == o.grace_seconds && preempt == o.preempt && requeue == o.requeue;
}

std::string QosSpec::describe() const
{
    std::string s = "Description='" + description + "'";
    s += " GrpTRES=" + (grp_tres.empty() ? std::string("none") : tres_string(grp_tres));
    if (!max_tres_pa.empty()) s += " MaxTRESPerAccount=" + tres_string(max_tres_pa);
    s += " MaxWall=" + minutes_text(max_wall_minutes);
    s += " Priority=" + std::to_string(priority);
    s += " Preempt=" + (preempt.empty() ? std::string("none") : slurm_list(preempt));
    s += std::string(" PreemptMode=") + (requeue ? "requeue" : "cluster");
    s += " GraceTime=" + std::to_string(grace_seconds);
    return s;
}

QosSpec spot_qos(const TiersConfig& tiers)
{
    QosSpec spot;
    spot.name = tiers.spot.qos;
    spot.description = std::string(kManagedMarker) + ": spot tier";
    spot.max_wall_minutes = tiers.spot.max_minutes;
    spot.priority = tiers.spot.priority;
    spot.requeue = true;
    spot.grace_seconds = tiers.spot.grace_seconds;
    return spot;
}

QosSpec general_qos(const TiersConfig& tiers)
{
    QosSpec general;
    general.name = tiers.general.qos;
    general.description = std::string(kManagedMarker) + ": general tier";
    general.grp_tres["gres/gpu"] = tiers.general.pool_gpus;
    general.max_tres_pa["gres/gpu"] = tiers.general.per_team_gpus;
    general.max_wall_minutes = tiers.general.max_minutes;
    general.priority = tiers.general.priority;
    general.preempt = {tiers.spot.qos};
    return general;
}

std::string project_qos_name(const TeamConfig& t)
{
    return t.qos.empty() ? t.account : t.qos;
}

QosSpec project_qos(const Config& config, const TeamConfig& t)
{
    QosSpec q;
    q.name = project_qos_name(t);
    q.description = std::string(kManagedMarker) + ": project QOS of " + t.account;
    q.grp_tres["gres/gpu"] = t.gpus;
    if (config.cluster.cpus_per_gpu)
        q.grp_tres["cpu"] = uint64_t(t.gpus) * config.cluster.cpus_per_gpu;
    if (config.cluster.mem_per_gpu_mb)
        q.grp_tres["mem"] = uint64_t(t.gpus) * config.cluster.mem_per_gpu_mb;
    q.max_wall_minutes = config.tiers.project.max_minutes;
    q.priority = config.tiers.project.priority;
    q.preempt = {config.tiers.spot.qos};
    return q;
}

QosSpec no_team_qos(const Config& config)
{
    QosSpec q;
    q.name = config.cluster.default_account;
    q.description = std::string(kManagedMarker) + ": users in no team (0 GPUs by the account)";
    return q;
}

std::vector<QosSpec> policy_qos(const Config& config)
{
    std::vector<QosSpec> out = {spot_qos(config.tiers), general_qos(config.tiers),
                                no_team_qos(config)};
    for (const TeamConfig& t : config.teams) out.push_back(project_qos(config, t));
    return out;
}

}  // namespace allot
