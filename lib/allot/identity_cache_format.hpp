// identity_cache_format.hpp - the on-disk layout of the identity caches.
//
// allot-syncd publishes three files into identity.cache_dir (default
// /var/lib/allot): passwd.cache, group.cache and keys.cache. Each is a
// self-describing binary image meant to be mmap'ed read-only by code that runs
// inside other programs (libnss_allot in every process, allot-keys under sshd):
//
//   FileHeader (64 bytes)
//   SectionEntry[section_count] (24 bytes each)
//   sections, each 8-byte aligned: fixed-size records, u32 indexes, hash
//   tables, a string blob
//
// Records refer to strings by (offset, length) into the STRINGS section; no
// string is NUL-terminated, so "bob" and "bobby" never alias. NAME_INDEX lists
// record numbers sorted by name (bytewise), ID_INDEX sorted by uid/gid: the
// full check proves names and ids unique with them. Lookups by name and by id
// go through NAME_HASH and ID_HASH (version 3; HashSlot below): one probe
// sequence in one place of the table, then the one record and string it
// names, so the first lookup of a process faults in ~3 pages of a fresh
// mapping instead of the ~20 a binary search over 100,000 records touches.
//
// Two checksums (version 2 on). header_checksum covers the header (both checksum
// fields read as zero) and the section table: a reader checks it, and the bounds
// of every section, when it maps a file, so a torn or garbled header or table is
// refused before any offset in it is followed. checksum covers every byte after
// the checksum field (record_count, header_checksum, the section table and all
// sections): the writer's whole-file check (allot-syncd re-reads a published
// file with snapshot_open, which verifies it and every record and index), and
// that of the readers that open with Check::Full (allot-keys). The fields
// before it are each checked on their own (magic, endian, version, kind, size).
// Byte order is the host's (caches are node-local); the endian marker rejects a
// file from another architecture.
//
// The NSS module's handle opens with Check::Lookup: after the header checks
// (and that each hash table's size is a power of two above the record count),
// each lookup bounds-checks every slot, record number and string it follows,
// and the record it returns is validated in full (name and field rules, ids,
// member and key ranges and lines) before anyone sees it; a record that fails
// is refused (not found) while the others are still served. This makes the
// first lookup of a process one probe instead of a pass over the file (~14 MB
// at 100,000 users). The full check also proves that every record is found
// through each hash table at its own number and that they hold nothing else.
// Bump kCacheVersion on any layout change: old readers then report the cache
// unavailable instead of misreading it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace allot::idcache {

inline constexpr char kCacheMagic[8] = {'A', 'L', 'L', 'O', 'T', 'I', 'D', 'C'};
inline constexpr uint32_t kCacheEndian = 0x01020304u;
inline constexpr uint32_t kCacheVersion = 3;
inline constexpr uint32_t kMaxSections = 16;

// Field limits enforced by the writer and again by the reader.
inline constexpr uint32_t kMaxNameLen = 256;
inline constexpr uint32_t kMaxFieldLen = 4096;
inline constexpr uint32_t kMaxKeyLen = 16 * 1024;
inline constexpr uint32_t kMaxKeysPerUser = 1024;

enum class Kind : uint32_t { Passwd = 1, Group = 2, Keys = 3 };

enum class SectionId : uint32_t {
    Records = 1,
    NameIndex = 2,
    IdIndex = 3,
    Strings = 4,
    Members = 5,     // group: StrRef per member, grouped by record
    Membership = 6,  // group: MembershipEntry sorted by (member name, group index)
    Keys = 7,        // keys: StrRef per key, grouped by record
    NameHash = 8,    // HashSlot table by name (every kind)
    IdHash = 9,      // HashSlot table by uid/gid (passwd, group)
};
inline constexpr uint32_t kMaxSectionId = 9;

struct FileHeader {
    char magic[8];
    uint32_t endian;
    uint32_t version;
    uint32_t kind;
    uint32_t section_count;
    uint64_t file_size;
    uint64_t generation;  // publish time (seconds since the epoch)
    uint64_t checksum;    // cache_checksum() of bytes [kChecksumStart, file_size)
    uint32_t record_count;
    uint32_t reserved;
    uint64_t header_checksum;  // header_checksum(): header and section table
};
static_assert(sizeof(FileHeader) == 64, "header layout");
inline constexpr uint64_t kChecksumStart = 48;        // offsetof(FileHeader, record_count)
inline constexpr uint64_t kChecksumField = 40;        // offsetof(FileHeader, checksum)
inline constexpr uint64_t kHeaderChecksumField = 56;  // offsetof(FileHeader, header_checksum)

struct SectionEntry {
    uint32_t id;
    uint32_t elem_size;
    uint64_t offset;
    uint64_t count;
};
static_assert(sizeof(SectionEntry) == 24, "section layout");

