// identity_cache_reader.hpp - reading the identity caches from inside other programs.
//
// Used by libnss_allot (loaded into every process that resolves a user),
// allot-keys and pam_allot. It therefore never throws, never allocates per
// lookup and needs nothing from libstdc++ at run time: a file is mmap'ed and
// its header validated once (identity_cache_format.hpp), then every lookup is a
// bounds-checked probe of a hash table (a binary search for memberships)
// returning views into the mapping, of a record validated before it is
// returned.
//
// A CacheHandle follows a path: an acquire() stat()s it and, when the file
// was replaced (device, inode, size, mtime or ctime changed), maps the new
// one with Check::Lookup (its header, header checksum and section bounds). A file that fails
// validation is remembered by the same identity, so a corrupt cache costs one validation, not one
// per lookup; while it is in place the cache is Unavailable (never the old data: a removed user
// must stop resolving). Snapshots are reference counted, so an enumeration keeps the file it
// started on while lookups move to a new one.
//
// Trust (like sshd's StrictModes): a cache is used only when the file and
// every directory above it are owned by root (or TrustPolicy::owner) and
// writable by nobody else. Anything else is refused before the file is read:
// whoever can replace a cache could otherwise name themselves root. A handle
// checks the directories whenever the file at its path is not the one it
// checked and mapped (first use, replacement, chmod/chown of the file): any
// use of a writable directory to swap the cache, or a directory above it,
// changes that identity. The file's own owner and mode are taken from the
// open descriptor. snapshot_open_trusted() checks on every call.
//
// Steady lookups (a handle or LocalFile with a recheck interval, as
// libnss_allot's): no system call and no lock. The snapshot or table in use is
// published through an atomic pointer and taken with one atomic increment;
// the stat() and the mutex are only on the slow path, taken when
//   - the writer's generation counter (identity_cache_format.hpp) differs
//     from the one read before the files were last looked at: a publish is
//     seen by the very next lookup;
//   - the recheck interval has passed since the files were last looked at
//     (CLOCK_MONOTONIC_COARSE, read in the vDSO): what no counter tells,
//     /etc/passwd and /etc/group (useradd) and a cache replaced without a bump
//     (by hand, by an older writer), is seen within the interval;
//   - there is no generation file: every acquire stat()s, as before.
// A recheck interval of 0 (the INIT macros' default) keeps a stat() per acquire.
//
// Local accounts: LocalFile follows /etc/passwd or /etc/group and answers
// whether a name or an id is already the node's own, so callers never answer
// for a local account or group (a directory user named `root`, a group named
// `sudo`). It is re-read when the file changes and bounded in size; when it
// cannot be read the answer is "unknown" and callers fail closed.
//
// Thread safety: acquire()/release() may be called from any thread; a
// Snapshot is immutable.
#pragma once

#include <pthread.h>
#include <sys/stat.h>
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

// How much of a file is checked when it is mapped (identity_cache_format.hpp):
// Full verifies the whole-file checksum and every record and index (the
// writer's check of what it published, allot-keys); Lookup checks the header,
// its checksum and the section bounds, and leaves the rest to the lookups,
// which bounds-check everything they follow and validate every record they
// return in full (libnss_allot: the first lookup of a process touches a few pages).
// Every lookup makes its checks in both modes.
enum class Check { Full, Lookup };

// Maps and fully validates (Check::Full) the file at `path`. nullptr on
// failure; *why (if given) then points to a static description ("missing",
// "bad checksum", ...).
Snapshot* snapshot_open(const char* path, Kind kind, const char** why) noexcept;
// Same over bytes in memory (copied), for tests of hostile images.
Snapshot* snapshot_from_bytes(const void* data, size_t size, Kind kind, const char** why,
                              Check check = Check::Full) noexcept;
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
// Calls fn(ctx, gid, name) for each group that lists `member`, in the order of
// the membership index (by group record). Stops early when fn returns false.
// Returns the number of calls made.
uint32_t groups_of_member(const Snapshot* snap, const char* member, size_t len,
                          bool (*fn)(void* ctx, uint32_t gid, Str name), void* ctx) noexcept;

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

// Why a cache could not be used: callers decide on the fault, never the text.
enum class Fault { None = 0, Missing, Untrusted, Invalid, Io };

// Who may own a cache and the directories above it. Root always may; `owner`
// too unless it is kNoOwner. Directories are checked from the file's up to
// `top` (nullptr: up to "/"; a test confines the walk to its own tree).
inline constexpr uid_t kNoOwner = static_cast<uid_t>(-1);
struct TrustPolicy {
    uid_t owner;
    const char* top;
};
inline constexpr TrustPolicy kRootOnly = {kNoOwner, nullptr};

// Fault::None when `st` (of a cache file or directory) is owned by root or
// policy.owner and not writable by group or others; else Fault::Untrusted and
// *why says which.
Fault check_trusted_stat(const struct stat& st, const TrustPolicy& policy,
                         const char** why) noexcept;
// Checks every directory above `path` (after resolving symlinks). On a
// refusal, `where` (if given) receives the offending directory.
Fault check_trusted_dirs(const char* path, const TrustPolicy& policy, const char** why, char* where,
                         size_t where_len) noexcept;
// snapshot_open with the trust checks of the directories and of the opened file.
Snapshot* snapshot_open_trusted(const char* path, Kind kind, const TrustPolicy& policy,
                                Fault* fault, const char** why) noexcept;

