// identity_cache_reader.cpp - mmap, validate and search the identity caches
// (see allot/identity_cache_reader.hpp).
//
// Written to need nothing from libstdc++ at run time (no new/delete, no
// exceptions, no std containers): libnss_allot is loaded into every process
// on a node and is built with -fno-exceptions, so this file must not pull the
// C++ runtime in behind it.
#include "allot/identity_cache_reader.hpp"

#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

namespace allot::idcache {

struct Snapshot {
    int refs;
    bool mapped;  // munmap (file) or free (bytes copied in)
    void* mem;
    size_t mem_size;
    Kind kind;
    uint32_t count;
    uint64_t generation;
    const void* records;
    const uint32_t* name_index;
    const uint32_t* id_index;
    const char* strings;
    uint64_t strings_size;
    const StrRef* members;
    uint64_t members_count;
    const MembershipEntry* membership;
    uint64_t membership_count;
    const StrRef* keys;
    uint64_t keys_count;
    const HashSlot* name_hash;
    uint64_t name_slots;
    const HashSlot* id_hash;  // null for keys
    uint64_t id_slots;
};

namespace {

struct Section {
    bool present;
    const unsigned char* data;
    uint64_t count;
};

uint32_t expected_elem_size(Kind kind, SectionId id)
{
    switch (id) {
        case SectionId::Records:
            switch (kind) {
                case Kind::Passwd: return sizeof(UserRecord);
                case Kind::Group: return sizeof(GroupRecord);
                case Kind::Keys: return sizeof(KeysRecord);
            }
            return 0;
        case SectionId::NameIndex:
        case SectionId::IdIndex: return sizeof(uint32_t);
        case SectionId::Strings: return 1;
        case SectionId::Members: return kind == Kind::Group ? sizeof(StrRef) : 0;
        case SectionId::Membership: return kind == Kind::Group ? sizeof(MembershipEntry) : 0;
        case SectionId::Keys: return kind == Kind::Keys ? sizeof(StrRef) : 0;
        case SectionId::NameHash: return sizeof(HashSlot);
        case SectionId::IdHash: return kind != Kind::Keys ? sizeof(HashSlot) : 0;
    }
    return 0;
}

bool ref_ok(const Snapshot& s, const StrRef& r)
{
    return uint64_t(r.off) + r.len <= s.strings_size;
}
const char* str_of(const Snapshot& s, const StrRef& r)
{
    return s.strings + r.off;
}
bool name_ok(const Snapshot& s, const StrRef& r)
{
    return ref_ok(s, r) && cache_valid_name(str_of(s, r), r.len);
}
bool field_ok(const Snapshot& s, const StrRef& r)
{
    return ref_ok(s, r) && cache_valid_field(str_of(s, r), r.len);
}

const UserRecord* users(const Snapshot& s)
{
    return static_cast<const UserRecord*>(s.records);
}
const GroupRecord* groups(const Snapshot& s)
{
    return static_cast<const GroupRecord*>(s.records);
}
const KeysRecord* keyrecs(const Snapshot& s)
{
    return static_cast<const KeysRecord*>(s.records);
}

StrRef name_ref(const Snapshot& s, uint32_t i)
{
    switch (s.kind) {
        case Kind::Passwd: return users(s)[i].name;
        case Kind::Group: return groups(s)[i].name;
        case Kind::Keys: return keyrecs(s)[i].name;
    }
    return StrRef{0, 0};
}
uint32_t id_of(const Snapshot& s, uint32_t i)
{
    return s.kind == Kind::Passwd ? users(s)[i].uid
                                  : (s.kind == Kind::Group ? groups(s)[i].gid : keyrecs(s)[i].uid);
}

int64_t find_name(const Snapshot& s, const char* name, size_t len);
int64_t find_id(const Snapshot& s, uint32_t id);

uint64_t used_slots(const HashSlot* table, uint64_t slots)
{
    uint64_t used = 0;
    for (uint64_t i = 0; i < slots; ++i) used += table[i].record != 0;
    return used;
}

// Every record is found through the hash tables at its own number, and they
// hold nothing else (as many used slots as records): with the unique names and
// ids the sorted indexes prove, each record is listed exactly once.
const char* validate_hashes(const Snapshot& s)
{
    if (used_slots(s.name_hash, s.name_slots) != s.count ||
        (s.id_hash && used_slots(s.id_hash, s.id_slots) != s.count))
        return "hash table does not hold every record once";
    for (uint32_t i = 0; i < s.count; ++i) {
        const StrRef n = name_ref(s, i);
        if (find_name(s, str_of(s, n), n.len) != int64_t(i)) return "name hash misses a record";
        if (s.id_hash && find_id(s, id_of(s, i)) != int64_t(i)) return "id hash misses a record";
    }
    return nullptr;
}

// Checks the records' contents, both indexes and the hash tables; the
// sections are in bounds.
const char* validate_contents(const Snapshot& s)
{
    for (uint32_t i = 0; i < s.count; ++i) {
        switch (s.kind) {
            case Kind::Passwd: {
                const UserRecord& u = users(s)[i];
                if (!name_ok(s, u.name)) return "bad user name";
                if (!field_ok(s, u.gecos) || !field_ok(s, u.home) || !field_ok(s, u.shell))
                    return "bad user field";
                if (u.uid == 0 || u.gid == 0) return "uid or gid 0";
                break;
            }
            case Kind::Group: {
                const GroupRecord& g = groups(s)[i];
                if (!name_ok(s, g.name)) return "bad group name";
                if (g.gid == 0) return "gid 0";
                if (uint64_t(g.member_first) + g.member_count > s.members_count)
                    return "member range out of bounds";
                break;
            }
            case Kind::Keys: {
                const KeysRecord& k = keyrecs(s)[i];
                if (!name_ok(s, k.name)) return "bad keys user name";
                if (k.key_count > kMaxKeysPerUser) return "too many keys";
                if (uint64_t(k.key_first) + k.key_count > s.keys_count)
                    return "key range out of bounds";
                break;
            }
        }
    }
    for (uint64_t i = 0; i < s.members_count; ++i)
        if (!name_ok(s, s.members[i])) return "bad member name";
    for (uint64_t i = 0; i < s.keys_count; ++i)
        if (!ref_ok(s, s.keys[i]) || !cache_valid_key(str_of(s, s.keys[i]), s.keys[i].len))
            return "bad key line";
    // Strictly increasing names (and ids): the indexes are permutations, and
    // names and ids unique.
    for (uint32_t i = 0; i < s.count; ++i) {
        if (s.name_index[i] >= s.count) return "name index out of bounds";
        if (i > 0) {
            const StrRef a = name_ref(s, s.name_index[i - 1]);
            const StrRef b = name_ref(s, s.name_index[i]);
            if (cache_compare(str_of(s, a), a.len, str_of(s, b), b.len) >= 0)
                return "name index not sorted";
        }
        if (s.id_index) {
            if (s.id_index[i] >= s.count) return "id index out of bounds";
            if (i > 0 && id_of(s, s.id_index[i - 1]) >= id_of(s, s.id_index[i]))
                return "id index not sorted";
        }
    }
    for (uint64_t i = 0; i < s.membership_count; ++i) {
        const MembershipEntry& m = s.membership[i];
        if (m.group_index >= s.count) return "membership out of bounds";
        if (!name_ok(s, m.member)) return "bad membership name";
        if (i > 0) {
            const MembershipEntry& p = s.membership[i - 1];
            const int c =
                cache_compare(str_of(s, p.member), p.member.len, str_of(s, m.member), m.member.len);
            if (c > 0 || (c == 0 && p.group_index >= m.group_index)) return "membership not sorted";
        }
    }
    return validate_hashes(s);
}

// Fills `s` from the image at s.mem; returns nullptr or why it is invalid.
// Check::Lookup stops after the header, its checksum and the section bounds
// (the lookups check what they follow); Check::Full also verifies the
// whole-file checksum and every record and index.
const char* validate(Snapshot& s, Kind kind, Check check)
{
    const auto* base = static_cast<const unsigned char*>(s.mem);
    const uint64_t size = s.mem_size;
    if (size < sizeof(FileHeader)) return "truncated (no header)";
    FileHeader h;
    std::memcpy(&h, base, sizeof h);
    if (std::memcmp(h.magic, kCacheMagic, sizeof h.magic) != 0) return "not an allot cache";
    if (h.endian != kCacheEndian) return "wrong byte order";
    if (h.version != kCacheVersion) return "unsupported cache version";
    if (h.kind != static_cast<uint32_t>(kind)) return "wrong cache kind";
    if (h.file_size != size) return "truncated (size mismatch)";
    if (h.section_count > kMaxSections) return "too many sections";
    const uint64_t table_end =
        sizeof(FileHeader) + uint64_t(h.section_count) * sizeof(SectionEntry);
    if (table_end > size) return "truncated (section table)";
    if (cache_header_checksum(base, h.section_count) != h.header_checksum)
        return "bad header checksum";
    if (check == Check::Full &&
        cache_checksum(base + kChecksumStart, size - kChecksumStart) != h.checksum)
        return "bad checksum";

    Section sec[kMaxSectionId + 1] = {};
    for (uint32_t i = 0; i < h.section_count; ++i) {
        SectionEntry e;
        std::memcpy(&e, base + sizeof(FileHeader) + uint64_t(i) * sizeof(SectionEntry), sizeof e);
        if (e.id < 1 || e.id > kMaxSectionId) return "unknown section";
        const uint32_t want = expected_elem_size(kind, static_cast<SectionId>(e.id));
        if (want == 0 || e.elem_size != want) return "bad section element size";
        if (sec[e.id].present) return "duplicate section";
        if (e.offset % 8 != 0 || e.offset < table_end || e.offset > size)
            return "bad section offset";
        if (e.count > (size - e.offset) / e.elem_size) return "section out of bounds";
        sec[e.id] = Section{true, base + e.offset, e.count};
    }
    const auto need = [&](SectionId id) { return sec[static_cast<int>(id)].present; };
    const auto get = [&](SectionId id) -> const Section& { return sec[static_cast<int>(id)]; };
    if (!need(SectionId::Records) || !need(SectionId::NameIndex) || !need(SectionId::Strings))
        return "missing section";
    if (kind != Kind::Keys && !need(SectionId::IdIndex)) return "missing id index";
    if (kind == Kind::Group && (!need(SectionId::Members) || !need(SectionId::Membership)))
        return "missing member sections";
    if (kind == Kind::Keys && !need(SectionId::Keys)) return "missing keys section";
    if (!need(SectionId::NameHash) || (kind != Kind::Keys && !need(SectionId::IdHash)))
        return "missing hash section";
    if (get(SectionId::Records).count != h.record_count ||
        get(SectionId::NameIndex).count != h.record_count ||
        (need(SectionId::IdIndex) && get(SectionId::IdIndex).count != h.record_count))
        return "record count mismatch";
    if (get(SectionId::Strings).count > 0xFFFFFFFFull) return "string section too large";
    for (const SectionId id : {SectionId::NameHash, SectionId::IdHash}) {
        const uint64_t slots = get(id).count;
        // A power of two (the probe wraps with a mask) with room for every record.
        if (need(id) && (slots == 0 || (slots & (slots - 1)) != 0 || slots <= h.record_count))
            return "bad hash table size";
    }

    s.kind = kind;
    s.count = h.record_count;
    s.generation = h.generation;
    s.records = get(SectionId::Records).data;
    s.name_index = reinterpret_cast<const uint32_t*>(get(SectionId::NameIndex).data);
    s.id_index = need(SectionId::IdIndex)
                     ? reinterpret_cast<const uint32_t*>(get(SectionId::IdIndex).data)
                     : nullptr;
    s.strings = reinterpret_cast<const char*>(get(SectionId::Strings).data);
    s.strings_size = get(SectionId::Strings).count;
    if (need(SectionId::Members)) {
        s.members = reinterpret_cast<const StrRef*>(get(SectionId::Members).data);
        s.members_count = get(SectionId::Members).count;
    }
    if (need(SectionId::Membership)) {
        s.membership = reinterpret_cast<const MembershipEntry*>(get(SectionId::Membership).data);
        s.membership_count = get(SectionId::Membership).count;
    }
    if (need(SectionId::Keys)) {
        s.keys = reinterpret_cast<const StrRef*>(get(SectionId::Keys).data);
        s.keys_count = get(SectionId::Keys).count;
    }
    s.name_hash = reinterpret_cast<const HashSlot*>(get(SectionId::NameHash).data);
    s.name_slots = get(SectionId::NameHash).count;
    if (need(SectionId::IdHash)) {
        s.id_hash = reinterpret_cast<const HashSlot*>(get(SectionId::IdHash).data);
        s.id_slots = get(SectionId::IdHash).count;
    }
    return check == Check::Full ? validate_contents(s) : nullptr;
}

void destroy(Snapshot* s)
{
    if (s->mapped) {
        if (s->mem) munmap(s->mem, s->mem_size);
    } else {
        std::free(s->mem);
    }
    std::free(s);
}

Snapshot* finish(Snapshot* s, Kind kind, Check check, const char** why)
{
    const char* err = validate(*s, kind, check);
    if (err) {
        if (why) *why = err;
        destroy(s);
        return nullptr;
    }
    s->refs = 1;
    return s;
}

// Whether record `i` (< s.count) may be returned: the checks validate_contents
// makes of one record, made again by every lookup that returns it (a file
// opened with Check::Lookup has had none of them).
bool user_ok(const Snapshot& s, const UserRecord& u)
{
    return name_ok(s, u.name) && field_ok(s, u.gecos) && field_ok(s, u.home) &&
           field_ok(s, u.shell) && u.uid != 0 && u.gid != 0;
}
bool group_ok(const Snapshot& s, const GroupRecord& g)
{
    if (!name_ok(s, g.name) || g.gid == 0 ||
        uint64_t(g.member_first) + g.member_count > s.members_count)
        return false;
    for (uint32_t m = 0; m < g.member_count; ++m)
        if (!name_ok(s, s.members[g.member_first + m])) return false;
    return true;
}
bool keys_ok(const Snapshot& s, const KeysRecord& k)
{
    if (!name_ok(s, k.name) || k.key_count > kMaxKeysPerUser ||
        uint64_t(k.key_first) + k.key_count > s.keys_count)
        return false;
    for (uint32_t i = 0; i < k.key_count; ++i) {
        const StrRef r = s.keys[k.key_first + i];
        if (!ref_ok(s, r) || !cache_valid_key(str_of(s, r), r.len)) return false;
    }
    return true;
}
bool record_ok(const Snapshot& s, uint32_t i)
{
    if (i >= s.count) return false;
    switch (s.kind) {
        case Kind::Passwd: return user_ok(s, users(s)[i]);
        case Kind::Group: return group_ok(s, groups(s)[i]);
        case Kind::Keys: return keys_ok(s, keyrecs(s)[i]);
    }
    return false;
}

// Walks the probe sequence of `p` in `table` (every slot at most once, so it
// ends whatever the table holds) and returns the one record whose key
// matches and for which `same(record)` holds, or -1: none, a slot naming a
// record outside the file, or the name or id listed twice (refused, as the
// full check would refuse the file). The record is then validated in full.
template <typename Same>
int64_t probe(const Snapshot& s, const HashSlot* table, uint64_t slots, HashProbe p, Same same)
{
    if (!table) return -1;
    const uint64_t mask = slots - 1;
    int64_t found = -1;
    uint64_t at = p.home & mask;
    for (uint64_t n = 0; n < slots; ++n, at = (at + 1) & mask) {
        const HashSlot slot = table[at];
        if (slot.record == 0) break;
        if (slot.key != p.key) continue;
        const uint32_t rec = slot.record - 1;
        if (rec >= s.count) return -1;
        const int m = same(rec);
        if (m < 0 || (m > 0 && found >= 0)) return -1;
        if (m > 0) found = rec;
    }
    return found >= 0 && record_ok(s, uint32_t(found)) ? found : -1;
}

// The record named `name`, through NAME_HASH; -1 when there is none or it
// cannot be answered. Every slot, record number and string it follows is
// bounds-checked.
int64_t find_name(const Snapshot& s, const char* name, size_t len)
{
    if (!name || len > kMaxNameLen) return -1;
    return probe(s, s.name_hash, s.name_slots, cache_name_probe(name, len), [&](uint32_t rec) {
        const StrRef r = name_ref(s, rec);
        if (!ref_ok(s, r)) return -1;  // a string outside the file: refuse
        return cache_compare(str_of(s, r), r.len, name, len) == 0 ? 1 : 0;
    });
}

int64_t find_id(const Snapshot& s, uint32_t id)
{
    return probe(s, s.id_hash, s.id_slots, cache_id_probe(id),
                 [&](uint32_t rec) { return id_of(s, rec) == id ? 1 : 0; });
}

void fill_user(const Snapshot& s, uint32_t i, UserView* out)
{
    const UserRecord& u = users(s)[i];
    *out = UserView{Str{str_of(s, u.name), u.name.len},
                    Str{str_of(s, u.gecos), u.gecos.len},
                    Str{str_of(s, u.home), u.home.len},
                    Str{str_of(s, u.shell), u.shell.len},
                    u.uid,
                    u.gid};
}

void fill_group(const Snapshot& s, uint32_t i, GroupView* out)
{
    const GroupRecord& g = groups(s)[i];
    *out = GroupView{Str{str_of(s, g.name), g.name.len}, g.gid, g.member_count,
                     s.members + g.member_first, s.strings};
}

int64_t ns_of(const struct timespec& ts)
{
    return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

bool same_ident(const CacheHandle& h, const struct stat& st)
{
    return h.have_ident && h.dev == st.st_dev && h.ino == st.st_ino && h.size == st.st_size &&
           h.mtime_ns == ns_of(st.st_mtim) && h.ctime_ns == ns_of(st.st_ctim);
}

void set_ident(CacheHandle& h, const struct stat& st, bool failed)
{
    __atomic_store_n(&h.have_ident, true, __ATOMIC_RELAXED);
    h.ident_failed = failed;
    h.dev = st.st_dev;
    h.ino = st.st_ino;
    h.size = st.st_size;
    h.mtime_ns = ns_of(st.st_mtim);
    h.ctime_ns = ns_of(st.st_ctim);
}

void set_fault(Fault* out, Fault f)
{
    if (out) *out = f;
}

// Opens `path` and maps it; on success *st describes the mapped file. With a
// policy, the opened file itself must be trusted (its directories are the
// caller's to check).
Snapshot* open_file(const char* path, Kind kind, Check check, const TrustPolicy* policy,
                    struct stat* st, Fault* fault, const char** why)
{
    const int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) {
        set_fault(fault, errno == ENOENT ? Fault::Missing : Fault::Io);
        if (why) *why = errno == ENOENT ? "missing" : "cannot open";
        return nullptr;
    }
    struct stat local;
    if (!st) st = &local;
    if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode)) {
        close(fd);
        set_fault(fault, Fault::Invalid);
        if (why) *why = "not a regular file";
        return nullptr;
    }
    if (policy) {
        const Fault f = check_trusted_stat(*st, *policy, why);
        if (f != Fault::None) {
            close(fd);
            set_fault(fault, f);
            return nullptr;
        }
    }
    if (st->st_size < static_cast<off_t>(sizeof(FileHeader))) {
        close(fd);
        set_fault(fault, Fault::Invalid);
        if (why) *why = "truncated (no header)";
        return nullptr;
    }
    void* mem = mmap(nullptr, static_cast<size_t>(st->st_size), PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (mem == MAP_FAILED) {
        set_fault(fault, Fault::Io);
        if (why) *why = "cannot map";
        return nullptr;
    }
    auto* s = static_cast<Snapshot*>(std::calloc(1, sizeof(Snapshot)));
    if (!s) {
        munmap(mem, static_cast<size_t>(st->st_size));
        set_fault(fault, Fault::Io);
        if (why) *why = "out of memory";
        return nullptr;
    }
    s->mapped = true;
    s->mem = mem;
    s->mem_size = static_cast<size_t>(st->st_size);
    Snapshot* done = finish(s, kind, check, why);
    set_fault(fault, done ? Fault::None : Fault::Invalid);
    return done;
}

// Copies the directory part of `path` into buf (without the last component).
bool parent_of(const char* path, char* buf, size_t len)
{
    const char* slash = std::strrchr(path, '/');
    if (!slash) return false;
    const size_t n = slash == path ? 1 : size_t(slash - path);
    if (n >= len) return false;
    std::memcpy(buf, path, n);
    buf[n] = '\0';
    return true;
}

void copy_where(char* where, size_t where_len, const char* dir)
{
    if (!where || where_len == 0) return;
    const size_t n = std::strlen(dir);
    const size_t m = n < where_len - 1 ? n : where_len - 1;
    std::memcpy(where, dir, m);
    where[m] = '\0';
}

}  // namespace