struct StrRef {
    uint32_t off;
    uint32_t len;
};

struct UserRecord {
    uint32_t uid;
    uint32_t gid;
    StrRef name, gecos, home, shell;
};
static_assert(sizeof(UserRecord) == 40, "user record layout");

struct GroupRecord {
    uint32_t gid;
    uint32_t member_first;  // into Members
    uint32_t member_count;
    StrRef name;
    uint32_t pad;
};
static_assert(sizeof(GroupRecord) == 24, "group record layout");

struct MembershipEntry {
    StrRef member;
    uint32_t group_index;  // into Records
};
static_assert(sizeof(MembershipEntry) == 12, "membership layout");

struct KeysRecord {
    uint32_t uid;
    uint32_t key_first;  // into Keys
    uint32_t key_count;
    StrRef name;
    uint32_t pad;
};
static_assert(sizeof(KeysRecord) == 24, "keys record layout");

// A slot of NAME_HASH or ID_HASH: open addressing with linear probing over a
// power-of-two number of slots, at least twice the records (so probe
// sequences stay short and end at an empty slot). A lookup starts at
// `home & (slots - 1)` of its HashProbe and walks on until an empty slot,
// comparing `key` first, so a slot of another name costs no record or string
// read: the id itself in ID_HASH, the high half of the name's hash in
// NAME_HASH. A reader bounds every walk by the slot count and refuses a name
// or id listed twice, whatever the table holds.
struct HashSlot {
    uint32_t key;
    uint32_t record;  // record number + 1; 0: empty
};
static_assert(sizeof(HashSlot) == 8, "hash slot layout");

struct HashProbe {
    uint64_t home;
    uint32_t key;
};

// splitmix64's finaliser: every input bit moves the low (home) and high (key) bits.
inline uint64_t cache_mix(uint64_t h)
{
    h ^= h >> 30;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 27;
    h *= 0x94D049BB133111EBull;
    return h ^ (h >> 31);
}

// FNV-1a over the name's bytes, mixed. Not keyed: names come from the
// directory, and colliding names only lengthen probe sequences (a slower
// lookup, bounded by the table), never a wrong answer.
inline HashProbe cache_name_probe(const char* p, uint64_t n)
{
    uint64_t h = 0xCBF29CE484222325ull;
    for (uint64_t i = 0; i < n; ++i) h = (h ^ static_cast<unsigned char>(p[i])) * 0x100000001B3ull;
    h = cache_mix(h);
    return HashProbe{h, static_cast<uint32_t>(h >> 32)};
}

inline HashProbe cache_id_probe(uint32_t id)
{
    return HashProbe{cache_mix(id), id};
}

// The slot count of a table for `records` records: the smallest power of two
// at least twice it (1 for none).
inline uint64_t cache_hash_slots(uint64_t records)
{
    uint64_t slots = 1;
    while (slots < 2 * records) slots <<= 1;
    return slots;
}

// The generation file ("generation" beside the caches): how a reader learns,
// without a system call, that the caches were replaced. The writer creates it
// once (by rename) and from then on only adds 1 to `counter` in place, with an
// atomic store through a shared mapping, after every publish (after the
// renames); a reader maps it once and compares `counter` with the value it
// read before it last looked at the caches. It is never rewritten or
// truncated in place (a reader's mapping of a truncated file faults): edit
// nothing in it; removing it makes the readers go back to a stat() per lookup.
// A hostile or stuck counter can only delay when a replaced cache is seen: the
// readers check the files anyway at least every recheck interval
// (identity_cache_reader.hpp), and every cache they map is validated as ever.
inline constexpr const char* kGenerationFile = "generation";
inline constexpr char kGenerationMagic[8] = {'A', 'L', 'L', 'O', 'T', 'G', 'E', 'N'};
inline constexpr uint32_t kGenerationVersion = 1;

struct GenerationFile {
    char magic[8];
    uint32_t endian;   // kCacheEndian
    uint32_t version;  // kGenerationVersion
    uint64_t counter;  // 8-byte aligned: loaded and stored atomically
    uint64_t reserved;
};
static_assert(sizeof(GenerationFile) == 32, "generation file layout");
inline constexpr uint64_t kGenerationCounterOffset = offsetof(GenerationFile, counter);
static_assert(kGenerationCounterOffset % 8 == 0, "the counter is loaded and stored atomically");

// Whether a mapped generation file is one the reader and the writer share
// (magic, byte order, version); the counter is then the one to follow.
inline bool generation_file_valid(const void* map)
{
    GenerationFile g;
    std::memcpy(&g, map, sizeof g);
    return std::memcmp(g.magic, kGenerationMagic, sizeof g.magic) == 0 &&
           g.endian == kCacheEndian && g.version == kGenerationVersion;
}

