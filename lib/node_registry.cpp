// node_registry.cpp - the node-local job registry (see allot/node_registry.hpp).
#include "allot/node_registry.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "allot/file_io.hpp"

namespace allot {
namespace {

bool parse_u64(const std::string& s, uint64_t max, uint64_t& out)
{
    if (s.empty() || s.size() > 20) return false;
    uint64_t v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return false;
        const uint64_t d = uint64_t(c - '0');
        if (v > (max - d) / 10) return false;
        v = v * 10 + d;
    }
    out = v;
    return true;
}

bool safe_text(const std::string& s, size_t max)
{
    if (s.size() > max) return false;
    for (char c : s) {
        const auto u = static_cast<unsigned char>(c);
        if (u < 0x21 || u == 0x7f) return false;
    }
    return true;
}

// Owned by root (unless disabled) and not writable by group or others.
bool trusted(const struct stat& st, const RegistryOptions& o)
{
    if (o.require_root_owner && st.st_uid != 0) return false;
    return (st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

std::string jobs_dir(const std::string& run_dir)
{
    return run_dir + "/jobs";
}

std::optional<JobEntry> read_file(int dirfd, const char* name, const RegistryOptions& o)
{
    const int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) return std::nullopt;
    struct stat st;
    std::string text;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && trusted(st, o) &&
        st.st_size <= static_cast<off_t>(kMaxEntryBytes)) {
        char buf[kMaxEntryBytes + 1];
        const ssize_t n = read(fd, buf, sizeof buf);
        if (n > 0 && size_t(n) <= kMaxEntryBytes) text.assign(buf, size_t(n));
    }
    close(fd);
    if (text.empty()) return std::nullopt;
    auto e = parse_job_entry(text);
    if (!e) return std::nullopt;
    return std::move(e).value();
}

// Opens <run_dir>/jobs if it and run_dir are trustworthy directories.
int open_jobs_dir(const std::string& run_dir, const RegistryOptions& o)
{
    struct stat st;
    if (stat(run_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || !trusted(st, o)) return -1;
    const int fd = open(jobs_dir(run_dir).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return -1;
    if (fstat(fd, &st) != 0 || !trusted(st, o)) {
        close(fd);
        return -1;
    }
    return fd;
}

template <typename Fn>
void for_each_entry(const std::string& run_dir, const RegistryOptions& o, Fn fn)
{
    const int fd = open_jobs_dir(run_dir, o);
    if (fd < 0) return;
    DIR* d = fdopendir(fd);
    if (!d) {
        close(fd);
        return;
    }
    size_t seen = 0;
    while (dirent* de = readdir(d)) {
        if (de->d_name[0] == '.') continue;
        if (++seen > 100000) break;  // a node never runs that many jobs
        auto e = read_file(dirfd(d), de->d_name, o);
        fn(de->d_name, e);
    }
    closedir(d);
}

}  // namespace

std::string format_job_entry(const JobEntry& e)
{
    std::string out = "allot-job-entry 1\n";
    out += "job_id=" + std::to_string(e.job_id) + "\n";
    out += "uid=" + std::to_string(e.uid) + "\n";
    out += "user=" + e.user + "\n";
    out += "node=" + e.node + "\n";
    out += "boot_id=" + e.boot_id + "\n";
    out += "start=" + std::to_string(e.start) + "\n";
    out += "expires=" + std::to_string(e.expires) + "\n";
    out += "tier=" + e.tier + "\n";
    out += "qos=" + e.qos + "\n";
    out += std::string("preemptible=") + (e.preemptible ? "1" : "0") + "\n";
    out += "grace_seconds=" + std::to_string(e.grace_seconds) + "\n";
    return out;
}

Result<JobEntry> parse_job_entry(const std::string& text)
{
    if (text.size() > kMaxEntryBytes) return make_error(Errc::TooLarge, "job entry too large");
    if (text.rfind("allot-job-entry 1\n", 0) != 0) return make_error("not a job entry");
    JobEntry e;
    bool have_job = false, have_uid = false;
    size_t pos = text.find('\n') + 1;
    while (pos < text.size()) {
        size_t end = text.find('\n', pos);
        if (end == std::string::npos) return make_error("unterminated line");
        const std::string line = text.substr(pos, end - pos);
        pos = end + 1;
        const size_t eq = line.find('=');
        if (eq == std::string::npos) return make_error("line without '='");
        const std::string key = line.substr(0, eq), value = line.substr(eq + 1);
        uint64_t n = 0;
        if (key == "job_id") {
            if (!parse_u64(value, 0xFFFFFFFFu, n) || n == 0) return make_error("bad job_id");
            e.job_id = uint32_t(n);
            have_job = true;
        } else if (key == "uid") {
            if (!parse_u64(value, 0xFFFFFFFEu, n)) return make_error("bad uid");
            e.uid = uint32_t(n);
            have_uid = true;
        } else if (key == "start" || key == "expires") {
            if (!parse_u64(value, uint64_t(INT64_MAX), n)) return make_error("bad " + key);
            (key == "start" ? e.start : e.expires) = int64_t(n);
        } else if (key == "grace_seconds") {
            if (!parse_u64(value, 0xFFFFFFFFu, n)) return make_error("bad grace_seconds");
            e.grace_seconds = uint32_t(n);
        } else if (key == "preemptible") {
            if (value != "0" && value != "1") return make_error("bad preemptible");
            e.preemptible = value == "1";
        } else {
            if (!safe_text(value, 256)) return make_error("bad " + key);
            if (key == "user")
                e.user = value;
            else if (key == "node")
                e.node = value;
            else if (key == "boot_id")
                e.boot_id = value;
            else if (key == "tier")
                e.tier = value;
            else if (key == "qos")
                e.qos = value;
            // unknown keys: ignored, for newer writers
        }
    }
    if (!have_job || !have_uid) return make_error("job entry without job_id or uid");
    return e;
}

void apply_tier(const Config& config, const std::string& qos, JobEntry& entry)
{
    entry.qos = qos;
    entry.tier.clear();
    entry.preemptible = false;
    entry.grace_seconds = 0;
    if (qos.empty()) return;
    if (!config.tiers.spot.qos.empty() && qos == config.tiers.spot.qos) {
        entry.tier = "spot";
        entry.preemptible = true;
        entry.grace_seconds = config.tiers.spot.grace_seconds;
    } else if (!config.tiers.general.qos.empty() && qos == config.tiers.general.qos) {
        entry.tier = "general";
    } else if (config.team_by_qos(qos)) {
        entry.tier = "project";
    }
}

std::string job_entry_name(uint32_t job_id, const std::string& node)
{
    std::string out = std::to_string(job_id) + ".";
    for (char c : node.substr(0, 64)) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                        (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
        out += ok ? c : '_';
    }
    if (node.empty()) out += "node";
    return out;
}

std::string current_boot_id()
{
    char buf[64] = {};
    const int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return "";
    const ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return "";
    std::string s(buf, size_t(n));
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    return s;
}

Result<bool> write_job_entry(const std::string& run_dir, const JobEntry& entry)
{
    for (const std::string& d : {run_dir, jobs_dir(run_dir)}) {
        if (mkdir(d.c_str(), 0755) != 0 && errno != EEXIST)
            return make_error(Errc::Io, "creating " + d + ": " + std::strerror(errno));
    }
    const std::string path = jobs_dir(run_dir) + "/" + job_entry_name(entry.job_id, entry.node);
    // No fsync: after a crash the entry no longer counts anyway (its boot id is
    // stale), and no job's prolog should wait on the disk. The temporary's name
    // starts with '.', which for_each_entry skips.
    const AtomicWrite how{0644, static_cast<gid_t>(-1), false};
    if (auto s = write_file_atomically(path, format_job_entry(entry), how); !s) return s.error();
    return true;
}

Result<bool> remove_job_entry(const std::string& run_dir, uint32_t job_id, const std::string& node)
{
    const std::string path = jobs_dir(run_dir) + "/" + job_entry_name(job_id, node);
    if (unlink(path.c_str()) != 0 && errno != ENOENT)
        return make_error(Errc::Io, "removing " + path + ": " + std::strerror(errno));
    return true;
}

std::optional<JobEntry> read_job_entry(const std::string& run_dir, uint32_t job_id,
                                       const std::string& node, const RegistryOptions& options)
{
    const int fd = open_jobs_dir(run_dir, options);
    if (fd < 0) return std::nullopt;
    auto e = read_file(fd, job_entry_name(job_id, node).c_str(), options);
    close(fd);
    if (!e || e->job_id != job_id || e->boot_id != current_boot_id()) return std::nullopt;
    return e;
}

std::vector<JobEntry> current_jobs(const std::string& run_dir, int64_t now,
                                   const RegistryOptions& options)
{
    std::vector<JobEntry> out;
    const std::string boot = current_boot_id();
    for_each_entry(run_dir, options, [&](const char*, const std::optional<JobEntry>& e) {
        if (e && e->boot_id == boot && (e->expires == 0 || now < e->expires)) out.push_back(*e);
    });
    return out;
}

bool user_has_job(const std::string& run_dir, uint32_t uid, int64_t now,
                  const RegistryOptions& options)
{
    for (const auto& e : current_jobs(run_dir, now, options))
        if (e.uid == uid) return true;
    return false;
}

void prune_job_entries(const std::string& run_dir, int64_t now, const RegistryOptions& options)
{
    const std::string boot = current_boot_id();
    std::vector<std::string> stale;
    for_each_entry(run_dir, options, [&](const char* name, const std::optional<JobEntry>& e) {
        if (!e || e->boot_id != boot || (e->expires != 0 && now > e->expires + 86400))
            stale.push_back(name);
    });
    for (const auto& name : stale) unlink((jobs_dir(run_dir) + "/" + name).c_str());
}

}  // namespace allot
