// storage_io.hpp - the storage history on disk and the system's names: record-storage
// reads every user's quota sources (lib's quota system) and appends to the store; the
// report reads the store back and resolves UIDs to users and teams (passwd, groups).
#pragma once

#include <string>

#include "allot/config.hpp"
#include "options.hpp"
#include "storage.hpp"

namespace allot::report {

struct RecordSummary {
    size_t users = 0, samples = 0, failures = 0;
    std::string first_failure;  // the first source that could not be read, and why
};

// One hourly run: every passwd user from o.min_uid up, every quota.conf source (without
// quota.conf: the kernel quota of each user's home directory), appended in one write.
Result<RecordSummary> record_storage(const Options& o, const std::string& env_quota_conf,
                                     int64_t now);

// The store's content; an absent store is an empty history.
Result<StoreContent> load_store(const std::string& path);

// getpwuid for names; a user's team is the first allot.yaml team whose group (a POSIX
// group of the same name) is their primary group or lists them.
StorageNames system_names(const Config& config);

}  // namespace allot::report
