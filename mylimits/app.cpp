// app.cpp - option parsing, permission rules and the report pipeline of mylimits.
#include "app.hpp"

#include <getopt.h>

#include <algorithm>
#include <cstring>

#include "allot/config.hpp"
#include "config.h"
#include "render.hpp"

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

Error usage_error(std::string detail)
{
    return make_error(Errc::Usage, std::move(detail));
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
                    return usage_error("--color must be auto, always or never");
                break;
            case ':':
                return usage_error("option " + std::string(argv[optind - 1]) + " needs a value");
            default: {
                std::string bad = optopt ? std::string("-") + static_cast<char>(optopt)
                                         : std::string(argv[optind - 1]);
                return usage_error("unknown option " + bad);
            }
        }
    }
    if (optind < static_cast<int>(argv.size() - 1))
        return usage_error("unexpected argument '" + std::string(argv[optind]) + "'");
    if (!o.user.empty() && !valid_slurm_name(o.user))
        return usage_error("--user: not a valid user name");
    if (!o.account.empty() && !valid_slurm_name(o.account))
        return usage_error("--account: not a valid account name");
    return o;
}

namespace {

Result<Config> configuration(const Options& options, const Environment& env)
{
    std::string path = options.config_path;
    if (path.empty()) path = env.env_config;
    if (path.empty()) path = kDefaultConfigPath;
    ConfigLoad load = load_config(path);
    if (!load.ok())
        return make_error(Errc::Config, "cannot use " + path + ":\n" + load.errors.joined());
    return std::move(*load.config);
}

// Who is asking, and whether they may look at others: root, or a Slurm Operator
// (asked of slurmctld only when it matters).
class Caller {
public:
    Caller(PasswdEntry entry, bool root, SlurmQuery& slurm)
        : entry_(std::move(entry)), privileged_(root), slurm_(slurm)
    {
    }
    const PasswdEntry& entry() const { return entry_; }

    Status require_privilege(const std::string& what)
    {
        if (privileged_) return ok_status();
        auto op = slurm_.is_operator(entry_.name);
        if (!op.ok())
            return Error(op.error().code,
                         "cannot check your Slurm admin level: " + op.error().message);
        if (!op.value())
            return make_error(Errc::Denied,
                              what + " is for administrators (root or Slurm AdminLevel=Operator)");
        privileged_ = true;
        return ok_status();
    }

private:
    PasswdEntry entry_;
    bool privileged_;
    SlurmQuery& slurm_;
};

Result<PasswdEntry> target_user(const Options& options, const Environment& env, Caller& caller)
{
    if (options.user.empty() || options.user == caller.entry().name) return caller.entry();
    if (auto allowed = caller.require_privilege("--user"); !allowed.ok()) return allowed.error();
    auto t = env.user_by_name(options.user);
    if (!t) return make_error(Errc::NoSuchUser, "no such user: " + options.user);
    return *t;
}

// --account: keeps that account's associations and jobs only.
Status narrow_to_account(const std::string& account, const PasswdEntry& target, Caller& caller,
                         SlurmFacts& sf)
{
    const bool member = std::any_of(sf.assocs.begin(), sf.assocs.end(),
                                    [&](const auto& a) { return a.account == account; });
    // Narrowing to one's own account needs no privilege; naming any other does.
    if (!member && target.name == caller.entry().name)
        if (auto allowed = caller.require_privilege("--account with an account you are not in");
            !allowed.ok())
            return allowed;
    if (!member)
        return make_error(Errc::NoAssociation,
                          target.name + " has no association with account " + account);
    sf.assocs.erase(std::remove_if(sf.assocs.begin(), sf.assocs.end(),
                                   [&](const auto& a) { return a.account != account; }),
                    sf.assocs.end());
    sf.jobs.erase(std::remove_if(sf.jobs.begin(), sf.jobs.end(),
                                 [&](const auto& j) { return j.account != account; }),
                  sf.jobs.end());
    return ok_status();
}

quota::SourceResult quota_conf_failure(const std::string& path, Error error)
{
    quota::SourceResult bad;
    bad.name = "quota.conf";
    bad.where = path;
    bad.reading = std::move(error);
    return bad;
}

// Every source is tried; failures are reported in the report, never fatal.
std::vector<quota::SourceResult> storage(const Options& options, const Environment& env,
                                         QuotaSystem& quotas, const PasswdEntry& target)
{
    std::string path = options.quota_conf;
    if (path.empty()) path = env.env_quota_conf;
    if (path.empty()) path = kDefaultQuotaConf;
    std::vector<quota::SourceSpec> specs;
    auto text = quotas.read_file(path);
    if (text.ok()) {
        auto parsed = quota::parse_sources(text.value());
        if (!parsed.ok()) return {quota_conf_failure(path, parsed.error())};
        specs = std::move(parsed.value());
    } else if (text.error().is(allot::Errc::NotFound) && !target.home.empty() &&
               target.home[0] == '/') {
        // No quota.conf: the kernel quota of the home filesystem, as `quota` would.
        specs.push_back({"home", quota::SourceKind::Quotactl, target.home});
    } else {
        return {quota_conf_failure(path, text.error())};
    }
    std::vector<quota::SourceResult> results;
    for (const auto& spec : specs)
        results.push_back(read_quota_source(quotas, spec, target.name, target.uid));
    return results;
}

Status print_report(const Options& options, const Environment& env, SlurmQuery& slurm,
                    QuotaSystem& quotas, std::ostream& out)
{
    auto config = configuration(options, env);
    if (!config.ok()) return config.error();

    auto caller_entry = env.user_by_uid(env.caller_uid);
    if (!caller_entry)
        return make_error(Errc::NoSuchUser,
                          "your uid " + std::to_string(env.caller_uid) + " has no passwd entry");
    Caller caller(*caller_entry, env.caller_uid == 0, slurm);
    auto target = target_user(options, env, caller);
    if (!target.ok()) return target.error();

    auto fetched =
        slurm.fetch(target.value().name, target.value().uid, config.value().cluster.name);
    if (!fetched.ok()) return fetched.error();
    SlurmFacts& sf = fetched.value();
    if (!options.account.empty())
        if (auto narrowed = narrow_to_account(options.account, target.value(), caller, sf);
            !narrowed.ok())
            return narrowed;

    limits::Facts facts;
    facts.user = sf.user;
    facts.user.name = target.value().name;
    facts.user.uid = target.value().uid;
    facts.assocs = std::move(sf.assocs);
    facts.qos = std::move(sf.qos);
    facts.jobs = std::move(sf.jobs);
    facts.notes = std::move(sf.notes);
    facts.now = env.now;
    facts.storage_skipped = options.no_quota;
    if (!options.no_quota) facts.storage = storage(options, env, quotas, target.value());

    limits::Report report = limits::build_report(facts, config.value());
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
    return ok_status();
}

}  // namespace

bool print_help_or_version(const Options& options, std::ostream& out)
{
    if (options.help)
        out << usage_text();
    else if (options.version)
        out << "mylimits (allot) " << PACKAGE_VERSION << ", built for Slurm "
            << ALLOT_SLURM_VERSION_STRING << "\n";
    return options.help || options.version;
}

int run(const Options& options, const Environment& env, SlurmQuery& slurm, QuotaSystem& quotas,
        std::ostream& out, std::ostream& err)
{
    if (print_help_or_version(options, out)) return kExitOk;
    auto printed = print_report(options, env, slurm, quotas, out);
    if (printed.ok()) return kExitOk;
    err << "mylimits: " << printed.error().describe() << "\n";
    return exit_code(printed.error());
}

}  // namespace allot::mylimits
