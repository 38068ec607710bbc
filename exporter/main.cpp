// main.cpp - allot-exporter: one snapshot from slurmctld per interval, served to
// any number of Prometheus scrapers over HTTP (cpp-httplib).
//
// The snapshot thread is the only one that talks to slurmctld; scrapes render
// the last snapshot under a mutex, so N scrapers cost slurmctld nothing more.
// When slurmctld does not answer, the last snapshot keeps being served with its
// growing age and allot_slurmctld_up 0: never stale values passed off as fresh.
#include <httplib.h>
#include <pthread.h>
#include <signal.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <mutex>
#include <thread>

#include "config.h"
#include "errors.hpp"
#include "model.hpp"
#include "options.hpp"
#include "slurm_snapshot.hpp"

namespace allot::exporter {
namespace {

enum ExitCode { kOk = 0, kUsage = 2, kConfig = 3, kSlurm = 4, kListen = 5 };

using Clock = std::chrono::steady_clock;

// What the scrapers read and the snapshot thread writes, under one mutex.
class Store {
public:
    explicit Store(Config config) : config_(std::move(config)) {}

    void succeeded(Snapshot snap, double seconds)
    {
        std::lock_guard<std::mutex> lock(mu_);
        acc_.add(snap, config_);
        snap_ = std::move(snap);
        state_.have_snapshot = true;
        state_.slurmctld_up = true;
        state_.snapshot_duration = seconds;
        taken_ = Clock::now();
    }

    void failed()
    {
        std::lock_guard<std::mutex> lock(mu_);
        state_.slurmctld_up = false;
        ++state_.snapshot_failures;
    }

    void set_config(Config config)
    {
        std::lock_guard<std::mutex> lock(mu_);
        config_ = std::move(config);
    }

    std::string scrape(Format format)
    {
        std::lock_guard<std::mutex> lock(mu_);
        ExporterState st = state_;
        st.snapshot_age =
            st.have_snapshot ? std::chrono::duration<double>(Clock::now() - taken_).count() : 0;
        return render(families(snap_, config_, acc_, st), format);
    }

private:
    std::mutex mu_;
    Config config_;
    Snapshot snap_;
    Accumulator acc_;
    ExporterState state_;
    Clock::time_point taken_;
};

// One snapshot into the store; logs only when slurmctld's answer changes.
bool refresh(Store& store, bool& was_up)
{
    const auto t0 = Clock::now();
    auto snap = take_snapshot();
    if (!snap) {
        if (was_up) std::cerr << "allot-exporter: " << snap.error().message << "\n";
        was_up = false;
        store.failed();
        return false;
    }
    if (!was_up) std::cerr << "allot-exporter: snapshot from slurmctld ok\n";
    was_up = true;
    store.succeeded(std::move(snap).value(),
                    std::chrono::duration<double>(Clock::now() - t0).count());
    return true;
}

class Poller {
public:
    Poller(Store& store, unsigned interval) : store_(store), interval_(interval) {}
    void run()
    {
        bool was_up = true;
        std::unique_lock<std::mutex> lock(mu_);
        while (!stop_) {
            lock.unlock();
            refresh(store_, was_up);
            lock.lock();
            cv_.wait_for(lock, std::chrono::seconds(interval_), [this] { return stop_; });
        }
    }
    void stop()
    {
        std::lock_guard<std::mutex> lock(mu_);
        stop_ = true;
        cv_.notify_all();
    }

private:
    Store& store_;
    unsigned interval_;
    std::mutex mu_;
    std::condition_variable cv_;
    bool stop_ = false;
};

Result<Config> read_config(const std::string& path)
{
    ConfigLoad load = load_config(path);
    if (!load.config) return make_error(Errc::Config, path + ": " + load.errors.joined());
    return std::move(*load.config);
}

int print_once(Config config)
{
    Store store(std::move(config));
    bool was_up = true;
    if (!refresh(store, was_up)) return kSlurm;
    std::cout << store.scrape(Format::Text004);
    return kOk;
}

void install_routes(httplib::Server& server, Store& store)
{
    server.Get("/metrics", [&store](const httplib::Request& req, httplib::Response& res) {
        const Format f = negotiate(req.get_header_value("Accept"));
        res.set_content(store.scrape(f), content_type(f));
    });
    server.Get("/", [](const httplib::Request&, httplib::Response& res) {
        res.set_content("allot-exporter: metrics at /metrics\n", "text/plain; charset=utf-8");
    });
    // A slow or stalled scraper holds one worker for at most these bounds.
    server.set_read_timeout(5, 0);
    server.set_write_timeout(5, 0);
    server.set_keep_alive_timeout(5);
}

int serve(const Options& opt, Config config)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    signal(SIGPIPE, SIG_IGN);

    Store store(std::move(config));
    httplib::Server server;
    install_routes(server, store);
    const int port = opt.port == 0 ? server.bind_to_any_port(opt.host)
                                   : (server.bind_to_port(opt.host, opt.port) ? opt.port : -1);
    if (port < 0) {
        std::cerr << "allot-exporter: "
                  << make_error(Errc::Listen, opt.host + ":" + std::to_string(opt.port)).message
                  << ": cannot listen\n";
        return kListen;
    }
    if (!opt.port_file.empty()) {
        std::ofstream(opt.port_file + ".tmp") << port << "\n";
        std::rename((opt.port_file + ".tmp").c_str(), opt.port_file.c_str());
    }
    std::cerr << "allot-exporter: serving on " << opt.host << ":" << port << ", a snapshot every "
              << opt.interval_seconds << " s\n";

    Poller poller(store, opt.interval_seconds);
    std::thread polling([&] { poller.run(); });
    std::thread waiter([&] {
        for (;;) {
            int sig = 0;
            sigwait(&set, &sig);
            if (sig == SIGHUP) {
                auto c = read_config(opt.config);
                if (c) store.set_config(std::move(c).value());
                std::cerr << "allot-exporter: SIGHUP: "
                          << (c ? "reloaded " + opt.config
                                : "keeping the old config: " + c.error().message)
                          << "\n";
                continue;
            }
            std::cerr << "allot-exporter: signal " << sig << ", stopping\n";
            server.stop();
            return;
        }
    });
    server.listen_after_bind();
    pthread_kill(waiter.native_handle(), SIGTERM);
    waiter.join();
    poller.stop();
    polling.join();
    return kOk;
}

int run(int argc, char** argv)
{
    const char* env = std::getenv("ALLOT_CONFIG");
    auto opt = parse_options(std::vector<std::string>(argv + 1, argv + argc), env ? env : "");
    if (!opt) {
        std::cerr << "allot-exporter: " << opt.error().message << "\n";
        return kUsage;
    }
    if (opt.value().help) {
        std::cout << usage_text();
        return kOk;
    }
    if (opt.value().version) {
        std::cout << "allot-exporter " << PACKAGE_VERSION << "\n";
        return kOk;
    }
    auto config = read_config(opt.value().config);
    if (!config) {
        std::cerr << "allot-exporter: " << config.error().message << "\n";
        return kConfig;
    }
    if (opt.value().once) return print_once(std::move(config).value());
    return serve(opt.value(), std::move(config).value());
}

}  // namespace
}  // namespace allot::exporter

int main(int argc, char** argv)
{
    try {
        return allot::exporter::run(argc, argv);
    } catch (const std::exception& e) {
        std::cerr << "allot-exporter: internal error: " << e.what() << "\n";
        return 1;
    }
}