Snapshot* snapshot_open(const char* path, Kind kind, const char** why) noexcept
{
    return open_file(path, kind, Check::Full, nullptr, nullptr, nullptr, why);
}

Fault check_trusted_stat(const struct stat& st, const TrustPolicy& policy,
                         const char** why) noexcept
{
    if (st.st_uid != 0 && (policy.owner == kNoOwner || st.st_uid != policy.owner)) {
        if (why) *why = "not owned by root or the cache owner";
        return Fault::Untrusted;
    }
    // A directory's sticky bit does not help: whoever may create entries in
    // it may create the cache before the writer does.
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
        if (why) *why = "writable by group or others";
        return Fault::Untrusted;
    }
    return Fault::None;
}

namespace {

// A path with no ".", ".." or empty component: its directories are exactly
// its prefixes, so the walk needs no realpath unless one is a symlink.
bool lexically_clean(const char* p)
{
    if (p[0] != '/') return false;
    for (const char* c = p; *c; ++c) {
        if (*c != '/') continue;
        if (c[1] == '/' || (c[1] == '.' && (c[2] == '/' || c[2] == '\0')) ||
            (c[1] == '.' && c[2] == '.' && (c[3] == '/' || c[3] == '\0')))
            return false;
    }
    return true;
}

enum class Walk { Trusted, Refused, Symlink };

// Checks `dir` and every directory above it up to `top` (or "/"). With
// lexical set, a symlink stops the walk (Walk::Symlink): the caller resolves
// the path and walks again.
Walk walk_up(char* dir, const char* top, const TrustPolicy& policy, bool lexical, Fault* fault,
             const char** why, char* where, size_t where_len)
{
    for (;;) {
        struct stat st;
        if ((lexical ? lstat(dir, &st) : stat(dir, &st)) != 0) {
            const bool missing = errno == ENOENT;
            if (why) *why = missing ? "missing" : "a directory above it cannot be examined";
            copy_where(where, where_len, dir);
            *fault = missing ? Fault::Missing : Fault::Io;
            return Walk::Refused;
        }
        if (lexical && S_ISLNK(st.st_mode)) return Walk::Symlink;
        *fault = S_ISDIR(st.st_mode) ? check_trusted_stat(st, policy, why) : Fault::Io;
        if (*fault != Fault::None) {
            if (*fault == Fault::Io && why) *why = "a directory above it is not a directory";
            copy_where(where, where_len, dir);
            return Walk::Refused;
        }
        if (std::strcmp(dir, "/") == 0 || (top && std::strcmp(dir, top) == 0)) return Walk::Trusted;
        char* slash = std::strrchr(dir, '/');
        if (slash == dir)
            dir[1] = '\0';
        else
            *slash = '\0';
    }
}

}  // namespace