// A fast 64-bit checksum over 8-byte words (tail zero-padded). It detects
// truncation, torn writes and bit rot; it is not a MAC: the files are written
// by root into a root-owned directory, and the reader's validation, not the
// checksum, is what makes a hostile file harmless.
inline uint64_t cache_checksum(const unsigned char* data, uint64_t size)
{
    uint64_t h = 0x9E3779B97F4A7C15ull ^ size;
    uint64_t i = 0;
    for (; i + 8 <= size; i += 8) {
        uint64_t w;
        __builtin_memcpy(&w, data + i, 8);
        h ^= w * 0xBF58476D1CE4E5B9ull;
        h = ((h << 31) | (h >> 33)) * 0x94D049BB133111EBull;
    }
    if (i < size) {
        uint64_t w = 0;
        __builtin_memcpy(&w, data + i, size - i);
        h ^= w * 0xBF58476D1CE4E5B9ull;
        h = ((h << 31) | (h >> 33)) * 0x94D049BB133111EBull;
    }
    h ^= h >> 29;
    return h;
}

// The header checksum of an image whose first bytes hold a FileHeader and
// `section_count` SectionEntries (the caller has checked they are there):
// cache_checksum of the header with both checksum fields zeroed, followed by
// the section table. Written after everything but `checksum` is final.
inline uint64_t cache_header_checksum(const unsigned char* image, uint32_t section_count)
{
    unsigned char buf[sizeof(FileHeader) + kMaxSections * sizeof(SectionEntry)];
    const uint64_t n = sizeof(FileHeader) + uint64_t(section_count) * sizeof(SectionEntry);
    if (section_count > kMaxSections) return 0;
    __builtin_memcpy(buf, image, n);
    __builtin_memset(buf + kChecksumField, 0, 8);
    __builtin_memset(buf + kHeaderChecksumField, 0, 8);
    return cache_checksum(buf, n) ^ 0x48445243ull;  // "HDRC": unlike a whole-file sum
}

// Writes both checksums of a complete image (header checksum first: the
// whole-file checksum covers it). For the writer, and for tools and tests that
// edit an image and want the reader's checks behind the checksums exercised.
inline void cache_seal(unsigned char* image, uint64_t size)
{
    if (size < sizeof(FileHeader)) return;
    uint32_t sections;
    __builtin_memcpy(&sections, image + 20, sizeof sections);  // FileHeader::section_count
    if (sections <= kMaxSections &&
        sizeof(FileHeader) + uint64_t(sections) * sizeof(SectionEntry) <= size) {
        const uint64_t hc = cache_header_checksum(image, sections);
        __builtin_memcpy(image + kHeaderChecksumField, &hc, sizeof hc);
    }
    const uint64_t c = cache_checksum(image + kChecksumStart, size - kChecksumStart);
    __builtin_memcpy(image + kChecksumField, &c, sizeof c);
}

}  // namespace allot::idcache

namespace allot::idcache {

// Character rules shared by the writer and the reader. A name is what NSS and
// sshd compare (user and group names, member names): no separators of the
// passwd/group line formats (':' ','), no blanks, no control bytes. A field
// (gecos, home, shell) may hold blanks but no ':' or control bytes. A key line
// may hold blanks but no control bytes (a newline would start a second key).
inline bool cache_control_byte(unsigned char c)
{
    return c < 0x20 || c == 0x7f;
}

inline bool cache_valid_name(const char* p, uint64_t n)
{
    if (n == 0 || n > kMaxNameLen) return false;
    for (uint64_t i = 0; i < n; ++i) {
        const auto c = static_cast<unsigned char>(p[i]);
        if (cache_control_byte(c) || c == ':' || c == ',' || c == ' ') return false;
    }
    return true;
}

inline bool cache_valid_field(const char* p, uint64_t n)
{
    if (n > kMaxFieldLen) return false;
    for (uint64_t i = 0; i < n; ++i) {
        const auto c = static_cast<unsigned char>(p[i]);
        if (cache_control_byte(c) || c == ':') return false;
    }
    return true;
}

inline bool cache_valid_key(const char* p, uint64_t n)
{
    if (n == 0 || n > kMaxKeyLen) return false;
    for (uint64_t i = 0; i < n; ++i)
        if (cache_control_byte(static_cast<unsigned char>(p[i]))) return false;
    return true;
}

// Bytewise order of names, the order of every NAME_INDEX ("bob" < "bobby").
inline int cache_compare(const char* a, uint64_t an, const char* b, uint64_t bn)
{
    const uint64_t n = an < bn ? an : bn;
    const int c = n ? __builtin_memcmp(a, b, n) : 0;
    if (c != 0) return c;
    return an < bn ? -1 : (an > bn ? 1 : 0);
}

}  // namespace allot::idcache
