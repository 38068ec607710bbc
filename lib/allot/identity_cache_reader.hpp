// identity_cache_reader.hpp - reading the identity caches from inside other programs.
//
// Used by libnss_allot (loaded into every process that resolves a user),
// allot-keys and pam_allot. It therefore never throws, never allocates per
// lookup and needs nothing from libstdc++ at run time: a file is mmap'ed and
// validated once (identity_cache_format.hpp), then every lookup is a binary
// search returning views into the mapping.
//
// A CacheHandle follows a path: each acquire() stat()s it and, when the file
// was replaced (device, inode, size, mtime or ctime changed), maps and
// validates the new one. A file that fails validation is remembered by the
// same identity, so a corrupt cache costs one validation, not one per lookup;
// while it is in place the cache is Unavailable (never the old data: a
// removed user must stop resolving). Snapshots are reference counted, so an
// enumeration keeps the file it started on while lookups move to a new one.
//
// Thread safety: acquire()/release() may be called from any thread; a
// Snapshot is immutable.
#pragma once

#include <pthread.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>

#include "allot/identity_cache_format.hpp"

namespace allot::idcache {

struct Str {
    const char* data;
    uint32_t size;
};

struct Snapshot;  // a mapped, validated cache file

// Maps and validates the file at `path`. nullptr on failure; *why (if given)
// then points to a static description ("missing", "bad checksum", ...).
Snapshot* snapshot_open(const char* path, Kind kind, const char** why) noexcept;
// Same over bytes in memory (copied), for tests of hostile images.
Snapshot* snapshot_from_bytes(const void* data, size_t size, Kind kind, const char** why) noexcept;
void snapshot_ref(Snapshot* snap) noexcept;
void snapshot_unref(Snapshot* snap) noexcept;
uint32_t snapshot_count(const Snapshot* snap) noexcept;
uint64_t snapshot_generation(const Snapshot* snap) noexcept;

struct UserView {
    Str name, gecos, home, shell;
    uint32_t uid, gid;
};
bool user_by_name(const Snapshot* snap, const char* name, size_t len, UserView* out) noexcept;
bool user_by_uid(const Snapshot* snap, uint32_t uid, UserView* out) noexcept;
bool user_at(const Snapshot* snap, uint32_t index, UserView* out) noexcept;  // enumeration order

struct GroupView {
    Str name;
    uint32_t gid;
    uint32_t member_count;
    const StrRef* members;  // use group_member()
    const char* strings;
};
inline Str group_member(const GroupView& g, uint32_t i) noexcept
{
    return Str{g.strings + g.members[i].off, g.members[i].len};
}
bool group_by_name(const Snapshot* snap, const char* name, size_t len, GroupView* out) noexcept;
bool group_by_gid(const Snapshot* snap, uint32_t gid, GroupView* out) noexcept;
bool group_at(const Snapshot* snap, uint32_t index, GroupView* out) noexcept;
// Calls fn(ctx, gid) for each group that lists `member`, in gid order of the
// membership index (by group record). Stops early when fn returns false.
// Returns the number of calls made.
uint32_t groups_of_member(const Snapshot* snap, const char* member, size_t len,
                          bool (*fn)(void* ctx, uint32_t gid), void* ctx) noexcept;

struct KeysView {
    Str name;
    uint32_t uid;
    uint32_t key_count;
    const StrRef* keys;
    const char* strings;
};
inline Str keys_line(const KeysView& k, uint32_t i) noexcept
{
    return Str{k.strings + k.keys[i].off, k.keys[i].len};
}
bool keys_by_name(const Snapshot* snap, const char* name, size_t len, KeysView* out) noexcept;

// Follows one path; constant-initialisable so a .so can hold it as a global
// without a constructor: `CacheHandle h = ALLOT_CACHE_HANDLE_INIT(path, kind);`
struct CacheHandle {
    pthread_mutex_t mu;
    const char* path;  // must outlive the handle
    Kind kind;
    Snapshot* current;
    // identity of the file behind `current`, or of the last file that failed
    bool have_ident;
    bool ident_failed;
    dev_t dev;
    ino_t ino;
    off_t size;
    int64_t mtime_ns;
    int64_t ctime_ns;
    const char* last_error;
};
#define ALLOT_CACHE_HANDLE_INIT(path, kind)                                                      \
    {                                                                                            \
        PTHREAD_MUTEX_INITIALIZER, (path), (kind), nullptr, false, false, 0, 0, 0, 0, 0, nullptr \
    }

// Returns a referenced snapshot of the current file (release with
// snapshot_unref), or nullptr when the file is missing or invalid; *why then
// says which.
Snapshot* cache_acquire(CacheHandle* handle, const char** why) noexcept;
// Drops the handle's own reference (tests; a .so's destructor need not call it).
void cache_reset(CacheHandle* handle) noexcept;

}  // namespace allot::idcache
