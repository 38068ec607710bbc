// slurm_limits.cpp - reading caps from slurmctld's assoc_mgr (see slurm_limits.hpp).
#include "slurm_limits.hpp"

#include <algorithm>
#include <cstring>

#include "allot/units.hpp"
#include "compat/slurmctld.hpp"

namespace allot::job_submit {

namespace {

// Holds assoc_mgr's QOS, TRES and user read locks for one lookup. slurmctld
// already holds its own locks when it calls job_submit; assoc_mgr locks are
// always taken after those, which is the documented order.
class CacheReadLock {
public:
    CacheReadLock()
    {
        locks_.qos = ALLOT_READ_LOCK;
        locks_.tres = ALLOT_READ_LOCK;
        locks_.user = ALLOT_READ_LOCK;
        assoc_mgr_lock(&locks_);
    }
    ~CacheReadLock() { assoc_mgr_unlock(&locks_); }
    CacheReadLock(const CacheReadLock&) = delete;
    CacheReadLock& operator=(const CacheReadLock&) = delete;

private:
    allot_assoc_mgr_lock_t locks_{};
};

// Holds assoc_mgr's association read lock while the association list is walked.
class AssocReadLock {
public:
    AssocReadLock()
    {
        locks_.assoc = ALLOT_READ_LOCK;
        assoc_mgr_lock(&locks_);
    }
    ~AssocReadLock() { assoc_mgr_unlock(&locks_); }
    AssocReadLock(const AssocReadLock&) = delete;
    AssocReadLock& operator=(const AssocReadLock&) = delete;

private:
    allot_assoc_mgr_lock_t locks_{};
};

std::optional<uint32_t> gpu_tres_id_locked()
{
    slurmdb_tres_rec_t wanted;
    std::memset(&wanted, 0, sizeof wanted);
    wanted.type = const_cast<char*>("gres");
    wanted.name = const_cast<char*>("gpu");
    const int pos = assoc_mgr_find_tres_pos(&wanted, true);
    if (pos < 0 || !assoc_mgr_tres_array || !assoc_mgr_tres_array[pos]) return std::nullopt;
    return assoc_mgr_tres_array[pos]->id;
}

}  // namespace

std::optional<uint64_t> tres_count(const char* tres, uint32_t id)
{
    if (!tres) return std::nullopt;
    std::string_view rest(tres);
    while (!rest.empty()) {
        const size_t comma = rest.find(',');
        const std::string_view item = rest.substr(0, comma);
        const size_t eq = item.find('=');
        if (eq != std::string_view::npos) {
            auto key = parse_count(item.substr(0, eq), UINT32_MAX);
            auto value = parse_count(item.substr(eq + 1));
            // INFINITE64 / NO_VAL64 mean "no limit" in cache strings.
            if (key && *key == id && value && *value != INFINITE64 && *value != NO_VAL64)
                return *value;
        }
        if (comma == std::string_view::npos) break;
        rest.remove_prefix(comma + 1);
    }
    return std::nullopt;
}

std::optional<QosLimits> SlurmLimits::qos(std::string_view name) const
{
    const std::string qos_name(name);
    CacheReadLock lock;
    slurmdb_qos_rec_t wanted;
    std::memset(&wanted, 0, sizeof wanted);
    wanted.name = const_cast<char*>(qos_name.c_str());
    slurmdb_qos_rec_t* found = nullptr;
    if (assoc_mgr_fill_in_qos(acct_db_conn, &wanted, accounting_enforce, &found, true) !=
            SLURM_SUCCESS ||
        !found)
        return std::nullopt;
    QosLimits limits;
    if (const auto gpu = gpu_tres_id_locked()) {
        limits.grp_gpus = tres_count(found->grp_tres, *gpu);
        limits.max_gpus_per_account = tres_count(found->max_tres_pa, *gpu);
    }
    if (found->max_wall_pj != NO_VAL && found->max_wall_pj != INFINITE)
        limits.max_wall_minutes = found->max_wall_pj;
    return limits;
}

std::vector<std::string> user_team_accounts(uint32_t uid,
                                            const std::vector<std::string>& team_accounts)
{
    std::vector<std::string> found;
    AssocReadLock lock;
    if (!assoc_mgr_assoc_list) return found;
    auto* it = slurm_list_iterator_create(assoc_mgr_assoc_list);
    while (auto* assoc = static_cast<slurmdb_assoc_rec_t*>(slurm_list_next(it))) {
        if (assoc->uid != uid || !assoc->acct) continue;
        for (const auto& team : team_accounts)
            if (team == assoc->acct && std::find(found.begin(), found.end(), team) == found.end())
                found.push_back(team);
    }
    slurm_list_iterator_destroy(it);
    return found;
}

std::string default_account(uint32_t uid)
{
    slurmdb_user_rec_t user;
    std::memset(&user, 0, sizeof user);
    user.uid = uid;
    CacheReadLock lock;
    if (assoc_mgr_fill_in_user(acct_db_conn, &user, accounting_enforce, nullptr, true) !=
            SLURM_SUCCESS ||
        !user.default_acct)
        return {};
    return user.default_acct;  // copied while the lock is held
}

}  // namespace allot::job_submit
