// syncd_support.cpp - see syncd_support.hpp.
#include "syncd_support.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string_view>
#include <vector>

#include "allot/file_io.hpp"

namespace allot::syncd {
namespace {
bool g_syslog = false;
Level g_level = Level::Info;
}  // namespace

void log_open(bool use_syslog, Level max_level)
{
    g_syslog = use_syslog;
    g_level = max_level;
    if (use_syslog) openlog("allot-syncd", LOG_PID, LOG_DAEMON);
}

void log(Level level, const std::string& message)
{
    if (level > g_level) return;
    static const char* names[] = {"error", "warning", "info", "debug"};
    static const int prio[] = {LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG};
    if (g_syslog)
        syslog(prio[int(level)], "%s", message.c_str());
    else
        std::cerr << "allot-syncd: " << names[int(level)] << ": " << message << "\n";
}

LockFile::LockFile(const std::string& path)
{
    fd_ = open(path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd_ < 0) {
        error_ = path + ": " + strerror(errno);
        return;
    }
    if (flock(fd_, LOCK_EX | LOCK_NB) != 0) {
        error_ = errno == EWOULDBLOCK ? path + ": held by another allot-syncd"
                                      : path + ": " + strerror(errno);
        close(fd_);
        fd_ = -1;
        return;
    }
    const std::string pid = std::to_string(getpid()) + "\n";
    if (ftruncate(fd_, 0) == 0 && write(fd_, pid.data(), pid.size()) < 0) {
        // The pid is informational only.
    }
}

LockFile::~LockFile()
{
    if (fd_ >= 0) close(fd_);  // releases the flock
}

size_t remove_files(const std::string& dir, const std::function<bool(std::string_view)>& ours)
{
    DIR* d = opendir(dir.c_str());
    if (!d) return 0;
    std::vector<std::string> stale;
    while (const dirent* e = readdir(d))
        if (ours(e->d_name)) stale.emplace_back(e->d_name);
    closedir(d);
    size_t removed = 0;
    for (const auto& name : stale) removed += unlink((dir + "/" + name).c_str()) == 0;
    return removed;
}

std::map<std::string, std::string> load_state(const std::string& path)
{
    std::map<std::string, std::string> out;
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
        auto tab = line.find('\t');
        if (tab != std::string::npos) out[line.substr(0, tab)] = line.substr(tab + 1);
    }
    return out;
}

Result<bool> save_state(const std::string& path, const std::map<std::string, std::string>& state)
{
    std::string text;
    for (const auto& [k, v] : state) text += k + "\t" + v + "\n";
    if (auto s = write_file_atomically(path, text, AtomicWrite{0600}); !s) return s.error();
    return true;
}

std::string Metrics::render() const
{
    std::ostringstream o;
    auto g = [&](const char* name, const char* type, const char* help, double v) {
        o << "# HELP " << name << " " << help << "\n# TYPE " << name << " " << type << "\n"
          << name << " " << std::setprecision(15) << v << "\n";
    };
    g("allot_syncd_last_run_timestamp_seconds", "gauge", "Start of the last sync cycle.", last_run);
    g("allot_syncd_last_success_timestamp_seconds", "gauge", "End of the last successful cycle.",
      last_success);
    g("allot_syncd_duration_seconds", "gauge", "Duration of the last cycle.", duration);
    g("allot_syncd_last_status", "gauge", "Exit status of the last cycle (0 ok).", last_status);
    g("allot_syncd_runs_total", "counter", "Sync cycles run.", double(runs));
    g("allot_syncd_source_errors_total", "counter", "Cycles that failed reading SCIM.",
      double(source_errors));
    g("allot_syncd_refusals_total", "counter", "Cycles refused by a safety rule.",
      double(refusals));
    g("allot_syncd_accounting_errors_total", "counter", "Cycles with slurmdbd errors.",
      double(accounting_errors));
    g("allot_syncd_changes_total", "counter", "Accounting changes applied.", double(changes_total));
    g("allot_syncd_drift_total", "counter", "Owned objects found changed outside allot.",
      double(drift_total));
    g("allot_syncd_last_changes", "gauge", "Changes in the last cycle's plan.",
      double(last_changes));
    g("allot_syncd_rejected_records", "gauge", "SCIM records rejected in the last cycle.",
      double(rejected));
    g("allot_syncd_rejected_records_total", "counter",
      "SCIM records rejected one by one (the rest of the cycle went on).", double(rejected_total));
    g("allot_syncd_users", "gauge", "Valid users in the last cycle.", double(users));
    g("allot_syncd_groups", "gauge", "Valid groups in the last cycle.", double(groups));
    g("allot_syncd_held_users", "gauge", "Users not resolving via NSS yet.", double(held));
    return o.str();
}

bool NssResolver::resolves(const std::string& name, uint32_t uid)
{
    struct passwd pw {};
    struct passwd* out = nullptr;
    std::vector<char> buf(16384);
    if (getpwnam_r(name.c_str(), &pw, buf.data(), buf.size(), &out) != 0 || !out) return false;
    return out->pw_uid == uid;
}

}  // namespace allot::syncd
