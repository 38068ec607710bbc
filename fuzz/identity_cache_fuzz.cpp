// identity_cache_fuzz.cpp - libFuzzer target for the identity cache reader
// (lib/identity_cache_reader.cpp), the code libnss_allot runs inside every
// process on a node and allot-keys and pam_allot run under sshd.
// fuzz-sources: lib/identity_cache_reader.cpp
//
// The first input byte picks the cache kind (and, with its high bit, whether
// the image's checksums are recomputed first, so mutations reach the structural
// checks behind them instead of stopping at a checksum); the rest is the file
// image. Each image is opened twice: with Check::Full (the writer's and
// allot-keys' check) and with Check::Lookup (libnss_allot's: header, header
// checksum and section bounds, the rest checked by each lookup).
// Whatever the bytes, the reader must validate or refuse them without a
// crash, a read outside the image or a leak, and every lookup on an accepted
// image (by name, by id, enumeration, memberships, keys) must stay inside it:
// AddressSanitizer checks each byte the views point at. In Lookup mode every
// record a lookup returns must pass the full record checks, and an image the
// full check accepts must answer the same in both modes. The same bytes are
// also read as /etc/passwd-format text by the reader's view of the node's own
// accounts (LocalFile), which must never misparse or overrun.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "allot/identity_cache_reader.hpp"

