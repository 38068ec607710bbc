// pam_allot.cpp - pam_allot.so: the account module gating logins on compute nodes.
//
//   account  required  pam_allot.so [config=PATH] [run_dir=DIR] [admin_group=NAME] [debug] [quiet]
//
// The rule is allot-keys' (lib/node_access.cpp), applied here to every
// authentication method (keys, passwords, Kerberos, host-based): the local
// root is allowed, always, before anything that could fail; a missing
// node.role admits no one else (there is no default); on node.role=login
// everyone passes; otherwise the user must be a directory user (resolving
// through allot's trusted caches, not a local account or reserved name) in
// node.admin_group or with a job in the node registry. Everything else is
// PAM_PERM_DENIED, including a missing or invalid configuration, an unknown
// user and any internal error (fail closed). Runs inside sshd: no network,
// one small YAML file, /etc/passwd, /etc/group, passwd.cache and one
// directory listing per login.
#include <security/pam_appl.h>
#include <security/pam_ext.h>
#include <security/pam_modules.h>
#include <syslog.h>

#include <cstring>
#include <ctime>
#include <string>

#include "allot/abi_guard.hpp"
#include "allot/config.hpp"
#include "allot/node_access.hpp"

namespace {

struct Options {
    std::string config = allot::kDefaultConfigPath;
    std::string run_dir;      // overrides node.run_dir
    std::string admin_group;  // overrides node.admin_group
    bool debug = false;
    bool quiet = false;
};

pam_handle_t* g_log_handle = nullptr;  // only for the abi_guard logger, per call

void log_exception(const char* what)
{
    if (g_log_handle) pam_syslog(g_log_handle, LOG_ERR, "internal error: %s", what);
}

bool parse_options(pam_handle_t* pamh, int argc, const char** argv, Options& o)
{
    bool ok = true;
    for (int i = 0; i < argc; ++i) {
        const std::string a = argv[i] ? argv[i] : "";
        if (a.rfind("config=", 0) == 0) {
            o.config = a.substr(7);
        } else if (a.rfind("run_dir=", 0) == 0) {
            o.run_dir = a.substr(8);
        } else if (a.rfind("admin_group=", 0) == 0) {
            o.admin_group = a.substr(12);
        } else if (a == "debug") {
            o.debug = true;
        } else if (a == "quiet") {
            o.quiet = true;
        } else {
            // An unknown option is a typo in the stack: refuse rather than guess.
            pam_syslog(pamh, LOG_ERR, "unknown option '%s'", a.c_str());
            ok = false;
        }
    }
    return ok;
}

// What the user is told: only whether having a job would help.
const char* user_message(std::error_code code)
{
    return code == allot::node::Errc::NoJob ? "you have no job running on this node"
                                            : "login not allowed on this node";
}

int deny(pam_handle_t* pamh, const Options& o, const char* user, std::error_code code,
         const std::string& why)
{
    const int level = code == allot::node::Errc::NoRole || code == allot::node::Errc::CacheUntrusted
                          ? LOG_ERR
                          : LOG_NOTICE;
    pam_syslog(pamh, level, "access denied for %s: %s", user ? user : "(none)", why.c_str());
    if (!o.quiet) pam_error(pamh, "Access denied by pam_allot: %s.", user_message(code));
    return PAM_PERM_DENIED;
}

int account(pam_handle_t* pamh, int argc, const char** argv)
{
    const char* user = nullptr;
    if (pam_get_user(pamh, &user, nullptr) != PAM_SUCCESS || !user || !*user) {
        pam_syslog(pamh, LOG_ERR, "no user name");
        return PAM_USER_UNKNOWN;
    }
    // Root first, before options or config can fail: a broken allot.yaml
    // must never lock the administrator out.
    allot::NssUserDb users;
    const auto uid = users.uid_of(user);
    if (std::strcmp(user, "root") == 0 || (uid && *uid == 0)) return PAM_SUCCESS;

    Options o;
    const auto invalid = make_error_code(allot::Errc::Invalid);
    if (!parse_options(pamh, argc, argv, o))
        return deny(pamh, o, user, invalid, "bad module options");
    auto load = allot::load_config(o.config);
    if (!load.ok()) {
        for (const auto& line : load.errors.lines) pam_syslog(pamh, LOG_ERR, "%s", line.c_str());
        return deny(pamh, o, user, invalid, "no valid configuration (" + o.config + ")");
    }
    allot::Config& config = *load.config;
    if (!o.run_dir.empty()) config.node.run_dir = o.run_dir;
    if (!o.admin_group.empty()) config.node.admin_group = o.admin_group;
    // Without the node's own accounts nobody is a directory user (fail closed).
    auto rules = allot::node_identity_rules(config);
    if (!rules) pam_syslog(pamh, LOG_ERR, "%s", rules.error().describe().c_str());
    allot::NodeIdentity node;
    node.rules = rules ? &rules.value() : nullptr;
    node.trust = allot::cache_trust(config);
    const auto access = allot::decide_node_access(config, user, users, node,
                                                  static_cast<int64_t>(std::time(nullptr)));
    if (!access.allowed) return deny(pamh, o, user, access.code, access.reason);
    if (o.debug)
        pam_syslog(pamh, LOG_DEBUG, "access granted to %s: %s", user, access.reason.c_str());
    return PAM_SUCCESS;
}

}  // namespace

extern "C" ALLOT_EXPORT int pam_sm_acct_mgmt(pam_handle_t* pamh, int /*flags*/, int argc,
                                             const char** argv) noexcept
{
    g_log_handle = pamh;
    const int rc =
        allot::abi_guard(log_exception, PAM_PERM_DENIED, [&] { return account(pamh, argc, argv); });
    g_log_handle = nullptr;
    return rc;
}
