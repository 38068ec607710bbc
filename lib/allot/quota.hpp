// quota.hpp - storage quotas from the sources of /etc/allot/quota.conf, shared by mylimits
// (a researcher's own quotas) and allot-report record-storage (everyone's, hourly).
//
// A site declares where quotas come from in /etc/allot/quota.conf (one source
// per line): the kernel (quotactl on the filesystem holding a path), a site
// command whose output is the `lfs quota` / `quota -w -p` table, or a JSON
// snapshot written by an hourly recorder. The parsers (lib/quota.cpp) are pure;
// running commands and calling quotactl(2) (lib/quota_source.cpp) sits behind the
// QuotaSystem seam so unit tests stand in for the kernel.
// A source that fails is reported with its reason, never fatal.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "allot/result.hpp"

namespace allot::quota {

// Why a source could not be read (or quota.conf parsed); never fatal to a report.
enum class Errc {
    Ok = 0,
    QuotaConfInvalid,   // quota.conf has a bad line
    NoMount,            // no filesystem is mounted at a quota source's path
    QuotasOff,          // quotactl: quotas are not enabled on the filesystem
    QuotasUnsupported,  // quotactl: kernel or filesystem without quota support
    NotLocalDevice,     // quotactl: not a local block device (NFS, Lustre...)
    QuotaDenied,        // quotactl: not allowed to read the quota
    QuotactlFailed,     // quotactl: any other errno
    CommandFailed,      // a command source could not run, or failed
    CommandTimedOut,    // a command source did not answer in time
    BadQuotaData,       // a command's table or a snapshot could not be parsed
};

}  // namespace allot::quota

ALLOT_ERROR_AREA(allot::quota, Errc);

namespace allot::quota {

enum class SourceKind { Quotactl, Command, Snapshot };
const char* source_kind_name(SourceKind kind);

// One line of quota.conf: `<name> <kind> <argument…>`.
struct SourceSpec {
    std::string name;  // label shown to the user: home, project, scratch
    SourceKind kind = SourceKind::Quotactl;
    std::string argument;  // quotactl: path; snapshot: file; command: the command line
};

// Parses quota.conf. Comments (#) and blank lines are skipped; every bad line
// is an error naming its line number. At most 32 sources.
Result<std::vector<SourceSpec>> parse_sources(std::string_view text);

// The command line of a `command` source split into argv (whitespace, no shell),
// with {user} and {uid} replaced. Quotes are not interpreted on purpose.
std::vector<std::string> command_argv(const std::string& command, const std::string& user,
                                      uint32_t uid);

struct Usage {
    std::string filesystem;  // mount point or filesystem name as the source names it
    uint64_t bytes_used = 0;
    std::optional<uint64_t> bytes_soft, bytes_hard;  // nullopt: no limit
    uint64_t files_used = 0;
    std::optional<uint64_t> files_soft, files_hard;
    // Grace: when the soft limit turns hard (unix seconds) or the remaining seconds.
    std::optional<int64_t> block_grace_expires, file_grace_expires;
    std::optional<int64_t> block_grace_left, file_grace_left;  // seconds, from duration text
    bool over_soft() const { return bytes_soft && bytes_used > *bytes_soft; }
    bool over_hard() const { return bytes_hard && bytes_used >= *bytes_hard; }
};

// What a source yielded for the user: their rows (empty: no quota set).
struct Reading {
    std::vector<Usage> usage;
    std::optional<int64_t> snapshot_time;  // snapshots: when it was recorded
};

// One source as the report shows it; `reading` holds why it could not be read
// (a quota::Errc code, or the core's NotFound, Io or TooLarge for files).
struct SourceResult {
    std::string name;  // from SourceSpec
    SourceKind kind = SourceKind::Quotactl;
    std::string where;  // path, file or command, for the message
    Result<Reading> reading = Reading{};
};

// Parses the table printed by `lfs quota -u USER FS` or `quota -w -p -u USER`
// (9 columns: filesystem, blocks KiB (a trailing * marks over quota), soft,
// hard, grace, files, soft, hard, grace). A filesystem name alone on a line
// continues on the next. Limits of 0 mean none. Bounded to 1 MiB and 256 rows.
Result<std::vector<Usage>> parse_quota_table(std::string_view text);

// Parses a snapshot written by the hourly recorder and picks the entry of
// `user`/`uid` (schema documented in docs/mylimits.md):
//   {"schema":"allot.quota-snapshot/1","generated_at":N,"filesystem":"/project",
//    "entries":[{"kind":"user","name":"alice","id":1001,"bytes_used":N,
//                "bytes_soft":N|null,"bytes_hard":N|null,"files_used":N,
//                "files_soft":N|null,"files_hard":N|null,"grace_expires":N|null}]}
struct Snapshot {
    int64_t generated_at = 0;
    std::vector<Usage> usage;  // entries of this user (usually one)
};
Result<Snapshot> parse_snapshot(std::string_view json, const std::string& user, uint32_t uid);

// Grace text of the tables: "-", "none", "0" → nullopt; "6d23h59m59s", "1w2d",
// "12:30" (hh:mm) → seconds left; a number > 1e9 → an absolute unix time.
struct Grace {
    std::optional<int64_t> expires;  // absolute
    std::optional<int64_t> left;     // relative seconds
};
std::optional<Grace> parse_grace(std::string_view text);

// --- Reading a source (lib/quota_source.cpp): the system behind a seam. ---

// What quotactl(Q_GETQUOTA) reports, in bytes and inodes (if_dqblk).
struct KernelQuota {
    uint64_t bytes_used = 0, bytes_soft = 0, bytes_hard = 0;  // limits 0: none
    uint64_t files_used = 0, files_soft = 0, files_hard = 0;
    int64_t block_grace_expires = 0, file_grace_expires = 0;  // 0: not in grace
};

class QuotaSystem {
public:
    virtual ~QuotaSystem() = default;
    // Block device (or filesystem source) and mount point holding `path`.
    virtual Result<std::pair<std::string, std::string>> device_of(const std::string& path) = 0;
    // quotactl(QCMD(Q_GETQUOTA, USRQUOTA), device, uid); errno on failure.
    virtual int get_user_quota(const std::string& device, uint32_t uid, KernelQuota& out) = 0;
    // Runs argv (no shell) with a time limit; stdout, bounded. CommandFailed,
    // CommandTimedOut or TooLarge.
    virtual Result<std::string> run(const std::vector<std::string>& argv, int timeout_ms) = 0;
    // The file's content; NotFound when it does not exist, Io or TooLarge otherwise.
    virtual Result<std::string> read_file(const std::string& path) = 0;
};

// The real system: /proc/self/mountinfo, quotactl(2), fork+execv, files.
std::unique_ptr<QuotaSystem> make_real_quota_system();

// Reads one source for `user`; never fails, reports instead.
SourceResult read_quota_source(QuotaSystem& sys, const SourceSpec& spec, const std::string& user,
                               uint32_t uid);

// A quotactl errno as an error of the quota area, with a sentence
// ("quotas are not enabled on /home").
Error quotactl_error(int err, const std::string& mount_point);

// The mount entry of `path` in mountinfo text: the longest mount point that is
// a prefix of path; returns {source, mount point}, or NoMount. Pure, for tests.
Result<std::pair<std::string, std::string>> mount_of(const std::string& mountinfo,
                                                     const std::string& path);

}  // namespace allot::quota
