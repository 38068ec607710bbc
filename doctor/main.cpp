// main.cpp - allot-doctor: gathers the live inputs of its role, runs the pure
// checks and prints the findings (text or --json). Read-only; exit 0 when all
// is well, 1 on warnings, 2 on failures (allot-doctor(8)); 64 on a bad command line.
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>

#include <unistd.h>

#include "accounting_checks.hpp"
#include "allot/config.hpp"
#include "allot/identity_cache.hpp"
#include "file_checks.hpp"
#include "finding.hpp"
#include "login_checks.hpp"
#include "node_checks.hpp"
#include "node_reader.hpp"
#include "scim_checks.hpp"
#include "scim_reader.hpp"
#include "slurm_checks.hpp"
#include "slurm_reader.hpp"
#include "software_walk.hpp"

namespace {

using namespace allot;
using namespace allot::doctor;

enum class Role { FromConfig, Controller, Login, Compute };

struct Options {
    std::string config_path = kDefaultConfigPath;
    Role role = Role::FromConfig;
    bool json = false;
    // Each given on the command line overrides its `doctor.` key of allot.yaml.
    std::vector<std::string> software_roots;
    std::optional<std::string> software_user;
    std::optional<size_t> software_limit;
};

// What the walk uses: the command line where given, else allot.yaml's doctor section.
struct Walk {
    std::vector<std::string> roots;
    std::string user;
    WalkLimits limits;
};

Walk walk_settings(const Options& o, const DoctorConfig& d)
{
    Walk w{o.software_roots.empty() ? d.software_roots : o.software_roots,
           o.software_user.value_or(d.software_user), WalkLimits{}};
    w.limits.max_entries = o.software_limit.value_or(static_cast<size_t>(d.software_limit));
    return w;
}

constexpr int kExitUsage = 64;

const char* kUsage =
    "usage: allot-doctor [-c FILE] [--role controller|login|compute] [--json]\n"
    "                    [--software-root DIR]... [--software-user USER] [--software-limit N]\n";

bool parse_role(const std::string& s, Role& role)
{
    if (s == "controller")
        role = Role::Controller;
    else if (s == "login")
        role = Role::Login;
    else if (s == "compute")
        role = Role::Compute;
    else
        return false;
    return true;
}

bool parse_options(int argc, char** argv, Options& o)
{
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--json")
            o.json = true;
        else if ((a == "-c" || a == "--config") && i + 1 < argc)
            o.config_path = argv[++i];
        else if (a == "--role" && i + 1 < argc) {
            if (!parse_role(argv[++i], o.role)) return false;
        } else if (a == "--software-root" && i + 1 < argc)
            o.software_roots.push_back(argv[++i]);
        else if (a == "--software-user" && i + 1 < argc)
            o.software_user = argv[++i];
        else if (a == "--software-limit" && i + 1 < argc) {
            char* end = nullptr;
            o.software_limit = std::strtoul(argv[++i], &end, 10);
            if (*end || *o.software_limit == 0) return false;
        } else
            return false;
    }
    return true;
}

// A node's role in allot.yaml names login or compute; a controller leaves it unset.
Role effective_role(Role asked, const Config& config)
{
    if (asked != Role::FromConfig) return asked;
    if (config.node.role == NodeRole::Login) return Role::Login;
    if (config.node.role == NodeRole::Compute) return Role::Compute;
    return Role::Controller;
}

void add(Findings& to, Findings from)
{
    for (Finding& f : from) to.push_back(std::move(f));
}

Finding unreachable(const char* id, const Error& e, const char* fix)
{
    return problem(Severity::Fail, id, e.describe(),
                   "the checks that need it cannot run, so nothing they verify is known.", fix);
}

// Where the allot plugins and modules are installed on the usual distributions.
std::vector<std::string> plugin_dirs()
{
    return {"/usr/lib/x86_64-linux-gnu/slurm-wlm",
            "/usr/lib/x86_64-linux-gnu/slurm",
            "/usr/lib64/slurm",
            "/usr/lib/slurm",
            "/lib/x86_64-linux-gnu/security",
            "/usr/lib/x86_64-linux-gnu/security",
            "/lib64/security",
            "/usr/lib64/security",
            "/lib/x86_64-linux-gnu",
            "/usr/lib/x86_64-linux-gnu",
            "/lib64",
            "/usr/lib64"};
}

// The token, the caches (and on the controller allot-syncd's last run).
Findings identity_file_findings(const Config& config, bool controller)
{
    const IdentityConfig& id = config.identity;
    Findings out;
    if (!id.token_file.empty()) out.push_back(check_token_file(file_facts(id.token_file)));
    std::vector<FileFacts> caches;
    for (const char* f : {kPasswdCacheFile, kGroupCacheFile, kKeysCacheFile})
        caches.push_back(file_facts(id.cache_dir + "/" + f));
    add(out, check_cache_files(file_facts(id.cache_dir), caches, uid_of(id.cache_owner)));
    out.push_back(check_cache_fresh(caches[0], id));
    if (controller)
        out.push_back(check_syncd_last_run(file_facts(id.cache_dir + "/syncd.state"), id));
    return out;
}

