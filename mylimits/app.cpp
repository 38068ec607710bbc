// app.cpp - option parsing, permission rules and the report pipeline of mylimits.
#include "app.hpp"

#include <getopt.h>

#include <algorithm>
#include <cstring>

#include "allot/config.hpp"
#include "render.hpp"
#include "config.h"

namespace allot::mylimits {
namespace {

constexpr const char* kDefaultQuotaConf = "/etc/allot/quota.conf";

bool valid_slurm_name(const std::string& s)
{
    if (s.empty() || s.size() > 64) return false;
    for (char c : s)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ||
              c == '@'))
            return false;
    return true;
}

std::vector<std::string> tier_qos_names(const Config& config)
{
    std::vector<std::string> names;
    auto add = [&](const std::string& n) {
        if (!n.empty() && std::find(names.begin(), names.end(), n) == names.end())
            names.push_back(n);
    };
    for (const auto& t : config.teams) add(t.qos.empty() ? t.account : t.qos);
    add(config.tiers.general.qos);
    add(config.tiers.spot.qos);
    return names;
}

}  // namespace

std::string usage_text()
{
    return "Usage: mylimits [OPTION]...\n"
           "Show the GPU tiers, caps and usage you may use, why your jobs wait, and your\n"
           "storage quotas.\n"
           "\n"
           "  -j, --json              print the report as JSON (schema allot.mylimits/1)\n"
           "  -a, --all               list every job (default: the first 30)\n"
           "      --color=WHEN        colour: auto (a terminal, NO_COLOR unset), always, never\n"
           "      --no-quota          skip the storage quota sources\n"
           "  -u, --user=NAME         report for another user (root or Slurm operators)\n"
           "  -A, --account=NAME      only this account (others' accounts: root or operators)\n"
           "      --config=FILE       allot.yaml (default $ALLOT_CONFIG or /etc/allot/allot.yaml)\n"
           "      --quota-conf=FILE   quota sources (default $ALLOT_QUOTA_CONF or\n"
           "                          /etc/allot/quota.conf)\n"
           "  -h, --help              this help\n"
           "  -V, --version           version\n"
           "\n"
           "Exit status: 0 report shown, 2 bad option, 3 configuration error, 4 Slurm\n"
           "unreachable, 5 permission denied, 6 unknown user or account. See mylimits(1).\n";
}

Result<Options> parse_options(const std::vector<std::string>& args)
{
    enum { kColor = 1000, kConfig, kQuotaConf, kNoQuota };
    static const option long_opts[] = {
        {"json", no_argument, nullptr, 'j'},
        {"all", no_argument, nullptr, 'a'},
        {"color", required_argument, nullptr, kColor},
        {"colour", required_argument, nullptr, kColor},
        {"no-quota", no_argument, nullptr, kNoQuota},
        {"user", required_argument, nullptr, 'u'},
        {"account", required_argument, nullptr, 'A'},
        {"config", required_argument, nullptr, kConfig},
        {"quota-conf", required_argument, nullptr, kQuotaConf},
        {"help", no_argument, nullptr, 'h'},
        {"version", no_argument, nullptr, 'V'},
        {nullptr, 0, nullptr, 0},
    };
    std::vector<std::string> copy = args;
    if (copy.empty()) copy.push_back("mylimits");
    std::vector<char*> argv;
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    Options o;
    optind = 0;  // full reset: parse_options may run more than once (tests)
    opterr = 0;
    for (;;) {
        int idx = 0;
        const int c = getopt_long(static_cast<int>(argv.size() - 1), argv.data(), "+jau:A:hV",
                                  long_opts, &idx);
        if (c == -1) break;
        switch (c) {
            case 'j': o.json = true; break;
            case 'a': o.all = true; break;
            case 'u': o.user = optarg; break;
            case 'A': o.account = optarg; break;
            case 'h': o.help = true; break;
            case 'V': o.version = true; break;
            case kNoQuota: o.no_quota = true; break;
            case kConfig: o.config_path = optarg; break;
            case kQuotaConf: o.quota_conf = optarg; break;
            case kColor:
                if (!std::strcmp(optarg, "auto"))
                    o.color = ColorMode::Auto;
                else if (!std::strcmp(optarg, "always"))
                    o.color = ColorMode::Always;
                else if (!std::strcmp(optarg, "never"))
                    o.color = ColorMode::Never;
                else
                    return make_error("--color must be auto, always or never");
                break;
            case ':':
                return make_error("option " + std::string(argv[optind - 1]) + " needs a value");
            default: {
                std::string bad = optopt ? std::string("-") + static_cast<char>(optopt)
                                         : std::string(argv[optind - 1]);
                return make_error("unknown option " + bad);
            }
        }
    }
    if (optind < static_cast<int>(argv.size() - 1))
        return make_error("unexpected argument '" + std::string(argv[optind]) + "'");
    if (!o.user.empty() && !valid_slurm_name(o.user))
        return make_error("--user: not a valid user name");
    if (!o.account.empty() && !valid_slurm_name(o.account))
        return make_error("--account: not a valid account name");
    return o;
}

