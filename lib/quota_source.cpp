// quota_source.cpp - reading one quota source: quotactl(2), a command, a file (see
// allot/quota.hpp).
#include "allot/quota.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/quota.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <sstream>

namespace allot::quota {
namespace {

constexpr size_t kMaxCommandOutput = 1 << 20;
constexpr size_t kMaxSnapshot = 64u << 20;
constexpr int kCommandTimeoutMs = 5000;

Error command_failed(std::string detail)
{
    return make_error(Errc::CommandFailed, std::move(detail));
}

// ENOENT is NotFound: mylimits falls back to the home quota when quota.conf is absent.
Error file_error(const std::string& path, int err)
{
    return make_error(err == ENOENT ? allot::Errc::NotFound : allot::Errc::Io,
                      path + ": " + strerror(err));
}

bool is_oct(char c)
{
    return c >= '0' && c <= '7';
}

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string unescape_mount(const std::string& s)
{
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '\\' && i + 3 < s.size() && is_oct(s[i + 1]) && is_oct(s[i + 2]) &&
            is_oct(s[i + 3])) {
            out.push_back(static_cast<char>(((s[i + 1] - '0') << 6) | ((s[i + 2] - '0') << 3) |
                                            (s[i + 3] - '0')));
            i += 3;
        } else {
            out.push_back(s[i]);
        }
    }
    return out;
}

bool under(const std::string& path, const std::string& mount)
{
    if (mount == "/") return true;
    return path == mount ||
           (path.rfind(mount, 0) == 0 && path.size() > mount.size() && path[mount.size()] == '/');
}

class RealQuotaSystem final : public QuotaSystem {
public:
    Result<std::pair<std::string, std::string>> device_of(const std::string& path) override
    {
        auto text = read_file("/proc/self/mountinfo");
        if (!text.ok()) return text.error();
        return mount_of(text.value(), path);
    }

    int get_user_quota(const std::string& device, uint32_t uid, KernelQuota& out) override
    {
        struct dqblk q;
        std::memset(&q, 0, sizeof q);
        if (quotactl(QCMD(Q_GETQUOTA, USRQUOTA), device.c_str(), static_cast<int>(uid),
                     reinterpret_cast<caddr_t>(&q)) != 0)
            return errno;
        out.bytes_used = q.dqb_curspace;
        out.bytes_soft = q.dqb_bsoftlimit * 1024;  // QIF_DQBLKSIZE
        out.bytes_hard = q.dqb_bhardlimit * 1024;
        out.files_used = q.dqb_curinodes;
        out.files_soft = q.dqb_isoftlimit;
        out.files_hard = q.dqb_ihardlimit;
        out.block_grace_expires = static_cast<int64_t>(q.dqb_btime);
        out.file_grace_expires = static_cast<int64_t>(q.dqb_itime);
        return 0;
    }

    Result<std::string> run(const std::vector<std::string>& argv, int timeout_ms) override
    {
        if (argv.empty()) return command_failed("empty command");
        if (argv[0].empty() || argv[0][0] != '/')
            return command_failed("command must be an absolute path: " + argv[0]);
        int fds[2];
        if (pipe2(fds, O_CLOEXEC) != 0)
            return command_failed(std::string("pipe: ") + strerror(errno));
        std::vector<char*> args;
        for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
        args.push_back(nullptr);
        const pid_t pid = fork();
        if (pid < 0) {
            close(fds[0]);
            close(fds[1]);
            return command_failed(std::string("fork: ") + strerror(errno));
        }
        if (pid == 0) {
            dup2(fds[1], 1);
            int devnull = open("/dev/null", O_RDWR);
            if (devnull >= 0) {
                dup2(devnull, 0);
                dup2(devnull, 2);
            }
            execv(args[0], args.data());
            _exit(127);
        }
        close(fds[1]);
        std::string out;
        bool too_big = false, timed_out = false;
        const auto deadline =
            std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
        for (;;) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                                  deadline - std::chrono::steady_clock::now())
                                  .count();
            if (left <= 0) {
                timed_out = true;
                break;
            }
            pollfd p{fds[0], POLLIN, 0};
            const int r = poll(&p, 1, static_cast<int>(left));
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) {
                timed_out = r == 0;
                break;
            }
            char buf[8192];
            const ssize_t n = read(fds[0], buf, sizeof buf);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            if (out.size() + static_cast<size_t>(n) > kMaxCommandOutput) {
                too_big = true;
                break;
            }
            out.append(buf, static_cast<size_t>(n));
        }
        close(fds[0]);
        if (timed_out || too_big) kill(pid, SIGKILL);
        int status = 0;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        if (timed_out)
            return make_error(Errc::CommandTimedOut, argv[0] + " did not answer within " +
                                                         std::to_string(timeout_ms / 1000) + " s");
        if (too_big) return make_error(allot::Errc::TooLarge, argv[0] + " printed more than 1 MiB");
        if (WIFEXITED(status) && WEXITSTATUS(status) == 127 && out.empty())
            return command_failed("cannot run " + argv[0]);
        // `quota` exits 1 when the user is over quota; the table is still valid.
        if (!WIFEXITED(status))
            return command_failed(argv[0] + " was killed by signal " +
                                  std::to_string(WTERMSIG(status)));
        if (WEXITSTATUS(status) != 0 && out.find("Filesystem") == std::string::npos)
            return command_failed(argv[0] + " failed (exit " + std::to_string(WEXITSTATUS(status)) +
                                  ")");
        return out;
    }

    Result<std::string> read_file(const std::string& path) override
    {
        int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0) return file_error(path, errno);
        std::string out;
        char buf[65536];
        for (;;) {
            const ssize_t n = read(fd, buf, sizeof buf);
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) {
                const int e = errno;
                close(fd);
                return file_error(path, e);
            }
            if (n == 0) break;
            if (out.size() + static_cast<size_t>(n) > kMaxSnapshot) {
                close(fd);
                return make_error(allot::Errc::TooLarge, path + ": larger than 64 MiB");
            }
            out.append(buf, static_cast<size_t>(n));
        }
        close(fd);
        return out;
    }
};

