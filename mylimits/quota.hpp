// quota.hpp - storage quotas as mylimits shows them, and the parsers of their sources.
//
// A site declares where quotas come from in /etc/allot/quota.conf (one source
// per line): the kernel (quotactl on the filesystem holding a path), a site
// command whose output is the `lfs quota` / `quota -w -p` table, or a JSON
// snapshot written by an hourly recorder. The parsers here are pure; running
// commands and calling quotactl(2) happens in quota_source.cpp behind a seam.
// A source that fails is reported with its reason, never fatal.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "allot/result.hpp"
#include "errors.hpp"

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
// (a mylimits::Errc code, never fatal to the report).
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

}  // namespace allot::quota