int run(const Options& options, const Environment& env, SlurmQuery& slurm, QuotaSystem& quotas,
        std::ostream& out, std::ostream& err)
{
    if (options.help) {
        out << usage_text();
        return kExitOk;
    }
    if (options.version) {
        out << "mylimits (allot) " << PACKAGE_VERSION << ", built for Slurm "
            << ALLOT_SLURM_VERSION_STRING << "\n";
        return kExitOk;
    }

    // ---- configuration: the tier and team names come from allot.yaml.
    std::string config_path = options.config_path;
    if (config_path.empty()) config_path = env.env_config;
    if (config_path.empty()) config_path = kDefaultConfigPath;
    ConfigLoad load = load_config(config_path);
    if (!load.ok()) {
        err << "mylimits: cannot use " << config_path << ":\n" << load.errors.joined() << "\n";
        return kExitConfig;
    }
    const Config& config = *load.config;

    // ---- who is asking, and about whom.
    auto caller = env.user_by_uid(env.caller_uid);
    if (!caller) {
        err << "mylimits: your uid " << env.caller_uid << " has no passwd entry\n";
        return kExitNoSuchUser;
    }
    PasswdEntry target = *caller;
    bool privileged = env.caller_uid == 0;
    auto require_privilege = [&](const char* what) -> int {
        if (privileged) return kExitOk;
        auto op = slurm.is_operator(caller->name);
        if (!op.ok()) {
            err << "mylimits: cannot check your Slurm admin level: " << op.error().message << "\n";
            return kExitSlurm;
        }
        if (!op.value()) {
            err << "mylimits: " << what
                << " is for administrators (root or Slurm AdminLevel=Operator)\n";
            return kExitDenied;
        }
        privileged = true;
        return kExitOk;
    };
    if (!options.user.empty() && options.user != caller->name) {
        if (int rc = require_privilege("--user")) return rc;
        auto t = env.user_by_name(options.user);
        if (!t) {
            err << "mylimits: no such user: " << options.user << "\n";
            return kExitNoSuchUser;
        }
        target = *t;
    }

    // ---- Slurm.
    SlurmFacts sf;
    SlurmError se;
    if (!slurm.fetch(target.name, target.uid, tier_qos_names(config), config.cluster.name, sf,
                     se)) {
        err << "mylimits: cannot reach "
            << (se.where == SlurmFailure::Ctld ? "slurmctld" : "slurmdbd") << ": " << se.message
            << "\n";
        return kExitSlurm;
    }

    if (!options.account.empty()) {
        const bool member = std::any_of(sf.assocs.begin(), sf.assocs.end(), [&](const auto& a) {
            return a.account == options.account;
        });
        // Narrowing to one's own account needs no privilege; naming any other does.
        if (!member && target.name == caller->name)
            if (int rc = require_privilege("--account with an account you are not in")) return rc;
        if (!member) {
            err << "mylimits: " << target.name << " has no association with account "
                << options.account << "\n";
            return kExitNoSuchUser;
        }
        sf.assocs.erase(std::remove_if(sf.assocs.begin(), sf.assocs.end(),
                                       [&](const auto& a) { return a.account != options.account; }),
                        sf.assocs.end());
        sf.jobs.erase(std::remove_if(sf.jobs.begin(), sf.jobs.end(),
                                     [&](const auto& j) { return j.account != options.account; }),
                      sf.jobs.end());
    }

    limits::Facts facts;
    facts.user = sf.user;
    facts.user.name = target.name;
    facts.user.uid = target.uid;
    facts.assocs = std::move(sf.assocs);
    facts.qos = std::move(sf.qos);
    facts.jobs = std::move(sf.jobs);
    facts.notes = std::move(sf.notes);
    facts.now = env.now;
    facts.storage_skipped = options.no_quota;

    // ---- storage: every source is tried; failures are reported in the report.
    if (!options.no_quota) {
        std::string qpath = options.quota_conf;
        if (qpath.empty()) qpath = env.env_quota_conf;
        if (qpath.empty()) qpath = kDefaultQuotaConf;
        std::vector<quota::SourceSpec> specs;
        auto text = quotas.read_file(qpath);
        if (text.ok()) {
            auto parsed = quota::parse_sources(text.value());
            if (parsed.ok()) {
                specs = std::move(parsed.value());
            } else {
                quota::SourceResult bad;
                bad.name = "quota.conf";
                bad.where = qpath;
                bad.error = parsed.error().message;
                facts.storage.push_back(bad);
            }
        } else if (text.error().message.find("No such file") != std::string::npos &&
                   !target.home.empty() && target.home[0] == '/') {
            // No quota.conf: the kernel quota of the home filesystem, as `quota` would.
            specs.push_back({"home", quota::SourceKind::Quotactl, target.home});
        } else {
            quota::SourceResult bad;
            bad.name = "quota.conf";
            bad.where = qpath;
            bad.error = text.error().message;
            facts.storage.push_back(bad);
        }
        for (const auto& spec : specs)
            facts.storage.push_back(read_quota_source(quotas, spec, target.name, target.uid));
    }

    limits::Report report = limits::build_report(facts, config);
    if (options.json) {
        out << limits::render_json(report);
    } else {
        limits::TextOptions t;
        t.color = options.color == ColorMode::Always ||
                  (options.color == ColorMode::Auto && env.stdout_is_tty && !env.no_color_env);
        t.max_jobs = options.all ? 0 : 30;
        out << limits::render_text(report, t);
    }
    out.flush();
    return kExitOk;
}

}  // namespace allot::mylimits