namespace {

using namespace allot::idcache;

// Touches every byte of a view, so ASan sees any view outside the image.
uint64_t touch(Str s)
{
    uint64_t sum = 0;
    for (uint32_t i = 0; i < s.size; ++i) sum += static_cast<unsigned char>(s.data[i]);
    return sum;
}

bool count_gid(void* ctx, uint32_t gid, Str name)
{
    *static_cast<uint64_t*>(ctx) += gid + touch(name);
    return true;
}

bool valid_name(Str s)
{
    return cache_valid_name(s.data, s.size);
}
bool valid_field(Str s)
{
    return cache_valid_field(s.data, s.size);
}

// A returned user passes the record checks of the full validation.
uint64_t check_user(const UserView& u)
{
    if (!valid_name(u.name) || !valid_field(u.gecos) || !valid_field(u.home) ||
        !valid_field(u.shell) || u.uid == 0 || u.gid == 0)
        std::abort();
    return touch(u.name) + touch(u.gecos) + touch(u.home) + touch(u.shell);
}
uint64_t check_group(const GroupView& g)
{
    if (!valid_name(g.name) || g.gid == 0) std::abort();
    uint64_t sum = touch(g.name);
    for (uint32_t m = 0; m < g.member_count; ++m) {
        if (!valid_name(group_member(g, m))) std::abort();
        sum += touch(group_member(g, m));
    }
    return sum;
}
bool check_gid(void* ctx, uint32_t gid, Str name)
{
    if (gid == 0 || !valid_name(name)) std::abort();
    return count_gid(ctx, gid, name);
}

// `full`: the image passed Check::Full, so each record must be found by name
// and id. Otherwise lookups may refuse anything, but what they return is valid.
uint64_t walk_users(const Snapshot* s, bool full)
{
    uint64_t sum = 0;
    UserView u;
    for (uint32_t i = 0; i < snapshot_count(s); ++i) {
        if (!user_at(s, i, &u)) {
            if (full) std::abort();
            continue;
        }
        sum += check_user(u);
        UserView again;
        const bool by_name = user_by_name(s, u.name.data, u.name.size, &again);
        if (by_name) sum += check_user(again);
        const bool by_uid = user_by_uid(s, u.uid, &again);
        if (by_uid) sum += check_user(again);
        if (full && (!by_name || !by_uid))
            std::abort();  // an accepted image answers for each of its records
    }
    return sum;
}

uint64_t walk_groups(const Snapshot* s, bool full)
{
    uint64_t sum = 0;
    GroupView g;
    for (uint32_t i = 0; i < snapshot_count(s); ++i) {
        if (!group_at(s, i, &g)) {
            if (full) std::abort();
            continue;
        }
        sum += check_group(g);
        for (uint32_t m = 0; m < g.member_count; ++m) {
            const Str member = group_member(g, m);
            groups_of_member(s, member.data, member.size, check_gid, &sum);
        }
        GroupView again;
        const bool by_name = group_by_name(s, g.name.data, g.name.size, &again);
        if (by_name) sum += check_group(again);
        const bool by_gid = group_by_gid(s, g.gid, &again);
        if (by_gid) sum += check_group(again);
        if (full && (!by_name || !by_gid)) std::abort();
    }
    return sum;
}

// Lookups of names and ids taken from the input itself, found or not.
uint64_t probe(const Snapshot* s, Kind kind, const uint8_t* data, size_t size)
{
    uint64_t sum = 0;
    for (size_t n = 1; n <= size && n <= 16; ++n) {
        const auto* name = reinterpret_cast<const char*>(data + size - n);
        uint32_t id = 0;
        std::memcpy(&id, data + size - n, n < 4 ? n : 4);
        UserView u;
        GroupView g;
        if (kind == Kind::Passwd) {
            if (user_by_name(s, name, n, &u)) sum += check_user(u);
            if (user_by_uid(s, id, &u)) sum += check_user(u);
        } else if (kind == Kind::Group) {
            if (group_by_name(s, name, n, &g)) sum += check_group(g);
            if (group_by_gid(s, id, &g)) sum += check_group(g);
            groups_of_member(s, name, n, check_gid, &sum);
        }
    }
    return sum;
}

uint64_t walk_keys(const Snapshot* s, const uint8_t* data, size_t size)
{
    // Keys files have no enumeration: look up every prefix-sized name of the input.
    uint64_t sum = 0;
    KeysView k;
    for (size_t n = 1; n <= size && n <= 64; ++n) {
        if (!keys_by_name(s, reinterpret_cast<const char*>(data), n, &k)) continue;
        if (!valid_name(k.name) || k.key_count > kMaxKeysPerUser) std::abort();
        sum += touch(k.name);
        for (uint32_t i = 0; i < k.key_count; ++i) {
            const Str line = keys_line(k, i);
            if (!cache_valid_key(line.data, line.size)) std::abort();
            sum += touch(line);
        }
    }
    return sum;
}

// The same bytes as a passwd(5)/group(5) file.
void read_as_local_file(const uint8_t* data, size_t size)
{
    const int fd = memfd_create("allot-fuzz-passwd", MFD_CLOEXEC);
    if (fd < 0) return;
    if (write(fd, data, size) == static_cast<ssize_t>(size)) {
        char path[64];
        std::snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        LocalFile f = ALLOT_LOCAL_FILE_INIT(path);
        if (const LocalTable* t = local_acquire(&f)) {
            local_has_name(t, "root", 4);
            local_has_id(t, 0);
            if (size) local_has_name(t, reinterpret_cast<const char*>(data), size > 32 ? 32 : size);
            local_release(t);
        }
        local_reset(&f);
    }
    close(fd);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size == 0) return 0;
    const Kind kind = static_cast<Kind>(1 + (data[0] & 0x7f) % 3);
    std::vector<uint8_t> image(data + 1, data + size);
    if (data[0] & 0x80) cache_seal(image.data(), image.size());
    bool full_ok = false;
    for (const Check check : {Check::Full, Check::Lookup}) {
        const char* why = nullptr;
        Snapshot* s = snapshot_from_bytes(image.data(), image.size(), kind, &why, check);
        if (!s) {
            if (!why) std::abort();     // every refusal says why
            if (full_ok) std::abort();  // what the full check accepts, Lookup accepts
            continue;
        }
        const bool full = check == Check::Full || full_ok;
        if (check == Check::Full) full_ok = true;
        volatile uint64_t sum = snapshot_generation(s);
        switch (kind) {
            case Kind::Passwd:
                sum += walk_users(s, full) + probe(s, kind, data + 1, size - 1);
                break;
            case Kind::Group:
                sum += walk_groups(s, full) + probe(s, kind, data + 1, size - 1);
                break;
            case Kind::Keys: sum += walk_keys(s, data + 1, size - 1); break;
        }
        (void)sum;
        snapshot_unref(s);
    }
    read_as_local_file(data + 1, size - 1);
    return 0;
}
