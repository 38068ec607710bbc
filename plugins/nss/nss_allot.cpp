// nss_allot.cpp - libnss_allot.so.2: passwd and group from allot's local caches.
//
// glibc loads this into every process that resolves a user or group
// ("passwd: files allot" in /etc/nsswitch.conf). It answers from the caches
// allot-syncd publishes in the cache directory (passwd.cache, group.cache),
// mmap'ed with its header checked once per file version by the reader in
// lib/identity_cache_reader.cpp, then looked up by hash (each lookup checks what
// it follows and validates the record it returns): no network, no config
// parsing, no allocation per lookup except the caller-owned group array of
// initgroups_dyn.
//
// The cache directory is fixed at build time (ALLOT_NSS_CACHE_DIR, default
// /var/lib/allot, the default of identity.cache_dir). It is deliberately not
// taken from the environment (a setuid program would trust its caller's
// choice of users) nor from allot.yaml (parsing YAML inside every `ls -l` is
// too heavy, and libyaml has no business in every process).
//
// What is never answered, whatever the caches say:
//   - a cache whose file or any directory above it is not owned by root (or
//     ALLOT_NSS_CACHE_OWNER) or is writable by group or others: the module
//     then answers nothing (UNAVAIL) and logs it once per process;
//   - a user whose name is a local account or group (/etc/passwd,
//     /etc/group), whose uid a local account holds, or whose primary gid is a
//     local group's; a group whose name is a local group or account or whose
//     gid a local group holds; ids 0 and 65534 always. So a directory user
//     named `root` or a group named `sudo` never reaches a process, in any
//     order of nsswitch.conf;
//   - a local account as a member of an allot group (gr_mem, initgroups).
// When /etc/passwd or /etc/group cannot be read, nothing is answered either.
//
// Built with -fno-exceptions -fno-rtti and without libstdc++ at run time:
// nothing here can throw, so the entry points need no abi_guard; each is
// noexcept all the same. Buffer too small → ERANGE + NSS_STATUS_TRYAGAIN (glibc
// retries with a bigger one); cache missing, untrusted or invalid →
// NSS_STATUS_UNAVAIL (the next source in nsswitch.conf answers); not in the
// cache, or refused above → NOTFOUND. Every user's pw_passwd is "*" so
// pam_unix's account check does not look for a shadow entry (there is none)
// and deny.
#include <errno.h>
#include <grp.h>
#include <nss.h>
#include <pthread.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "allot/abi_guard.hpp"
#include "allot/identity_cache_reader.hpp"

#ifndef ALLOT_NSS_CACHE_DIR
#define ALLOT_NSS_CACHE_DIR "/var/lib/allot"
#endif
// Who besides root may own the caches (a uid; build with
// `make nss_cache_owner=UID`). Unit tests pass their own euid.
#ifndef ALLOT_NSS_CACHE_OWNER
#define ALLOT_NSS_CACHE_OWNER ::allot::idcache::kNoOwner
#endif
// The last directory checked above the caches: "/" in the installed module; a
// unit test confines the walk to its build tree (its /tmp parent is 1777).
#ifndef ALLOT_NSS_TRUST_TOP
#define ALLOT_NSS_TRUST_TOP nullptr
#endif
// How stale a steady lookup may be about what the writer's generation counter
// cannot tell (identity_cache_reader.hpp); unit tests shorten it.
#ifndef ALLOT_NSS_RECHECK_NS
#define ALLOT_NSS_RECHECK_NS ::allot::idcache::kNssRecheckNs
#endif
#ifndef ALLOT_NSS_PASSWD_FILE
#define ALLOT_NSS_PASSWD_FILE "/etc/passwd"
#endif
#ifndef ALLOT_NSS_GROUP_FILE
#define ALLOT_NSS_GROUP_FILE "/etc/group"
#endif

