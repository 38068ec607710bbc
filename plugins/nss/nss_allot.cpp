// nss_allot.cpp - libnss_allot.so.2: passwd and group from allot's local caches.
//
// glibc loads this into every process that resolves a user or group
// ("passwd: files allot" in /etc/nsswitch.conf). It answers from the caches
// allot-syncd publishes in the cache directory (passwd.cache, group.cache),
// mmap'ed and validated once per file version by the reader in
// lib/identity_cache_reader.cpp, then binary-searched: no network, no config
// parsing, no allocation per lookup except the caller-owned group array of
// initgroups_dyn.
//
// The cache directory is fixed at build time (ALLOT_NSS_CACHE_DIR, default
// /var/lib/allot, the default of identity.cache_dir). It is deliberately not
// taken from the environment (a setuid program would trust its caller's
// choice of users) nor from allot.yaml (parsing YAML inside every `ls -l` is
// too heavy, and libyaml has no business in every process).
//
// Built with -fno-exceptions -fno-rtti and without libstdc++ at run time:
// nothing here can throw, so the entry points need no abi_guard; each is
// noexcept all the same. Buffer too small → ERANGE + NSS_STATUS_TRYAGAIN (glibc
// retries with a bigger one); cache missing or invalid → NSS_STATUS_UNAVAIL
// (the next source in nsswitch.conf answers); not in the cache → NOTFOUND.
// Every user's pw_passwd is "*" so pam_unix's account check does not look for
// a shadow entry (there is none) and deny.
#include <errno.h>
#include <grp.h>
#include <nss.h>
#include <pthread.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>

#include "allot/abi_guard.hpp"
#include "allot/identity_cache_reader.hpp"

#ifndef ALLOT_NSS_CACHE_DIR
#define ALLOT_NSS_CACHE_DIR "/var/lib/allot"
#endif

