// storage_io.cpp - record-storage and the store on disk (see storage_io.hpp).
#include "storage_io.hpp"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <set>

#include "allot/file_io.hpp"
#include "errors.hpp"

namespace allot::report {
namespace {

constexpr const char* kDefaultQuotaConf = "/etc/allot/quota.conf";
// Bound of the store: past it, the oldest lines go and the newest half stays (a year of
// hourly samples of ~1,000 users and two sources is ~1.5 GB; sites keep what fits).
constexpr size_t kMaxStoreBytes = 256u << 20;

class Fd {
public:
    explicit Fd(int fd) : fd_(fd) {}
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    ~Fd()
    {
        if (fd_ >= 0) close(fd_);
    }
    int get() const { return fd_; }

private:
    int fd_;
};

Error output_error(const std::string& what, const std::string& path)
{
    return make_error(Errc::Output, what + " " + path + ": " + strerror(errno));
}

struct Account {
    std::string name, home;
    uint32_t uid = 0;
};

std::vector<Account> passwd_users(uint32_t min_uid)
{
    std::vector<Account> out;
    std::set<uint32_t> seen;
    setpwent();
    while (const passwd* pw = getpwent()) {
        // nobody (65534) owns nothing worth a history.
        if (pw->pw_uid < min_uid || pw->pw_uid == 65534 || !seen.insert(pw->pw_uid).second)
            continue;
        out.push_back({pw->pw_name, pw->pw_dir ? pw->pw_dir : "", pw->pw_uid});
    }
    endpwent();
    return out;
}

Status write_all(int fd, const std::string& text, const std::string& path)
{
    size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return output_error("cannot append to", path);
        done += static_cast<size_t>(n);
    }
    return ok_status();
}

Result<std::string> read_all(int fd, const std::string& path)
{
    std::string out;
    char buf[65536];
    for (;;) {
        const ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return output_error("cannot read", path);
        if (n == 0) return out;
        out.append(buf, static_cast<size_t>(n));
    }
}

// Past the bound, the newest half replaces the store (readers without the lock
// see the old store or the new one, never a cut).
Status trim_store(const std::string& path)
{
    Fd in(open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (in.get() < 0) return output_error("cannot open", path);
    auto text = read_all(in.get(), path);
    if (!text) return text.error();
    const std::string_view tail = store_tail(text.value(), kMaxStoreBytes / 2);
    if (auto s = write_file_atomically(path, tail, AtomicWrite{0644}); !s)
        return make_error(Errc::Output, s.error().message);  // exits as an unwritable output
    return ok_status();
}

// Appends under an exclusive lock on STORE.lock (two recorders never interleave, and a
// trim never loses a concurrent append). A store not ending in a newline (a write cut
// short) gets one first, so only the cut line is lost.
Status append_store(const std::string& path, const std::string& lines)
{
    const auto slash = path.rfind('/');
    if (slash != std::string::npos && slash > 0) {
        const std::string dir = path.substr(0, slash);
        if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
            return output_error("cannot create", dir);
    }
    const std::string lock_path = path + ".lock";
    Fd lock(open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
    if (lock.get() < 0) return output_error("cannot open", lock_path);
    while (flock(lock.get(), LOCK_EX) != 0)
        if (errno != EINTR) return output_error("cannot lock", lock_path);
    struct stat st {};
    if (stat(path.c_str(), &st) == 0 && static_cast<size_t>(st.st_size) > kMaxStoreBytes)
        if (auto s = trim_store(path); !s) return s;
    Fd fd(open(path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644));
    if (fd.get() < 0) return output_error("cannot open", path);
    std::string text;
    char last = '\n';
    if (fstat(fd.get(), &st) == 0 && st.st_size > 0 &&
        pread(fd.get(), &last, 1, st.st_size - 1) == 1 && last != '\n')
        text = "\n";
    text += lines;
    if (auto s = write_all(fd.get(), text, path); !s) return s;
    if (fsync(fd.get()) != 0) return output_error("cannot sync", path);
    return ok_status();
}

}  // namespace

Result<RecordSummary> record_storage(const Options& o, const std::string& env_quota_conf,
                                     int64_t now)
{
    auto sys = quota::make_real_quota_system();
    std::string conf = o.quota_conf;
    if (conf.empty()) conf = env_quota_conf;
    if (conf.empty()) conf = kDefaultQuotaConf;
    std::vector<quota::SourceSpec> specs;  // empty: each user's home, as mylimits does
    auto text = sys->read_file(conf);
    if (text) {
        auto parsed = quota::parse_sources(text.value());
        if (!parsed) return make_error(Errc::Config, parsed.error().describe());
        specs = parsed.value();
    } else if (!text.error().is(allot::Errc::NotFound)) {
        return make_error(Errc::Config, text.error().describe());
    }
    RecordSummary sum;
    std::string lines;
    for (const Account& a : passwd_users(o.min_uid)) {
        ++sum.users;
        auto user_specs = specs;
        if (user_specs.empty()) user_specs.push_back({"home", quota::SourceKind::Quotactl, a.home});
        for (const auto& spec : user_specs) {
            auto r = quota::read_quota_source(*sys, spec, a.name, a.uid);
            if (!r.reading) {
                if (!sum.failures++)
                    sum.first_failure =
                        spec.name + " of " + a.name + ": " + r.reading.error().describe();
                continue;
            }
            for (const auto& s : samples_of(now, spec.name, a.uid, r.reading.value())) {
                lines += format_sample(s);
                ++sum.samples;
            }
        }
    }
    if (!lines.empty())
        if (auto s = append_store(o.store, lines); !s) return s.error();
    return sum;
}

Result<StoreContent> load_store(const std::string& path)
{
    Fd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0) {
        if (errno == ENOENT) return StoreContent{};
        return output_error("cannot open", path);
    }
    auto text = read_all(fd.get(), path);
    if (!text) return text.error();
    return parse_store(text.value());
}

StorageNames system_names(const Config& config)
{
    struct Group {
        std::string team;
        gid_t gid;
        std::set<std::string> members;
    };
    auto groups = std::make_shared<std::vector<Group>>();
    for (const auto& t : config.teams) {
        const group* g = getgrnam(t.group.c_str());
        if (!g) continue;
        Group grp{t.group, g->gr_gid, {}};
        for (char** m = g->gr_mem; m && *m; ++m) grp.members.insert(*m);
        groups->push_back(std::move(grp));
    }
    StorageNames names;
    names.user = [](uint32_t uid) {
        const passwd* pw = getpwuid(uid);
        return pw ? std::string(pw->pw_name) : "uid " + std::to_string(uid);
    };
    names.team = [groups](uint32_t uid) -> std::string {
        const passwd* pw = getpwuid(uid);
        if (!pw) return "(no team)";
        for (const auto& g : *groups)
            if (g.gid == pw->pw_gid || g.members.count(pw->pw_name)) return g.team;
        return "(no team)";
    };
    return names;
}

}  // namespace allot::report
