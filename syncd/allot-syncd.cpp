// allot-syncd.cpp - the identity sync daemon: SCIM → caches and Slurm accounting.
//
// One cycle (allot::run_sync) pulls users and groups from SCIM, validates
// them, publishes the node's identity caches and, on the controller, makes
// Slurm accounting match allot.yaml. Runs once (--once, --plan) or as a
// daemon (poll interval + jitter, SIGHUP reloads the config, SIGTERM stops
// after the current cycle). Exit codes are documented in allot-syncd(8).
#include <getopt.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <random>

#include "allot/config.hpp"
#include "allot/file_io.hpp"
#include "allot/identity_cache.hpp"
#include "allot/identity_validate.hpp"
#include "curl_http.hpp"
#include "identity_cache_publisher.hpp"
#include "slurmdb_store.hpp"
#include "sync_engine.hpp"
#include "syncd_support.hpp"

using namespace allot;
using allot::syncd::Level;
using allot::syncd::log;

namespace {

enum Exit {
    kOk = 0,
    kUsage = 1,
    kSource = 2,
    kRefused = 3,
    kAccounting = 4,
    kLockBusy = 5,
    kCache = 6,
};

struct Options {
    std::string config = kDefaultConfigPath;
    bool plan = false, once = false, force = false, adopt = false;
    bool accounting = true, caches = true, check_config = false;
    std::string lock_file, state_file, metrics_file, cluster;
    bool use_syslog = false;
    Level level = Level::Info;
};

void usage(FILE* out)
{
    fprintf(out,
            "usage: allot-syncd [options]\n"
            "  -c, --config FILE     configuration (default %s)\n"
            "      --plan            print the changes a sync would make; write nothing\n"
            "      --once            run one cycle and exit (default: daemon)\n"
            "      --force           apply despite an empty source or a large removal plan\n"
            "      --adopt           take over same-named accounts/QOS not made by allot\n"
            "      --no-accounting   do not touch Slurm accounting (login/compute nodes)\n"
            "      --no-caches       do not publish identity caches\n"
            "      --cluster NAME    Slurm cluster (default: cluster.name)\n"
            "      --lock-file FILE  default <node.run_dir>/allot-syncd.lock\n"
            "      --state-file FILE default <identity.cache_dir>/syncd.state\n"
            "      --metrics-file F  Prometheus textfile, rewritten after each cycle\n"
            "      --syslog          log to syslog instead of stderr\n"
            "  -v, --verbose         debug logging;  -q, --quiet: warnings and errors only\n"
            "      --check-config    validate the configuration and exit\n"
            "  -h, --help\n",
            kDefaultConfigPath);
}

std::optional<Config> load(const std::string& path)
{
    ConfigLoad l = load_config(path);
    if (!l.ok()) {
        for (const auto& e : l.errors.lines) log(Level::Error, e);
        return std::nullopt;
    }
    return l.config;
}

std::string state_path(const Options& opt, const Config& cfg)
{
    return opt.state_file.empty() ? cfg.identity.cache_dir + "/syncd.state" : opt.state_file;
}

std::string dirname_of(const std::string& path)
{
    const auto slash = path.rfind('/');
    return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

// The temporaries write_file_atomically(path) left beside `path`.
size_t remove_temporaries_of(const std::string& path)
{
    const std::string name = path.substr(path.rfind('/') + 1);  // npos + 1: all of it
    return syncd::remove_files(
        dirname_of(path), [&](std::string_view entry) { return is_temporary_of(name, entry); });
}

// A cycle killed half way (kill -9, power loss) leaves temporary files; the
// next start removes them (only allot's own names), under the lock.
void remove_stale_temporaries(const Options& opt, const Config& cfg)
{
    size_t removed = syncd::remove_files(cfg.identity.cache_dir, is_cache_temporary);
    removed += remove_temporaries_of(state_path(opt, cfg));
    if (!opt.metrics_file.empty()) removed += remove_temporaries_of(opt.metrics_file);
    if (removed)
        log(Level::Info,
            "removed " + std::to_string(removed) + " temporary file(s) left by an interrupted run");
}

double now()
{
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

uint64_t monotonic_ms()
{
    return uint64_t(std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::steady_clock::now().time_since_epoch())
                        .count());
}

Result<CurlOptions> curl_options(const Config& cfg)
{
    CurlOptions co;
    co.ca_file = cfg.identity.ca_file;
    co.timeout_ms = cfg.identity.timeout_seconds * 1000;
    co.max_body_bytes = cfg.identity.source_max_response_bytes;
    if (!cfg.identity.token_file.empty()) {
        auto token = read_token_file(cfg.identity.token_file);
        if (!token) return Error(token.error().code, "token: " + token.error().message);
        co.bearer_token = token.value();
    }
    return co;
}

// Paging, retries and the bounds on this cycle's reads (identity.source_*).
ScimFetchOptions fetch_options(const Config& cfg, std::mt19937& rng)
{
    ScimFetchOptions fo;
    fo.base_url = cfg.identity.scim_url;
    fo.ext_schema = cfg.identity.extension_schema;
    fo.attributes = scim_attribute_map(cfg.identity);
    fo.extra_pages = cfg.identity.source_extra_pages;
    fo.max_response_bytes = cfg.identity.source_max_response_bytes;
    fo.max_cycle_bytes = cfg.identity.source_max_cycle_bytes;
    fo.now_ms = monotonic_ms;
    fo.deadline_ms = monotonic_ms() + uint64_t(cfg.identity.source_deadline_seconds) * 1000;
    fo.sleep = [](uint32_t ms) { usleep(useconds_t(ms) * 1000); };
    fo.jitter = [&rng] { return uint32_t(rng() % 1000); };
    return fo;
}

void print_plan(const SyncReport& rep)
{
    size_t add = 0, mod = 0, rm = 0;
    for (const auto& c : rep.plan.changes) {
        std::cout << c.text() << "\n";
        add += c.op == ChangeOp::Add;
        mod += c.op == ChangeOp::Modify;
        rm += c.op == ChangeOp::Remove;
    }
    std::cout << "plan: " << add << " to add, " << mod << " to modify, " << rm << " to remove ("
              << rep.plan.drifted() << " drift)";
    if (rep.status == SyncStatus::Refused) std::cout << "; would be REFUSED";
    std::cout << "\n";
}

void log_report(const Options& opt, const SyncReport& rep)
{
    for (const auto& r : rep.directory.rejections)
        log(Level::Warning, "rejected " + r.kind + " '" + r.object + "': " + r.reason);
    if (rep.private_groups_skipped)
        log(Level::Info, "left out " + std::to_string(rep.private_groups_skipped) +
                             " users' private groups the source synthesises (userPrivateGroup)");
    for (const auto& n : rep.plan.notes) log(Level::Info, n);
    if (opt.plan) {
        print_plan(rep);
    } else {
        for (const auto& c : rep.plan.changes)
            log(c.drift ? Level::Warning : Level::Info,
                (rep.accounting_applied ? "applied: " : "planned: ") + c.text());
        for (const auto& d : rep.applied.deferred) log(Level::Warning, "deferred: " + d);
        for (const auto& f : rep.applied.failed) log(Level::Error, "failed: " + f);
    }
    if (rep.status != SyncStatus::Ok) log(Level::Error, rep.message);
    std::string phases;
    for (const auto& [name, s] : rep.phase_seconds)
        phases += (phases.empty() ? "" : ", ") + name + " " + std::to_string(s) + " s";
    if (!phases.empty()) log(Level::Debug, "cycle phases: " + phases);
}

// Counts the cycle in the metrics and maps its status to the exit code.
int record_outcome(const Options& opt, const SyncReport& rep, const std::string& state_file,
                   double start, syncd::Metrics& metrics)
{
    metrics.rejected = rep.directory.rejections.size();
    metrics.rejected_total += rep.directory.rejections.size();
    metrics.users = rep.directory.users.size();
    metrics.groups = rep.directory.groups.size();
    metrics.last_changes = rep.plan.changes.size();
    metrics.held = rep.plan.held_users.size();
    metrics.duration = now() - start;
    switch (rep.status) {
        case SyncStatus::Ok:
            metrics.last_success = now();
            if (rep.accounting_applied && !opt.plan) {
                metrics.changes_total += rep.applied.applied;
                metrics.drift_total += rep.plan.drifted();
                if (auto s = syncd::save_state(state_file, rep.new_applied_state); !s)
                    log(Level::Warning,
                        "state file: " + s.error().message + " (drift detection degraded)");
            }
            log(Level::Info, "sync ok: " + std::to_string(metrics.users) + " users, " +
                                 std::to_string(metrics.groups) + " groups, " +
                                 std::to_string(rep.plan.changes.size()) + " changes, " +
                                 std::to_string(metrics.rejected) + " rejected, " +
                                 std::to_string(int(metrics.duration * 1000)) + " ms");
            return kOk;
        case SyncStatus::SourceError: ++metrics.source_errors; return kSource;
        case SyncStatus::Refused: ++metrics.refusals; return kRefused;
        case SyncStatus::AccountingError: ++metrics.accounting_errors; return kAccounting;
        case SyncStatus::CacheError: return kCache;
    }
    return kOk;
}

int run_cycle(const Options& opt, const Config& cfg, syncd::Metrics& metrics)
{
    const double start = now();
    metrics.last_run = start;
    ++metrics.runs;

    auto co = curl_options(cfg);
    if (!co) {
        log(Level::Error, co.error().message);
        ++metrics.source_errors;
        return metrics.last_status = kSource;
    }
    // The node's own accounts and groups, read fresh each cycle: no directory
    // record may take one of their names or ids.
    auto local = load_local_identities();
    if (!local) {
        log(Level::Error,
            local.error().message + "; refusing to sync without knowing this node's own accounts");
        ++metrics.refusals;
        return metrics.last_status = kRefused;
    }
    CurlHttpClient http(co.value());
    std::mt19937 rng(std::random_device{}());
    HttpScimSource source(http, fetch_options(cfg, rng));
    std::unique_ptr<AccountingStore> store;
    if (opt.accounting)
        store.reset(new SlurmdbStore(opt.cluster.empty() ? cfg.cluster.name : opt.cluster));
    syncd::IdentityCachePublisher caches(cfg.identity.cache_dir);
    syncd::NssResolver resolver;

    const std::string state_file = state_path(opt, cfg);
    const auto last_applied = syncd::load_state(state_file);
    SyncOptions so;
    so.plan_only = opt.plan;
    so.force = opt.force;
    so.adopt = opt.adopt;
    so.accounting = opt.accounting;
    so.caches = opt.caches;
    so.max_removals = cfg.identity.max_removals;
    so.last_applied = &last_applied;
    so.local = &local.value();

    const SyncReport rep = run_sync(cfg, source, store.get(), resolver, &caches, so);
    log_report(opt, rep);
    return metrics.last_status = record_outcome(opt, rep, state_file, start, metrics);
}

void write_metrics(const Options& opt, const syncd::Metrics& m)
{
    if (opt.metrics_file.empty()) return;
    if (auto r = write_file_atomically(opt.metrics_file, m.render(), AtomicWrite{0644}); !r)
        log(Level::Warning, "metrics: " + r.error().message);
}

// Fills `opt` from the command line; returns an exit code when the program
// should stop here (help, usage error), else -1.
int parse_options(int argc, char** argv, Options& opt)
{
    enum {
        kPlan = 1000,
        kOnce,
        kForce,
        kAdopt,
        kNoAcct,
        kNoCaches,
        kCluster,
        kLock,
        kState,
        kMetrics,
        kSyslog,
        kCheck
    };
    static const option longopts[] = {{"config", required_argument, nullptr, 'c'},
                                      {"plan", no_argument, nullptr, kPlan},
                                      {"once", no_argument, nullptr, kOnce},
                                      {"force", no_argument, nullptr, kForce},
                                      {"adopt", no_argument, nullptr, kAdopt},
                                      {"no-accounting", no_argument, nullptr, kNoAcct},
                                      {"no-caches", no_argument, nullptr, kNoCaches},
                                      {"cluster", required_argument, nullptr, kCluster},
                                      {"lock-file", required_argument, nullptr, kLock},
                                      {"state-file", required_argument, nullptr, kState},
                                      {"metrics-file", required_argument, nullptr, kMetrics},
                                      {"syslog", no_argument, nullptr, kSyslog},
                                      {"verbose", no_argument, nullptr, 'v'},
                                      {"quiet", no_argument, nullptr, 'q'},
                                      {"check-config", no_argument, nullptr, kCheck},
                                      {"help", no_argument, nullptr, 'h'},
                                      {nullptr, 0, nullptr, 0}};
    int ch;
    while ((ch = getopt_long(argc, argv, "c:vqh", longopts, nullptr)) != -1) {
        switch (ch) {
            case 'c': opt.config = optarg; break;
            case kPlan: opt.plan = true; break;
            case kOnce: opt.once = true; break;
            case kForce: opt.force = true; break;
            case kAdopt: opt.adopt = true; break;
            case kNoAcct: opt.accounting = false; break;
            case kNoCaches: opt.caches = false; break;
            case kCluster: opt.cluster = optarg; break;
            case kLock: opt.lock_file = optarg; break;
            case kState: opt.state_file = optarg; break;
            case kMetrics: opt.metrics_file = optarg; break;
            case kSyslog: opt.use_syslog = true; break;
            case 'v': opt.level = Level::Debug; break;
            case 'q': opt.level = Level::Warning; break;
            case kCheck: opt.check_config = true; break;
            case 'h': usage(stdout); return kOk;
            default: usage(stderr); return kUsage;
        }
    }
    if (optind != argc) {
        usage(stderr);
        return kUsage;
    }
    return -1;
}

// Waits for the next cycle: the poll interval with ±10 % jitter (so many
// nodes do not hit SCIM together), cut short by SIGHUP (reload, then sync at
// once). Returns false on SIGTERM/SIGINT.
bool wait_for_next_cycle(const Options& opt, Config& cfg, const sigset_t& sigs, std::mt19937& rng)
{
    const uint32_t base = std::max<uint32_t>(cfg.identity.poll_seconds, 1);
    const uint32_t spread = base / 10;
    uint32_t wait_s = base - spread + (spread ? uint32_t(rng() % (2 * spread + 1)) : 0);
    for (;;) {
        timespec ts{time_t(wait_s), 0};
        const auto t0 = now();
        const int sig = sigtimedwait(&sigs, nullptr, &ts);
        if (sig == SIGTERM || sig == SIGINT) {
            log(Level::Info, "stopping on signal " + std::to_string(sig));
            return false;
        }
        if (sig == SIGHUP) {
            if (auto fresh = load(opt.config)) {
                cfg = *fresh;
                log(Level::Info, "configuration reloaded");
            } else {
                log(Level::Error, "configuration reload failed; keeping the previous one");
            }
            return true;
        }
        if (sig < 0 && errno == EINTR) {
            const double left = wait_s - (now() - t0);
            if (left > 0) {
                wait_s = uint32_t(left);
                continue;
            }
        }
        return true;  // timeout: next cycle
    }
}

int run_daemon(const Options& opt, Config& cfg, const sigset_t& sigs)
{
    log(Level::Info,
        "daemon started; polling every " + std::to_string(cfg.identity.poll_seconds) + " s");
    syncd::Metrics metrics;
    std::mt19937 rng(std::random_device{}());
    do {
        run_cycle(opt, cfg, metrics);
        write_metrics(opt, metrics);
    } while (wait_for_next_cycle(opt, cfg, sigs, rng));
    return kOk;
}

}  // namespace

int main(int argc, char** argv)
{
    Options opt;
    if (const int rc = parse_options(argc, argv, opt); rc >= 0) return rc;
    syncd::log_open(opt.use_syslog, opt.level);
    auto cfg = load(opt.config);
    if (!cfg) return kUsage;
    if (opt.check_config) {
        std::cout << opt.config << ": ok\n";
        return kOk;
    }
    if (cfg->identity.scim_url.empty()) {
        log(Level::Error, opt.config + ": identity.scim_url is not set");
        return kUsage;
    }

    // SIGHUP/SIGTERM/SIGINT stay blocked: a cycle is never interrupted half
    // way; they are collected with sigtimedwait between cycles.
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGHUP);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    if (!opt.once && !opt.plan) sigprocmask(SIG_BLOCK, &sigs, nullptr);
    signal(SIGPIPE, SIG_IGN);

    const std::string lock_path =
        opt.lock_file.empty() ? cfg->node.run_dir + "/allot-syncd.lock" : opt.lock_file;
    std::unique_ptr<syncd::LockFile> lock;
    if (!opt.plan) {  // --plan writes nothing and may run beside a daemon
        lock.reset(new syncd::LockFile(lock_path));
        if (!lock->held()) {
            log(Level::Error, "lock: " + lock->error());
            return kLockBusy;
        }
        remove_stale_temporaries(opt, *cfg);
    }
    if (!opt.once && !opt.plan) return run_daemon(opt, *cfg, sigs);
    syncd::Metrics metrics;
    const int rc = run_cycle(opt, *cfg, metrics);
    write_metrics(opt, metrics);
    return rc;
}