Fault check_trusted_dirs(const char* path, const TrustPolicy& policy, const char** why, char* where,
                         size_t where_len) noexcept
{
    char parent[PATH_MAX];
    char dir[PATH_MAX];
    char top[PATH_MAX];
    if (!path || !parent_of(path, parent, sizeof parent)) {
        if (why) *why = "not an absolute path";
        copy_where(where, where_len, path ? path : "");
        return Fault::Io;
    }
    Fault fault = Fault::None;
    // The common case: a plain path without symlinks, one lstat per directory.
    if (lexically_clean(parent)) {
        std::memcpy(dir, parent, sizeof dir);
        const Walk w = walk_up(dir, policy.top, policy, true, &fault, why, where, where_len);
        if (w != Walk::Symlink) return fault;
    }
    if (!realpath(parent, dir)) {
        const bool missing = errno == ENOENT;
        if (why) *why = missing ? "missing" : "cannot resolve its directory";
        copy_where(where, where_len, parent);
        return missing ? Fault::Missing : Fault::Io;
    }
    if (policy.top && !realpath(policy.top, top)) {
        if (why) *why = "cannot resolve the trusted top directory";
        copy_where(where, where_len, policy.top);
        return Fault::Io;
    }
    walk_up(dir, policy.top ? top : nullptr, policy, false, &fault, why, where, where_len);
    return fault;
}

