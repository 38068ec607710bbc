// identity_cache.hpp - publishing the node's identity caches (writer).
//
// allot-syncd turns validated SCIM data into three files in identity.cache_dir
// (layout: identity_cache_format.hpp). Each is written to a temporary file in
// the same directory, fsync'ed and renamed over the old one, so a reader sees
// either the old or the new file, never a partial one. Files are replaced one
// by one (passwd, group, then keys): there is no cross-file transaction, and
// none is needed, because every file is complete and valid on its own.
// After the renames the writer adds 1 to the counter in `generation` beside
// them (identity_cache_format.hpp), in place: libnss_allot's steady lookups
// read it from a mapping instead of stat()ing the caches on every call.
//
// Modes: passwd.cache and group.cache are 0644 (public, like /etc/passwd and
// /etc/group). keys.cache is 0640 and its group is the cache directory's group
// (or CacheWriteOptions::keys_gid): sshd runs allot-keys as the
// AuthorizedKeysCommandUser, and the RPM makes that user the only member of
// the directory's group. Public keys are not secrets, but the list of who can
// log in with what is nobody else's business, and 0640 keeps it that way
// without running the helper as root.
//
// The reader (identity_cache_reader.hpp) is a separate, allocation-light unit
// that libnss_allot links alone.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "allot/identity.hpp"
#include "allot/result.hpp"

namespace allot {

inline constexpr const char* kPasswdCacheFile = "passwd.cache";
inline constexpr const char* kGroupCacheFile = "group.cache";
inline constexpr const char* kKeysCacheFile = "keys.cache";

struct CacheWriteOptions {
    uint64_t generation = 0;  // stored in each header; 0: the current time
    mode_t keys_mode = 0640;
    gid_t keys_gid = static_cast<gid_t>(-1);  // -1: the cache directory's group
    bool fsync = true;                        // tests of 100,000 users may turn this off
};

// Publishes passwd.cache, group.cache and keys.cache for `users` and `groups`
// into `dir` (created 0755 if missing) by atomic rename. A `dir` that is not
// owned by the writer's uid, or that group or others may write, is refused
// (Errc::Refused): the readers would refuse the caches in it. Returns true, or an
// Error naming the first offending record; on error no file is replaced
// unless the error came after the first rename (then the message says which
// files were published). Rejected, so that no cache is ever ambiguous:
//   - empty or over-long names, names with ':' ',' or whitespace or control
//     characters; fields (gecos, home, shell) with ':' or control characters;
//   - uid 0 or a primary gid 0 (a cache never defines root);
//   - two users with the same name or uid, two groups with the same name or gid;
//   - SSH key lines with control characters or over kMaxKeyLen (the caller
//     validates keys with parse_ssh_public_key; this is the format's own guard).
// Groups with gid 0 ("no POSIX gid", see ValidatedDirectory) are skipped.
// Duplicate members within a group are folded. Input order does not matter.
Result<bool> publish_identity_cache(const std::string& dir, const std::vector<PosixUser>& users,
                                    const std::vector<PosixGroup>& groups);
Result<bool> publish_identity_cache(const std::string& dir, const std::vector<PosixUser>& users,
                                    const std::vector<PosixGroup>& groups,
                                    const CacheWriteOptions& options);

// True for the temporary names a publish uses (".passwd.cache.XXXXXX" and its
// siblings, ".generation.XXXXXX"): what a publish killed half way leaves, and the only names
// allot-syncd removes from the cache directory at start.
bool is_cache_temporary(std::string_view name);

// The three images, built in memory (exposed for tests and the benchmark).
struct CacheImages {
    std::string passwd, group, keys;
};
Result<CacheImages> build_identity_cache(const std::vector<PosixUser>& users,
                                         const std::vector<PosixGroup>& groups,
                                         uint64_t generation);

}  // namespace allot
