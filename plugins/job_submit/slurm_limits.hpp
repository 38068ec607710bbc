// slurm_limits.hpp - LimitsView over slurmctld's own association/QOS cache.
//
// Caps are never read from files: allot-syncd writes them to slurmdbd and
// slurmctld caches them in assoc_mgr. This reads that cache under its read
// lock and copies what the policy needs, so nothing points into the cache
// after the lock is released.
#pragma once

#include <string>
#include <vector>

#include "allot/policy.hpp"

namespace allot::job_submit {

class SlurmLimits : public LimitsView {
public:
    explicit SlurmLimits(NodeShape shape = {}) : shape_(shape) {}
    std::optional<QosLimits> qos(std::string_view name) const override;
    NodeShape node_shape() const override { return shape_; }

private:
    NodeShape shape_;  // read from slurmctld's node table at (re)configure
};

// The user's default account from the association cache, or "" if unknown.
std::string default_account(uint32_t uid);

// The accounts among `team_accounts` in which user `uid` has an association,
// from the association cache (for the default-account message).
std::vector<std::string> user_team_accounts(uint32_t uid,
                                            const std::vector<std::string>& team_accounts);

// Parses a cache TRES string ("1=16,2=64000,1001=8") for the count of TRES `id`.
std::optional<uint64_t> tres_count(const char* tres, uint32_t id);

}  // namespace allot::job_submit