Snapshot* snapshot_open_trusted(const char* path, Kind kind, const TrustPolicy& policy,
                                Fault* fault, const char** why) noexcept
{
    const Fault f = check_trusted_dirs(path, policy, why, nullptr, 0);
    if (f != Fault::None) {
        set_fault(fault, f);
        return nullptr;
    }
    return open_file(path, kind, Check::Full, &policy, nullptr, fault, why);
}

Snapshot* snapshot_from_bytes(const void* data, size_t size, Kind kind, const char** why,
                              Check check) noexcept
{
    auto* s = static_cast<Snapshot*>(std::calloc(1, sizeof(Snapshot)));
    void* mem = std::malloc(size ? size : 1);
    if (!s || !mem) {
        std::free(s);
        std::free(mem);
        if (why) *why = "out of memory";
        return nullptr;
    }
    if (size) std::memcpy(mem, data, size);
    s->mapped = false;
    s->mem = mem;
    s->mem_size = size;
    return finish(s, kind, check, why);
}

void snapshot_ref(Snapshot* snap) noexcept
{
    if (snap) __atomic_add_fetch(&snap->refs, 1, __ATOMIC_RELAXED);
}

void snapshot_unref(Snapshot* snap) noexcept
{
    if (snap && __atomic_sub_fetch(&snap->refs, 1, __ATOMIC_ACQ_REL) == 0) destroy(snap);
}

uint32_t snapshot_count(const Snapshot* snap) noexcept
{
    return snap ? snap->count : 0;
}
uint64_t snapshot_generation(const Snapshot* snap) noexcept
{
    return snap ? snap->generation : 0;
}

bool user_by_name(const Snapshot* snap, const char* name, size_t len, UserView* out) noexcept
{
    if (!snap || snap->kind != Kind::Passwd) return false;
    const int64_t i = find_name(*snap, name, len);
    if (i < 0) return false;
    fill_user(*snap, static_cast<uint32_t>(i), out);
    return true;
}

bool user_by_uid(const Snapshot* snap, uint32_t uid, UserView* out) noexcept
{
    if (!snap || snap->kind != Kind::Passwd) return false;
    const int64_t i = find_id(*snap, uid);
    if (i < 0) return false;
    fill_user(*snap, static_cast<uint32_t>(i), out);
    return true;
}

bool user_at(const Snapshot* snap, uint32_t index, UserView* out) noexcept
{
    if (!snap || snap->kind != Kind::Passwd || !record_ok(*snap, index)) return false;
    fill_user(*snap, index, out);
    return true;
}

