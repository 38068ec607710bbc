// file_checks.hpp - checks of the node's identity files (pure): who may read
// or replace the SCIM token and the identity caches, whether the caches and
// allot-syncd's last successful run are recent, and whether the directory's
// UID/GID ranges overlap the node's own accounts. The facts come from
// node_reader.hpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "allot/config.hpp"
#include "finding.hpp"

namespace allot::doctor {

struct FileFacts {
    std::string path;
    bool exists = false;
    uint32_t uid = 0;
    uint32_t mode = 0;        // permission bits
    int64_t age_seconds = 0;  // now - mtime
};

// A local account or group of /etc/passwd or /etc/group.
struct LocalId {
    std::string name;
    uint32_t id = 0;
};

// The token file is readable by its owner and group only and nobody else may write it.
Finding check_token_file(const FileFacts& token);
// The cache directory and caches: owned by root or identity.cache_owner and not
// writable by group or others; keys.cache not readable by others.
Findings check_cache_files(const FileFacts& dir, const std::vector<FileFacts>& caches,
                           uint32_t cache_owner_uid);
// passwd.cache exists and is younger than three poll intervals.
Finding check_cache_fresh(const FileFacts& passwd_cache, const IdentityConfig& identity);
// allot-syncd's state file, saved at the end of every successful cycle.
Finding check_syncd_last_run(const FileFacts& state, const IdentityConfig& identity);
// No local account or group has an id inside the directory's range (nobody excepted).
Findings check_id_ranges(const std::vector<LocalId>& users, const std::vector<LocalId>& groups,
                         const IdentityConfig& identity, const std::string& config_path);

}  // namespace allot::doctor
