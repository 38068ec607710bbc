// node_access.cpp - the compute-node login rule (see allot/node_access.hpp).
#include "allot/node_access.hpp"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "allot/identity_cache.hpp"

namespace allot::node {
namespace {
constexpr const char* kTexts[] = {
    "success",
    "node.role is not set",
    "the node's own accounts cannot be read",
    "identity cache not trusted",
    "identity cache unavailable",
    "not a directory user",
    "name resolves to another account",
    "unknown user",
    "no running job on this node",
};
}  // namespace

const std::error_category& category() noexcept
{
    static const ErrorArea area("node", kTexts);
    return area;
}

}  // namespace allot::node

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

Result<IdentityRules> node_identity_rules(const Config& config)
{
    auto local = load_local_identities();
    if (!local) return make_error(node::Errc::NoLocalAccounts, local.error().describe());
    return identity_rules(config.identity, std::move(local).value());
}

idcache::TrustPolicy cache_trust(const Config& config)
{
    idcache::TrustPolicy trust = idcache::kRootOnly;
    const std::string& owner = config.identity.cache_owner;
    if (owner.empty() || owner == "root") return trust;
    std::vector<char> buf(16384);
    passwd pw;
    passwd* out = nullptr;
    if (getpwnam_r(owner.c_str(), &pw, buf.data(), buf.size(), &out) == 0 && out)
        trust.owner = out->pw_uid;
    return trust;
}

namespace {

struct CachedIds {
    uint32_t uid, gid;
};

// The ids of `user` in allot's passwd.cache, trusted like sshd's StrictModes.
Result<CachedIds> cached_user(const Config& config, const std::string& user,
                              const NodeIdentity& node)
{
    const std::string path = config.identity.cache_dir + "/" + kPasswdCacheFile;
    idcache::Fault fault = idcache::Fault::None;
    const char* why = nullptr;
    idcache::Snapshot* snap = idcache::snapshot_open_trusted(path.c_str(), idcache::Kind::Passwd,
                                                             node.trust, &fault, &why);
    if (!snap) {
        const std::string detail = path + ": " + (why ? why : "unavailable");
        return make_error(fault == idcache::Fault::Untrusted ? node::Errc::CacheUntrusted
                                                             : node::Errc::CacheUnavailable,
                          detail);
    }
    idcache::UserView u{};
    const bool found = idcache::user_by_name(snap, user.data(), user.size(), &u);
    idcache::snapshot_unref(snap);
    if (!found)
        return make_error(node::Errc::NotDirectoryUser,
                          "user " + log_safe(user) + " is not in " + path);
    return CachedIds{u.uid, u.gid};
}

}  // namespace

Result<uint32_t> directory_user(const Config& config, const std::string& user, const UserDb& users,
                                const NodeIdentity& node)
{
    if (!node.rules)
        return make_error(node::Errc::NoLocalAccounts,
                          "cannot tell local accounts from directory users");
    if (auto name = check_name(user, *node.rules, "user"); !name) return name.error();
    auto cached = cached_user(config, user, node);
    if (!cached) return cached.error();
    const uint32_t uid = cached.value().uid;
    if (auto ok = check_uid(uid, *node.rules, "uid"); !ok) return ok.error();
    if (auto ok = check_gid(cached.value().gid, *node.rules, "primary gid"); !ok) return ok.error();
    const auto resolved = users.uid_of(user);
    if (!resolved)
        return make_error(node::Errc::UnknownUser,
                          "the node does not resolve user " + log_safe(user));
    if (*resolved != uid)
        return make_error(node::Errc::NameMismatch, "the node resolves " + log_safe(user) +
                                                        " to uid " + std::to_string(*resolved) +
                                                        ", allot's cache to uid " +
                                                        std::to_string(uid));
    return uid;
}

Error no_role_error(const Config& config)
{
    return make_error(node::Errc::NoRole,
                      (config.source.empty() ? std::string("allot.yaml") : config.source) +
                          ": node.role is not set; set it to login or compute (a node "
                          "without a role admits no one)");
}

NodeAccess decide_node_access(const Config& config, const std::string& user, const UserDb& users,
                              const NodeIdentity& node, int64_t now,
                              const RegistryOptions& registry)
{
    // The local root only: the name, or uid 0 through the node's own files
    // (libnss_allot never answers uid 0).
    if (user == "root") return {true, {}, "root"};
    const auto resolved = users.uid_of(user);
    if (resolved && *resolved == 0) return {true, {}, "root"};
    if (config.node.role == NodeRole::Unset) {
        const Error e = no_role_error(config);
        return {false, e.code, e.message};
    }
    if (config.node.role == NodeRole::Login) return {true, {}, "login node"};
    auto uid = directory_user(config, user, users, node);
    if (!uid) return {false, uid.error().code, uid.error().describe()};
    return admit_directory_user(config, user, uid.value(), users, now, registry);
}

NodeAccess admit_directory_user(const Config& config, const std::string& user, uint32_t uid,
                                const UserDb& users, int64_t now, const RegistryOptions& registry)
{
    if (users.in_group(user, config.node.admin_group))
        return {true, {}, "admin group " + config.node.admin_group};
    for (const auto& job : current_jobs(config.node.run_dir, now, registry))
        if (job.uid == uid) return {true, {}, "job " + std::to_string(job.job_id)};
    return {false, make_error_code(node::Errc::NoJob), "no running job on this node"};
}

}  // namespace allot
