// identity_cache_fuzz.cpp - libFuzzer target for the identity cache reader
// (lib/identity_cache_reader.cpp), the code libnss_allot runs inside every
// process on a node and allot-keys and pam_allot run under sshd.
// fuzz-sources: lib/identity_cache_reader.cpp
//
// The first input byte picks the cache kind (and, with its high bit, whether
// the image's checksum is recomputed first, so mutations reach the structural
// checks behind it instead of stopping at the checksum); the rest is the file
// image.
// Whatever the bytes, the reader must validate or refuse them without a
// crash, a read outside the image or a leak, and every lookup on an accepted
// image (by name, by id, enumeration, memberships, keys) must stay inside it:
// AddressSanitizer checks each byte the views point at. The same bytes are
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

uint64_t walk_users(const Snapshot* s)
{
    uint64_t sum = 0;
    UserView u;
    for (uint32_t i = 0; user_at(s, i, &u); ++i) {
        sum += touch(u.name) + touch(u.gecos) + touch(u.home) + touch(u.shell);
        UserView again;
        if (!user_by_name(s, u.name.data, u.name.size, &again) || !user_by_uid(s, u.uid, &again))
            std::abort();  // an accepted image answers for each of its records
    }
    return sum;
}

uint64_t walk_groups(const Snapshot* s)
{
    uint64_t sum = 0;
    GroupView g;
    for (uint32_t i = 0; group_at(s, i, &g); ++i) {
        sum += touch(g.name);
        for (uint32_t m = 0; m < g.member_count; ++m) {
            const Str member = group_member(g, m);
            sum += touch(member);
            groups_of_member(s, member.data, member.size, count_gid, &sum);
        }
        GroupView again;
        if (!group_by_name(s, g.name.data, g.name.size, &again) || !group_by_gid(s, g.gid, &again))
            std::abort();
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
        sum += touch(k.name);
        for (uint32_t i = 0; i < k.key_count; ++i) sum += touch(keys_line(k, i));
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
    if ((data[0] & 0x80) && image.size() >= sizeof(FileHeader)) {
        const uint64_t sum =
            cache_checksum(image.data() + kChecksumStart, image.size() - kChecksumStart);
        std::memcpy(image.data() + offsetof(FileHeader, checksum), &sum, sizeof sum);
    }
    const char* why = nullptr;
    Snapshot* s = snapshot_from_bytes(image.data(), image.size(), kind, &why);
    if (s) {
        volatile uint64_t sum = snapshot_generation(s);
        switch (kind) {
            case Kind::Passwd: sum += walk_users(s); break;
            case Kind::Group: sum += walk_groups(s); break;
            case Kind::Keys: sum += walk_keys(s, data + 1, size - 1); break;
        }
        (void)sum;
        snapshot_unref(s);
    } else if (!why) {
        std::abort();  // every refusal says why
    }
    read_as_local_file(data + 1, size - 1);
    return 0;
}
