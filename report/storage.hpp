// storage.hpp - the storage history: each user's quota usage per source, appended hourly
// by `allot-report record-storage` to a CSV store, and the storage view built from it.
//
// The store keeps UIDs, never names: names and teams are resolved when the report is
// made, so a renamed user keeps their history. One line per sample:
//   time,source,uid,filesystem,bytes_used,bytes_soft,bytes_hard,grace_expires
// (limits and grace empty when none). Lines that do not parse are skipped and counted,
// so a line cut short by a crash never hides the rest of the history.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "allot/quota.hpp"
#include "render.hpp"

namespace allot::report {

struct StorageSample {
    int64_t time = 0;    // when recorded (unix seconds)
    std::string source;  // quota.conf name: home, project, ...
    uint32_t uid = 0;
    std::string filesystem;
    uint64_t bytes_used = 0;
    std::optional<uint64_t> bytes_soft, bytes_hard;
    std::optional<int64_t> grace_expires;
};

// The samples of one user's reading of one source.
std::vector<StorageSample> samples_of(int64_t time, const std::string& source, uint32_t uid,
                                      const quota::Reading& reading);

std::string format_sample(const StorageSample& s);  // one line, with its '\n'

struct StoreContent {
    std::vector<StorageSample> samples;
    size_t bad_lines = 0;
};
StoreContent parse_store(std::string_view text);

// What the store keeps when it grows past its bound: the newest lines whose total is at
// most `keep_bytes`, starting on a line boundary.
std::string_view store_tail(std::string_view text, size_t keep_bytes);

// Names and teams, resolved at report time (getpwuid, the teams' groups).
struct StorageNames {
    std::function<std::string(uint32_t)> user;  // "uid 1234" when unknown
    std::function<std::string(uint32_t)> team;  // "(no team)" when in none
};

// The storage view over [from, until] (a sample taken the second the report runs is
// in it): per sample time, per user and source, the usage
// and limits, and per team and source the sum of its users' usage.
//   user rows:
//   time,scope=user,name,team,source,filesystem,bytes_used,bytes_soft,bytes_hard,grace_expires team
//   rows: time,scope=team,name,team,source,,bytes_used,,,
Table storage_table(const std::vector<StorageSample>& samples, const StorageNames& names,
                    int64_t from, int64_t until);

}  // namespace allot::report