namespace {

using namespace allot::idcache;

CacheHandle g_passwd = ALLOT_CACHE_HANDLE_INIT(ALLOT_NSS_CACHE_DIR "/passwd.cache", Kind::Passwd);
CacheHandle g_group = ALLOT_CACHE_HANDLE_INIT(ALLOT_NSS_CACHE_DIR "/group.cache", Kind::Group);

// Enumeration cursor (glibc serialises set/get/endXXent per database, the
// mutex covers programs that call the module directly).
struct Cursor {
    pthread_mutex_t mu;
    Snapshot* snap;
    uint32_t next;
};
Cursor g_pwent = {PTHREAD_MUTEX_INITIALIZER, nullptr, 0};
Cursor g_grent = {PTHREAD_MUTEX_INITIALIZER, nullptr, 0};

// Carves strings out of the caller's buffer.
class Buffer {
public:
    Buffer(char* buf, size_t len) : p_(buf), left_(len) {}
    char* str(Str s)
    {
        if (!p_ || left_ < size_t(s.size) + 1) return fail();
        char* out = p_;
        if (s.size) memcpy(out, s.data, s.size);
        out[s.size] = '\0';
        p_ += s.size + 1;
        left_ -= s.size + 1;
        return out;
    }
    char** ptrs(size_t n)
    {
        const size_t pad =
            (alignof(char*) - reinterpret_cast<uintptr_t>(p_) % alignof(char*)) % alignof(char*);
        if (!p_ || left_ < pad || (left_ - pad) / sizeof(char*) < n) return nullptr;
        char** out = reinterpret_cast<char**>(p_ + pad);
        p_ += pad + n * sizeof(char*);
        left_ -= pad + n * sizeof(char*);
        return out;
    }

private:
    char* fail()
    {
        p_ = nullptr;
        return nullptr;
    }
    char* p_;
    size_t left_;
};

const Str kStar = {"*", 1};

nss_status fill_passwd(const UserView& u, passwd* pw, char* buf, size_t len, int* errnop)
{
    Buffer b(buf, len);
    pw->pw_name = b.str(u.name);
    pw->pw_passwd = b.str(kStar);
    pw->pw_gecos = b.str(u.gecos);
    pw->pw_dir = b.str(u.home);
    pw->pw_shell = b.str(u.shell);
    if (!pw->pw_name || !pw->pw_passwd || !pw->pw_gecos || !pw->pw_dir || !pw->pw_shell) {
        *errnop = ERANGE;
        return NSS_STATUS_TRYAGAIN;
    }
    pw->pw_uid = u.uid;
    pw->pw_gid = u.gid;
    return NSS_STATUS_SUCCESS;
}

nss_status fill_group(const GroupView& g, group* gr, char* buf, size_t len, int* errnop)
{
    Buffer b(buf, len);
    char** mem = b.ptrs(size_t(g.member_count) + 1);
    gr->gr_name = mem ? b.str(g.name) : nullptr;
    gr->gr_passwd = gr->gr_name ? b.str(kStar) : nullptr;
    if (!gr->gr_passwd) {
        *errnop = ERANGE;
        return NSS_STATUS_TRYAGAIN;
    }
    for (uint32_t i = 0; i < g.member_count; ++i) {
        mem[i] = b.str(group_member(g, i));
        if (!mem[i]) {
            *errnop = ERANGE;
            return NSS_STATUS_TRYAGAIN;
        }
    }
    mem[g.member_count] = nullptr;
    gr->gr_mem = mem;
    gr->gr_gid = g.gid;
    return NSS_STATUS_SUCCESS;
}

nss_status unavailable(int* errnop)
{
    *errnop = ENOENT;
    return NSS_STATUS_UNAVAIL;
}

nss_status not_found(int* errnop)
{
    *errnop = ENOENT;
    return NSS_STATUS_NOTFOUND;
}

// Runs `body(snapshot)` on a referenced snapshot of `handle`.
template <typename Body>
nss_status with_cache(CacheHandle* handle, int* errnop, Body body)
{
    Snapshot* snap = cache_acquire(handle, nullptr);
    if (!snap) return unavailable(errnop);
    const nss_status rc = body(snap);
    snapshot_unref(snap);
    return rc;
}

void cursor_set(Cursor& c, CacheHandle* handle)
{
    pthread_mutex_lock(&c.mu);
    snapshot_unref(c.snap);
    c.snap = cache_acquire(handle, nullptr);
    c.next = 0;
    pthread_mutex_unlock(&c.mu);
}

void cursor_end(Cursor& c)
{
    pthread_mutex_lock(&c.mu);
    snapshot_unref(c.snap);
    c.snap = nullptr;
    c.next = 0;
    pthread_mutex_unlock(&c.mu);
}

// Fills the entry at the cursor; advances only on success, so a TRYAGAIN
// (buffer too small) is retried on the same entry.
template <typename Fill>
nss_status cursor_get(Cursor& c, CacheHandle* handle, int* errnop, Fill fill)
{
    pthread_mutex_lock(&c.mu);
    if (!c.snap) {
        c.snap = cache_acquire(handle, nullptr);
        c.next = 0;
    }
    nss_status rc;
    if (!c.snap) {
        rc = unavailable(errnop);
    } else if (c.next >= snapshot_count(c.snap)) {
        rc = not_found(errnop);
    } else {
        rc = fill(c.snap, c.next);
        if (rc == NSS_STATUS_SUCCESS) ++c.next;
    }
    pthread_mutex_unlock(&c.mu);
    return rc;
}

struct GroupList {
    gid_t skip;
    long* start;
    long* size;
    gid_t** groups;
    long limit;
    bool out_of_memory;
};

bool add_gid(void* ctx, uint32_t gid)
{
    auto& l = *static_cast<GroupList*>(ctx);
    if (gid == l.skip) return true;
    for (long i = 0; i < *l.start; ++i)
        if ((*l.groups)[i] == gid) return true;
    if (*l.start >= *l.size) {
        if (l.limit > 0 && *l.size >= l.limit) return false;  // full: glibc's contract
        long grow = *l.size > 0 ? *l.size * 2 : 16;
        if (l.limit > 0 && grow > l.limit) grow = l.limit;
        auto* bigger = static_cast<gid_t*>(realloc(*l.groups, size_t(grow) * sizeof(gid_t)));
        if (!bigger) {
            l.out_of_memory = true;
            return false;
        }
        *l.groups = bigger;
        *l.size = grow;
    }
    (*l.groups)[(*l.start)++] = gid;
    return true;
}

// Runs when the module is unloaded (glibc's __libc_freeres under valgrind,
// or a dlclose): drop the mappings so nothing is left behind.
__attribute__((destructor)) void release_caches()
{
    cursor_end(g_pwent);
    cursor_end(g_grent);
    cache_reset(&g_passwd);
    cache_reset(&g_group);
}

}  // namespace

