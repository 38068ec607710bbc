// node_access.hpp - who may log in to this node: the rule shared by allot-keys
// (which keys sshd sees) and pam_allot (every authentication method).
//
//   root (the local account, uid 0)          → allowed, always, decided first
//   node.role unset                          → denied (no default: fail closed)
//   node.role = login                        → allowed (login nodes are never gated)
//   not a directory user (directory_user())  → denied
//   member of node.admin_group               → allowed
//   a current job entry in the registry      → allowed
//   anything else, or any error              → denied (fail closed)
//
// A directory user is one that resolves through allot's own caches: its name
// is no local account or group and not reserved (identity_validate.hpp), it is
// in passwd.cache (trusted like sshd's StrictModes), its uid and primary gid
// pass the same rule, and the node's NSS resolves the name to that very uid.
// So a directory user named `root` or `daemon` is never taken for the local
// account of that name, whatever the caches or nsswitch.conf say.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "allot/config.hpp"
#include "allot/identity_cache_reader.hpp"
#include "allot/identity_validate.hpp"
#include "allot/node_registry.hpp"
#include "allot/result.hpp"

namespace allot::node {

enum class Errc {
    Ok = 0,
    NoRole,            // node.role is not set in allot.yaml
    NoLocalAccounts,   // /etc/passwd or /etc/group could not be read
    CacheUntrusted,    // a cache or a directory above it is writable by others or not root's
    CacheUnavailable,  // a cache is missing or invalid
    NotDirectoryUser,  // not in allot's passwd.cache
    NameMismatch,      // the node resolves the name to another uid than allot's cache
    UnknownUser,       // the node cannot resolve the name at all
    NoJob,             // a directory user without a job on this compute node
};

}  // namespace allot::node

ALLOT_ERROR_AREA(allot::node, Errc);

namespace allot {

// The user database as the node resolves it (NSS), behind an interface so the
// rule is tested without touching /etc/passwd.
class UserDb {
public:
    virtual ~UserDb() = default;
    virtual std::optional<uint32_t> uid_of(const std::string& user) const = 0;
    virtual bool in_group(const std::string& user, const std::string& group) const = 0;
};

// getpwnam_r / getgrnam_r / getgrouplist through the node's NSS stack.
class NssUserDb : public UserDb {
public:
    std::optional<uint32_t> uid_of(const std::string& user) const override;
    bool in_group(const std::string& user, const std::string& group) const override;
};

// What a node layer needs besides allot.yaml to tell a directory user: the
// identity rules with the node's own accounts (null when /etc/passwd or
// /etc/group could not be read: then nobody is a directory user) and who may
// own the caches.
struct NodeIdentity {
    const IdentityRules* rules = nullptr;
    idcache::TrustPolicy trust = idcache::kRootOnly;
};

// The rules of this node: allot.yaml's identity section plus /etc/passwd and
// /etc/group. An Error (node::Errc::NoLocalAccounts) when those cannot be read.
Result<IdentityRules> node_identity_rules(const Config& config);
// The trust policy for identity.cache_owner (root only when it is root or
// unknown to the node).
idcache::TrustPolicy cache_trust(const Config& config);

// The uid of `user` if it is a directory user (see the file comment), or the
// reason it is not: identity::Errc (InvalidName, ReservedName, ReservedId,
// IdOutOfRange) or node::Errc.
Result<uint32_t> directory_user(const Config& config, const std::string& user, const UserDb& users,
                                const NodeIdentity& node);

struct NodeAccess {
    bool allowed = false;
    std::error_code code;  // why not (node::Errc or identity::Errc); empty when allowed
    std::string reason;    // for logs: "root", "login node", "admin group hpcadmin", "job 42", ...
};

NodeAccess decide_node_access(const Config& config, const std::string& user, const UserDb& users,
                              const NodeIdentity& node, int64_t now,
                              const RegistryOptions& registry = {});
// The compute-node part of the rule for a directory user already resolved
// (directory_user() gave `uid`): admin group or a current job.
NodeAccess admit_directory_user(const Config& config, const std::string& user, uint32_t uid,
                                const UserDb& users, int64_t now,
                                const RegistryOptions& registry = {});

// The error for node.role left unset, as pam_allot and allot-keys report it.
Error no_role_error(const Config& config);

}  // namespace allot
