// identity_cache.cpp - building and publishing the identity caches (see
// allot/identity_cache.hpp for the contract, allot/identity_cache_format.hpp
// for the layout).
#include "allot/identity_cache.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <ctime>
#include <set>
#include <string_view>
#include <utility>

#include "allot/file_io.hpp"
#include "allot/identity_cache_format.hpp"
#include "allot/identity_cache_reader.hpp"

namespace allot {
namespace {

using idcache::Kind;
using idcache::SectionId;
using idcache::StrRef;

struct Section {
    SectionId id;
    uint32_t elem_size;
    uint64_t count;
    std::string bytes;
};

template <typename T>
void append_pod(std::string& out, const T& value)
{
    out.append(reinterpret_cast<const char*>(&value), sizeof value);
}

// The string blob of one file; every string is stored once per reference.
class Strings {
public:
    Result<StrRef> add(std::string_view s)
    {
        if (blob_.size() + s.size() > 0xFFFFFFFFull) return make_error("cache strings over 4 GiB");
        StrRef r{static_cast<uint32_t>(blob_.size()), static_cast<uint32_t>(s.size())};
        blob_.append(s.data(), s.size());
        return r;
    }
    Section section() && { return Section{SectionId::Strings, 1, blob_.size(), std::move(blob_)}; }

private:
    std::string blob_;
};

std::string printable(std::string_view s)
{
    std::string out;
    for (char c : s.substr(0, 64)) {
        const auto u = static_cast<unsigned char>(c);
        out += (u < 0x20 || u == 0x7f) ? '?' : c;
    }
    return out;
}

std::string assemble(Kind kind, uint32_t record_count, uint64_t generation,
                     std::vector<Section>& sections)
{
    idcache::FileHeader h{};
    std::memcpy(h.magic, idcache::kCacheMagic, sizeof h.magic);
    h.endian = idcache::kCacheEndian;
    h.version = idcache::kCacheVersion;
    h.kind = static_cast<uint32_t>(kind);
    h.section_count = static_cast<uint32_t>(sections.size());
    h.generation = generation;
    h.record_count = record_count;

    uint64_t offset = sizeof(idcache::FileHeader) + sections.size() * sizeof(idcache::SectionEntry);
    std::string table;
    for (const auto& s : sections) {
        offset = (offset + 7) & ~uint64_t(7);
        append_pod(table, idcache::SectionEntry{static_cast<uint32_t>(s.id), s.elem_size, offset,
                                                s.count});
        offset += s.bytes.size();
    }
    h.file_size = offset;

    std::string out;
    out.reserve(offset);
    append_pod(out, h);
    out += table;
    for (const auto& s : sections) {
        out.resize((out.size() + 7) & ~size_t(7), '\0');
        out += s.bytes;
    }
    idcache::cache_seal(reinterpret_cast<unsigned char*>(out.data()), out.size());
    return out;
}

Section index_section(SectionId id, const std::vector<uint32_t>& index)
{
    Section s{id, sizeof(uint32_t), index.size(), {}};
    for (uint32_t v : index) append_pod(s.bytes, v);
    return s;
}

// NAME_HASH or ID_HASH of `count` records, record i at probe_of(i)
// (identity_cache_format.hpp: linear probing, slots twice the records).
template <typename ProbeOf>
Section hash_section(SectionId id, size_t count, ProbeOf probe_of)
{
    const uint64_t slots = idcache::cache_hash_slots(count);
    std::vector<idcache::HashSlot> table(slots);
    for (size_t i = 0; i < count; ++i) {
        const idcache::HashProbe p = probe_of(i);
        uint64_t at = p.home & (slots - 1);
        while (table[at].record != 0) at = (at + 1) & (slots - 1);
        table[at] = idcache::HashSlot{p.key, static_cast<uint32_t>(i + 1)};
    }
    Section s{id, sizeof(idcache::HashSlot), slots, {}};
    s.bytes.assign(reinterpret_cast<const char*>(table.data()), slots * sizeof(idcache::HashSlot));
    return s;
}

template <typename Record>
Section name_hash(const std::vector<const Record*>& records)
{
    return hash_section(SectionId::NameHash, records.size(), [&](size_t i) {
        return idcache::cache_name_probe(records[i]->name.data(), records[i]->name.size());
    });
}

Result<std::string> build_passwd(const std::vector<const PosixUser*>& users, uint64_t generation)
{
    Strings strings;
    Section records{SectionId::Records, sizeof(idcache::UserRecord), users.size(), {}};
    std::vector<uint32_t> by_name, by_id;
    for (uint32_t i = 0; i < users.size(); ++i) {
        const PosixUser& u = *users[i];
        idcache::UserRecord r{};
        r.uid = u.uid;
        r.gid = u.gid;
        auto name = strings.add(u.name), gecos = strings.add(u.gecos), home = strings.add(u.home),
             shell = strings.add(u.shell);
        if (!name || !gecos || !home || !shell) return make_error("cache strings over 4 GiB");
        r.name = name.value();
        r.gecos = gecos.value();
        r.home = home.value();
        r.shell = shell.value();
        append_pod(records.bytes, r);
        by_name.push_back(i);  // records are already in name order
        by_id.push_back(i);
    }
    std::sort(by_id.begin(), by_id.end(),
              [&](uint32_t a, uint32_t b) { return users[a]->uid < users[b]->uid; });
    std::vector<Section> sections;
    sections.push_back(std::move(records));
    sections.push_back(index_section(SectionId::NameIndex, by_name));
    sections.push_back(index_section(SectionId::IdIndex, by_id));
    sections.push_back(name_hash(users));
    sections.push_back(hash_section(SectionId::IdHash, users.size(), [&](size_t i) {
        return idcache::cache_id_probe(users[i]->uid);
    }));
    sections.push_back(std::move(strings).section());
    return assemble(Kind::Passwd, static_cast<uint32_t>(users.size()), generation, sections);
}

Result<std::string> build_group(const std::vector<const PosixGroup*>& groups, uint64_t generation)
{
    Strings strings;
    Section records{SectionId::Records, sizeof(idcache::GroupRecord), groups.size(), {}};
    Section members{SectionId::Members, sizeof(StrRef), 0, {}};
    struct Membership {
        std::string_view name;
        StrRef ref;
        uint32_t group;
    };
    std::vector<Membership> memberships;
    std::vector<uint32_t> by_name, by_id;
    for (uint32_t i = 0; i < groups.size(); ++i) {
        const PosixGroup& g = *groups[i];
        idcache::GroupRecord r{};
        r.gid = g.gid;
        auto name = strings.add(g.name);
        if (!name) return name.error();
        r.name = name.value();
        r.member_first = static_cast<uint32_t>(members.count);
        std::set<std::string_view> seen;
        for (const auto& m : g.members) {
            if (!idcache::cache_valid_name(m.data(), m.size()))
                return make_error("group " + printable(g.name) + ": invalid member name '" +
                                  printable(m) + "'");
            if (!seen.insert(m).second) continue;
            auto ref = strings.add(m);
            if (!ref) return ref.error();
            append_pod(members.bytes, ref.value());
            memberships.push_back(Membership{m, ref.value(), i});
            ++members.count;
            if (members.count > 0xFFFFFFFFull) return make_error("too many group members");
        }
        r.member_count = static_cast<uint32_t>(members.count - r.member_first);
        append_pod(records.bytes, r);
        by_name.push_back(i);
        by_id.push_back(i);
    }
    std::sort(by_id.begin(), by_id.end(),
              [&](uint32_t a, uint32_t b) { return groups[a]->gid < groups[b]->gid; });
    std::sort(memberships.begin(), memberships.end(), [](const Membership& a, const Membership& b) {
        const int c =
            idcache::cache_compare(a.name.data(), a.name.size(), b.name.data(), b.name.size());
        return c != 0 ? c < 0 : a.group < b.group;
    });
    Section membership{
        SectionId::Membership, sizeof(idcache::MembershipEntry), memberships.size(), {}};
    for (const auto& m : memberships)
        append_pod(membership.bytes, idcache::MembershipEntry{m.ref, m.group});

    std::vector<Section> sections;
    sections.push_back(std::move(records));
    sections.push_back(index_section(SectionId::NameIndex, by_name));
    sections.push_back(index_section(SectionId::IdIndex, by_id));
    sections.push_back(std::move(members));
    sections.push_back(std::move(membership));
    sections.push_back(name_hash(groups));
    sections.push_back(hash_section(SectionId::IdHash, groups.size(), [&](size_t i) {
        return idcache::cache_id_probe(groups[i]->gid);
    }));
    sections.push_back(std::move(strings).section());
    return assemble(Kind::Group, static_cast<uint32_t>(groups.size()), generation, sections);
}

Result<std::string> build_keys(const std::vector<const PosixUser*>& users, uint64_t generation)
{
    Strings strings;
    Section records{SectionId::Records, sizeof(idcache::KeysRecord), users.size(), {}};
    Section keys{SectionId::Keys, sizeof(StrRef), 0, {}};
    std::vector<uint32_t> by_name;
    for (uint32_t i = 0; i < users.size(); ++i) {
        const PosixUser& u = *users[i];
        if (u.ssh_keys.size() > idcache::kMaxKeysPerUser)
            return make_error("user " + printable(u.name) + ": more than " +
                              std::to_string(idcache::kMaxKeysPerUser) + " SSH keys");
        idcache::KeysRecord r{};
        r.uid = u.uid;
        auto name = strings.add(u.name);
        if (!name) return name.error();
        r.name = name.value();
        r.key_first = static_cast<uint32_t>(keys.count);
        for (const auto& k : u.ssh_keys) {
            if (!idcache::cache_valid_key(k.data(), k.size()))
                return make_error("user " + printable(u.name) +
                                  ": SSH key line empty, too long or with control characters");
            auto ref = strings.add(k);
            if (!ref) return ref.error();
            append_pod(keys.bytes, ref.value());
            ++keys.count;
        }
        r.key_count = static_cast<uint32_t>(u.ssh_keys.size());
        append_pod(records.bytes, r);
        by_name.push_back(i);
    }
    std::vector<Section> sections;
    sections.push_back(std::move(records));
    sections.push_back(index_section(SectionId::NameIndex, by_name));
    sections.push_back(std::move(keys));
    sections.push_back(name_hash(users));
    sections.push_back(std::move(strings).section());
    return assemble(Kind::Keys, static_cast<uint32_t>(users.size()), generation, sections);
}

bool by_name_less(std::string_view a, std::string_view b)
{
    return idcache::cache_compare(a.data(), a.size(), b.data(), b.size()) < 0;
}

// The readers trust a cache only in a directory nobody but its owner can
// write (as sshd's StrictModes); the writer refuses to publish anywhere else,
// so a cache it wrote is never one a reader must refuse.
Status check_trusted_dir(const std::string& dir, const struct stat& st)
{
    if (st.st_uid != geteuid())
        return make_error(Errc::Refused, "refusing to publish into " + dir + ": owned by uid " +
                                             std::to_string(st.st_uid) + ", not by uid " +
                                             std::to_string(geteuid()) + " (chown it)");
    if (st.st_mode & (S_IWGRP | S_IWOTH))
        return make_error(Errc::Refused, "refusing to publish into " + dir +
                                             ": writable by group or others (chmod 755 it)");
    return ok_status();
}

std::string generation_image(uint64_t counter)
{
    idcache::GenerationFile g{};
    std::memcpy(g.magic, idcache::kGenerationMagic, sizeof g.magic);
    g.endian = idcache::kCacheEndian;
    g.version = idcache::kGenerationVersion;
    g.counter = counter;
    std::string out;
    append_pod(out, g);
    return out;
}

// Adds 1 to the counter of the generation file open on `fd`, in place, with
// one atomic store through a shared mapping (what the readers' mappings see);
// false when it is not a file the readers would map, or not the writer's.
bool bump_in_place(int fd)
{
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
        st.st_size != static_cast<off_t>(sizeof(idcache::GenerationFile)) ||
        st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
        return false;
    void* map =
        mmap(nullptr, sizeof(idcache::GenerationFile), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) return false;
    const bool valid = idcache::generation_file_valid(map);
    if (valid)
        __atomic_add_fetch(reinterpret_cast<uint64_t*>(static_cast<unsigned char*>(map) +
                                                       idcache::kGenerationCounterOffset),
                           1, __ATOMIC_SEQ_CST);
    munmap(map, sizeof(idcache::GenerationFile));
    return valid;
}

// Tells the readers that the caches in `dir` were replaced (after the
// renames: a reader that sees the new counter finds the new files). The file
// is made once, by rename, and never rewritten or truncated after that: the
// readers map it, and a file truncated under a mapping faults its readers.
Status bump_generation(const std::string& dir, bool fsync)
{
    const std::string path = dir + "/" + idcache::kGenerationFile;
    const int fd = open(path.c_str(), O_RDWR | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK);
    if (fd >= 0) {
        const bool bumped = bump_in_place(fd);
        close(fd);
        if (bumped) return ok_status();
    }
    // None yet, or one the readers would not map: a new file (readers that
    // mapped an old one see the new within their recheck interval).
    return write_file_atomically(path, generation_image(1), AtomicWrite{0644, gid_t(-1), fsync});
}

}  // namespace

bool is_cache_temporary(std::string_view name)
{
    if (is_temporary_of(idcache::kGenerationFile, name)) return true;
    for (const char* file : {kPasswdCacheFile, kGroupCacheFile, kKeysCacheFile})
        if (is_temporary_of(file, name)) return true;
    return false;
}

Result<CacheImages> build_identity_cache(const std::vector<PosixUser>& users,
                                         const std::vector<PosixGroup>& groups, uint64_t generation)
{
    std::vector<const PosixUser*> u;
    u.reserve(users.size());
    for (const auto& user : users) {
        if (!idcache::cache_valid_name(user.name.data(), user.name.size()))
            return make_error("invalid user name '" + printable(user.name) + "'");
        if (user.uid == 0 || user.gid == 0)
            return make_error("user " + user.name + ": uid and primary gid must not be 0");
        if (!idcache::cache_valid_field(user.gecos.data(), user.gecos.size()) ||
            !idcache::cache_valid_field(user.home.data(), user.home.size()) ||
            !idcache::cache_valid_field(user.shell.data(), user.shell.size()))
            return make_error("user " + user.name +
                              ": gecos, home or shell too long or with ':' or control characters");
        u.push_back(&user);
    }
    std::sort(u.begin(), u.end(), [](const PosixUser* a, const PosixUser* b) {
        return by_name_less(a->name, b->name);
    });
    for (size_t i = 1; i < u.size(); ++i)
        if (u[i - 1]->name == u[i]->name) return make_error("duplicate user name " + u[i]->name);
    {
        std::vector<uint32_t> uids;
        for (const auto* p : u) uids.push_back(p->uid);
        std::sort(uids.begin(), uids.end());
        auto dup = std::adjacent_find(uids.begin(), uids.end());
        if (dup != uids.end()) return make_error("duplicate uid " + std::to_string(*dup));
    }

    std::vector<const PosixGroup*> g;
    for (const auto& group : groups) {
        if (group.gid == 0) continue;  // no POSIX gid: not a Unix group
        if (!idcache::cache_valid_name(group.name.data(), group.name.size()))
            return make_error("invalid group name '" + printable(group.name) + "'");
        g.push_back(&group);
    }
    std::sort(g.begin(), g.end(), [](const PosixGroup* a, const PosixGroup* b) {
        return by_name_less(a->name, b->name);
    });
    for (size_t i = 1; i < g.size(); ++i)
        if (g[i - 1]->name == g[i]->name) return make_error("duplicate group name " + g[i]->name);
    {
        std::vector<uint32_t> gids;
        for (const auto* p : g) gids.push_back(p->gid);
        std::sort(gids.begin(), gids.end());
        auto dup = std::adjacent_find(gids.begin(), gids.end());
        if (dup != gids.end()) return make_error("duplicate gid " + std::to_string(*dup));
    }
    if (u.size() > 0xFFFFFFFEull || g.size() > 0xFFFFFFFEull)
        return make_error("too many records for one cache");

    auto passwd = build_passwd(u, generation);
    if (!passwd) return passwd.error();
    auto group = build_group(g, generation);
    if (!group) return group.error();
    auto keys = build_keys(u, generation);
    if (!keys) return keys.error();
    return CacheImages{std::move(passwd).value(), std::move(group).value(),
                       std::move(keys).value()};
}

Result<bool> publish_identity_cache(const std::string& dir, const std::vector<PosixUser>& users,
                                    const std::vector<PosixGroup>& groups)
{
    return publish_identity_cache(dir, users, groups, CacheWriteOptions{});
}

Result<bool> publish_identity_cache(const std::string& dir, const std::vector<PosixUser>& users,
                                    const std::vector<PosixGroup>& groups,
                                    const CacheWriteOptions& options)
{
    const uint64_t generation =
        options.generation ? options.generation : static_cast<uint64_t>(std::time(nullptr));
    auto images = build_identity_cache(users, groups, generation);
    if (!images) return images.error();
    // The whole-file check: readers that serve lookups (libnss_allot) check
    // only what each lookup touches, so nothing is published that the full
    // validation of the reader would refuse.
    for (const auto& [bytes, kind] : {std::pair{&images.value().passwd, idcache::Kind::Passwd},
                                      std::pair{&images.value().group, idcache::Kind::Group},
                                      std::pair{&images.value().keys, idcache::Kind::Keys}}) {
        const char* why = nullptr;
        idcache::Snapshot* snap = idcache::snapshot_from_bytes(bytes->data(), bytes->size(), kind,
                                                               &why, idcache::Check::Full);
        if (!snap) return make_error(std::string("built an invalid cache image: ") + why);
        idcache::snapshot_unref(snap);
    }

    if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
        return make_error(Errc::Io, "creating " + dir + ": " + std::strerror(errno));
    struct stat dst;
    if (lstat(dir.c_str(), &dst) != 0 || !S_ISDIR(dst.st_mode))
        return make_error(Errc::Io, dir + " is not a directory");
    if (auto trusted = check_trusted_dir(dir, dst); !trusted) return trusted.error();
    const gid_t keys_gid =
        options.keys_gid == static_cast<gid_t>(-1) ? dst.st_gid : options.keys_gid;

    const struct {
        const char* name;
        const std::string* bytes;
        mode_t mode;
        gid_t gid;
    } files[] = {
        {kPasswdCacheFile, &images.value().passwd, 0644, static_cast<gid_t>(-1)},
        {kGroupCacheFile, &images.value().group, 0644, static_cast<gid_t>(-1)},
        {kKeysCacheFile, &images.value().keys, options.keys_mode, keys_gid},
    };
    std::string published;
    for (const auto& f : files) {
        const AtomicWrite how{f.mode, f.gid, options.fsync};
        if (auto r = write_file_atomically(dir + "/" + f.name, *f.bytes, how); !r) {
            const std::string so_far = published.empty() ? std::string(" (no cache replaced)")
                                                         : " (already replaced:" + published + ")";
            if (!published.empty()) bump_generation(dir, options.fsync);
            return Error(r.error().code, r.error().message + so_far);
        }
        published += " " + std::string(f.name);
    }
    if (options.fsync) {
        // Make the renames themselves durable.
        const int dfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd >= 0) {
            fsync(dfd);
            close(dfd);
        }
    }
    if (auto r = bump_generation(dir, options.fsync); !r)
        return Error(r.error().code, r.error().message + " (caches replaced; readers see them " +
                                         "within their recheck interval)");
    return true;
}

}  // namespace allot