// The software roots and allot's own files as an ordinary user sees them.
Findings walk_findings(const Config& config, const Options& o, const std::string& sshd_t,
                       std::vector<std::string> dirs)
{
    std::vector<std::string> protect = protected_paths(config, sshd_t, dirs);
    Walk w = walk_settings(o, config.doctor);
    Result<std::vector<WalkResult>> walked = walk_as_user(w.roots, protect, w.user, w.limits);
    if (!walked)
        return {problem(Severity::Warn, "node.tamper", "not checked: " + walked.error().message,
                        "files an ordinary user can replace, and software they cannot read, go "
                        "unnoticed.",
                        "run allot-doctor as root (with --software-user naming an existing "
                        "ordinary user)")};
    std::vector<WalkResult> results = std::move(walked).value();
    WalkResult files = results.back();
    results.pop_back();
    Findings out{tamper_finding(files, w.user)};
    add(out, software_findings(results, w.user));
    return out;
}

// The spot QOS's PreemptMode, which under preempt/qos decides how spot jobs are preempted.
std::optional<std::string> spot_preempt_mode(const Result<AccountingInputs>& acct,
                                             const Config& config)
{
    if (!acct) return std::nullopt;
    for (const QosRow& q : acct.value().qos)
        if (q.name == config.tiers.spot.qos) return q.preempt_mode;
    return std::nullopt;
}

Findings controller_findings(const Config& config, const Options& o)
{
    Findings out;
    std::vector<std::string> dirs = plugin_dirs();
    Result<SlurmInputs> slurm = read_slurm();
    Result<AccountingInputs> acct = read_accounting(config.identity.cache_dir + "/syncd.state");
    if (slurm) {
        slurm.value().spot_preempt_mode = spot_preempt_mode(acct, config);
        add(out, check_slurm(slurm.value(), config));
        auto plugin_dir = slurm.value().conf.find("PluginDir");
        if (plugin_dir != slurm.value().conf.end())
            for (const std::string& d : split_list(plugin_dir->second))
                dirs.insert(dirs.begin(), d);
    } else
        out.push_back(unreachable("slurm.reachable", slurm.error(),
                                  "start slurmctld (`systemctl start slurmctld`) and check "
                                  "SLURM_CONF"));
    if (acct)
        add(out, check_accounting(acct.value(), config));
    else
        out.push_back(unreachable("accounting.reachable", acct.error(),
                                  "start slurmdbd (`systemctl start slurmdbd`)"));
    add(out, check_scim(read_scim(config.identity), config.identity));
    add(out, identity_file_findings(config, true));
    add(out, walk_findings(config, o, "", dirs));
    return out;
}

Findings node_findings(const Config& config, Role role, const Options& o)
{
    NodeInputs in{read_text("/etc/nsswitch.conf"), read_text(plugstack_path())};
    Config as_role = config;
    if (config.node.role != NodeRole::Unset)
        as_role.node.role = role == Role::Compute ? NodeRole::Compute : NodeRole::Login;
    Findings out = check_node(in, as_role);
    Result<std::string> sshd_t = read_sshd_effective();
    out.push_back(check_sshd_keys_command(sshd_t));
    if (role == Role::Compute) {
        out.push_back(check_sshd_use_pam(sshd_t));
        out.push_back(check_sshd_penalties(sshd_t));
        out.push_back(check_pam_account(read_pam_account(), kPamSshd));
    }
    add(out, identity_file_findings(config, false));
    add(out, check_id_ranges(read_local_ids("/etc/passwd"), read_local_ids("/etc/group"),
                             config.identity, config.source));
    add(out, walk_findings(config, o, sshd_t ? sshd_t.value() : "", plugin_dirs()));
    return out;
}

int run(const Options& o)
{
    ConfigLoad load = load_config(o.config_path);
    Findings findings;
    if (!load.ok()) {
        findings.push_back(problem(Severity::Fail, "config.load", load.errors.joined(),
                                   "every check compares the cluster with allot.yaml.",
                                   "correct " + o.config_path + " as the lines above say"));
    } else {
        Role role = effective_role(o.role, *load.config);
        if (role == Role::Controller)
            findings = controller_findings(*load.config, o);
        else
            findings = node_findings(*load.config, role, o);
    }
    std::cout << (o.json ? render_json(findings) : render_text(findings));
    return exit_code(findings);
}

}  // namespace

int main(int argc, char** argv)
{
    Options o;
    if (!parse_options(argc, argv, o)) {
        std::cerr << kUsage;
        return kExitUsage;
    }
    return run(o);
}
