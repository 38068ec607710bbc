// tier_qos.hpp - the QOS of the policy as allot-syncd writes them, computed
// from allot.yaml alone: each team's project QOS, general, spot, and the QOS
// of users in no team. allot-syncd plans its writes from these (sync_plan.hpp);
// allot-doctor compares slurmdbd's QOS with them and names the drift.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "allot/config.hpp"

namespace allot {

inline constexpr const char* kManagedMarker = "allot-managed";

// TRES by name ("cpu", "mem" in MB, "gres/gpu") → count.
using Tres = std::map<std::string, uint64_t>;
std::string tres_string(const Tres& tres);  // "cpu=32,gres/gpu=8,mem=131072"
// Names as sacctmgr takes a list of them (QOS=, Preempt=): "a,b,c", sorted.
std::string slurm_list(const std::set<std::string>& names);

struct QosSpec {
    std::string name;
    std::string description;  // starts with kManagedMarker when allot owns it
    Tres grp_tres;
    Tres max_tres_pa;               // MaxTRESPerAccount
    uint32_t max_wall_minutes = 0;  // 0: none
    uint32_t priority = 0;
    uint32_t grace_seconds = 0;
    std::set<std::string> preempt;  // QOS this one may preempt
    bool requeue = false;           // PreemptMode=requeue (else cluster default)
    bool same_settings(const QosSpec& o) const;
    std::string describe() const;
};

// "1-00:00:00" as sacctmgr and `allot-syncd --plan` write MaxWall; "none" for 0.
std::string minutes_text(uint32_t minutes);

std::string project_qos_name(const TeamConfig& team);
QosSpec spot_qos(const TiersConfig& tiers);
QosSpec general_qos(const TiersConfig& tiers);
QosSpec project_qos(const Config& config, const TeamConfig& team);
// The only QOS of users in no team. It sets no GPU limit on purpose: a QOS
// limit of the same kind overrides the association's, so the default account's
// GrpTRES=gres/gpu=0 governs only under a QOS without one (with general or spot
// a team-less user's GPU job would run wherever job_submit/allot is not loaded).
QosSpec no_team_qos(const Config& config);

// Every QOS above: spot, general, no-team, then the teams' in config order.
std::vector<QosSpec> policy_qos(const Config& config);

}  // namespace allot
