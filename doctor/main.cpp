// main.cpp - allot-doctor: gathers the live inputs of its role, runs the pure
// checks and prints the findings (text or --json). Read-only; exit 0 when all
// is well, 1 on warnings, 2 on failures (allot-doctor(8)); 64 on a bad command line.
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "accounting_checks.hpp"
#include "allot/config.hpp"
#include "finding.hpp"
#include "node_checks.hpp"
#include "slurm_checks.hpp"
#include "slurm_reader.hpp"

namespace {

using namespace allot;
using namespace allot::doctor;

enum class Role { FromConfig, Controller, Login, Compute };

struct Options {
    std::string config_path = kDefaultConfigPath;
    Role role = Role::FromConfig;
    bool json = false;
};

constexpr int kExitUsage = 64;

const char* kUsage = "usage: allot-doctor [-c FILE] [--role controller|login|compute] [--json]\n";

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

std::string read_text(const std::string& path)
{
    std::ifstream in(path);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// plugstack.conf sits beside the slurm.conf in use.
std::string plugstack_path()
{
    const char* conf = std::getenv("SLURM_CONF");
    std::string slurm_conf = conf ? conf : "/etc/slurm/slurm.conf";
    return slurm_conf.substr(0, slurm_conf.rfind('/') + 1) + "plugstack.conf";
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

Findings controller_findings(const Config& config)
{
    Findings out;
    Result<SlurmInputs> slurm = read_slurm();
    if (slurm)
        add(out, check_slurm(slurm.value(), config));
    else
        out.push_back(unreachable("slurm.reachable", slurm.error(),
                                  "start slurmctld (`systemctl start slurmctld`) and check "
                                  "SLURM_CONF"));
    Result<AccountingInputs> acct = read_accounting();
    if (acct)
        add(out, check_accounting(acct.value(), config));
    else
        out.push_back(unreachable("accounting.reachable", acct.error(),
                                  "start slurmdbd (`systemctl start slurmdbd`)"));
    return out;
}

Findings node_findings(const Config& config, Role role)
{
    NodeInputs in{read_text("/etc/nsswitch.conf"), read_text(plugstack_path())};
    if (config.node.role == NodeRole::Unset) return check_node(in, config);
    Config as_role = config;
    as_role.node.role = role == Role::Compute ? NodeRole::Compute : NodeRole::Login;
    return check_node(in, as_role);
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
            findings = controller_findings(*load.config);
        else
            findings = node_findings(*load.config, role);
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
