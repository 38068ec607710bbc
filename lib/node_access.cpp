// node_access.cpp - the compute-node login rule (see allot/node_access.hpp).
#include "allot/node_access.hpp"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

namespace allot {

std::optional<uint32_t> NssUserDb::uid_of(const std::string& user) const
{
    std::vector<char> buf(16384);
    for (int attempt = 0; attempt < 6; ++attempt) {
        passwd pw;
        passwd* out = nullptr;
        const int rc = getpwnam_r(user.c_str(), &pw, buf.data(), buf.size(), &out);
        if (rc == ERANGE) {
            buf.resize(buf.size() * 4);
            continue;
        }
        if (rc != 0 || !out) return std::nullopt;
        // NSS modules may match loosely (case, aliases): only an exact name counts.
        if (user != out->pw_name) return std::nullopt;
        return out->pw_uid;
    }
    return std::nullopt;
}

bool NssUserDb::in_group(const std::string& user, const std::string& group) const
{
    if (group.empty()) return false;
    std::vector<char> buf(16384);
    struct group gr;
    struct group* gout = nullptr;
    int rc;
    while ((rc = getgrnam_r(group.c_str(), &gr, buf.data(), buf.size(), &gout)) == ERANGE &&
           buf.size() < (64u << 20))
        buf.resize(buf.size() * 4);
    if (rc != 0 || !gout) return false;
    const gid_t want = gout->gr_gid;

    std::vector<char> pbuf(16384);
    passwd pw;
    passwd* pout = nullptr;
    if (getpwnam_r(user.c_str(), &pw, pbuf.data(), pbuf.size(), &pout) != 0 || !pout) return false;
    if (pout->pw_gid == want) return true;
    int n = 64;
    std::vector<gid_t> gids(static_cast<size_t>(n), 0);
    while (getgrouplist(user.c_str(), pout->pw_gid, gids.data(), &n) < 0) {
        if (n <= int(gids.size()) || n > 65536) return false;
        gids.resize(size_t(n));
    }
    for (int i = 0; i < n; ++i)
        if (gids[size_t(i)] == want) return true;
    return false;
}

NodeAccess decide_node_access(const Config& config, const std::string& user, const UserDb& users,
                              int64_t now, const RegistryOptions& registry)
{
    if (user == "root") return {true, "root"};
    const auto uid = users.uid_of(user);
    if (uid && *uid == 0) return {true, "root"};
    if (config.node.role == NodeRole::Login) return {true, "login node"};
    if (!uid) return {false, "unknown user"};
    if (users.in_group(user, config.node.admin_group))
        return {true, "admin group " + config.node.admin_group};
    for (const auto& job : current_jobs(config.node.run_dir, now, registry))
        if (job.uid == *uid) return {true, "job " + std::to_string(job.job_id)};
    return {false, "no running job on this node"};
}

}  // namespace allot