std::optional<uint64_t> nonzero(uint64_t v)
{
    if (!v) return std::nullopt;
    return v;
}

}  // namespace

Result<std::pair<std::string, std::string>> mount_of(const std::string& mountinfo,
                                                     const std::string& path)
{
    std::istringstream in(mountinfo);
    std::string line, best_source, best_mount;
    size_t best_len = 0;
    bool found = false;
    while (std::getline(in, line)) {
        // id parent major:minor root mountpoint options [optional...] - fstype source superopts
        std::istringstream f(line);
        std::string id, parent, devno, root, mount, opts, word;
        if (!(f >> id >> parent >> devno >> root >> mount >> opts)) continue;
        while (f >> word && word != "-") {
        }
        std::string fstype, source;
        if (!(f >> fstype >> source)) continue;
        mount = unescape_mount(mount);
        if (!under(path, mount)) continue;
        if (!found || mount.size() >= best_len) {
            best_len = mount.size();
            best_mount = mount;
            best_source = unescape_mount(source);
            found = true;
        }
    }
    if (!found) return make_error(Errc::NoMount, "no filesystem is mounted at " + path);
    return std::make_pair(best_source, best_mount);
}

Error quotactl_error(int err, const std::string& mount_point)
{
    switch (err) {
        case ESRCH:
            return {Errc::QuotasOff,
                    "quotas are not enabled on " + mount_point + " (quotactl: ESRCH)"};
        case ENOSYS:
        case EOPNOTSUPP:
            return {Errc::QuotasUnsupported,
                    "the kernel or filesystem of " + mount_point +
                        " does not support quotas (quotactl: " + strerror(err) + ")"};
        case ENOENT:
        case ENOTBLK:
        case ENODEV:
            return {Errc::NotLocalDevice,
                    mount_point + " is not on a local block device with quotas (quotactl: " +
                        strerror(err) + "); use a command or snapshot source"};
        case EPERM:
        case EACCES: return {Errc::QuotaDenied, "not allowed to read quotas on " + mount_point};
        default: return {Errc::QuotactlFailed, "quotactl on " + mount_point + ": " + strerror(err)};
    }
}

std::unique_ptr<QuotaSystem> make_real_quota_system()
{
    return std::make_unique<RealQuotaSystem>();
}

namespace {

Result<Reading> read_quotactl(QuotaSystem& sys, const SourceSpec& spec, uint32_t uid)
{
    auto dev = sys.device_of(spec.argument);
    if (!dev.ok()) return dev.error();
    const auto& [device, mount_point] = dev.value();
    KernelQuota k;
    if (const int err = sys.get_user_quota(device, uid, k)) return quotactl_error(err, mount_point);
    Reading reading;
    if (!k.bytes_soft && !k.bytes_hard && !k.files_soft && !k.files_hard) return reading;
    Usage u;
    u.filesystem = mount_point;
    u.bytes_used = k.bytes_used;
    u.bytes_soft = nonzero(k.bytes_soft);
    u.bytes_hard = nonzero(k.bytes_hard);
    u.files_used = k.files_used;
    u.files_soft = nonzero(k.files_soft);
    u.files_hard = nonzero(k.files_hard);
    if (k.block_grace_expires) u.block_grace_expires = k.block_grace_expires;
    if (k.file_grace_expires) u.file_grace_expires = k.file_grace_expires;
    reading.usage.push_back(u);
    return reading;
}

Result<Reading> read_command(QuotaSystem& sys, const std::vector<std::string>& argv)
{
    auto out = sys.run(argv, kCommandTimeoutMs);
    if (!out.ok()) return out.error();
    auto rows = parse_quota_table(out.value());
    if (!rows.ok()) return rows.error();
    Reading reading;
    for (auto& u : rows.value())
        if (u.bytes_soft || u.bytes_hard || u.files_soft || u.files_hard)
            reading.usage.push_back(std::move(u));
    return reading;
}

Result<Reading> read_snapshot(QuotaSystem& sys, const SourceSpec& spec, const std::string& user,
                              uint32_t uid)
{
    auto text = sys.read_file(spec.argument);
    if (!text.ok()) return text.error();
    auto snap = parse_snapshot(text.value(), user, uid);
    if (!snap.ok()) return Error(snap.error().code, spec.argument + ": " + snap.error().message);
    Reading reading;
    reading.snapshot_time = snap.value().generated_at;
    reading.usage = std::move(snap.value().usage);
    return reading;
}

}  // namespace

SourceResult read_quota_source(QuotaSystem& sys, const SourceSpec& spec, const std::string& user,
                               uint32_t uid)
{
    SourceResult r;
    r.name = spec.name;
    r.kind = spec.kind;
    r.where = spec.argument;
    switch (spec.kind) {
        case SourceKind::Quotactl: r.reading = read_quotactl(sys, spec, uid); break;
        case SourceKind::Command: {
            auto argv = command_argv(spec.argument, user, uid);
            r.where = "";
            for (const auto& a : argv) r.where += (r.where.empty() ? "" : " ") + a;
            r.reading = read_command(sys, argv);
            break;
        }
        case SourceKind::Snapshot: r.reading = read_snapshot(sys, spec, user, uid); break;
    }
    return r;
}

}  // namespace allot::quota