namespace {

using namespace allot::idcache;

// Without openlog: the host program's ident and facility stay its own.
void log_refusal(const char* where, const char* why)
{
    syslog(LOG_AUTHPRIV | LOG_WARNING, "libnss_allot: not using the identity cache: %s: %s", where,
           why);
}

// Steady lookups make no system call and take no lock: the writer bumps a
// counter in a mapped file beside the caches on every publish, so a replaced
// cache is seen by the next lookup, and what no counter tells (/etc/passwd and
// /etc/group, changed by useradd; a cache replaced by hand) is stat()ed at
// most once per ALLOT_NSS_RECHECK_NS (1 s; nscd's default is 600 s). Without the
// generation file (a cache written by an older writer) every lookup stat()s
// the cache, as before. See identity_cache_reader.hpp.
CacheHandle g_passwd = ALLOT_CACHE_HANDLE_INIT_RECHECK(
    ALLOT_NSS_CACHE_DIR "/passwd.cache", Kind::Passwd,
    (TrustPolicy{ALLOT_NSS_CACHE_OWNER, ALLOT_NSS_TRUST_TOP}), log_refusal, ALLOT_NSS_RECHECK_NS);
CacheHandle g_group = ALLOT_CACHE_HANDLE_INIT_RECHECK(
    ALLOT_NSS_CACHE_DIR "/group.cache", Kind::Group,
    (TrustPolicy{ALLOT_NSS_CACHE_OWNER, ALLOT_NSS_TRUST_TOP}), log_refusal, ALLOT_NSS_RECHECK_NS);
LocalFile g_etc_passwd = ALLOT_LOCAL_FILE_INIT_RECHECK(ALLOT_NSS_PASSWD_FILE, ALLOT_NSS_RECHECK_NS);
LocalFile g_etc_group = ALLOT_LOCAL_FILE_INIT_RECHECK(ALLOT_NSS_GROUP_FILE, ALLOT_NSS_RECHECK_NS);

// The node's own accounts and groups for one lookup (or one enumeration).
struct Local {
    const LocalTable* passwd;
    const LocalTable* group;
    bool known() const { return passwd && group; }
};
Local local_acquire_both()
{
    return Local{local_acquire(&g_etc_passwd), local_acquire(&g_etc_group)};
}
void local_release_both(Local& l)
{
    local_release(l.passwd);
    local_release(l.group);
    l = Local{nullptr, nullptr};
}

// 0 (root) and 65534 (nobody, kNobodyId of identity_validate.hpp, which this
// module cannot include: it holds std containers).
bool reserved_id(uint32_t id)
{
    return id == 0 || id == 65534;
}
bool local_name(const Local& l, Str name)
{
    return local_has_name(l.passwd, name.data, name.size) ||
           local_has_name(l.group, name.data, name.size);
}
// Whether allot may answer for this user (see the file comment).
bool user_allowed(const Local& l, const UserView& u)
{
    return !reserved_id(u.uid) && !reserved_id(u.gid) && !local_name(l, u.name) &&
           !local_has_id(l.passwd, u.uid) && !local_has_id(l.group, u.gid);
}
bool group_allowed(const Local& l, const GroupView& g)
{
    return !reserved_id(g.gid) && !local_name(l, g.name) && !local_has_id(l.group, g.gid);
}
bool member_allowed(const Local& l, Str member)
{
    return !local_has_name(l.passwd, member.data, member.size);
}

// Enumeration cursor (glibc serialises set/get/endXXent per database, the
// mutex covers programs that call the module directly). It holds the cache
// and the local files it started on.
struct Cursor {
    pthread_mutex_t mu;
    Snapshot* snap;
    Local local;
    uint32_t next;
};
Cursor g_pwent = {PTHREAD_MUTEX_INITIALIZER, nullptr, {nullptr, nullptr}, 0};
Cursor g_grent = {PTHREAD_MUTEX_INITIALIZER, nullptr, {nullptr, nullptr}, 0};
// Returned by a cursor's fill for an entry that is not answered: the cursor
// moves on to the next one.
constexpr nss_status kSkip = NSS_STATUS_RETURN;

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

// gr_mem lists the group's members that are not local accounts. Room for a pointer per
// member is taken up front, so each member is checked once (a local member's pointer is
// left unused: 8 bytes of the caller's buffer).
nss_status fill_group(const Local& l, const GroupView& g, group* gr, char* buf, size_t len,
                      int* errnop)
{
    Buffer b(buf, len);
    char** mem = b.ptrs(size_t(g.member_count) + 1);
    gr->gr_name = mem ? b.str(g.name) : nullptr;
    gr->gr_passwd = gr->gr_name ? b.str(kStar) : nullptr;
    if (!gr->gr_passwd) {
        *errnop = ERANGE;
        return NSS_STATUS_TRYAGAIN;
    }
    size_t n = 0;
    for (uint32_t i = 0; i < g.member_count; ++i) {
        const Str m = group_member(g, i);
        if (!member_allowed(l, m)) continue;
        mem[n] = b.str(m);
        if (!mem[n++]) {
            *errnop = ERANGE;
            return NSS_STATUS_TRYAGAIN;
        }
    }
    mem[n] = nullptr;
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

// Runs `body(snapshot, local)` on a referenced snapshot of `handle` and the
// node's own accounts; UNAVAIL when either cannot be trusted or read.
template <typename Body>
nss_status with_cache(CacheHandle* handle, int* errnop, Body body)
{
    Local local = local_acquire_both();
    Snapshot* snap = local.known() ? cache_acquire(handle, nullptr) : nullptr;
    const nss_status rc = snap ? body(snap, local) : unavailable(errnop);
    snapshot_unref(snap);
    local_release_both(local);
    return rc;
}

void cursor_release(Cursor& c)
{
    snapshot_unref(c.snap);
    c.snap = nullptr;
    local_release_both(c.local);
    c.next = 0;
}

// Takes the cache and the local files for a new enumeration (all or nothing).
void cursor_open(Cursor& c, CacheHandle* handle)
{
    c.local = local_acquire_both();
    c.snap = c.local.known() ? cache_acquire(handle, nullptr) : nullptr;
    if (!c.snap) cursor_release(c);
    c.next = 0;
}

void cursor_set(Cursor& c, CacheHandle* handle)
{
    pthread_mutex_lock(&c.mu);
    cursor_release(c);
    cursor_open(c, handle);
    pthread_mutex_unlock(&c.mu);
}

void cursor_end(Cursor& c)
{
    pthread_mutex_lock(&c.mu);
    cursor_release(c);
    pthread_mutex_unlock(&c.mu);
}

// Fills the next answered entry at the cursor; advances only on success (or
// past a skipped entry), so a TRYAGAIN (buffer too small) is retried on the
// same entry.
template <typename Fill>
nss_status cursor_get(Cursor& c, CacheHandle* handle, int* errnop, Fill fill)
{
    pthread_mutex_lock(&c.mu);
    if (!c.snap) cursor_open(c, handle);
    nss_status rc;
    if (!c.snap) {
        rc = unavailable(errnop);
    } else {
        rc = kSkip;
        while (rc == kSkip && c.next < snapshot_count(c.snap)) {
            rc = fill(c.snap, c.local, c.next);
            if (rc == NSS_STATUS_SUCCESS || rc == kSkip) ++c.next;
        }
        if (rc == kSkip) rc = not_found(errnop);
    }
    pthread_mutex_unlock(&c.mu);
    return rc;
}

struct GroupList {
    const Local* local;
    gid_t skip;
    long* start;
    long* size;
    gid_t** groups;
    long limit;
    long found;  // groups of the user that allot answers for
    bool out_of_memory;
};

bool add_gid(void* ctx, uint32_t gid, Str name)
{
    auto& l = *static_cast<GroupList*>(ctx);
    if (reserved_id(gid) || local_name(*l.local, name) || local_has_id(l.local->group, gid))
        return true;
    ++l.found;
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

// A fork() copies the count of steady readers that were, in other threads,
// taking a reference at that instant; the child has no such threads.
void forget_readers_in_child()
{
    cache_atfork_child(&g_passwd);
    cache_atfork_child(&g_group);
    local_atfork_child(&g_etc_passwd);
    local_atfork_child(&g_etc_group);
}

__attribute__((constructor)) void register_fork_handler()
{
    pthread_atfork(nullptr, nullptr, forget_readers_in_child);
}

// Runs when the module is unloaded (glibc's __libc_freeres under valgrind,
// or a dlclose): drop the mappings so nothing is left behind.
__attribute__((destructor)) void release_caches()
{
    cursor_end(g_pwent);
    cursor_end(g_grent);
    cache_reset(&g_passwd);
    cache_reset(&g_group);
    local_reset(&g_etc_passwd);
    local_reset(&g_etc_group);
}

// Answers a user found in the cache, unless it is not allot's to answer.
nss_status answer_user(const Local& l, const UserView& u, passwd* pw, char* buf, size_t len,
                       int* errnop)
{
    if (!user_allowed(l, u)) return not_found(errnop);
    return fill_passwd(u, pw, buf, len, errnop);
}

nss_status answer_group(const Local& l, const GroupView& g, group* gr, char* buf, size_t len,
                        int* errnop)
{
    if (!group_allowed(l, g)) return not_found(errnop);
    return fill_group(l, g, gr, buf, len, errnop);
}

}  // namespace

extern "C" {

ALLOT_EXPORT nss_status _nss_allot_getpwnam_r(const char* name, passwd* pw, char* buf, size_t len,
                                              int* errnop) noexcept
{
    if (!name) return not_found(errnop);
    return with_cache(&g_passwd, errnop, [&](Snapshot* s, const Local& l) {
        UserView u;
        if (!user_by_name(s, name, strlen(name), &u)) return not_found(errnop);
        return answer_user(l, u, pw, buf, len, errnop);
    });
}

ALLOT_EXPORT nss_status _nss_allot_getpwuid_r(uid_t uid, passwd* pw, char* buf, size_t len,
                                              int* errnop) noexcept
{
    return with_cache(&g_passwd, errnop, [&](Snapshot* s, const Local& l) {
        UserView u;
        if (!user_by_uid(s, uid, &u)) return not_found(errnop);
        return answer_user(l, u, pw, buf, len, errnop);
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
    return cursor_get(g_pwent, &g_passwd, errnop, [&](Snapshot* s, const Local& l, uint32_t i) {
        UserView u;
        // An invalid record is skipped; the enumeration goes on.
        if (!user_at(s, i, &u)) return i < snapshot_count(s) ? kSkip : not_found(errnop);
        if (!user_allowed(l, u)) return kSkip;
        return fill_passwd(u, pw, buf, len, errnop);
    });
}

ALLOT_EXPORT nss_status _nss_allot_getgrnam_r(const char* name, group* gr, char* buf, size_t len,
                                              int* errnop) noexcept
{
    if (!name) return not_found(errnop);
    return with_cache(&g_group, errnop, [&](Snapshot* s, const Local& l) {
        GroupView g;
        if (!group_by_name(s, name, strlen(name), &g)) return not_found(errnop);
        return answer_group(l, g, gr, buf, len, errnop);
    });
}

ALLOT_EXPORT nss_status _nss_allot_getgrgid_r(gid_t gid, group* gr, char* buf, size_t len,
                                              int* errnop) noexcept
{
    return with_cache(&g_group, errnop, [&](Snapshot* s, const Local& l) {
        GroupView g;
        if (!group_by_gid(s, gid, &g)) return not_found(errnop);
        return answer_group(l, g, gr, buf, len, errnop);
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
    return cursor_get(g_grent, &g_group, errnop, [&](Snapshot* s, const Local& l, uint32_t i) {
        GroupView g;
        if (!group_at(s, i, &g)) return i < snapshot_count(s) ? kSkip : not_found(errnop);
        if (!group_allowed(l, g)) return kSkip;
        return fill_group(l, g, gr, buf, len, errnop);
    });
}

// Adds the gids of the groups listing `user` to *groupsp (growing it with
// realloc as glibc expects, never past `limit` when limit > 0), skipping
// `skip` (the user's primary group, which the caller already has). A local
// account gets no group from allot, and no local group is ever added.
ALLOT_EXPORT nss_status _nss_allot_initgroups_dyn(const char* user, gid_t skip, long* start,
                                                  long* size, gid_t** groupsp, long limit,
                                                  int* errnop) noexcept
{
    if (!user || !start || !size || !groupsp) return not_found(errnop);
    return with_cache(&g_group, errnop, [&](Snapshot* s, const Local& l) {
        const size_t n = strlen(user);
        if (n > kMaxNameLen || local_name(l, Str{user, uint32_t(n)})) return not_found(errnop);
        GroupList gl{&l, skip, start, size, groupsp, limit, 0, false};
        groups_of_member(s, user, n, add_gid, &gl);
        if (gl.out_of_memory) {
            *errnop = ENOMEM;
            return NSS_STATUS_TRYAGAIN;
        }
        return gl.found ? NSS_STATUS_SUCCESS : not_found(errnop);
    });
}

}  // extern "C"