// Called by cache_acquire when the reason a cache is refused changes (so a
// long-running process logs a bad cache once, not once per lookup). `where`
// is the offending directory or the file itself.
using CacheLogFn = void (*)(const char* where, const char* why);

// How stale a steady lookup of libnss_allot may be about what the generation
// counter cannot tell (see above). nscd caches for 600 s (passwd) and 3600 s
// (group) by default; one second costs a few stat()s per second in a busy
// process and keeps a new local account's name from being answered by allot
// for longer than an admin can type the next command.
inline constexpr int64_t kNssRecheckNs = 1000 * 1000 * 1000;

// Follows one path; constant-initialisable so a .so can hold it as a global
// without a constructor: `CacheHandle h = ALLOT_CACHE_HANDLE_INIT(path, kind);`
struct CacheHandle {
    pthread_mutex_t mu;
    const char* path;  // must outlive the handle
    Kind kind;
    TrustPolicy trust;
    CacheLogFn log;  // may be null
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
    Fault last_fault;
    const char* logged;  // the reason last passed to `log`
    // The steady path (atomics; the rest is under `mu`):
    int64_t recheck_ns;   // 0: no steady path, stat() on every acquire
    Snapshot* published;  // `current` while the steady path may use it
    int readers;          // steady acquires between loading `published` and its ref
    int64_t checked_ns;   // CLOCK_MONOTONIC_COARSE of the last look at the files
    uint64_t gen_seen;    // counter read before that look
    const uint64_t* gen;  // the counter in the generation file's mapping, or null
    void* gen_map;        // that mapping (sizeof(GenerationFile))
    dev_t gen_dev;        // and its file
    ino_t gen_ino;
    uint64_t gen_maps;  // mappings made so far (tells a remap from the same one)
};
#define ALLOT_CACHE_HANDLE_INIT_RECHECK(path, kind, trust, log, recheck_ns)                        \
    {                                                                                              \
        PTHREAD_MUTEX_INITIALIZER, (path), (kind), trust, (log), nullptr, false, false, 0, 0, 0,   \
            0, 0, nullptr, ::allot::idcache::Fault::None, nullptr, (recheck_ns), nullptr, 0, 0, 0, \
            nullptr, nullptr, 0, 0, 0                                                              \
    }
#define ALLOT_CACHE_HANDLE_INIT_TRUST(path, kind, trust, log) \
    ALLOT_CACHE_HANDLE_INIT_RECHECK(path, kind, trust, log, 0)
#define ALLOT_CACHE_HANDLE_INIT(path, kind) \
    ALLOT_CACHE_HANDLE_INIT_TRUST(path, kind, ::allot::idcache::kRootOnly, nullptr)

// Returns a referenced snapshot of the current file (release with
// snapshot_unref), or nullptr when the file is missing, untrusted or
// invalid; *fault and *why (each if given) then say which.
Snapshot* cache_acquire(CacheHandle* handle, const char** why, Fault* fault = nullptr) noexcept;
// Drops the handle's own reference and the generation file's mapping (tests;
// a .so's destructor need not call it).
void cache_reset(CacheHandle* handle) noexcept;
// For a pthread_atfork child handler: the threads counted as steady readers
// at the fork are not in the child, whose unpublish would otherwise wait for
// them (and then keep the old snapshot for good).
void cache_atfork_child(CacheHandle* handle) noexcept;

// --- the node's own accounts and groups ------------------------------------

struct LocalTable;  // names and ids of one passwd(5)/group(5) file

// Follows one passwd(5) or group(5) file (name in field 1, id in field 3).
struct LocalFile {
    pthread_mutex_t mu;
    const char* path;
    LocalTable* table;
    bool have_ident;
    dev_t dev;
    ino_t ino;
    off_t size;
    int64_t mtime_ns;
    int64_t ctime_ns;
    // The steady path, as CacheHandle's (no counter: only the interval).
    int64_t recheck_ns;  // 0: stat() on every acquire
    LocalTable* published;
    int readers;
    int64_t checked_ns;
};
#define ALLOT_LOCAL_FILE_INIT_RECHECK(path, recheck_ns)                                          \
    {                                                                                            \
        PTHREAD_MUTEX_INITIALIZER, (path), nullptr, false, 0, 0, 0, 0, 0, (recheck_ns), nullptr, \
            0, 0                                                                                 \
    }
#define ALLOT_LOCAL_FILE_INIT(path) ALLOT_LOCAL_FILE_INIT_RECHECK(path, 0)
// Larger files are not read (the answer is then Unknown: fail closed).
inline constexpr off_t kMaxLocalFileSize = 16 << 20;

// A referenced view of the file as it is now (release with local_release),
// or null when it cannot be told: the file cannot be read or is over
// kMaxLocalFileSize (callers then fail closed). A missing file holds nothing.
const LocalTable* local_acquire(LocalFile* file) noexcept;
void local_release(const LocalTable* table) noexcept;
bool local_has_name(const LocalTable* table, const char* name, size_t len) noexcept;
bool local_has_id(const LocalTable* table, uint32_t id) noexcept;
// Drops the file's own reference (tests, a .so's destructor).
void local_reset(LocalFile* file) noexcept;
// As cache_atfork_child.
void local_atfork_child(LocalFile* file) noexcept;

}  // namespace allot::idcache