bool group_by_name(const Snapshot* snap, const char* name, size_t len, GroupView* out) noexcept
{
    if (!snap || snap->kind != Kind::Group) return false;
    const int64_t i = find_name(*snap, name, len);
    if (i < 0) return false;
    fill_group(*snap, static_cast<uint32_t>(i), out);
    return true;
}

bool group_by_gid(const Snapshot* snap, uint32_t gid, GroupView* out) noexcept
{
    if (!snap || snap->kind != Kind::Group) return false;
    const int64_t i = find_id(*snap, gid);
    if (i < 0) return false;
    fill_group(*snap, static_cast<uint32_t>(i), out);
    return true;
}

bool group_at(const Snapshot* snap, uint32_t index, GroupView* out) noexcept
{
    if (!snap || snap->kind != Kind::Group || !record_ok(*snap, index)) return false;
    fill_group(*snap, index, out);
    return true;
}

uint32_t groups_of_member(const Snapshot* snap, const char* member, size_t len,
                          bool (*fn)(void* ctx, uint32_t gid, Str name), void* ctx) noexcept
{
    if (!snap || snap->kind != Kind::Group || !member || !fn) return 0;
    const Snapshot& s = *snap;
    // lower bound of `member` in the membership index; an entry whose name is
    // outside the file refuses the whole answer
    uint64_t lo = 0, hi = s.membership_count;
    while (lo < hi) {
        const uint64_t mid = lo + (hi - lo) / 2;
        const StrRef r = s.membership[mid].member;
        if (!ref_ok(s, r)) return 0;
        if (cache_compare(str_of(s, r), r.len, member, len) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    uint32_t calls = 0;
    for (uint64_t i = lo; i < s.membership_count; ++i) {
        const StrRef r = s.membership[i].member;
        if (!ref_ok(s, r) || cache_compare(str_of(s, r), r.len, member, len) != 0) break;
        // The group's id and name are what is returned: an entry leading to
        // an invalid group is skipped, the user's other groups still count.
        const uint32_t gi = s.membership[i].group_index;
        if (gi >= s.count) continue;
        const GroupRecord& g = groups(s)[gi];
        if (g.gid == 0 || !name_ok(s, g.name)) continue;
        ++calls;
        if (!fn(ctx, g.gid, Str{str_of(s, g.name), g.name.len})) break;
    }
    return calls;
}

bool keys_by_name(const Snapshot* snap, const char* name, size_t len, KeysView* out) noexcept
{
    if (!snap || snap->kind != Kind::Keys) return false;
    const int64_t i = find_name(*snap, name, len);
    if (i < 0) return false;
    const KeysRecord& k = keyrecs(*snap)[i];
    *out = KeysView{Str{str_of(*snap, k.name), k.name.len}, k.uid, k.key_count,
                    snap->keys + k.key_first, snap->strings};
    return true;
}

// --- the steady path -------------------------------------------------------

namespace {

// CLOCK_MONOTONIC_COARSE is read in the vDSO (no system call) and moves in
// ticks of 1-4 ms, fine for intervals of a second. -1 when it cannot be read:
// every interval then counts as passed (the slow path, never a stale answer).
int64_t coarse_now_ns()
{
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC_COARSE, &ts) != 0) return -1;
    return ns_of(ts);
}

bool interval_passed(int64_t now, const int64_t* checked, int64_t interval)
{
    return now < 0 || now - __atomic_load_n(checked, __ATOMIC_RELAXED) >= interval;
}

// Steady readers take a published pointer without the lock. A reader counts
// itself in `readers` only between loading the pointer and taking its
// reference (a few instructions); whoever unpublishes waits for that count to
// fall to zero before the object may go. Sequentially consistent on both
// sides: either the reader's count is seen by the waiter or the reader sees
// the pointer gone.
void enter(int* readers)
{
    __atomic_add_fetch(readers, 1, __ATOMIC_SEQ_CST);
}
void leave(int* readers)
{
    __atomic_sub_fetch(readers, 1, __ATOMIC_RELEASE);
}

// How long an unpublish waits for the readers; past it the object is kept for
// good (a leak, never a use after free): a thread stopped in those few
// instructions for a second is a process in trouble already.
constexpr int64_t kQuiesceNs = 1000 * 1000 * 1000;

bool quiesce(int* readers)
{
    int64_t start = -1;
    while (__atomic_load_n(readers, __ATOMIC_SEQ_CST) != 0) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        if (start < 0) start = ns_of(ts);
        if (ns_of(ts) - start > kQuiesceNs) return false;
        sched_yield();
    }
    return true;
}

// Takes `current` off the steady path. When a reader may still be taking a
// reference to it, the handle gives it a reference it never drops.
void unpublish(CacheHandle& h)
{
    if (!__atomic_exchange_n(&h.published, nullptr, __ATOMIC_SEQ_CST)) return;
    if (!quiesce(&h.readers)) snapshot_ref(h.current);
}

// Replaces the handle's own snapshot (under h.mu).
void replace_current(CacheHandle& h, Snapshot* fresh)
{
    unpublish(h);
    if (h.current) snapshot_unref(h.current);
    h.current = fresh;
}

// The steady path: the published snapshot, referenced, when the generation
// counter still holds the value read before the files were last looked at
// and the recheck interval has not passed; null sends the caller to the slow
// path. No system call, no lock.
Snapshot* pin_published(CacheHandle& h)
{
    if (h.recheck_ns <= 0) return nullptr;
    const int64_t now = coarse_now_ns();
    enter(&h.readers);
    Snapshot* s = __atomic_load_n(&h.published, __ATOMIC_SEQ_CST);
    const uint64_t* gen = __atomic_load_n(&h.gen, __ATOMIC_ACQUIRE);
    if (s && gen &&
        __atomic_load_n(gen, __ATOMIC_ACQUIRE) == __atomic_load_n(&h.gen_seen, __ATOMIC_RELAXED) &&
        !interval_passed(now, &h.checked_ns, h.recheck_ns))
        snapshot_ref(s);
    else
        s = nullptr;
    leave(&h.readers);
    return s;
}

// The counter as the slow path reads it before it looks at the files, and
// which mapping it came from.
struct GenRead {
    bool valid;
    uint64_t value;
    uint64_t maps;
};
GenRead read_generation(CacheHandle& h)
{
    GenRead g{false, 0, 0};
    enter(&h.readers);
    const uint64_t* gen = __atomic_load_n(&h.gen, __ATOMIC_SEQ_CST);
    g.maps = __atomic_load_n(&h.gen_maps, __ATOMIC_ACQUIRE);
    if (gen) {
        g.valid = true;
        g.value = __atomic_load_n(gen, __ATOMIC_ACQUIRE);
    }
    leave(&h.readers);
    return g;
}

