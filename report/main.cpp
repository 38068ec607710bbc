// main.cpp - allot-report: GPU-hours used against capacity, by period, team and tier, from
// slurmdbd's records (read-only), as a terminal table, CSV, JSON or a static HTML page.
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>

#include "allot/config.hpp"
#include "errors.hpp"
#include "options.hpp"
#include "reconcile.hpp"
#include "render.hpp"
#include "slurmdb_reader.hpp"
#include "storage_io.hpp"
#include "usage.hpp"

extern char** environ;

namespace allot::report {
namespace {

struct Captured {
    int status = -1;
    std::string out;
};

// Runs argv (no shell) with TZ=UTC, so sacct reads and prints times in UTC.
Result<Captured> run_utc(const std::vector<std::string>& argv)
{
    std::vector<std::string> env_store;
    for (char** e = environ; *e; ++e)
        if (std::strncmp(*e, "TZ=", 3) != 0) env_store.emplace_back(*e);
    env_store.emplace_back("TZ=UTC");
    std::vector<char*> envp, args;
    for (auto& s : env_store) envp.push_back(s.data());
    envp.push_back(nullptr);
    std::vector<std::string> argv_store = argv;
    for (auto& s : argv_store) args.push_back(s.data());
    args.push_back(nullptr);
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return make_error(std::string("pipe: ") + strerror(errno));
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    pid_t pid = 0;
    const int rc = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), envp.data());
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    Captured c;
    if (rc == 0) {
        char buf[65536];
        ssize_t n;
        while ((n = read(fds[0], buf, sizeof buf)) > 0) c.out.append(buf, size_t(n));
        waitpid(pid, &c.status, 0);
    }
    close(fds[0]);
    if (rc != 0) return make_error(argv[0] + ": " + strerror(rc));
    return c;
}

bool succeeded(const Result<Captured>& run)
{
    return run && WIFEXITED(run.value().status) && WEXITSTATUS(run.value().status) == 0;
}

std::string against_sacct(const Report& rep, int64_t now)
{
    auto run = run_utc(sacct_command(rep.cluster, rep.from, rep.until));
    if (!succeeded(run))
        return reconciliation_line(rep.total_used(), std::nullopt,
                                   run ? "sacct failed" : run.error().describe());
    return reconciliation_line(rep.total_used(),
                               sacct_gpu_seconds(run.value().out, rep.from, rep.until, now), "");
}

// sreport over the window's whole hours slurmdbd has rolled up, against the report's own
// GPU-seconds over the same hours (summed from its series, whose steps divide an hour).
std::string against_sreport(const Report& rep, int64_t now)
{
    const auto end = rollup_end(rep.from, rep.until, now);
    if (!end)
        return sreport_clause(0, std::nullopt,
                              "slurmdbd has rolled up no whole hour of the window");
    auto run = run_utc(sreport_command(rep.cluster, rep.from, *end));
    if (!succeeded(run)) return sreport_clause(0, std::nullopt, "sreport failed");
    const auto allocated = sreport_allocated_seconds(run.value().out);
    if (!allocated) return sreport_clause(0, std::nullopt, "sreport has no gres/gpu row");
    return sreport_clause(rep.used_until(*end), allocated, "");
}

std::string reconcile(const Report& rep, int64_t now)
{
    return against_sacct(rep, now) + against_sreport(rep, now);
}

Status write_file(const std::string& path, const std::string& text)
{
    const std::string tmp = path + ".tmp";
    {
        std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
        f << text;
        if (!f.flush())
            return make_error(Errc::Output, "cannot write " + tmp + ": " + strerror(errno));
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0)
        return make_error(Errc::Output, "cannot rename " + tmp + ": " + strerror(errno));
    return ok_status();
}

// DIR/index.html and one CSV per view, each replaced atomically: a web server serving
// DIR never shows a half-written page.
Status write_html(const Options& o, const Report& rep, const std::string& recon, int64_t now,
                  const Table& storage)
{
    if (mkdir(o.html_dir.c_str(), 0755) != 0 && errno != EEXIST)
        return make_error(Errc::Output, "cannot create " + o.html_dir + ": " + strerror(errno));
    for (View v : kViews) {
        if (v == View::User && !rep.by_user) continue;
        auto s =
            write_file(o.html_dir + "/" + view_name(v) + ".csv", render_csv(view_table(rep, v)));
        if (!s) return s;
    }
    if (auto s = write_file(o.html_dir + "/storage.csv", render_csv(storage)); !s) return s;
    return write_file(o.html_dir + "/index.html", render_html(rep, recon, utc_time(now), &storage));
}

