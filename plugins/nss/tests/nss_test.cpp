// nss_test.cpp - libnss_allot's entry points against caches published by the
// real writer: exact names, the ERANGE contract at every buffer size,
// enumeration, initgroups_dyn growth and limit, missing/corrupt caches, and
// lookups racing a republishing writer; never answering for the node's own
// accounts and groups, nor from an untrusted cache. The shim is compiled into this test
// with ALLOT_NSS_CACHE_DIR pointing at tests/cache; the built .so is dlopen'ed
// separately to prove it loads with RTLD_NOW and exports the entry points.
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <nss.h>
#include <pwd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "allot/identity_cache.hpp"
#include "allot/identity_cache_format.hpp"

extern "C" {
nss_status _nss_allot_getpwnam_r(const char*, passwd*, char*, size_t, int*) noexcept;
nss_status _nss_allot_getpwuid_r(uid_t, passwd*, char*, size_t, int*) noexcept;
nss_status _nss_allot_setpwent(int) noexcept;
nss_status _nss_allot_getpwent_r(passwd*, char*, size_t, int*) noexcept;
nss_status _nss_allot_endpwent(void) noexcept;
nss_status _nss_allot_getgrnam_r(const char*, group*, char*, size_t, int*) noexcept;
nss_status _nss_allot_getgrgid_r(gid_t, group*, char*, size_t, int*) noexcept;
nss_status _nss_allot_setgrent(int) noexcept;
nss_status _nss_allot_getgrent_r(group*, char*, size_t, int*) noexcept;
nss_status _nss_allot_endgrent(void) noexcept;
nss_status _nss_allot_initgroups_dyn(const char*, gid_t, long*, long*, gid_t**, long,
                                     int*) noexcept;
}