// Forgets the generation file (under h.mu): back to a stat() per acquire.
void drop_generation(CacheHandle& h)
{
    if (!h.gen_map) return;
    unpublish(h);
    __atomic_store_n(&h.gen, nullptr, __ATOMIC_SEQ_CST);
    if (quiesce(&h.readers)) munmap(h.gen_map, sizeof(GenerationFile));
    h.gen_map = nullptr;
    h.gen_dev = 0;
    h.gen_ino = 0;
    __atomic_add_fetch(&h.gen_maps, 1, __ATOMIC_RELEASE);
}

// "<directory of path>/generation"; false when it does not fit.
bool generation_path(const char* path, char* out, size_t len)
{
    const char* slash = std::strrchr(path, '/');
    if (!slash) return false;
    const size_t dir = size_t(slash - path) + 1;
    const size_t name = std::strlen(kGenerationFile);
    if (dir + name + 1 > len) return false;
    std::memcpy(out, path, dir);
    std::memcpy(out + dir, kGenerationFile, name + 1);
    return true;
}

// Maps the generation file of a trusted regular file `fd` (`st`); null when it
// is not one. The caller has checked its directories.
void* map_generation(int fd, const struct stat& st, const TrustPolicy& trust)
{
    if (!S_ISREG(st.st_mode) || st.st_size != off_t(sizeof(GenerationFile)) ||
        check_trusted_stat(st, trust, nullptr) != Fault::None)
        return nullptr;
    void* map = mmap(nullptr, sizeof(GenerationFile), PROT_READ, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) return nullptr;
    if (generation_file_valid(map)) return map;
    munmap(map, sizeof(GenerationFile));
    return nullptr;
}

// Makes the handle follow the generation file beside its cache (under h.mu):
// maps it when it appears or was replaced, forgets it when it is gone or
// cannot be trusted. `dirs_checked`: the directories were walked just now.
void follow_generation(CacheHandle& h, bool dirs_checked)
{
    char path[PATH_MAX];
    struct stat st;
    if (!generation_path(h.path, path, sizeof path)) return drop_generation(h);
    // With none mapped (the first lookup of a process) the open's fstat() is
    // the only look needed: one system call less.
    if (h.gen_map) {
        if (lstat(path, &st) != 0) return drop_generation(h);
        if (st.st_dev == h.gen_dev && st.st_ino == h.gen_ino &&
            st.st_size == off_t(sizeof(GenerationFile)))
            return;  // the one mapped
    }
    const int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) return drop_generation(h);
    void* map = nullptr;
    if (fstat(fd, &st) == 0 &&
        (dirs_checked || check_trusted_dirs(path, h.trust, nullptr, nullptr, 0) == Fault::None))
        map = map_generation(fd, st, h.trust);
    close(fd);
    drop_generation(h);
    if (!map) return;
    h.gen_map = map;
    h.gen_dev = st.st_dev;
    h.gen_ino = st.st_ino;
    __atomic_add_fetch(&h.gen_maps, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&h.gen,
                     reinterpret_cast<const uint64_t*>(static_cast<const unsigned char*>(map) +
                                                       kGenerationCounterOffset),
                     __ATOMIC_RELEASE);
}

// After a slow acquire that found `snap` (under h.mu): looks at the
// generation file when there is reason to, and publishes `snap` for the
// steady path when the counter read before the files were looked at came from
// the mapping the handle still has. Otherwise the next acquire is slow again.
void update_steady(CacheHandle& h, Snapshot* snap, const GenRead& g, int64_t now, bool dirs_checked)
{
    // Without a generation file every acquire stat()s the cache; whether one
    // has appeared is asked when a new cache is mapped (a writer that makes
    // one publishes first) and once per interval.
    if (dirs_checked || interval_passed(now, &h.checked_ns, h.recheck_ns)) {
        follow_generation(h, dirs_checked);
        __atomic_store_n(&h.checked_ns, now, __ATOMIC_RELAXED);
    }
    if (!g.valid || g.maps != h.gen_maps || !h.gen_map || now < 0) return unpublish(h);
    __atomic_store_n(&h.gen_seen, g.value, __ATOMIC_RELAXED);
    __atomic_store_n(&h.checked_ns, now, __ATOMIC_RELAXED);
    __atomic_store_n(&h.published, snap, __ATOMIC_SEQ_CST);
}

// --- the slow path ----------------------------------------------------------

// Forgets the current file: a removed or untrusted cache must stop answering,
// like a corrupt one.
void drop_current(CacheHandle& h, Fault fault, const char* why)
{
    replace_current(h, nullptr);
    __atomic_store_n(&h.have_ident, false, __ATOMIC_RELAXED);
    h.last_error = why;
    h.last_fault = fault;
}

// Maps the file behind `st` (when `stated`) unless it is the one already known.
Snapshot* refresh(CacheHandle& h, const struct stat& st, bool stated)
{
    if (stated && same_ident(h, st)) return h.ident_failed ? nullptr : h.current;
    struct stat mapped = st;  // overwritten by open_file's fstat
    const char* err = nullptr;
    Fault fault = Fault::None;
    // The handle serves lookups (libnss_allot): each checks what it follows, so
    // the first lookup of a process does not read the whole file.
    Snapshot* fresh = open_file(h.path, h.kind, Check::Lookup, &h.trust, &mapped, &fault, &err);
    replace_current(h, fresh);
    // Remember what was opened (not what was stat'ed: it may have been
    // replaced in between). Only an invalid image is remembered as failed; a
    // vanished or untrusted file is looked at again on the next acquire.
    if (fresh || fault == Fault::Invalid)
        set_ident(h, mapped, !fresh);
    else
        __atomic_store_n(&h.have_ident, false, __ATOMIC_RELAXED);
    h.last_error = err;
    h.last_fault = fault;
    return fresh;
}

// Tells the log about a new reason for refusing the cache, once.
void note_refusal(CacheHandle& h, const char* where, const char* why)
{
    if (!h.log || !why || h.logged == why) return;
    h.logged = why;
    h.log(where, why);
}

// What the slow path found, under h.mu: the snapshot to answer from (not yet
// referenced) and whether the directories were walked for it.
struct Looked {
    Snapshot* snap;
    bool dirs_checked;
};
Looked look_at_file(CacheHandle& h, bool known, bool exists, const struct stat& st, char* where,
                    size_t where_len)
{
    if (!exists) {
        drop_current(h, Fault::Missing, "missing");
        return Looked{nullptr, false};
    }
    // The file that was checked and mapped: anything done through a writable
    // directory (replacing the file, or a directory above it) would have
    // changed its identity, so its directories need no new walk.
    if (known && same_ident(h, st)) return Looked{h.ident_failed ? nullptr : h.current, false};
    const char* dir_why = nullptr;
    const Fault dir_fault = check_trusted_dirs(h.path, h.trust, &dir_why, where, where_len);
    if (dir_fault != Fault::None) {
        drop_current(h, dir_fault, dir_why);
        return Looked{nullptr, true};
    }
    return Looked{refresh(h, st, known), true};
}