// The hourly recorder: a source that cannot be read is said on stderr, never fatal.
int run_record_storage(const Options& o, int64_t now)
{
    const char* env_conf = std::getenv("ALLOT_QUOTA_CONF");
    auto sum = record_storage(o, env_conf ? env_conf : "", now);
    if (!sum) {
        std::cerr << "allot-report: " << sum.error().describe() << "\n";
        return exit_code(sum.error());
    }
    const auto& s = sum.value();
    std::cout << "record-storage: " << s.samples << " samples of " << s.users << " users to "
              << o.store << "\n";
    if (s.failures)
        std::cerr << "allot-report: " << s.failures
                  << " sources not read; first: " << s.first_failure << "\n";
    return kExitOk;
}

// The storage view of [from, until) from the store, names resolved now.
Result<Table> storage_view(const Options& o, const Config& config, int64_t from, int64_t until)
{
    auto store = load_store(o.store);
    if (!store) return store.error();
    if (store.value().bad_lines)
        std::cerr << "allot-report: " << o.store << ": " << store.value().bad_lines
                  << " unreadable lines skipped\n";
    return storage_table(store.value().samples, system_names(config), from, until);
}

int run(int argc, char** argv)
{
    const char* env_config = std::getenv("ALLOT_CONFIG");
    auto parsed = parse_options({argv + 1, argv + argc}, env_config ? env_config : "");
    if (!parsed) {
        std::cerr << "allot-report: " << parsed.error().describe() << "\n" << usage_text();
        return exit_code(parsed.error());
    }
    const Options& o = parsed.value();
    if (o.help) {
        std::cout << usage_text();
        return kExitOk;
    }
    const int64_t now = static_cast<int64_t>(std::time(nullptr));
    if (o.record_storage) return run_record_storage(o, now);
    ConfigLoad config = load_config(o.config);
    if (!config.ok()) {
        std::cerr << "allot-report: " << config.errors.joined() << "\n";
        return kExitConfig;
    }
    ReportRequest req;
    req.now = now;
    req.until = o.until.value_or(now);
    req.length = o.length;
    req.periods = o.periods;
    req.by_user = o.by_user;
    const int64_t from = period_floor(req.until - 1, req.length) - (req.periods - 1) * req.length;
    auto storage = storage_view(o, *config.config, from, req.until);
    if (!storage) {
        std::cerr << "allot-report: " << storage.error().describe() << "\n";
        return exit_code(storage.error());
    }
    // The storage view needs no slurmdbd.
    if (o.output == Output::Csv && o.csv_view == "storage") {
        std::cout << render_csv(storage.value());
        return kExitOk;
    }
    auto acct = make_slurmdb_source()->read(from, req.until);
    if (!acct) {
        std::cerr << "allot-report: " << acct.error().describe() << "\n";
        return exit_code(acct.error());
    }
    Report rep = build_report(acct.value().inputs, Classifier(*config.config), req);
    rep.cluster = acct.value().cluster;
    const std::string recon = o.reconcile ? reconcile(rep, now) : "reconciliation: skipped";
    switch (o.output) {
        case Output::Text: std::cout << render_text(rep, recon, &storage.value()); break;
        case Output::Csv:
            std::cout << render_csv(view_table(rep, *view_from_name(o.csv_view)));
            std::cerr << recon << "\n";
            break;
        case Output::Json: std::cout << render_json(rep, recon, &storage.value()); break;
        case Output::Html:
            if (auto s = write_html(o, rep, recon, now, storage.value()); !s) {
                std::cerr << "allot-report: " << s.error().describe() << "\n";
                return exit_code(s.error());
            }
            std::cout << recon << "\n";
            break;
    }
    return kExitOk;
}

}  // namespace
}  // namespace allot::report

int main(int argc, char** argv)
{
    try {
        return allot::report::run(argc, argv);
    } catch (const std::exception& e) {
        std::cerr << "allot-report: internal error: " << e.what() << "\n";
        return allot::report::kExitInternal;
    }
}