namespace {

const std::string kDir = ALLOT_NSS_CACHE_DIR;
const std::string kTop = ALLOT_NSS_TRUST_TOP;
const std::string kEtcPasswd = ALLOT_NSS_PASSWD_FILE;
const std::string kEtcGroup = ALLOT_NSS_GROUP_FILE;

void write_file(const std::string& path, const std::string& text)
{
    std::ofstream(path + ".new") << text;
    ASSERT_EQ(rename((path + ".new").c_str(), path.c_str()), 0);
}

// The node's own accounts, as the test's /etc/passwd and /etc/group.
void write_local_files()
{
    std::system(("mkdir -p '" + kTop + "/etc'").c_str());
    write_file(kEtcPasswd,
               "root:x:0:0:root:/root:/bin/bash\n"
               "daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"
               "# a comment\n"
               "+nisuser\n"
               "localuser:x:1000:1000::/home/localuser:/bin/bash\n");
    write_file(kEtcGroup,
               "root:x:0:\n"
               "sudo:x:27:localuser\n"
               "localgrp:x:1000:\n");
}

allot::PosixUser user(std::string name, uint32_t uid)
{
    allot::PosixUser u;
    u.name = std::move(name);
    u.uid = uid;
    u.gid = 30000;
    u.gecos = "Full Name " + u.name;
    u.home = "/home/" + u.name;
    u.shell = "/bin/bash";
    return u;
}

void publish(const std::vector<allot::PosixUser>& users,
             const std::vector<allot::PosixGroup>& groups)
{
    allot::CacheWriteOptions o;
    o.fsync = false;
    auto r = allot::publish_identity_cache(kDir, users, groups, o);
    ASSERT_TRUE(r.ok()) << r.error().message;
}

// Steady lookups look at what the writer's generation counter does not tell
// (the local files, a cache changed by hand, its mode) once per recheck
// interval (50 ms in this build): a change made that long ago is seen.
void wait_recheck()
{
    std::this_thread::sleep_for(std::chrono::nanoseconds(ALLOT_NSS_RECHECK_NS) +
                                std::chrono::milliseconds(30));
}

// What the writer does after a publish: one atomic add to the counter in the
// generation file's mapping.
void bump_generation()
{
    const int fd = open((kDir + "/generation").c_str(), O_RDWR);
    ASSERT_GE(fd, 0);
    void* map = mmap(nullptr, 32, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    ASSERT_NE(map, MAP_FAILED);
    __atomic_add_fetch(reinterpret_cast<uint64_t*>(static_cast<char*>(map) + 16), 1,
                       __ATOMIC_SEQ_CST);
    munmap(map, 32);
}

// A cache written by hand (or by a writer from before the generation file):
// renamed into place, no counter bumped.
void replace_by_hand(const std::string& name, const std::string& bytes)
{
    const std::string path = kDir + "/" + name;
    {
        std::ofstream out(path + ".new", std::ios::binary);
        out << bytes;
    }
    ASSERT_EQ(rename((path + ".new").c_str(), path.c_str()), 0);
}

class Nss : public ::testing::Test {
protected:
    void SetUp() override
    {
        std::system(("rm -rf '" + kDir + "'").c_str());
        // The test's own tree is the trusted top: whatever the umask, it must
        // not be writable by others for the caches below it to be used.
        ASSERT_EQ(chmod(kTop.c_str(), 0755), 0);
        write_local_files();
        std::vector<std::string> many;
        for (int i = 0; i < 50; ++i) many.push_back("member" + std::to_string(i));
        publish({user("bob", 20001), user("bobby", 20002), user("alice", 20000)},
                {{"team-a", 30000, {"bob", "alice"}},
                 {"team-b", 30001, {"bobby", "bob"}},
                 {"big", 30002, many},
                 {"empty", 30003, {}}});
        // The local files were rewritten and the generation file made anew
        // (the previous test's mapping is of a removed file).
        wait_recheck();
    }
};

TEST_F(Nss, GetpwnamExactMatch)
{
    passwd pw;
    char buf[1024];
    int err = 0;
    ASSERT_EQ(_nss_allot_getpwnam_r("bob", &pw, buf, sizeof buf, &err), NSS_STATUS_SUCCESS);
    EXPECT_STREQ(pw.pw_name, "bob");
    EXPECT_STREQ(pw.pw_passwd, "*");  // pam_unix needs "*" when there is no shadow entry
    EXPECT_EQ(pw.pw_uid, 20001u);
    EXPECT_EQ(pw.pw_gid, 30000u);
    EXPECT_STREQ(pw.pw_gecos, "Full Name bob");
    EXPECT_STREQ(pw.pw_dir, "/home/bob");
    EXPECT_STREQ(pw.pw_shell, "/bin/bash");
    ASSERT_EQ(_nss_allot_getpwnam_r("bobby", &pw, buf, sizeof buf, &err), NSS_STATUS_SUCCESS);
    EXPECT_EQ(pw.pw_uid, 20002u);
    for (const char* miss : {"bo", "bobb", "bobbyy", "BOB", "", "root"}) {
        EXPECT_EQ(_nss_allot_getpwnam_r(miss, &pw, buf, sizeof buf, &err), NSS_STATUS_NOTFOUND)
            << miss;
        EXPECT_EQ(err, ENOENT);
    }
    EXPECT_EQ(_nss_allot_getpwnam_r(nullptr, &pw, buf, sizeof buf, &err), NSS_STATUS_NOTFOUND);
    const std::string huge(1 << 20, 'b');
    EXPECT_EQ(_nss_allot_getpwnam_r(huge.c_str(), &pw, buf, sizeof buf, &err), NSS_STATUS_NOTFOUND);
    group gr;
    EXPECT_EQ(_nss_allot_getgrnam_r(huge.c_str(), &gr, buf, sizeof buf, &err), NSS_STATUS_NOTFOUND);
    ASSERT_EQ(_nss_allot_getpwuid_r(20000, &pw, buf, sizeof buf, &err), NSS_STATUS_SUCCESS);
    EXPECT_STREQ(pw.pw_name, "alice");
    EXPECT_EQ(_nss_allot_getpwuid_r(0, &pw, buf, sizeof buf, &err), NSS_STATUS_NOTFOUND);
}

TEST_F(Nss, ErangeAtEveryTooSmallBuffer)
{
    passwd pw;
    // name, "*", gecos, home, shell, each NUL-terminated
    const size_t need = 4 + 2 + 14 + 10 + 10;
    std::vector<char> buf(need);
    for (size_t n = 0; n < need; ++n) {
        int err = 0;
        EXPECT_EQ(_nss_allot_getpwnam_r("bob", &pw, n ? buf.data() : nullptr, n, &err),
                  NSS_STATUS_TRYAGAIN)
            << n;
        EXPECT_EQ(err, ERANGE);
    }
    int err = 0;
    EXPECT_EQ(_nss_allot_getpwnam_r("bob", &pw, buf.data(), need, &err), NSS_STATUS_SUCCESS);

    group gr;
    std::vector<char> gbuf(4096);
    bool succeeded = false;
    for (size_t n = 0; n < gbuf.size() && !succeeded; ++n) {
        const nss_status rc = _nss_allot_getgrnam_r("big", &gr, gbuf.data(), n, &err);
        if (rc == NSS_STATUS_SUCCESS) {
            succeeded = true;
            EXPECT_STREQ(gr.gr_mem[49], "member49");
            EXPECT_EQ(gr.gr_mem[50], nullptr);
        } else {
            ASSERT_EQ(rc, NSS_STATUS_TRYAGAIN);
            ASSERT_EQ(err, ERANGE);
        }
    }
    EXPECT_TRUE(succeeded);
}

TEST_F(Nss, Groups)
{
    group gr;
    char buf[2048];
    int err = 0;
    ASSERT_EQ(_nss_allot_getgrnam_r("team-b", &gr, buf, sizeof buf, &err), NSS_STATUS_SUCCESS);
    EXPECT_EQ(gr.gr_gid, 30001u);
    EXPECT_STREQ(gr.gr_passwd, "*");
    ASSERT_NE(gr.gr_mem, nullptr);
    EXPECT_STREQ(gr.gr_mem[0], "bobby");
    EXPECT_STREQ(gr.gr_mem[1], "bob");
    EXPECT_EQ(gr.gr_mem[2], nullptr);
    ASSERT_EQ(_nss_allot_getgrgid_r(30003, &gr, buf, sizeof buf, &err), NSS_STATUS_SUCCESS);
    EXPECT_STREQ(gr.gr_name, "empty");
    EXPECT_EQ(gr.gr_mem[0], nullptr);
    EXPECT_EQ(_nss_allot_getgrnam_r("team", &gr, buf, sizeof buf, &err), NSS_STATUS_NOTFOUND);
    EXPECT_EQ(_nss_allot_getgrgid_r(1, &gr, buf, sizeof buf, &err), NSS_STATUS_NOTFOUND);
}

TEST_F(Nss, EnumerationRetriesTheSameEntryAfterErange)
{
    passwd pw;
    char small[8];
    char buf[1024];
    int err = 0;
    std::vector<std::string> names;
    ASSERT_EQ(_nss_allot_setpwent(0), NSS_STATUS_SUCCESS);
    for (;;) {
        nss_status rc = _nss_allot_getpwent_r(&pw, small, sizeof small, &err);
        if (rc == NSS_STATUS_TRYAGAIN) {
            ASSERT_EQ(err, ERANGE);
            rc = _nss_allot_getpwent_r(&pw, buf, sizeof buf, &err);
        }
        if (rc == NSS_STATUS_NOTFOUND) break;
        ASSERT_EQ(rc, NSS_STATUS_SUCCESS);
        names.push_back(pw.pw_name);
    }
    _nss_allot_endpwent();
    EXPECT_EQ(names, (std::vector<std::string>{"alice", "bob", "bobby"}));

    group gr;
    std::vector<std::string> groups;
    _nss_allot_setgrent(1);
    while (_nss_allot_getgrent_r(&gr, buf, sizeof buf, &err) == NSS_STATUS_SUCCESS)
        groups.push_back(gr.gr_name);
    _nss_allot_endgrent();
    EXPECT_EQ(groups, (std::vector<std::string>{"big", "empty", "team-a", "team-b"}));
    // getXXent without setXXent starts from the beginning.
    ASSERT_EQ(_nss_allot_getpwent_r(&pw, buf, sizeof buf, &err), NSS_STATUS_SUCCESS);
    EXPECT_STREQ(pw.pw_name, "alice");
    _nss_allot_endpwent();
}

TEST_F(Nss, InitgroupsDynGrowsSkipsPrimaryAndHonoursLimit)
{
    int err = 0;
    long start = 1, size = 1;
    auto* groups = static_cast<gid_t*>(malloc(sizeof(gid_t)));
    groups[0] = 30000;  // the primary group, already there
    ASSERT_EQ(_nss_allot_initgroups_dyn("bob", 30000, &start, &size, &groups, 0, &err),
              NSS_STATUS_SUCCESS);
    ASSERT_EQ(start, 2);
    EXPECT_GE(size, 2);
    EXPECT_EQ(groups[0], 30000u);
    EXPECT_EQ(groups[1], 30001u);
    free(groups);

    // limit 1: already full, nothing added, no growth past the limit
    start = 1;
    size = 1;
    groups = static_cast<gid_t*>(malloc(sizeof(gid_t)));
    groups[0] = 1;
    EXPECT_EQ(_nss_allot_initgroups_dyn("bob", 5, &start, &size, &groups, 1, &err),
              NSS_STATUS_SUCCESS);
    EXPECT_EQ(start, 1);
    EXPECT_EQ(size, 1);
    free(groups);

    start = 0;
    size = 0;
    groups = nullptr;
    EXPECT_EQ(_nss_allot_initgroups_dyn("member7", 0, &start, &size, &groups, 0, &err),
              NSS_STATUS_SUCCESS);
    ASSERT_EQ(start, 1);
    EXPECT_EQ(groups[0], 30002u);
    free(groups);
    start = 0;
    size = 0;
    groups = nullptr;
    EXPECT_EQ(_nss_allot_initgroups_dyn("bo", 0, &start, &size, &groups, 0, &err),
              NSS_STATUS_NOTFOUND);
    EXPECT_EQ(start, 0);
    free(groups);
}

TEST_F(Nss, MissingOrCorruptCacheIsUnavailable)
{
    passwd pw;
    group gr;
    char buf[1024];
    int err = 0;
    ASSERT_EQ(unlink((kDir + "/passwd.cache").c_str()), 0);
    wait_recheck();  // removed by hand: no counter says so
    EXPECT_EQ(_nss_allot_getpwnam_r("bob", &pw, buf, sizeof buf, &err), NSS_STATUS_UNAVAIL);
    EXPECT_EQ(err, ENOENT);
    EXPECT_EQ(_nss_allot_getpwent_r(&pw, buf, sizeof buf, &err), NSS_STATUS_UNAVAIL);
    _nss_allot_endpwent();
    {
        std::ofstream out(kDir + "/group.cache.new", std::ios::binary);
        out << std::string(10000, '\xff');
    }
    ASSERT_EQ(rename((kDir + "/group.cache.new").c_str(), (kDir + "/group.cache").c_str()), 0);
    wait_recheck();
    EXPECT_EQ(_nss_allot_getgrnam_r("team-a", &gr, buf, sizeof buf, &err), NSS_STATUS_UNAVAIL);
    long start = 0, size = 0;
    gid_t* groups = nullptr;
    EXPECT_EQ(_nss_allot_initgroups_dyn("bob", 0, &start, &size, &groups, 0, &err),
              NSS_STATUS_UNAVAIL);
    free(groups);
    // A republished cache is picked up without restarting anything.
    publish({user("carol", 20003)}, {{"team-c", 30005, {"carol"}}});
    EXPECT_EQ(_nss_allot_getpwnam_r("carol", &pw, buf, sizeof buf, &err), NSS_STATUS_SUCCESS);
    EXPECT_EQ(_nss_allot_getpwnam_r("bob", &pw, buf, sizeof buf, &err), NSS_STATUS_NOTFOUND);
    EXPECT_EQ(_nss_allot_getgrnam_r("team-c", &gr, buf, sizeof buf, &err), NSS_STATUS_SUCCESS);
}

TEST_F(Nss, LookupsRaceARepublishingWriter)
{
    std::atomic<bool> stop{false};
    std::atomic<long> bad{0}, ok{0};
    std::vector<std::thread> readers;
    for (int t = 0; t < 4; ++t) {
        readers.emplace_back([&] {
            passwd pw;
            group gr;
            char buf[1024];
            int err;
            while (!stop.load()) {
                // bob is in every version of the cache
                if (_nss_allot_getpwnam_r("bob", &pw, buf, sizeof buf, &err) !=
                        NSS_STATUS_SUCCESS ||
                    pw.pw_uid != 20001)
                    ++bad;
                else
                    ++ok;
                if (_nss_allot_getgrgid_r(30000, &gr, buf, sizeof buf, &err) != NSS_STATUS_SUCCESS)
                    ++bad;
                _nss_allot_setpwent(0);
                while (_nss_allot_getpwent_r(&pw, buf, sizeof buf, &err) == NSS_STATUS_SUCCESS) {
                }
                _nss_allot_endpwent();
            }
        });
    }
    for (int i = 0; i < 200; ++i) {
        std::vector<allot::PosixUser> users = {user("bob", 20001)};
        for (int j = 0; j < i % 20; ++j) users.push_back(user("u" + std::to_string(j), 21000 + j));
        publish(users, {{"team-a", 30000, {"bob"}}});
    }
    stop = true;
    for (auto& t : readers) t.join();
    EXPECT_EQ(bad.load(), 0);
    EXPECT_GT(ok.load(), 0);
}

// The steady path (no system call, no lock) follows the writer's counter: a
// publish is seen by the very next lookup, a replaced or corrupt cache the
// counter announces is mapped and validated as ever.
TEST_F(Nss, RepublishedCacheIsSeenByTheNextLookup)
{
    passwd pw;
    group gr;
    char buf[1024];
    int err = 0;
    for (int i = 0; i < 3; ++i)  // the first lookups map the files, then steady
        ASSERT_EQ(_nss_allot_getpwnam_r("bob", &pw, buf, sizeof buf, &err), NSS_STATUS_SUCCESS);
    ASSERT_EQ(_nss_allot_getgrgid_r(30000, &gr, buf, sizeof buf, &err), NSS_STATUS_SUCCESS);
    for (int round = 0; round < 5; ++round) {
        const bool bob = round % 2 == 1;
        std::vector<allot::PosixUser> users = {user("carol", 20003)};
        if (bob) users.push_back(user("bob", 20001));
        publish(users, {{"team-c", 30005, {"carol"}}});
        EXPECT_EQ(_nss_allot_getpwnam_r("bob", &pw, buf, sizeof buf, &err),
                  bob ? NSS_STATUS_SUCCESS : NSS_STATUS_NOTFOUND)
            << round;
        EXPECT_EQ(_nss_allot_getpwuid_r(20003, &pw, buf, sizeof buf, &err), NSS_STATUS_SUCCESS);
        EXPECT_EQ(_nss_allot_getgrgid_r(30000, &gr, buf, sizeof buf, &err), NSS_STATUS_NOTFOUND);
        EXPECT_EQ(_nss_allot_getgrgid_r(30005, &gr, buf, sizeof buf, &err), NSS_STATUS_SUCCESS);
    }
}

TEST_F(Nss, AnnouncedCorruptCacheIsRefusedAtOnce)
{
    passwd pw;
    char buf[1024];
    int err = 0;
    ASSERT_EQ(_nss_allot_getpwnam_r("bob", &pw, buf, sizeof buf, &err), NSS_STATUS_SUCCESS);
    ASSERT_EQ(_nss_allot_getpwnam_r("bob", &pw, buf, sizeof buf, &err), NSS_STATUS_SUCCESS);
    replace_by_hand("passwd.cache", std::string(4096, '\x5a'));
    bump_generation();
    EXPECT_EQ(_nss_allot_getpwnam_r("bob", &pw, buf, sizeof buf, &err), NSS_STATUS_UNAVAIL);
    EXPECT_EQ(_nss_allot_getpwuid_r(20001, &pw, buf, sizeof buf, &err), NSS_STATUS_UNAVAIL);
    // A valid image with one record broken: the header maps, the record is refused.
    auto images = allot::build_identity_cache({user("bob", 20001), user("dave", 20004)}, {}, 7);
    ASSERT_TRUE(images.ok());
    std::string img = images.value().passwd;
    const size_t at = img.find("/home/dave");
    ASSERT_NE(at, std::string::npos);
    img[at] = '\n';  // a control byte in a field
    allot::idcache::cache_seal(reinterpret_cast<unsigned char*>(img.data()), img.size());
    replace_by_hand("passwd.cache", img);
    bump_generation();
    EXPECT_EQ(_nss_allot_getpwnam_r("bob", &pw, buf, sizeof buf, &err), NSS_STATUS_SUCCESS);
    EXPECT_EQ(_nss_allot_getpwnam_r("dave", &pw, buf, sizeof buf, &err), NSS_STATUS_NOTFOUND);
    EXPECT_EQ(_nss_allot_getpwuid_r(20004, &pw, buf, sizeof buf, &err), NSS_STATUS_NOTFOUND);
}

// Caches written without a generation file (by an older writer, or by hand)
// are stat()ed on every lookup, as before: nothing goes stale.
TEST_F(Nss, CacheWithoutGenerationFileIsFollowedOnEveryLookup)
{
    passwd pw;
    char buf[1024];
    int err = 0;
    ASSERT_EQ(unlink((kDir + "/generation").c_str()), 0);
    wait_recheck();  // the module notices the file is gone
    ASSERT_EQ(_nss_allot_getpwnam_r("bob", &pw, buf, sizeof buf, &err), NSS_STATUS_SUCCESS);
    for (int round = 0; round < 4; ++round) {
        const bool bob = round % 2 == 1;
        std::vector<allot::PosixUser> users = {user("carol", 20003)};
        if (bob) users.push_back(user("bob", 20001));
        auto images = allot::build_identity_cache(users, {}, 100 + round);
        ASSERT_TRUE(images.ok());
        replace_by_hand("passwd.cache", images.value().passwd);
        EXPECT_EQ(_nss_allot_getpwnam_r("bob", &pw, buf, sizeof buf, &err),
                  bob ? NSS_STATUS_SUCCESS : NSS_STATUS_NOTFOUND)
            << round;
    }
    // A writer that makes the file again: the module maps it and goes steady.
    publish({user("erin", 20005)}, {});
    EXPECT_EQ(_nss_allot_getpwnam_r("erin", &pw, buf, sizeof buf, &err), NSS_STATUS_SUCCESS);
    publish({user("bob", 20001)}, {});
    EXPECT_EQ(_nss_allot_getpwnam_r("erin", &pw, buf, sizeof buf, &err), NSS_STATUS_NOTFOUND);
    EXPECT_EQ(_nss_allot_getpwnam_r("bob", &pw, buf, sizeof buf, &err), NSS_STATUS_SUCCESS);
}

// A directory user named like a local account, with a local uid or
// primary gid, a group named like a local group or with a local gid, and a
// local account listed as a member are never answered, however looked up.
class NssLocal : public Nss {
protected:
    void SetUp() override
    {
        Nss::SetUp();
        allot::PosixUser gid27 = user("gid27", 20014);
        gid27.gid = 27;  // sudo's gid: would make sudo its primary group
        publish({user("bob", 20001), user("root", 20010), user("daemon", 20011),
                 user("localuid", 1000), user("sudo", 20013), gid27},
                // "raat" and "dnemon" share root's and daemon's bits in the local-name filter
                // (length, first and last byte): the binary search behind it keeps them.
                {{"team-a", 30000, {"bob", "localuser", "root", "raat", "daemon", "dnemon"}},
                 {"sudo", 30010, {"bob"}},
                 {"localgid", 1000, {"bob"}},
                 {"localuser", 30011, {"bob"}}});
    }
};

TEST_F(NssLocal, UsersNamedOrNumberedLikeLocalAccountsAreNotAnswered)
{
    passwd pw;
    char buf[1024];
    int err = 0;
    ASSERT_EQ(_nss_allot_getpwnam_r("bob", &pw, buf, sizeof buf, &err), NSS_STATUS_SUCCESS);
    for (const char* name : {"root", "daemon", "localuid", "sudo", "gid27"})
        EXPECT_EQ(_nss_allot_getpwnam_r(name, &pw, buf, sizeof buf, &err), NSS_STATUS_NOTFOUND)
            << name;
    for (uid_t uid : {20010u, 20011u, 1000u, 20013u, 20014u, 0u})
        EXPECT_EQ(_nss_allot_getpwuid_r(uid, &pw, buf, sizeof buf, &err), NSS_STATUS_NOTFOUND)
            << uid;
    std::vector<std::string> names;
    _nss_allot_setpwent(0);
    while (_nss_allot_getpwent_r(&pw, buf, sizeof buf, &err) == NSS_STATUS_SUCCESS)
        names.push_back(pw.pw_name);
    _nss_allot_endpwent();
    EXPECT_EQ(names, (std::vector<std::string>{"bob"}));
}

TEST_F(NssLocal, GroupsNamedOrNumberedLikeLocalGroupsAreNotAnswered)
{
    group gr;
    char buf[2048];
    int err = 0;
    for (const char* name : {"sudo", "localgid", "localuser"})
        EXPECT_EQ(_nss_allot_getgrnam_r(name, &gr, buf, sizeof buf, &err), NSS_STATUS_NOTFOUND)
            << name;
    for (gid_t gid : {30010u, 1000u, 30011u, 27u})
        EXPECT_EQ(_nss_allot_getgrgid_r(gid, &gr, buf, sizeof buf, &err), NSS_STATUS_NOTFOUND)
            << gid;
    // Local accounts are dropped from an answered group's members.
    ASSERT_EQ(_nss_allot_getgrnam_r("team-a", &gr, buf, sizeof buf, &err), NSS_STATUS_SUCCESS);
    EXPECT_STREQ(gr.gr_mem[0], "bob");
    EXPECT_STREQ(gr.gr_mem[1], "raat");
    EXPECT_STREQ(gr.gr_mem[2], "dnemon");
    EXPECT_EQ(gr.gr_mem[3], nullptr);
    std::vector<std::string> groups;
    _nss_allot_setgrent(0);
    while (_nss_allot_getgrent_r(&gr, buf, sizeof buf, &err) == NSS_STATUS_SUCCESS)
        groups.push_back(gr.gr_name);
    _nss_allot_endgrent();
    EXPECT_EQ(groups, (std::vector<std::string>{"team-a"}));
}

TEST_F(NssLocal, InitgroupsAddsNoLocalGroupAndNothingToLocalAccounts)
{
    int err = 0;
    long start = 0, size = 0;
    gid_t* groups = nullptr;
    ASSERT_EQ(_nss_allot_initgroups_dyn("bob", 0, &start, &size, &groups, 0, &err),
              NSS_STATUS_SUCCESS);
    EXPECT_EQ(std::vector<gid_t>(groups, groups + start), std::vector<gid_t>{30000});
    free(groups);
    for (const char* local : {"localuser", "root", "daemon"}) {
        start = size = 0;
        groups = nullptr;
        EXPECT_EQ(_nss_allot_initgroups_dyn(local, 0, &start, &size, &groups, 0, &err),
                  NSS_STATUS_NOTFOUND)
            << local;
        EXPECT_EQ(start, 0);
        free(groups);
    }
}

TEST_F(NssLocal, ChangedLocalFilesAreSeenAndUnreadableOnesFailClosed)
{
    passwd pw;
    group gr;
    char buf[1024];
    int err = 0;
    ASSERT_EQ(_nss_allot_getpwnam_r("bob", &pw, buf, sizeof buf, &err), NSS_STATUS_SUCCESS);
    // useradd bob: honoured within the recheck interval (no counter tells).
    std::ofstream(kEtcPasswd, std::ios::app) << "bob:x:5000:5000::/home/bob:/bin/sh\n";
    wait_recheck();
    EXPECT_EQ(_nss_allot_getpwnam_r("bob", &pw, buf, sizeof buf, &err), NSS_STATUS_NOTFOUND);
    EXPECT_EQ(_nss_allot_getpwnam_r("bob", &pw, buf, sizeof buf, &err), NSS_STATUS_NOTFOUND);
    // A passwd that cannot be read (here: a directory) answers nothing at all.
    ASSERT_EQ(unlink(kEtcPasswd.c_str()), 0);
    ASSERT_EQ(mkdir(kEtcPasswd.c_str(), 0755), 0);
    wait_recheck();
    EXPECT_EQ(_nss_allot_getgrnam_r("team-a", &gr, buf, sizeof buf, &err), NSS_STATUS_UNAVAIL);
    EXPECT_EQ(_nss_allot_getpwuid_r(20001, &pw, buf, sizeof buf, &err), NSS_STATUS_UNAVAIL);
    ASSERT_EQ(rmdir(kEtcPasswd.c_str()), 0);
    // A missing one holds nothing: bob is allot's again (an unreadable file
    // is never kept for the steady path: the next lookup looks again).
    EXPECT_EQ(_nss_allot_getpwnam_r("bob", &pw, buf, sizeof buf, &err), NSS_STATUS_SUCCESS);
}

// Like sshd's StrictModes.
TEST_F(Nss, UntrustedCachesAreUnavailableUntilFixed)
{
    passwd pw;
    group gr;
    char buf[1024];
    int err = 0;
    const std::string file = kDir + "/passwd.cache";
    ASSERT_EQ(_nss_allot_getpwnam_r("bob", &pw, buf, sizeof buf, &err), NSS_STATUS_SUCCESS);
    // A chmod or chown bumps no counter: seen within the recheck interval.
    for (mode_t bad : {0646, 0664}) {
        ASSERT_EQ(chmod(file.c_str(), bad), 0);
        wait_recheck();
        EXPECT_EQ(_nss_allot_getpwnam_r("bob", &pw, buf, sizeof buf, &err), NSS_STATUS_UNAVAIL)
            << std::oct << bad;
        EXPECT_EQ(_nss_allot_getpwent_r(&pw, buf, sizeof buf, &err), NSS_STATUS_UNAVAIL);
        _nss_allot_endpwent();
    }
    ASSERT_EQ(chmod(file.c_str(), 0644), 0);
    EXPECT_EQ(_nss_allot_getpwnam_r("bob", &pw, buf, sizeof buf, &err), NSS_STATUS_SUCCESS);
    // A writable directory is seen when the cache in it changes: that is the
    // only way anyone could use it against the reader.
    for (const std::string& dir : {kDir, kTop}) {
        ASSERT_EQ(chmod(dir.c_str(), 01777), 0);
        for (const char* name : {"/passwd.cache", "/group.cache"}) {  // as an attacker could
            const std::string f = kDir + name;
            ASSERT_EQ(std::system(("cp -p '" + f + "' '" + f + ".new'").c_str()), 0);
            ASSERT_EQ(rename((f + ".new").c_str(), f.c_str()), 0);
        }
        bump_generation();  // announced, as a writer would: seen at once
        EXPECT_EQ(_nss_allot_getpwnam_r("bob", &pw, buf, sizeof buf, &err), NSS_STATUS_UNAVAIL)
            << dir;
        EXPECT_EQ(_nss_allot_getgrnam_r("team-a", &gr, buf, sizeof buf, &err), NSS_STATUS_UNAVAIL)
            << dir;
        ASSERT_EQ(chmod(dir.c_str(), 0755), 0);
        EXPECT_EQ(_nss_allot_getpwnam_r("bob", &pw, buf, sizeof buf, &err), NSS_STATUS_SUCCESS);
    }
    if (geteuid() == 0) {  // only root can give a file away
        ASSERT_EQ(chown(file.c_str(), 65534, static_cast<gid_t>(-1)), 0);
        wait_recheck();
        EXPECT_EQ(_nss_allot_getpwnam_r("bob", &pw, buf, sizeof buf, &err), NSS_STATUS_UNAVAIL);
        ASSERT_EQ(chown(kDir.c_str(), 65534, static_cast<gid_t>(-1)), 0);
        ASSERT_EQ(chown(file.c_str(), 0, static_cast<gid_t>(-1)), 0);
        wait_recheck();
        EXPECT_EQ(_nss_allot_getpwnam_r("bob", &pw, buf, sizeof buf, &err), NSS_STATUS_UNAVAIL);
        ASSERT_EQ(chown(kDir.c_str(), 0, static_cast<gid_t>(-1)), 0);
        EXPECT_EQ(_nss_allot_getpwnam_r("bob", &pw, buf, sizeof buf, &err), NSS_STATUS_SUCCESS);
    }
}

TEST(NssSharedObject, LoadsWithRtldNowAndExportsEntryPoints)
{
    void* h = dlopen(NSS_SO, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(h, nullptr) << dlerror();
    for (const char* sym : {"_nss_allot_getpwnam_r", "_nss_allot_getpwuid_r", "_nss_allot_setpwent",
                            "_nss_allot_getpwent_r", "_nss_allot_endpwent", "_nss_allot_getgrnam_r",
                            "_nss_allot_getgrgid_r", "_nss_allot_setgrent", "_nss_allot_getgrent_r",
                            "_nss_allot_endgrent", "_nss_allot_initgroups_dyn"})
        EXPECT_NE(dlsym(h, sym), nullptr) << sym;
    EXPECT_EQ(dlsym(h, "_ZN5allot7idcache12user_by_nameEPKNS0_8SnapshotEPKcmPNS0_8UserViewE"),
              nullptr);  // internals stay hidden
    dlclose(h);
}

}  // namespace
