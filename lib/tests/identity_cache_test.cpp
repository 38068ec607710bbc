// identity_cache_test.cpp - the identity cache writer and reader: round trips,
// exact-name lookups, the writer's refusals, hostile and truncated images,
// atomic replacement picked up by a CacheHandle, and 100,000 users; the
// reader's trust checks (sshd's StrictModes) and its view of the node's own
// passwd/group files.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "allot/identity_cache.hpp"
#include "allot/identity_cache_format.hpp"
#include "allot/identity_cache_reader.hpp"

namespace {

using namespace allot;
using namespace allot::idcache;

PosixUser user(std::string name, uint32_t uid, std::vector<std::string> keys = {})
{
    PosixUser u;
    u.name = std::move(name);
    u.uid = uid;
    u.gid = uid;
    u.gecos = "User " + u.name;
    u.home = "/home/" + u.name;
    u.shell = "/bin/bash";
    u.ssh_keys = std::move(keys);
    return u;
}

PosixGroup group(std::string name, uint32_t gid, std::vector<std::string> members)
{
    return PosixGroup{std::move(name), gid, std::move(members)};
}

std::string S(Str s)
{
    return std::string(s.data, s.size);
}

struct SnapPtr {
    Snapshot* p = nullptr;
    explicit SnapPtr(Snapshot* s) : p(s) {}
    ~SnapPtr() { snapshot_unref(p); }
    SnapPtr(const SnapPtr&) = delete;
    SnapPtr& operator=(const SnapPtr&) = delete;
};

const std::string kKey1 = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOv1 bob@laptop";
const std::string kKey2 = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOv2 bobby@laptop";

CacheImages sample()
{
    auto r = build_identity_cache(
        {user("bobby", 20002, {kKey2}), user("bob", 20001, {kKey1, kKey2}), user("alice", 20000)},
        {group("team-a", 30000, {"bob", "alice", "bob"}), group("team-b", 30001, {"bobby"}),
         group("nogid", 0, {"bob"}), group("all", 30002, {"bobby", "bob", "alice", "carol"})},
        42);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
    return r.value();
}

Snapshot* from(const std::string& bytes, Kind kind, const char** why = nullptr,
               Check check = Check::Full)
{
    return snapshot_from_bytes(bytes.data(), bytes.size(), kind, why, check);
}
// As libnss_allot's handle opens a file: header, header checksum, sections.
Snapshot* lookup_open(const std::string& bytes, Kind kind, const char** why = nullptr)
{
    return from(bytes, kind, why, Check::Lookup);
}

// Recomputes both checksums so a test can exercise validation behind them.
void rechecksum(std::string& img)
{
    cache_seal(reinterpret_cast<unsigned char*>(img.data()), img.size());
}

template <typename T>
T read_at(const std::string& b, uint64_t off)
{
    T v;
    std::memcpy(&v, b.data() + off, sizeof v);
    return v;
}
template <typename T>
void write_at(std::string& b, uint64_t off, const T& v)
{
    std::memcpy(b.data() + off, &v, sizeof v);
}

SectionEntry section(const std::string& img, SectionId id)
{
    FileHeader h;
    std::memcpy(&h, img.data(), sizeof h);
    for (uint32_t i = 0; i < h.section_count; ++i) {
        SectionEntry e;
        std::memcpy(&e, img.data() + sizeof h + i * sizeof e, sizeof e);
        if (e.id == static_cast<uint32_t>(id)) return e;
    }
    ADD_FAILURE() << "no section";
    return SectionEntry{};
}

// Rewrites the section table entry of `id` in `img` with `edit` (the checksums are left
// for the caller: rechecksum).
template <typename Edit>
void edit_section(std::string& img, SectionId id, Edit edit)
{
    const FileHeader h = read_at<FileHeader>(img, 0);
    for (uint32_t i = 0; i < h.section_count; ++i) {
        const uint64_t at = sizeof(FileHeader) + i * sizeof(SectionEntry);
        auto e = read_at<SectionEntry>(img, at);
        if (e.id != static_cast<uint32_t>(id)) continue;
        edit(e);
        write_at(img, at, e);
    }
}

TEST(IdentityCache, PasswdRoundTripAndExactNames)
{
    const auto img = sample();
    const char* why = nullptr;
    SnapPtr s(from(img.passwd, Kind::Passwd, &why));
    ASSERT_NE(s.p, nullptr) << why;
    EXPECT_EQ(snapshot_count(s.p), 3u);
    EXPECT_EQ(snapshot_generation(s.p), 42u);

    UserView u;
    ASSERT_TRUE(user_by_name(s.p, "bob", 3, &u));
    EXPECT_EQ(S(u.name), "bob");
    EXPECT_EQ(u.uid, 20001u);
    EXPECT_EQ(S(u.home), "/home/bob");
    EXPECT_EQ(S(u.gecos), "User bob");
    EXPECT_EQ(S(u.shell), "/bin/bash");
    ASSERT_TRUE(user_by_name(s.p, "bobby", 5, &u));
    EXPECT_EQ(u.uid, 20002u);
    for (const char* miss : {"bo", "bobb", "bobbyx", "Bob", "bob ", "", "carol"})
        EXPECT_FALSE(user_by_name(s.p, miss, std::strlen(miss), &u)) << miss;
    EXPECT_FALSE(user_by_name(s.p, "bob\0x", 5, &u));  // embedded NUL: not "bob"
    EXPECT_FALSE(user_by_name(s.p, nullptr, 0, &u));

    ASSERT_TRUE(user_by_uid(s.p, 20000, &u));
    EXPECT_EQ(S(u.name), "alice");
    EXPECT_FALSE(user_by_uid(s.p, 0, &u));
    EXPECT_FALSE(user_by_uid(s.p, 20003, &u));

    std::vector<std::string> names;
    for (uint32_t i = 0; user_at(s.p, i, &u); ++i) names.push_back(S(u.name));
    EXPECT_EQ(names, (std::vector<std::string>{"alice", "bob", "bobby"}));

    // A passwd snapshot answers no group or keys question.
    GroupView g;
    EXPECT_FALSE(group_by_gid(s.p, 30000, &g));
}

bool collect(void* ctx, uint32_t gid, Str)
{
    static_cast<std::vector<uint32_t>*>(ctx)->push_back(gid);
    return true;
}

TEST(IdentityCache, GroupsAndMemberships)
{
    const auto img = sample();
    SnapPtr s(from(img.group, Kind::Group));
    ASSERT_NE(s.p, nullptr);
    EXPECT_EQ(snapshot_count(s.p), 3u);  // "nogid" (gid 0) skipped

    GroupView g;
    ASSERT_TRUE(group_by_name(s.p, "team-a", 6, &g));
    EXPECT_EQ(g.gid, 30000u);
    ASSERT_EQ(g.member_count, 2u);  // duplicate "bob" folded
    EXPECT_EQ(S(group_member(g, 0)), "bob");
    EXPECT_EQ(S(group_member(g, 1)), "alice");
    ASSERT_TRUE(group_by_gid(s.p, 30002, &g));
    EXPECT_EQ(S(g.name), "all");
    EXPECT_EQ(g.member_count, 4u);
    EXPECT_FALSE(group_by_name(s.p, "nogid", 5, &g));
    EXPECT_FALSE(group_by_name(s.p, "team", 4, &g));

    std::vector<uint32_t> gids;
    EXPECT_EQ(groups_of_member(s.p, "bob", 3, collect, &gids), 2u);
    std::sort(gids.begin(), gids.end());
    EXPECT_EQ(gids, (std::vector<uint32_t>{30000, 30002}));
    gids.clear();
    EXPECT_EQ(groups_of_member(s.p, "bobby", 5, collect, &gids), 2u);
    gids.clear();
    EXPECT_EQ(groups_of_member(s.p, "bo", 2, collect, &gids), 0u);
    EXPECT_EQ(groups_of_member(s.p, "carol", 5, collect, &gids), 1u);
    gids.clear();
    // early stop
    EXPECT_EQ(groups_of_member(
                  s.p, "bob", 3, [](void*, uint32_t, Str) { return false; }, nullptr),
              1u);
}

TEST(IdentityCache, Keys)
{
    const auto img = sample();
    SnapPtr s(from(img.keys, Kind::Keys));
    ASSERT_NE(s.p, nullptr);
    KeysView k;
    ASSERT_TRUE(keys_by_name(s.p, "bob", 3, &k));
    EXPECT_EQ(k.uid, 20001u);
    ASSERT_EQ(k.key_count, 2u);
    EXPECT_EQ(S(keys_line(k, 0)), kKey1);
    EXPECT_EQ(S(keys_line(k, 1)), kKey2);
    ASSERT_TRUE(keys_by_name(s.p, "bobby", 5, &k));
    ASSERT_EQ(k.key_count, 1u);
    EXPECT_EQ(S(keys_line(k, 0)), kKey2);
    ASSERT_TRUE(keys_by_name(s.p, "alice", 5, &k));
    EXPECT_EQ(k.key_count, 0u);
    EXPECT_FALSE(keys_by_name(s.p, "bobb", 4, &k));
}

TEST(IdentityCache, WriterRefusesAmbiguousOrUnsafeInput)
{
    const auto refused = [](std::vector<PosixUser> u, std::vector<PosixGroup> g) {
        return !build_identity_cache(u, g, 1).ok();
    };
    EXPECT_TRUE(refused({user("bob", 20001), user("bob", 20002)}, {}));
    EXPECT_TRUE(refused({user("bob", 20001), user("bobby", 20001)}, {}));
    EXPECT_TRUE(refused({user("root2", 0)}, {}));
    auto u = user("bob", 20001);
    u.gid = 0;
    EXPECT_TRUE(refused({u}, {}));
    for (const char* bad : {"", "a:b", "a,b", "a b", "a\nb", "a\tb", "a\x7f"})
        EXPECT_TRUE(refused({user(bad, 20001)}, {})) << bad;
    EXPECT_TRUE(refused({user(std::string(300, 'a'), 20001)}, {}));
    u = user("bob", 20001);
    u.gecos = "Bob:0:0";
    EXPECT_TRUE(refused({u}, {}));
    u = user("bob", 20001);
    u.home = "/home/bob\n";
    EXPECT_TRUE(refused({u}, {}));
    EXPECT_TRUE(refused({user("bob", 20001, {kKey1 + "\nssh-rsa AAAA evil"})}, {}));
    EXPECT_TRUE(refused({user("bob", 20001, {""})}, {}));
    EXPECT_TRUE(refused({user("bob", 20001, {std::string(kMaxKeyLen + 1, 'A')})}, {}));
    EXPECT_TRUE(refused({}, {group("g", 30000, {}), group("g", 30001, {})}));
    EXPECT_TRUE(refused({}, {group("g", 30000, {}), group("h", 30000, {})}));
    EXPECT_TRUE(refused({}, {group("g", 30000, {"a,b"})}));
    EXPECT_TRUE(refused({}, {group("g:x", 30000, {})}));
    // Keys with options are the SCIM validator's job; the format accepts any
    // single printable line.
    EXPECT_FALSE(refused({user("bob", 20001, {"command=\"x\" " + kKey1})}, {}));
    EXPECT_FALSE(refused({}, {}));  // an empty directory is a valid cache
}

TEST(IdentityCache, EmptyCacheIsValid)
{
    auto r = build_identity_cache({}, {}, 7);
    ASSERT_TRUE(r.ok());
    SnapPtr p(from(r.value().passwd, Kind::Passwd));
    ASSERT_NE(p.p, nullptr);
    UserView u;
    EXPECT_FALSE(user_by_name(p.p, "bob", 3, &u));
    EXPECT_FALSE(user_at(p.p, 0, &u));
    SnapPtr g(from(r.value().group, Kind::Group));
    ASSERT_NE(g.p, nullptr);
    EXPECT_EQ(groups_of_member(g.p, "bob", 3, collect, nullptr), 0u);
}

TEST(IdentityCacheHostile, EveryTruncationIsRejected)
{
    const auto img = sample();
    for (const auto& [bytes, kind] :
         {std::pair{img.passwd, Kind::Passwd}, std::pair{img.group, Kind::Group},
          std::pair{img.keys, Kind::Keys}}) {
        for (size_t n = 0; n < bytes.size(); ++n) {
            const char* why = nullptr;
            Snapshot* s = snapshot_from_bytes(bytes.data(), n, kind, &why);
            EXPECT_EQ(s, nullptr) << n;
            EXPECT_NE(why, nullptr);
            snapshot_unref(s);
        }
        // Appended garbage is a size mismatch too.
        std::string longer = bytes + "x";
        EXPECT_EQ(from(longer, kind), nullptr);
    }
}

TEST(IdentityCacheHostile, EveryBitFlipIsRejected)
{
    const auto img = sample();
    std::string b = img.passwd;
    for (size_t i = 0; i < b.size(); ++i) {
        for (int bit : {0, 7}) {
            b[i] ^= char(1 << bit);
            Snapshot* s = from(b, Kind::Passwd);
            // generation (bytes 32..39) is covered by the header checksum.
            EXPECT_EQ(s, nullptr) << "byte " << i << " bit " << bit;
            snapshot_unref(s);
            b[i] ^= char(1 << bit);
        }
    }
}

TEST(IdentityCacheHostile, WrongKindVersionMagicAreRejected)
{
    const auto img = sample();
    const char* why = nullptr;
    EXPECT_EQ(from(img.passwd, Kind::Group, &why), nullptr);
    EXPECT_STREQ(why, "wrong cache kind");
    std::string b = img.passwd;
    FileHeader h;
    std::memcpy(&h, b.data(), sizeof h);
    // version 1 had no header checksum, version 2 no hash tables
    for (uint32_t v : {1u, 2u, 4u}) {
        h.version = v;
        std::memcpy(b.data(), &h, sizeof h);
        rechecksum(b);
        EXPECT_EQ(from(b, Kind::Passwd, &why), nullptr);
        EXPECT_STREQ(why, "unsupported cache version");
        EXPECT_EQ(from(b, Kind::Passwd, &why, Check::Lookup), nullptr);
        EXPECT_STREQ(why, "unsupported cache version");
    }
    EXPECT_EQ(from(std::string(100, '\0'), Kind::Passwd, &why), nullptr);
    EXPECT_STREQ(why, "not an allot cache");
}

// Corruptions behind a valid checksum: only the structural checks stand
// between them and an out-of-bounds read.
TEST(IdentityCacheHostile, StructuralCorruptionBehindValidChecksum)
{
    const auto img = sample();
    const auto expect_rejected = [](std::string b, Kind kind, const char* what) {
        rechecksum(b);
        const char* why = nullptr;
        Snapshot* s = from(b, kind, &why);
        EXPECT_EQ(s, nullptr) << what;
        snapshot_unref(s);
    };
    const auto rec = section(img.passwd, SectionId::Records);
    const auto names = section(img.passwd, SectionId::NameIndex);
    const auto strs = section(img.passwd, SectionId::Strings);
    {  // string reference past the end of the string blob
        std::string b = img.passwd;
        UserRecord r;
        std::memcpy(&r, b.data() + rec.offset, sizeof r);
        r.home.off = uint32_t(strs.count - 1);
        r.home.len = 0xFFFFFFF0u;
        std::memcpy(b.data() + rec.offset, &r, sizeof r);
        expect_rejected(b, Kind::Passwd, "string ref");
    }
    {  // name index not sorted (swap two entries)
        std::string b = img.passwd;
        uint32_t a, c;
        std::memcpy(&a, b.data() + names.offset, 4);
        std::memcpy(&c, b.data() + names.offset + 4, 4);
        std::memcpy(b.data() + names.offset, &c, 4);
        std::memcpy(b.data() + names.offset + 4, &a, 4);
        expect_rejected(b, Kind::Passwd, "unsorted");
    }
    {  // index entry out of range
        std::string b = img.passwd;
        const uint32_t big = 0xFFFFFFFFu;
        std::memcpy(b.data() + names.offset, &big, 4);
        expect_rejected(b, Kind::Passwd, "index range");
    }
    {  // section count that would overflow offset + count * size
        std::string b = img.passwd;
        SectionEntry e;
        std::memcpy(&e, b.data() + sizeof(FileHeader), sizeof e);
        e.count = 0x2000000000000001ull;
        std::memcpy(b.data() + sizeof(FileHeader), &e, sizeof e);
        expect_rejected(b, Kind::Passwd, "overflow");
    }
    {  // a ':' smuggled into a name
        std::string b = img.passwd;
        UserRecord r;
        std::memcpy(&r, b.data() + rec.offset, sizeof r);
        b[strs.offset + r.name.off] = ':';
        expect_rejected(b, Kind::Passwd, "colon");
    }
    {  // record count disagrees with the sections
        std::string b = img.passwd;
        FileHeader h;
        std::memcpy(&h, b.data(), sizeof h);
        h.record_count += 1;
        std::memcpy(b.data(), &h, sizeof h);
        expect_rejected(b, Kind::Passwd, "count");
    }
    {  // too many sections
        std::string b = img.passwd;
        FileHeader h;
        std::memcpy(&h, b.data(), sizeof h);
        h.section_count = 1000000;
        std::memcpy(b.data(), &h, sizeof h);
        expect_rejected(b, Kind::Passwd, "sections");
    }
    {  // group member range out of bounds
        std::string b = img.group;
        const auto grec = section(b, SectionId::Records);
        GroupRecord r;
        std::memcpy(&r, b.data() + grec.offset, sizeof r);
        r.member_count = 1000;
        std::memcpy(b.data() + grec.offset, &r, sizeof r);
        expect_rejected(b, Kind::Group, "members");
    }
    const auto hash = section(img.passwd, SectionId::NameHash);
    const auto slot_at = [&](uint64_t i) { return hash.offset + i * sizeof(HashSlot); };
    {  // a record missing from the name hash (its slot emptied)
        std::string b = img.passwd;
        for (uint64_t i = 0; i < hash.count; ++i)
            if (read_at<HashSlot>(b, slot_at(i)).record != 0) {
                write_at(b, slot_at(i), HashSlot{0, 0});
                break;
            }
        expect_rejected(b, Kind::Passwd, "hash slot emptied");
    }
    {  // a record listed twice (its slot copied into an empty one)
        std::string b = img.passwd;
        HashSlot used{0, 0};
        for (uint64_t i = 0; i < hash.count && used.record == 0; ++i)
            used = read_at<HashSlot>(b, slot_at(i));
        for (uint64_t i = 0; i < hash.count; ++i)
            if (read_at<HashSlot>(b, slot_at(i)).record == 0) {
                write_at(b, slot_at(i), used);
                break;
            }
        expect_rejected(b, Kind::Passwd, "hash slot twice");
    }
    {  // a key that is not the record's
        std::string b = img.group;
        const auto ghash = section(b, SectionId::IdHash);
        for (uint64_t i = 0; i < ghash.count; ++i) {
            auto slot = read_at<HashSlot>(b, ghash.offset + i * sizeof(HashSlot));
            if (slot.record == 0) continue;
            slot.key += 1;
            write_at(b, ghash.offset + i * sizeof(HashSlot), slot);
            break;
        }
        expect_rejected(b, Kind::Group, "hash key");
    }
    {  // a key line with an embedded newline
        std::string b = img.keys;
        const auto krec = section(b, SectionId::Keys);
        const auto ks = section(b, SectionId::Strings);
        StrRef k;
        std::memcpy(&k, b.data() + krec.offset, sizeof k);
        b[ks.offset + k.off + 5] = '\n';
        expect_rejected(b, Kind::Keys, "key newline");
    }
}

// Random mutations with a recomputed checksum: whatever is accepted must be
// safe to search (ASan/valgrind make this test meaningful).
TEST(IdentityCacheHostile, RandomMutationsNeverCrash)
{
    const auto img = sample();
    std::mt19937 rng(12345);
    int accepted = 0;
    for (const auto& [orig, kind] :
         {std::pair{img.passwd, Kind::Passwd}, std::pair{img.group, Kind::Group},
          std::pair{img.keys, Kind::Keys}}) {
        for (int round = 0; round < 3000; ++round) {
            std::string b = orig;
            const int flips = 1 + int(rng() % 4);
            for (int f = 0; f < flips; ++f) b[rng() % b.size()] = char(rng());
            rechecksum(b);
            Snapshot* s = from(b, kind);
            if (!s) continue;
            ++accepted;
            UserView u;
            GroupView g;
            KeysView k;
            for (const char* n : {"alice", "bob", "bobby", "carol", "zzz"}) {
                user_by_name(s, n, std::strlen(n), &u);
                group_by_name(s, n, std::strlen(n), &g);
                keys_by_name(s, n, std::strlen(n), &k);
                groups_of_member(
                    s, n, std::strlen(n), [](void*, uint32_t, Str) { return true; }, nullptr);
            }
            for (uint32_t i = 0; i < snapshot_count(s); ++i) {
                if (user_at(s, i, &u)) {
                    EXPECT_LE(u.name.size, kMaxNameLen);
                }
                if (group_at(s, i, &g)) {
                    for (uint32_t m = 0; m < g.member_count; ++m) (void)group_member(g, m).data[0];
                }
            }
            snapshot_unref(s);
        }
    }
    // Most mutations hit strings (which stay valid) or padding; some must pass.
    EXPECT_GT(accepted, 0);
}

// --- Check::Lookup: what libnss_allot maps -----------------------------------
// The header, its checksum and the section bounds are checked when the file is
// mapped; everything else by the lookup that follows it.

TEST(IdentityCacheLookupMode, EveryTruncationIsRejected)
{
    const auto img = sample();
    for (const auto& [bytes, kind] :
         {std::pair{img.passwd, Kind::Passwd}, std::pair{img.group, Kind::Group},
          std::pair{img.keys, Kind::Keys}}) {
        for (size_t n = 0; n < bytes.size(); ++n) {
            Snapshot* s = lookup_open(bytes.substr(0, n), kind);
            EXPECT_EQ(s, nullptr) << n;
            snapshot_unref(s);
        }
    }
}

TEST(IdentityCacheLookupMode, EveryHeaderOrSectionTableBitFlipIsRejected)
{
    const auto img = sample();
    const FileHeader h = read_at<FileHeader>(img.passwd, 0);
    const size_t table_end = sizeof(FileHeader) + h.section_count * sizeof(SectionEntry);
    std::string b = img.passwd;
    for (size_t i = 0; i < table_end; ++i) {
        // The whole-file checksum is not read in this mode: its bytes are free.
        if (i >= kChecksumField && i < kChecksumField + 8) continue;
        for (int bit : {0, 3, 7}) {
            b[i] ^= char(1 << bit);
            Snapshot* s = lookup_open(b, Kind::Passwd);
            EXPECT_EQ(s, nullptr) << "byte " << i << " bit " << bit;
            snapshot_unref(s);
            b[i] ^= char(1 << bit);
        }
    }
    const char* why = nullptr;
    b[offsetof(FileHeader, generation)] ^= 1;
    EXPECT_EQ(lookup_open(b, Kind::Passwd, &why), nullptr);
    EXPECT_STREQ(why, "bad header checksum");
}

TEST(IdentityCacheLookupMode, SectionsPastTheEndAreRejectedWhenMapped)
{
    const auto img = sample();
    const FileHeader h = read_at<FileHeader>(img.passwd, 0);
    for (uint32_t i = 0; i < h.section_count; ++i) {
        const uint64_t at = sizeof(FileHeader) + i * sizeof(SectionEntry);
        for (int what = 0; what < 2; ++what) {
            std::string b = img.passwd;
            auto e = read_at<SectionEntry>(b, at);
            if (what == 0)
                e.offset = b.size() + 8;
            else
                e.count = (b.size() - e.offset) / e.elem_size + 1;
            write_at(b, at, e);
            rechecksum(b);
            Snapshot* s = lookup_open(b, Kind::Passwd);
            EXPECT_EQ(s, nullptr) << "section " << i << " case " << what;
            snapshot_unref(s);
        }
    }
}

TEST(IdentityCacheLookupMode, AnInvalidRecordIsRefusedAndTheOthersServed)
{
    const auto img = sample();
    const auto rec = section(img.passwd, SectionId::Records);
    const auto strs = section(img.passwd, SectionId::Strings);
    // Records are in name order: alice, bob, bobby.
    const uint64_t bob_at = rec.offset + 1 * sizeof(UserRecord);
    const auto expect_bob_refused = [&](std::string b, const char* what) {
        const char* why = nullptr;
        SnapPtr s(lookup_open(b, Kind::Passwd, &why));
        ASSERT_NE(s.p, nullptr) << what << ": " << (why ? why : "");
        UserView u;
        EXPECT_FALSE(user_by_name(s.p, "bob", 3, &u)) << what;
        EXPECT_FALSE(user_by_uid(s.p, 20001, &u)) << what;
        EXPECT_FALSE(user_at(s.p, 1, &u)) << what;
        EXPECT_TRUE(user_by_name(s.p, "alice", 5, &u)) << what;
        EXPECT_EQ(u.uid, 20000u);
        EXPECT_TRUE(user_by_uid(s.p, 20002, &u)) << what;
        EXPECT_EQ(S(u.name), "bobby");
        EXPECT_TRUE(user_at(s.p, 2, &u)) << what;
        // The full check refuses the same file outright.
        rechecksum(b);
        EXPECT_EQ(from(b, Kind::Passwd), nullptr) << what;
    };
    {  // a home past the end of the string blob
        std::string b = img.passwd;
        auto r = read_at<UserRecord>(b, bob_at);
        r.home = StrRef{uint32_t(strs.count - 1), 0xFFFFFFF0u};
        write_at(b, bob_at, r);
        expect_bob_refused(b, "home past the end");
    }
    {  // a ':' in the gecos
        std::string b = img.passwd;
        const auto r = read_at<UserRecord>(b, bob_at);
        b[strs.offset + r.gecos.off] = ':';
        expect_bob_refused(b, "colon in gecos");
    }
    {  // uid 0 and gid 0: a cache never defines root
        std::string b = img.passwd;
        auto r = read_at<UserRecord>(b, bob_at);
        r.gid = 0;
        write_at(b, bob_at, r);
        expect_bob_refused(b, "gid 0");
    }
    {  // a control byte in the shell
        std::string b = img.passwd;
        const auto r = read_at<UserRecord>(b, bob_at);
        b[strs.offset + r.shell.off] = '\n';
        expect_bob_refused(b, "newline in shell");
    }
}

// The slot of `table` (a NameHash or IdHash section of `b`) holding record `rec`.
uint64_t slot_of(const std::string& b, const SectionEntry& table, uint32_t rec)
{
    for (uint64_t i = 0; i < table.count; ++i)
        if (read_at<HashSlot>(b, table.offset + i * sizeof(HashSlot)).record == rec + 1) return i;
    ADD_FAILURE() << "record " << rec << " not in the table";
    return 0;
}

TEST(IdentityCacheLookupMode, CorruptHashTablesEndAndRefuse)
{
    const auto img = sample();
    const auto names = section(img.passwd, SectionId::NameIndex);
    const auto nhash = section(img.passwd, SectionId::NameHash);
    const auto ihash = section(img.passwd, SectionId::IdHash);
    const auto nslot = [&](uint64_t i) { return nhash.offset + i * sizeof(HashSlot); };
    const auto islot = [&](uint64_t i) { return ihash.offset + i * sizeof(HashSlot); };
    // Records in name order: alice 0, bob 1, bobby 2.
    UserView u;
    {  // bob listed twice: his slot copied into the next empty one of his probe sequence
        std::string b = img.passwd;
        const uint64_t at = slot_of(b, nhash, 1);
        uint64_t next = (at + 1) % nhash.count;
        while (read_at<HashSlot>(b, nslot(next)).record != 0) next = (next + 1) % nhash.count;
        write_at(b, nslot(next), read_at<HashSlot>(b, nslot(at)));
        SnapPtr s(lookup_open(b, Kind::Passwd));
        ASSERT_NE(s.p, nullptr);
        EXPECT_FALSE(user_by_name(s.p, "bob", 3, &u));
        EXPECT_TRUE(user_by_name(s.p, "alice", 5, &u));
        EXPECT_TRUE(user_by_uid(s.p, 20001, &u));  // the id hash is intact
    }
    {  // slots naming records past the record count
        std::string b = img.passwd;
        auto bob = read_at<HashSlot>(b, nslot(slot_of(b, nhash, 1)));
        bob.record = 0xFFFFFFFFu;
        write_at(b, nslot(slot_of(b, nhash, 1)), bob);
        auto alice = read_at<HashSlot>(b, islot(slot_of(b, ihash, 0)));
        alice.record = 4;
        write_at(b, islot(slot_of(b, ihash, 0)), alice);
        SnapPtr s(lookup_open(b, Kind::Passwd));
        ASSERT_NE(s.p, nullptr);
        EXPECT_FALSE(user_by_name(s.p, "bob", 3, &u));
        EXPECT_FALSE(user_by_uid(s.p, 20000, &u));
        EXPECT_TRUE(user_by_uid(s.p, 20001, &u));
    }
    {  // no empty slot: every walk ends after one round; one key everywhere: listed 8 times
        for (const bool bobs_key : {false, true}) {
            std::string b = img.passwd;
            const uint32_t key = bobs_key ? cache_name_probe("bob", 3).key : 0x5EED5EEDu;
            for (uint64_t i = 0; i < nhash.count; ++i) write_at(b, nslot(i), HashSlot{key, 2});
            SnapPtr s(lookup_open(b, Kind::Passwd));
            ASSERT_NE(s.p, nullptr);
            EXPECT_FALSE(user_by_name(s.p, "bob", 3, &u));
            EXPECT_FALSE(user_by_name(s.p, "carol", 5, &u));
            EXPECT_TRUE(user_by_uid(s.p, 20002, &u));
        }
    }
    {  // a hash table whose size is not a power of two, or leaves no room: refused when mapped
        for (const uint64_t slots : {uint64_t(0), uint64_t(2), uint64_t(6)}) {
            std::string b = img.passwd;
            edit_section(b, SectionId::NameHash, [&](SectionEntry& e) { e.count = slots; });
            rechecksum(b);
            const char* why = nullptr;
            EXPECT_EQ(lookup_open(b, Kind::Passwd, &why), nullptr) << slots;
            EXPECT_STREQ(why, "bad hash table size");
        }
    }
    {  // sections overlapping: the id index laid over the name index
        std::string b = img.passwd;
        edit_section(b, SectionId::IdIndex, [&](SectionEntry& e) { e.offset = names.offset; });
        rechecksum(b);
        SnapPtr s(lookup_open(b, Kind::Passwd));
        ASSERT_NE(s.p, nullptr);
        // Name order is alice, bob, bobby = uid order here: both still answer.
        EXPECT_TRUE(user_by_uid(s.p, 20001, &u));
        EXPECT_TRUE(user_by_name(s.p, "bobby", 5, &u));
        SnapPtr full(from(b, Kind::Passwd));  // consistent: the full check agrees
        EXPECT_NE(full.p, nullptr);
    }
    {  // the id hash laid over the name hash: its keys are not ids, uids go unanswered
        std::string b = img.passwd;
        edit_section(b, SectionId::IdHash, [&](SectionEntry& e) { e.offset = nhash.offset; });
        rechecksum(b);
        SnapPtr s(lookup_open(b, Kind::Passwd));
        ASSERT_NE(s.p, nullptr);
        EXPECT_FALSE(user_by_uid(s.p, 20001, &u));
        EXPECT_TRUE(user_by_name(s.p, "bob", 3, &u));
        SnapPtr full(from(b, Kind::Passwd));
        EXPECT_EQ(full.p, nullptr);
    }
    {  // strings of two records overlapping: each is still a valid name
        std::string b = img.passwd;
        const auto rec = section(b, SectionId::Records);
        auto bobby = read_at<UserRecord>(b, rec.offset + 2 * sizeof(UserRecord));
        auto bob = read_at<UserRecord>(b, rec.offset + 1 * sizeof(UserRecord));
        bob.name = StrRef{bobby.name.off, 3};  // "bob" inside "bobby"
        write_at(b, rec.offset + 1 * sizeof(UserRecord), bob);
        SnapPtr s(lookup_open(b, Kind::Passwd));
        ASSERT_NE(s.p, nullptr);
        EXPECT_TRUE(user_by_name(s.p, "bob", 3, &u));
        EXPECT_EQ(u.uid, 20001u);
        EXPECT_TRUE(user_by_name(s.p, "bobby", 5, &u));
        EXPECT_EQ(u.uid, 20002u);
    }
}

bool collect_gids(void* ctx, uint32_t gid, Str)
{
    static_cast<std::vector<uint32_t>*>(ctx)->push_back(gid);
    return true;
}

TEST(IdentityCacheLookupMode, GroupsMembersAndMemberships)
{
    const auto img = sample();
    const auto grec = section(img.group, SectionId::Records);
    const auto members = section(img.group, SectionId::Members);
    const auto ms = section(img.group, SectionId::Membership);
    const auto gstrs = section(img.group, SectionId::Strings);
    GroupView g;
    // Records in name order: all, team-a, team-b.
    {  // a member of team-a past the end of the strings: team-a refused
        std::string b = img.group;
        const auto r = read_at<GroupRecord>(b, grec.offset + sizeof(GroupRecord));
        write_at(b, members.offset + uint64_t(r.member_first) * sizeof(StrRef),
                 StrRef{uint32_t(gstrs.count), 1});
        SnapPtr s(lookup_open(b, Kind::Group));
        ASSERT_NE(s.p, nullptr);
        EXPECT_FALSE(group_by_name(s.p, "team-a", 6, &g));
        EXPECT_FALSE(group_by_gid(s.p, 30000, &g));
        EXPECT_TRUE(group_by_gid(s.p, 30001, &g));
        EXPECT_TRUE(group_by_name(s.p, "all", 3, &g));
        EXPECT_EQ(g.member_count, 4u);
    }
    {  // a member range past the members section
        std::string b = img.group;
        auto r = read_at<GroupRecord>(b, grec.offset);
        r.member_first = 0xFFFFFFF0u;
        write_at(b, grec.offset, r);
        SnapPtr s(lookup_open(b, Kind::Group));
        ASSERT_NE(s.p, nullptr);
        EXPECT_FALSE(group_by_gid(s.p, 30002, &g));
        EXPECT_FALSE(group_at(s.p, 0, &g));
        EXPECT_TRUE(group_at(s.p, 2, &g));
    }
    {  // membership entries: one leads past the records, one past the strings
        std::string b = img.group;
        std::vector<uint32_t> before;
        {
            SnapPtr s(lookup_open(b, Kind::Group));
            groups_of_member(s.p, "bob", 3, collect_gids, &before);
        }
        ASSERT_EQ(before.size(), 2u);
        // Find bob's first entry and point it past the records.
        for (uint64_t i = 0; i < ms.count; ++i) {
            const uint64_t at = ms.offset + i * sizeof(MembershipEntry);
            auto m = read_at<MembershipEntry>(b, at);
            if (std::string(b.data() + gstrs.offset + m.member.off, m.member.len) == "bob") {
                m.group_index = 77;
                write_at(b, at, m);
                break;
            }
        }
        std::vector<uint32_t> after;
        {
            SnapPtr s(lookup_open(b, Kind::Group));
            ASSERT_NE(s.p, nullptr);
            groups_of_member(s.p, "bob", 3, collect_gids, &after);
        }
        EXPECT_EQ(after.size(), 1u);  // the valid entry still counts
        // An entry whose name leads outside the strings refuses the answer.
        auto m0 = read_at<MembershipEntry>(b, ms.offset);
        m0.member = StrRef{0xFFFFFF00u, 200};
        write_at(b, ms.offset, m0);
        std::vector<uint32_t> none;
        SnapPtr s(lookup_open(b, Kind::Group));
        ASSERT_NE(s.p, nullptr);
        groups_of_member(s.p, "alice", 5, collect_gids, &none);
        groups_of_member(s.p, "bobby", 5, collect_gids, &none);
        for (uint32_t gid : none) EXPECT_NE(gid, 0u);
    }
}

TEST(IdentityCacheLookupMode, KeysRecordValidatedWhenReturned)
{
    const auto img = sample();
    std::string b = img.keys;
    const auto krec = section(b, SectionId::Keys);
    const auto ks = section(b, SectionId::Strings);
    // The first key line belongs to bob (records in name order: bob, bobby).
    const auto k = read_at<StrRef>(b, krec.offset);
    b[ks.offset + k.off + 5] = '\n';
    SnapPtr s(lookup_open(b, Kind::Keys));
    ASSERT_NE(s.p, nullptr);
    KeysView v;
    EXPECT_FALSE(keys_by_name(s.p, "bob", 3, &v));
    EXPECT_TRUE(keys_by_name(s.p, "bobby", 5, &v));
    EXPECT_EQ(v.key_count, 1u);
}

// Random mutations of the body behind a valid header: every lookup must stay
// inside the image and never return a record the full check would refuse.
TEST(IdentityCacheLookupMode, RandomMutationsNeverReturnAnInvalidRecord)
{
    const auto img = sample();
    std::mt19937 rng(777);
    for (const auto& [orig, kind] :
         {std::pair{img.passwd, Kind::Passwd}, std::pair{img.group, Kind::Group},
          std::pair{img.keys, Kind::Keys}}) {
        const FileHeader h = read_at<FileHeader>(orig, 0);
        const size_t body = sizeof(FileHeader) + h.section_count * sizeof(SectionEntry);
        for (int round = 0; round < 3000; ++round) {
            std::string b = orig;
            const int flips = 1 + int(rng() % 4);
            for (int f = 0; f < flips; ++f) b[body + rng() % (b.size() - body)] = char(rng());
            SnapPtr s(lookup_open(b, kind));
            ASSERT_NE(s.p, nullptr);  // the header is intact
            UserView u;
            GroupView g;
            KeysView k;
            for (const char* n : {"alice", "bob", "bobby", "carol", "team-a", "all"}) {
                const size_t len = std::strlen(n);
                if (user_by_name(s.p, n, len, &u)) {
                    EXPECT_TRUE(cache_valid_name(u.name.data, u.name.size));
                    EXPECT_TRUE(cache_valid_field(u.home.data, u.home.size));
                    EXPECT_NE(u.uid, 0u);
                    EXPECT_NE(u.gid, 0u);
                }
                if (group_by_name(s.p, n, len, &g))
                    for (uint32_t m = 0; m < g.member_count; ++m) {
                        const Str mem = group_member(g, m);
                        EXPECT_TRUE(cache_valid_name(mem.data, mem.size));
                    }
                if (keys_by_name(s.p, n, len, &k))
                    for (uint32_t i = 0; i < k.key_count; ++i) {
                        const Str line = keys_line(k, i);
                        EXPECT_TRUE(cache_valid_key(line.data, line.size));
                    }
                groups_of_member(
                    s.p, n, len,
                    [](void*, uint32_t gid, Str name) {
                        EXPECT_NE(gid, 0u);
                        EXPECT_TRUE(cache_valid_name(name.data, name.size));
                        return true;
                    },
                    nullptr);
            }
            for (uint32_t id = 20000; id < 20003; ++id) user_by_uid(s.p, id, &u);
            for (uint32_t id = 30000; id < 30003; ++id) group_by_gid(s.p, id, &g);
            for (uint32_t i = 0; i < snapshot_count(s.p); ++i) {
                user_at(s.p, i, &u);
                group_at(s.p, i, &g);
            }
        }
    }
}

// A handle (libnss_allot's) maps in Lookup mode: a body corruption leaves the
// other records served; a header corruption makes the cache unavailable.
TEST(IdentityCacheLookupMode, HandleServesValidRecordsAndRefusesABadHeader)
{
    char tmpl[] = "/tmp/allot-idcache-XXXXXX";
    const std::string dir = mkdtemp(tmpl);
    const std::string path = dir + "/passwd.cache";
    const auto img = sample();
    const auto rec = section(img.passwd, SectionId::Records);
    const auto put = [&](const std::string& bytes) {
        {
            std::ofstream out(path + ".tmp", std::ios::binary);
            out << bytes;
        }
        ASSERT_EQ(rename((path + ".tmp").c_str(), path.c_str()), 0);
    };
    std::string b = img.passwd;
    auto r = read_at<UserRecord>(b, rec.offset + sizeof(UserRecord));
    r.uid = 0;  // bob as root: never answered
    write_at(b, rec.offset + sizeof(UserRecord), r);
    put(b);
    CacheHandle h = ALLOT_CACHE_HANDLE_INIT_TRUST(path.c_str(), Kind::Passwd,
                                                  (TrustPolicy{geteuid(), dir.c_str()}), nullptr);
    const char* why = nullptr;
    Snapshot* s = cache_acquire(&h, &why);
    ASSERT_NE(s, nullptr) << why;
    UserView u;
    EXPECT_FALSE(user_by_name(s, "bob", 3, &u));
    EXPECT_TRUE(user_by_name(s, "alice", 5, &u));
    snapshot_unref(s);

    std::string torn = img.passwd;
    torn[offsetof(FileHeader, record_count)] ^= 0x40;
    put(torn);
    EXPECT_EQ(cache_acquire(&h, &why), nullptr);
    EXPECT_STREQ(why, "bad header checksum");
    cache_reset(&h);
    std::system(("rm -rf '" + dir + "'").c_str());
}

class TempDir {
public:
    TempDir()
    {
        char tmpl[] = "/tmp/allot-idcache-XXXXXX";
        path_ = mkdtemp(tmpl);
    }
    ~TempDir() { std::system(("rm -rf '" + path_ + "'").c_str()); }
    const std::string& path() const { return path_; }

private:
    std::string path_;
};

TEST(IdentityCachePublish, ModesAndHandleFollowsReplacement)
{
    TempDir dir;
    const std::string cache = dir.path() + "/cache";
    CacheWriteOptions opts;
    opts.generation = 100;
    ASSERT_TRUE(publish_identity_cache(cache, {user("bob", 20001, {kKey1})}, {}, opts).ok());
    struct stat st;
    ASSERT_EQ(stat((cache + "/passwd.cache").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0644u);
    ASSERT_EQ(stat((cache + "/group.cache").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0644u);
    ASSERT_EQ(stat((cache + "/keys.cache").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0640u);
    struct stat dst;
    ASSERT_EQ(stat(cache.c_str(), &dst), 0);
    EXPECT_EQ(st.st_gid, dst.st_gid);  // keys file takes the directory's group

    const std::string passwd_path = cache + "/passwd.cache";
    // The walk stops at the test's own directory (its /tmp parent is 1777).
    CacheHandle h = ALLOT_CACHE_HANDLE_INIT_TRUST(
        passwd_path.c_str(), Kind::Passwd, (TrustPolicy{geteuid(), dir.path().c_str()}), nullptr);
    const char* why = nullptr;
    Snapshot* s1 = cache_acquire(&h, &why);
    ASSERT_NE(s1, nullptr) << why;
    UserView u;
    EXPECT_TRUE(user_by_name(s1, "bob", 3, &u));
    Snapshot* s1b = cache_acquire(&h, &why);
    EXPECT_EQ(s1, s1b);  // unchanged file: same mapping
    snapshot_unref(s1b);

    // Replace: bob removed, carol added. The old snapshot stays usable.
    opts.generation = 101;
    ASSERT_TRUE(publish_identity_cache(cache, {user("carol", 20003)}, {}, opts).ok());
    Snapshot* s2 = cache_acquire(&h, &why);
    ASSERT_NE(s2, nullptr);
    EXPECT_EQ(snapshot_generation(s2), 101u);
    EXPECT_FALSE(user_by_name(s2, "bob", 3, &u));
    EXPECT_TRUE(user_by_name(s2, "carol", 5, &u));
    EXPECT_TRUE(user_by_name(s1, "bob", 3, &u));  // pinned old mapping
    snapshot_unref(s1);
    snapshot_unref(s2);

    // A corrupt file in place: unavailable (not the old data), then recovers.
    {
        std::ofstream out(passwd_path + ".tmp", std::ios::binary);
        out << "garbage that is not a cache, long enough to have a header.............";
    }
    ASSERT_EQ(rename((passwd_path + ".tmp").c_str(), passwd_path.c_str()), 0);
    EXPECT_EQ(cache_acquire(&h, &why), nullptr);
    EXPECT_STREQ(why, "not an allot cache");
    EXPECT_EQ(cache_acquire(&h, &why), nullptr);  // remembered, not re-validated
    opts.generation = 102;
    ASSERT_TRUE(publish_identity_cache(cache, {user("dave", 20004)}, {}, opts).ok());
    Snapshot* s3 = cache_acquire(&h, &why);
    ASSERT_NE(s3, nullptr);
    EXPECT_TRUE(user_by_name(s3, "dave", 4, &u));
    snapshot_unref(s3);

    // Missing file: unavailable with a reason.
    ASSERT_EQ(unlink(passwd_path.c_str()), 0);
    EXPECT_EQ(cache_acquire(&h, &why), nullptr);
    EXPECT_STREQ(why, "missing");
    // Empty file: truncated.
    {
        std::ofstream(passwd_path).flush();
    }
    EXPECT_EQ(cache_acquire(&h, &why), nullptr);
    EXPECT_STREQ(why, "truncated (no header)");
    cache_reset(&h);

    // A failed publish names the problem and leaves the files alone.
    auto bad = publish_identity_cache(cache, {user("a:b", 20001)}, {}, opts);
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().message.find("invalid user name"), std::string::npos);
    // No temporary files left behind.
    EXPECT_EQ(std::system(("test -z \"$(ls -A '" + cache + "' | grep '^\\.')\"").c_str()), 0);
}

TEST(IdentityCachePublish, HundredThousandUsers)
{
    std::vector<PosixUser> users;
    std::vector<PosixGroup> groups;
    users.reserve(100000);
    for (uint32_t i = 0; i < 100000; ++i) {
        users.push_back(user("user" + std::to_string(i), 100000 + i,
                             {"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + std::to_string(i)}));
        if (i % 100 == 0) {
            groups.push_back(group("grp" + std::to_string(i / 100), 500000 + i / 100, {}));
        }
        groups.back().members.push_back(users.back().name);
    }
    TempDir dir;
    CacheWriteOptions opts;
    opts.fsync = false;
    ASSERT_TRUE(publish_identity_cache(dir.path(), users, groups, opts).ok());
    const std::string p = dir.path() + "/passwd.cache", g = dir.path() + "/group.cache";
    SnapPtr sp(snapshot_open(p.c_str(), Kind::Passwd, nullptr));
    SnapPtr sg(snapshot_open(g.c_str(), Kind::Group, nullptr));
    ASSERT_NE(sp.p, nullptr);
    ASSERT_NE(sg.p, nullptr);
    EXPECT_EQ(snapshot_count(sp.p), 100000u);
    UserView u;
    GroupView gv;
    for (uint32_t i = 0; i < 100000; i += 7) {
        const std::string name = "user" + std::to_string(i);
        ASSERT_TRUE(user_by_name(sp.p, name.data(), name.size(), &u)) << name;
        ASSERT_EQ(u.uid, 100000 + i);
        ASSERT_TRUE(user_by_uid(sp.p, 100000 + i, &u));
        ASSERT_EQ(S(u.name), name);
        std::vector<uint32_t> gids;
        ASSERT_EQ(groups_of_member(sg.p, name.data(), name.size(), collect, &gids), 1u);
        ASSERT_EQ(gids[0], 500000 + i / 100);
    }
    EXPECT_FALSE(user_by_name(sp.p, "user100000", 10, &u));
    ASSERT_TRUE(group_by_gid(sg.p, 500999, &gv));
    EXPECT_EQ(gv.member_count, 100u);
}

// --- trust ------------------------------------------------

std::vector<std::string> g_logged;
void remember_log(const char* where, const char* why)
{
    g_logged.push_back(std::string(where) + ": " + why);
}

TEST(IdentityCacheTrust, StatRules)
{
    struct stat st {};
    st.st_uid = 0;
    st.st_mode = S_IFREG | 0644;
    const char* why = nullptr;
    EXPECT_EQ(check_trusted_stat(st, kRootOnly, &why), Fault::None);
    st.st_mode = S_IFREG | 0640;
    EXPECT_EQ(check_trusted_stat(st, kRootOnly, &why), Fault::None);
    for (mode_t bad : {0664, 0646, 0666, 0620, 0602}) {
        st.st_mode = S_IFREG | bad;
        EXPECT_EQ(check_trusted_stat(st, kRootOnly, &why), Fault::Untrusted) << std::oct << bad;
        EXPECT_STREQ(why, "writable by group or others");
    }
    st.st_mode = S_IFDIR | 01777;  // the sticky bit is no excuse
    EXPECT_EQ(check_trusted_stat(st, kRootOnly, &why), Fault::Untrusted);
    st.st_mode = S_IFREG | 0644;
    st.st_uid = 1234;
    EXPECT_EQ(check_trusted_stat(st, kRootOnly, &why), Fault::Untrusted);
    EXPECT_STREQ(why, "not owned by root or the cache owner");
    EXPECT_EQ(check_trusted_stat(st, TrustPolicy{1234, nullptr}, &why), Fault::None);
    EXPECT_EQ(check_trusted_stat(st, TrustPolicy{4321, nullptr}, &why), Fault::Untrusted);
}

TEST(IdentityCacheTrust, DirectoriesUpToTheTopAndTheFileItself)
{
    TempDir dir;
    ASSERT_EQ(chmod(dir.path().c_str(), 0755), 0);
    const std::string cache = dir.path() + "/a/b";
    ASSERT_EQ(
        std::system(("mkdir -p '" + cache + "' && chmod 755 '" + dir.path() + "/a' '" + cache + "'")
                        .c_str()),
        0);
    CacheWriteOptions opts;
    opts.fsync = false;
    ASSERT_TRUE(publish_identity_cache(cache, {user("bob", 20001)}, {}, opts).ok());
    const std::string file = cache + "/passwd.cache";
    const TrustPolicy mine{geteuid(), dir.path().c_str()};
    const char* why = nullptr;
    char where[4096];
    EXPECT_EQ(check_trusted_dirs(file.c_str(), mine, &why, where, sizeof where), Fault::None);
    // Without a top the walk reaches /tmp (1777) and refuses.
    EXPECT_EQ(check_trusted_dirs(file.c_str(), TrustPolicy{geteuid(), nullptr}, &why, where,
                                 sizeof where),
              Fault::Untrusted);
    EXPECT_STREQ(where, "/tmp");

    Fault fault = Fault::None;
    SnapPtr ok(snapshot_open_trusted(file.c_str(), Kind::Passwd, mine, &fault, &why));
    EXPECT_NE(ok.p, nullptr) << why;
    for (const std::string& d : {cache, dir.path() + "/a"}) {
        ASSERT_EQ(chmod(d.c_str(), 0775), 0);
        EXPECT_EQ(check_trusted_dirs(file.c_str(), mine, &why, where, sizeof where),
                  Fault::Untrusted);
        EXPECT_EQ(std::string(where), d);
        EXPECT_EQ(snapshot_open_trusted(file.c_str(), Kind::Passwd, mine, &fault, &why), nullptr);
        EXPECT_EQ(fault, Fault::Untrusted);
        ASSERT_EQ(chmod(d.c_str(), 0755), 0);
    }
    // A symlinked directory is judged by where it leads.
    const std::string link = dir.path() + "/link";
    ASSERT_EQ(symlink(cache.c_str(), link.c_str()), 0);
    SnapPtr via(
        snapshot_open_trusted((link + "/passwd.cache").c_str(), Kind::Passwd, mine, &fault, &why));
    EXPECT_NE(via.p, nullptr) << why;
    ASSERT_EQ(chmod(file.c_str(), 0666), 0);
    EXPECT_EQ(snapshot_open_trusted(file.c_str(), Kind::Passwd, mine, &fault, &why), nullptr);
    EXPECT_EQ(fault, Fault::Untrusted);
    // Missing stays missing (not untrusted): callers log only refusals.
    EXPECT_EQ(snapshot_open_trusted((cache + "/nope").c_str(), Kind::Passwd, mine, &fault, &why),
              nullptr);
    EXPECT_EQ(fault, Fault::Missing);
}

TEST(IdentityCacheTrust, HandleRefusesLogsOnceAndRecovers)
{
    TempDir dir;
    ASSERT_EQ(chmod(dir.path().c_str(), 0755), 0);
    CacheWriteOptions opts;
    opts.fsync = false;
    ASSERT_TRUE(publish_identity_cache(dir.path(), {user("bob", 20001)}, {}, opts).ok());
    const std::string file = dir.path() + "/passwd.cache";
    CacheHandle h = ALLOT_CACHE_HANDLE_INIT_TRUST(
        file.c_str(), Kind::Passwd, (TrustPolicy{geteuid(), dir.path().c_str()}), remember_log);
    g_logged.clear();
    const char* why = nullptr;
    Fault fault = Fault::None;
    Snapshot* s = cache_acquire(&h, &why, &fault);
    ASSERT_NE(s, nullptr);
    snapshot_unref(s);
    ASSERT_EQ(chmod(file.c_str(), 0646), 0);
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(cache_acquire(&h, &why, &fault), nullptr);
        EXPECT_EQ(fault, Fault::Untrusted);
    }
    ASSERT_EQ(chmod(dir.path().c_str(), 0757), 0);
    EXPECT_EQ(cache_acquire(&h, &why, &fault), nullptr);
    ASSERT_EQ(chmod(dir.path().c_str(), 0755), 0);
    EXPECT_EQ(cache_acquire(&h, &why, &fault), nullptr);  // the file is still bad
    // One line per distinct reason, not one per lookup.
    EXPECT_EQ(g_logged.size(), 1u);
    ASSERT_EQ(chmod(file.c_str(), 0644), 0);
    s = cache_acquire(&h, &why, &fault);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(fault, Fault::None);
    snapshot_unref(s);
    ASSERT_EQ(unlink(file.c_str()), 0);
    EXPECT_EQ(cache_acquire(&h, &why, &fault), nullptr);
    EXPECT_EQ(fault, Fault::Missing);
    EXPECT_EQ(g_logged.size(), 1u);  // a missing cache is not logged
    cache_reset(&h);
}

// --- the node's own files ------------------------------------------------------

TEST(LocalFiles, NamesAndIdsOfPasswdAndGroupText)
{
    TempDir dir;
    const std::string path = dir.path() + "/passwd";
    std::ofstream(path) << "root:x:0:0:root:/root:/bin/bash\n"
                           "\n"
                           "# comment:x:5:\n"
                           "+nis:::\n"
                           "-other\n"
                           "daemon:x:1:1::/:/bin/false\n"
                           "noid:x:abc:1\n"
                           "big:x:4294967295:1\n"
                           "over:x:4294967296:1\n"
                           "short\n"
                           "last:x:77";  // no final newline
    LocalFile f = ALLOT_LOCAL_FILE_INIT(path.c_str());
    const LocalTable* t = local_acquire(&f);
    ASSERT_NE(t, nullptr);
    for (const char* n : {"root", "daemon", "noid", "big", "over", "short", "last"})
        EXPECT_TRUE(local_has_name(t, n, std::strlen(n))) << n;
    for (const char* n : {"roo", "rootx", "nis", "+nis", "other", "# comment", ""})
        EXPECT_FALSE(local_has_name(t, n, std::strlen(n))) << n;
    for (uint32_t id : {0u, 1u, 4294967295u, 77u}) EXPECT_TRUE(local_has_id(t, id)) << id;
    for (uint32_t id : {2u, 5u, 0u + 1000}) EXPECT_FALSE(local_has_id(t, id)) << id;
    local_release(t);

    // A changed file is re-read; the old view stays valid while held.
    const LocalTable* old = local_acquire(&f);
    std::ofstream(path, std::ios::app) << "\nnewbie:x:1000:1000\n";
    t = local_acquire(&f);
    EXPECT_TRUE(local_has_name(t, "newbie", 6));
    EXPECT_TRUE(local_has_id(t, 1000));
    EXPECT_FALSE(local_has_name(old, "newbie", 6));
    local_release(old);
    local_release(t);

    // Missing: holds nothing. Unreadable (a directory): cannot tell → null.
    ASSERT_EQ(unlink(path.c_str()), 0);
    t = local_acquire(&f);
    ASSERT_NE(t, nullptr);
    EXPECT_FALSE(local_has_name(t, "root", 4));
    local_release(t);
    ASSERT_EQ(mkdir(path.c_str(), 0755), 0);
    EXPECT_EQ(local_acquire(&f), nullptr);
    ASSERT_EQ(rmdir(path.c_str()), 0);
    // Over the size bound: cannot tell.
    {
        std::ofstream big(path);
        big << "a:x:1:1\n";
    }
    ASSERT_EQ(truncate(path.c_str(), kMaxLocalFileSize + 1), 0);
    EXPECT_EQ(local_acquire(&f), nullptr);
    local_reset(&f);
}

// --- the steady path (a recheck interval, as libnss_allot's) -------------------

// What a cache writer from before the generation file (or an admin) does:
// rename a new image into place, announcing nothing.
void replace_by_hand(const std::string& path, const std::string& bytes)
{
    {
        std::ofstream out(path + ".tmp", std::ios::binary);
        out << bytes;
    }
    ASSERT_EQ(rename((path + ".tmp").c_str(), path.c_str()), 0);
}

std::string passwd_image(std::vector<PosixUser> users, uint64_t generation)
{
    auto images = build_identity_cache(users, {}, generation);
    return images.ok() ? images.value().passwd : std::string();
}

void sleep_ns(int64_t ns)
{
    std::this_thread::sleep_for(std::chrono::nanoseconds(ns));
}

constexpr int64_t kTestRecheckNs = 300 * 1000 * 1000;
// What the coarse clock may lag the sleep by (a tick is 1-10 ms).
constexpr int64_t kTickMarginNs = 30 * 1000 * 1000;

class SteadyHandle : public ::testing::Test {
protected:
    void SetUp() override
    {
        ASSERT_EQ(chmod(dir_.path().c_str(), 0755), 0);
        publish({user("bob", 20001)});
    }
    void TearDown() override { cache_reset(&h_); }
    void publish(const std::vector<PosixUser>& users)
    {
        CacheWriteOptions o;
        o.fsync = false;
        auto r = publish_identity_cache(dir_.path(), users, {}, o);
        ASSERT_TRUE(r.ok()) << r.error().message;
    }
    // True when `name` resolves in the snapshot acquired now.
    bool resolves(const char* name)
    {
        const char* why = nullptr;
        Snapshot* s = cache_acquire(&h_, &why);
        UserView u;
        const bool found = s && user_by_name(s, name, std::strlen(name), &u);
        snapshot_unref(s);
        return found;
    }
    Snapshot* acquire()
    {
        const char* why = nullptr;
        Snapshot* s = cache_acquire(&h_, &why);
        EXPECT_NE(s, nullptr) << why;
        return s;
    }

    TempDir dir_;
    const std::string path_ = dir_.path() + "/passwd.cache";
    CacheHandle h_ = ALLOT_CACHE_HANDLE_INIT_RECHECK(path_.c_str(), Kind::Passwd,
                                                     (TrustPolicy{geteuid(), dir_.path().c_str()}),
                                                     nullptr, kTestRecheckNs);
};

TEST_F(SteadyHandle, PublishIsSeenByTheNextAcquire)
{
    EXPECT_TRUE(resolves("bob"));  // maps the cache and the generation file
    EXPECT_TRUE(resolves("bob"));  // publishes the snapshot
    for (int round = 0; round < 6; ++round) {
        const bool bob = round % 2 == 1;
        std::vector<PosixUser> users = {user("carol", 20003)};
        if (bob) users.push_back(user("bob", 20001));
        publish(users);
        EXPECT_EQ(resolves("bob"), bob) << round;
        EXPECT_TRUE(resolves("carol"));
    }
}

// A replacement nobody announces is seen within the interval; before, the
// steady path answers from the snapshot it has (no stat()).
TEST_F(SteadyHandle, UnannouncedReplacementIsSeenWithinTheInterval)
{
    Snapshot* first = acquire();
    snapshot_unref(acquire());
    const auto looked = std::chrono::steady_clock::now();
    replace_by_hand(path_, passwd_image({user("dave", 20004)}, 7));
    Snapshot* steady = acquire();
    if (std::chrono::steady_clock::now() - looked < std::chrono::nanoseconds(kTestRecheckNs / 2)) {
        EXPECT_EQ(steady, first);  // no stat(): the mapped snapshot
    }
    snapshot_unref(steady);
    snapshot_unref(first);
    sleep_ns(kTestRecheckNs + kTickMarginNs);
    EXPECT_TRUE(resolves("dave"));
    EXPECT_FALSE(resolves("bob"));
}

// Without a generation file (an older writer) every acquire stat()s the
// cache: nothing goes stale. One the handle cannot trust is not followed.
TEST_F(SteadyHandle, WithoutATrustedGenerationFileEveryAcquireLooks)
{
    const std::string gen = dir_.path() + "/generation";
    for (const bool untrusted : {false, true}) {
        if (untrusted) {
            publish({user("bob", 20001)});
            ASSERT_EQ(chmod(gen.c_str(), 0666), 0);
        } else {
            ASSERT_EQ(unlink(gen.c_str()), 0);
        }
        cache_reset(&h_);
        EXPECT_TRUE(resolves("bob"));
        EXPECT_TRUE(resolves("bob"));
        for (int round = 0; round < 4; ++round) {
            const bool bob = round % 2 == 1;
            std::vector<PosixUser> users = {user("carol", 20003)};
            if (bob) users.push_back(user("bob", 20001));
            replace_by_hand(path_, passwd_image(users, 10 + round));
            EXPECT_EQ(resolves("bob"), bob) << round << (untrusted ? " untrusted" : " missing");
        }
    }
}

// The steady path changes when a file is looked at, not how: an announced
// corrupt cache is refused by the next acquire, and a valid one answers again.
TEST_F(SteadyHandle, AnnouncedCorruptCacheIsRefused)
{
    EXPECT_TRUE(resolves("bob"));
    EXPECT_TRUE(resolves("bob"));
    std::string img = passwd_image({user("bob", 20001)}, 8);
    img[offsetof(FileHeader, record_count)] ^= 0x40;  // torn header
    replace_by_hand(path_, img);
    // What the writer does after a rename: one atomic add in the counter.
    const int fd = open((dir_.path() + "/generation").c_str(), O_RDWR);
    ASSERT_GE(fd, 0);
    void* map = mmap(nullptr, sizeof(GenerationFile), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    ASSERT_NE(map, MAP_FAILED);
    __atomic_add_fetch(
        reinterpret_cast<uint64_t*>(static_cast<char*>(map) + kGenerationCounterOffset), 1,
        __ATOMIC_SEQ_CST);
    munmap(map, sizeof(GenerationFile));
    const char* why = nullptr;
    EXPECT_EQ(cache_acquire(&h_, &why), nullptr);
    EXPECT_STREQ(why, "bad header checksum");
    EXPECT_EQ(cache_acquire(&h_, &why), nullptr);
    publish({user("bob", 20001)});
    EXPECT_TRUE(resolves("bob"));
    EXPECT_TRUE(resolves("bob"));
}

// Readers on the steady path while the writer republishes: every snapshot
// handed out stays mapped while held (ASan: no use after unmap or free), bob
// resolves in every version, and the last publish is what is seen at the end.
TEST_F(SteadyHandle, ConcurrentReadersWhileTheWriterReplacesTheCache)
{
    const std::string etc = dir_.path() + "/etc-passwd";
    std::ofstream(etc) << "root:x:0:0::/root:/bin/sh\n";
    LocalFile local = ALLOT_LOCAL_FILE_INIT_RECHECK(etc.c_str(), 1000 * 1000);
    std::atomic<bool> stop{false};
    std::atomic<long> bad{0}, ok{0};
    std::vector<std::thread> readers;
    for (int t = 0; t < 4; ++t) {
        readers.emplace_back([&] {
            while (!stop.load()) {
                const char* why = nullptr;
                Snapshot* s = cache_acquire(&h_, &why);
                const LocalTable* l = local_acquire(&local);
                UserView u;
                if (!s || !l || !user_by_name(s, "bob", 3, &u) || u.uid != 20001 ||
                    !local_has_name(l, "root", 4))
                    ++bad;
                else
                    ++ok;
                for (uint32_t i = 0; s && i < snapshot_count(s); ++i) user_at(s, i, &u);
                local_release(l);
                snapshot_unref(s);
            }
        });
    }
    for (int i = 0; i < 150; ++i) {
        std::vector<PosixUser> users = {user("bob", 20001)};
        for (int j = 0; j < i % 25; ++j) users.push_back(user("u" + std::to_string(j), 21000 + j));
        publish(users);
        if (i % 10 == 0) {  // and the local file, replaced and rewritten
            std::ofstream(etc + ".new") << "root:x:0:0::/root:/bin/sh\nx" << i << ":x:1:1\n";
            rename((etc + ".new").c_str(), etc.c_str());
        }
    }
    publish({user("bob", 20001), user("last", 29999)});
    stop = true;
    for (auto& t : readers) t.join();
    EXPECT_EQ(bad.load(), 0);
    EXPECT_GT(ok.load(), 0);
    EXPECT_TRUE(resolves("last"));
    local_reset(&local);
}

TEST(LocalFiles, SteadyTableSeesAChangeWithinTheInterval)
{
    TempDir dir;
    const std::string path = dir.path() + "/group";
    std::ofstream(path) << "root:x:0:\n";
    LocalFile f = ALLOT_LOCAL_FILE_INIT_RECHECK(path.c_str(), kTestRecheckNs);
    const LocalTable* t1 = local_acquire(&f);
    ASSERT_NE(t1, nullptr);
    const auto looked = std::chrono::steady_clock::now();
    std::ofstream(path, std::ios::app) << "sudo:x:27:\n";  // groupadd
    const LocalTable* t2 = local_acquire(&f);
    if (std::chrono::steady_clock::now() - looked < std::chrono::nanoseconds(kTestRecheckNs / 2)) {
        EXPECT_EQ(t2, t1);  // no stat() on the steady path
    }
    local_release(t2);
    local_release(t1);
    sleep_ns(kTestRecheckNs + kTickMarginNs);
    const LocalTable* t3 = local_acquire(&f);
    ASSERT_NE(t3, nullptr);
    EXPECT_TRUE(local_has_name(t3, "sudo", 4));
    EXPECT_TRUE(local_has_id(t3, 27));
    local_release(t3);
    // Unreadable: never kept for the steady path, every acquire looks again.
    ASSERT_EQ(unlink(path.c_str()), 0);
    ASSERT_EQ(mkdir(path.c_str(), 0755), 0);
    sleep_ns(kTestRecheckNs + kTickMarginNs);
    EXPECT_EQ(local_acquire(&f), nullptr);
    ASSERT_EQ(rmdir(path.c_str()), 0);
    std::ofstream(path) << "root:x:0:\n";
    const LocalTable* t4 = local_acquire(&f);
    ASSERT_NE(t4, nullptr);
    EXPECT_FALSE(local_has_name(t4, "sudo", 4));
    local_release(t4);
    local_reset(&f);
}

}  // namespace
