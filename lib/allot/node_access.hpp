// node_access.hpp - who may log in to this node: the rule shared by allot-keys
// (which keys sshd sees) and pam_allot (every authentication method).
//
//   root (uid 0)                        → allowed, always, decided first
//   node.role = login                   → allowed (login nodes are never gated)
//   unknown user                        → denied
//   member of node.admin_group          → allowed
//   a current job entry in the registry → allowed
//   anything else, or any error         → denied (fail closed)
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "allot/config.hpp"
#include "allot/node_registry.hpp"

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

struct NodeAccess {
    bool allowed = false;
    std::string reason;  // for logs: "root", "login node", "admin group hpcadmin", "job 42", ...
};

NodeAccess decide_node_access(const Config& config, const std::string& user, const UserDb& users,
                              int64_t now, const RegistryOptions& registry = {});

}  // namespace allot