Snapshot* acquire_slow(CacheHandle& h, const char** why, Fault* fault)
{
    // The counter is read before the files are looked at: a publish after
    // this read bumps it again, so the next acquire looks again.
    const int64_t now = h.recheck_ns > 0 ? coarse_now_ns() : -1;
    const GenRead gen = h.recheck_ns > 0 ? read_generation(h) : GenRead{false, 0, 0};
    // Before a file is known there is nothing to compare a stat() with: the
    // walk and the open (whose fstat gives the identity) come first, one
    // system call less on the first lookup of each process. The flag is only
    // a hint read without the lock; a stale "unknown" costs a redundant open.
    struct stat st;
    std::memset(&st, 0, sizeof st);
    const bool known = __atomic_load_n(&h.have_ident, __ATOMIC_RELAXED);
    const bool exists = !known || stat(h.path, &st) == 0;
    char where[PATH_MAX] = "";
    pthread_mutex_lock(&h.mu);
    const Looked looked = look_at_file(h, known, exists, st, where, sizeof where);
    Snapshot* result = looked.snap;
    if (result) {
        if (h.recheck_ns > 0) update_steady(h, result, gen, now, looked.dirs_checked);
        snapshot_ref(result);
        h.logged = nullptr;
    } else {
        unpublish(h);
        if (h.last_fault == Fault::Untrusted || h.last_fault == Fault::Invalid)
            note_refusal(h, where[0] ? where : h.path, h.last_error);
    }
    const char* err = h.last_error;
    const Fault f = h.last_fault;
    pthread_mutex_unlock(&h.mu);
    if (!result) {
        if (why) *why = err ? err : "unavailable";
        set_fault(fault, f == Fault::None ? Fault::Io : f);
    } else {
        set_fault(fault, Fault::None);
    }
    return result;
}

}  // namespace

Snapshot* cache_acquire(CacheHandle* h, const char** why, Fault* fault) noexcept
{
    if (!h || !h->path) {
        if (why) *why = "no cache path";
        set_fault(fault, Fault::Missing);
        return nullptr;
    }
    if (Snapshot* s = pin_published(*h)) {
        set_fault(fault, Fault::None);
        return s;
    }
    return acquire_slow(*h, why, fault);
}

void cache_reset(CacheHandle* h) noexcept
{
    if (!h) return;
    pthread_mutex_lock(&h->mu);
    replace_current(*h, nullptr);
    drop_generation(*h);
    __atomic_store_n(&h->have_ident, false, __ATOMIC_RELAXED);
    h->ident_failed = false;
    h->last_error = nullptr;
    h->last_fault = Fault::None;
    h->logged = nullptr;
    pthread_mutex_unlock(&h->mu);
}

void cache_atfork_child(CacheHandle* h) noexcept
{
    if (h) __atomic_store_n(&h->readers, 0, __ATOMIC_RELAXED);
}

// --- LocalFile --------------------------------------------------------------

struct LocalTable {
    int refs;
    char* text;     // the file's bytes
    StrRef* names;  // sorted bytewise
    uint32_t* ids;  // sorted
    size_t name_count;
    size_t id_count;
    bool unknown;  // unreadable or too large: every answer is Unknown
    // One bit per name, at name_bit(): a clear bit proves a name is not in the file without
    // the binary search (a 500-member group asks about each member, a few local names match).
    uint64_t name_filter[4];
};

namespace {

// The name's bit in LocalTable::name_filter: its length and first and last bytes, three
// loads (a hash of every byte would cost what the binary search it saves costs).
unsigned name_bit(const char* name, size_t len)
{
    if (len == 0) return 0;
    const unsigned first = static_cast<unsigned char>(name[0]);
    const unsigned last = static_cast<unsigned char>(name[len - 1]);
    return (first * 31u + unsigned(len) * 7u + last) & 255u;
}

void table_free(LocalTable* t)
{
    if (!t || __atomic_sub_fetch(&t->refs, 1, __ATOMIC_ACQ_REL) != 0) return;
    std::free(t->text);
    std::free(t->names);
    std::free(t->ids);
    std::free(t);
}

int compare_names(const void* a, const void* b, void* text)
{
    const auto* x = static_cast<const StrRef*>(a);
    const auto* y = static_cast<const StrRef*>(b);
    const char* base = static_cast<const char*>(text);
    return cache_compare(base + x->off, x->len, base + y->off, y->len);
}

int compare_ids(const void* a, const void* b)
{
    const uint32_t x = *static_cast<const uint32_t*>(a);
    const uint32_t y = *static_cast<const uint32_t*>(b);
    return x < y ? -1 : (x > y ? 1 : 0);
}

// Reads the whole file into t->text; false when it cannot (then Unknown).
bool read_all(int fd, off_t size, LocalTable* t)
{
    t->text = static_cast<char*>(std::malloc(size_t(size) + 1));
    if (!t->text) return false;
    size_t done = 0;
    while (done < size_t(size)) {
        const ssize_t n = read(fd, t->text + done, size_t(size) - done);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return false;
        if (n == 0) break;  // shrank while reading: what was read is the file
        done += size_t(n);
    }
    t->text[done] = '\0';
    return true;
}

// The numeric third field, or false ("x", empty, out of range).
bool parse_id(const char* p, size_t n, uint32_t* out)
{
    if (n == 0 || n > 10) return false;
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) {
        if (p[i] < '0' || p[i] > '9') return false;
        v = v * 10 + uint64_t(p[i] - '0');
    }
    if (v > 0xFFFFFFFFull) return false;
    *out = uint32_t(v);
    return true;
}

// Indexes "name:x:id:..." lines; blank, comment and NIS ('+'/'-') lines name
// nothing local.
bool index_lines(LocalTable* t, size_t size)
{
    size_t lines = 1;
    for (size_t i = 0; i < size; ++i) lines += t->text[i] == '\n';
    t->names = static_cast<StrRef*>(std::calloc(lines, sizeof(StrRef)));
    t->ids = static_cast<uint32_t*>(std::calloc(lines, sizeof(uint32_t)));
    if (!t->names || !t->ids) return false;
    size_t start = 0;
    while (start < size) {
        const char* line = t->text + start;
        const char* nl = static_cast<const char*>(std::memchr(line, '\n', size - start));
        const size_t len = nl ? size_t(nl - line) : size - start;
        start += len + 1;
        if (len == 0 || line[0] == '#' || line[0] == '+' || line[0] == '-') continue;
        const char* c1 = static_cast<const char*>(std::memchr(line, ':', len));
        const size_t name_len = c1 ? size_t(c1 - line) : len;
        if (name_len == 0) continue;
        t->names[t->name_count++] = StrRef{uint32_t(line - t->text), uint32_t(name_len)};
        const unsigned bit = name_bit(line, name_len);
        t->name_filter[bit / 64] |= uint64_t(1) << (bit % 64);
        if (!c1) continue;
        const char* rest = c1 + 1;
        const size_t rest_len = len - name_len - 1;
        const char* c2 = static_cast<const char*>(std::memchr(rest, ':', rest_len));
        if (!c2) continue;
        const char* id = c2 + 1;
        const size_t id_room = rest_len - size_t(id - rest);
        const char* c3 = static_cast<const char*>(std::memchr(id, ':', id_room));
        uint32_t v;
        if (parse_id(id, c3 ? size_t(c3 - id) : id_room, &v)) t->ids[t->id_count++] = v;
    }
    qsort_r(t->names, t->name_count, sizeof(StrRef), compare_names, t->text);
    std::qsort(t->ids, t->id_count, sizeof(uint32_t), compare_ids);
    return true;
}