extern "C" {

ALLOT_EXPORT nss_status _nss_allot_getpwnam_r(const char* name, passwd* pw, char* buf, size_t len,
                                              int* errnop) noexcept
{
    if (!name) return not_found(errnop);
    return with_cache(&g_passwd, errnop, [&](Snapshot* s) {
        UserView u;
        if (!user_by_name(s, name, strlen(name), &u)) return not_found(errnop);
        return fill_passwd(u, pw, buf, len, errnop);
    });
}

ALLOT_EXPORT nss_status _nss_allot_getpwuid_r(uid_t uid, passwd* pw, char* buf, size_t len,
                                              int* errnop) noexcept
{
    return with_cache(&g_passwd, errnop, [&](Snapshot* s) {
        UserView u;
        if (!user_by_uid(s, uid, &u)) return not_found(errnop);
        return fill_passwd(u, pw, buf, len, errnop);
    });
}

ALLOT_EXPORT nss_status _nss_allot_setpwent(int) noexcept
{
    cursor_set(g_pwent, &g_passwd);
    return NSS_STATUS_SUCCESS;
}

ALLOT_EXPORT nss_status _nss_allot_endpwent(void) noexcept
{
    cursor_end(g_pwent);
    return NSS_STATUS_SUCCESS;
}

ALLOT_EXPORT nss_status _nss_allot_getpwent_r(passwd* pw, char* buf, size_t len,
                                              int* errnop) noexcept
{
    return cursor_get(g_pwent, &g_passwd, errnop, [&](Snapshot* s, uint32_t i) {
        UserView u;
        if (!user_at(s, i, &u)) return not_found(errnop);
        return fill_passwd(u, pw, buf, len, errnop);
    });
}

ALLOT_EXPORT nss_status _nss_allot_getgrnam_r(const char* name, group* gr, char* buf, size_t len,
                                              int* errnop) noexcept
{
    if (!name) return not_found(errnop);
    return with_cache(&g_group, errnop, [&](Snapshot* s) {
        GroupView g;
        if (!group_by_name(s, name, strlen(name), &g)) return not_found(errnop);
        return fill_group(g, gr, buf, len, errnop);
    });
}

ALLOT_EXPORT nss_status _nss_allot_getgrgid_r(gid_t gid, group* gr, char* buf, size_t len,
                                              int* errnop) noexcept
{
    return with_cache(&g_group, errnop, [&](Snapshot* s) {
        GroupView g;
        if (!group_by_gid(s, gid, &g)) return not_found(errnop);
        return fill_group(g, gr, buf, len, errnop);
    });
}

ALLOT_EXPORT nss_status _nss_allot_setgrent(int) noexcept
{
    cursor_set(g_grent, &g_group);
    return NSS_STATUS_SUCCESS;
}

ALLOT_EXPORT nss_status _nss_allot_endgrent(void) noexcept
{
    cursor_end(g_grent);
    return NSS_STATUS_SUCCESS;
}

ALLOT_EXPORT nss_status _nss_allot_getgrent_r(group* gr, char* buf, size_t len,
                                              int* errnop) noexcept
{
    return cursor_get(g_grent, &g_group, errnop, [&](Snapshot* s, uint32_t i) {
        GroupView g;
        if (!group_at(s, i, &g)) return not_found(errnop);
        return fill_group(g, gr, buf, len, errnop);
    });
}

// Adds the gids of the groups listing `user` to *groupsp (growing it with
// realloc as glibc expects, never past `limit` when limit > 0), skipping
// `skip` (the user's primary group, which the caller already has).
ALLOT_EXPORT nss_status _nss_allot_initgroups_dyn(const char* user, gid_t skip, long* start,
                                                  long* size, gid_t** groupsp, long limit,
                                                  int* errnop) noexcept
{
    if (!user || !start || !size || !groupsp) return not_found(errnop);
    return with_cache(&g_group, errnop, [&](Snapshot* s) {
        GroupList l{skip, start, size, groupsp, limit, false};
        const uint32_t n = groups_of_member(s, user, strlen(user), add_gid, &l);
        if (l.out_of_memory) {
            *errnop = ENOMEM;
            return NSS_STATUS_TRYAGAIN;
        }
        return n ? NSS_STATUS_SUCCESS : not_found(errnop);
    });
}

}  // extern "C"