// Builds the table of the file behind `fd`; never null (Unknown on failure)
// unless out of memory.
LocalTable* load_table(int fd, const struct stat& st)
{
    auto* t = static_cast<LocalTable*>(std::calloc(1, sizeof(LocalTable)));
    if (!t) return nullptr;
    if (st.st_size > kMaxLocalFileSize || !read_all(fd, st.st_size, t) ||
        !index_lines(t, std::strlen(t->text))) {
        std::free(t->text);
        std::free(t->names);
        std::free(t->ids);
        *t = LocalTable{};
        t->unknown = true;
    }
    t->refs = 1;
    return t;
}

bool same_file(const LocalFile& f, const struct stat& st)
{
    return f.table && f.have_ident && f.dev == st.st_dev && f.ino == st.st_ino &&
           f.size == st.st_size && f.mtime_ns == ns_of(st.st_mtim) &&
           f.ctime_ns == ns_of(st.st_ctim);
}

// Takes the table off the steady path (see unpublish(CacheHandle&)).
void unpublish_table(LocalFile& f)
{
    if (!__atomic_exchange_n(&f.published, nullptr, __ATOMIC_SEQ_CST)) return;
    if (!quiesce(&f.readers)) __atomic_add_fetch(&f.table->refs, 1, __ATOMIC_RELAXED);
}

void replace_table(LocalFile& f, LocalTable* fresh)
{
    unpublish_table(f);
    table_free(f.table);
    f.table = fresh;
}

void remember(LocalFile& f, LocalTable* fresh, const struct stat& st)
{
    replace_table(f, fresh);
    f.have_ident = fresh != nullptr;
    f.dev = st.st_dev;
    f.ino = st.st_ino;
    f.size = st.st_size;
    f.mtime_ns = ns_of(st.st_mtim);
    f.ctime_ns = ns_of(st.st_ctim);
}

// A missing file holds nothing: an empty table (remembered as such).
LocalTable* empty_table(LocalFile& f)
{
    struct stat none;
    std::memset(&none, 0, sizeof none);
    if (same_file(f, none)) return f.table;
    auto* empty = static_cast<LocalTable*>(std::calloc(1, sizeof(LocalTable)));
    if (empty) empty->refs = 1;
    remember(f, empty, none);
    return f.table;
}

// Reads what is opened, and remembers that file's identity (it may have been
// replaced since a stat).
LocalTable* read_table(LocalFile& f)
{
    const int fd = open(f.path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return errno == ENOENT ? empty_table(f) : nullptr;
    struct stat opened;
    LocalTable* fresh = fstat(fd, &opened) == 0 ? load_table(fd, opened) : nullptr;
    close(fd);
    if (!fresh) return nullptr;
    remember(f, fresh, opened);
    return f.table;
}

// The table for the file as it is now; null means "cannot tell". An unchanged
// file costs one stat(); before the first read there is nothing to compare a
// stat() with, so the file is read straight away.
LocalTable* current_table(LocalFile& f)
{
    if (!f.have_ident) return read_table(f);
    struct stat st;
    if (stat(f.path, &st) != 0) return errno == ENOENT ? empty_table(f) : nullptr;
    if (same_file(f, st)) return f.table;
    return read_table(f);
}

bool table_has_name(const LocalTable& t, const char* name, size_t len)
{
    const unsigned bit = name_bit(name, len);
    if (!(t.name_filter[bit / 64] & (uint64_t(1) << (bit % 64)))) return false;
    size_t lo = 0, hi = t.name_count;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        const StrRef r = t.names[mid];
        const int c = cache_compare(t.text + r.off, r.len, name, len);
        if (c == 0) return true;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

bool table_has_id(const LocalTable& t, uint32_t id)
{
    size_t lo = 0, hi = t.id_count;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (t.ids[mid] == id) return true;
        if (t.ids[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

// The steady path: the published table, referenced, while the recheck
// interval has not passed since the file was last stat()ed. No system call,
// no lock.
LocalTable* pin_table(LocalFile& f)
{
    if (f.recheck_ns <= 0) return nullptr;
    const int64_t now = coarse_now_ns();
    enter(&f.readers);
    LocalTable* t = __atomic_load_n(&f.published, __ATOMIC_SEQ_CST);
    if (t && !interval_passed(now, &f.checked_ns, f.recheck_ns))
        __atomic_add_fetch(&t->refs, 1, __ATOMIC_RELAXED);
    else
        t = nullptr;
    leave(&f.readers);
    return t;
}

}  // namespace

const LocalTable* local_acquire(LocalFile* file) noexcept
{
    if (!file || !file->path) return nullptr;
    if (LocalTable* t = pin_table(*file)) return t;
    // Taken before the stat(): the interval runs from the look, not after it.
    const int64_t now = file->recheck_ns > 0 ? coarse_now_ns() : -1;
    pthread_mutex_lock(&file->mu);
    LocalTable* t = current_table(*file);
    if (t && t->unknown) t = nullptr;
    if (t) {
        __atomic_add_fetch(&t->refs, 1, __ATOMIC_RELAXED);
        if (now >= 0) {
            __atomic_store_n(&file->checked_ns, now, __ATOMIC_RELAXED);
            __atomic_store_n(&file->published, t, __ATOMIC_SEQ_CST);
        }
    } else {
        unpublish_table(*file);
    }
    pthread_mutex_unlock(&file->mu);
    return t;
}

void local_release(const LocalTable* table) noexcept
{
    table_free(const_cast<LocalTable*>(table));
}

bool local_has_name(const LocalTable* table, const char* name, size_t len) noexcept
{
    return table && name && table_has_name(*table, name, len);
}

bool local_has_id(const LocalTable* table, uint32_t id) noexcept
{
    return table && table_has_id(*table, id);
}

void local_reset(LocalFile* file) noexcept
{
    if (!file) return;
    pthread_mutex_lock(&file->mu);
    replace_table(*file, nullptr);
    file->have_ident = false;
    pthread_mutex_unlock(&file->mu);
}

void local_atfork_child(LocalFile* file) noexcept
{
    if (file) __atomic_store_n(&file->readers, 0, __ATOMIC_RELAXED);
}

}  // namespace allot::idcache
