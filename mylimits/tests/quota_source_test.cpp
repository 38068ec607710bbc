// quota_source_test.cpp - the three quota sources: through the seam, and the real system
// where this machine allows (commands and files really run; quotactl only for its failure).
#include <gtest/gtest.h>
#include <sys/quota.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>

#include "fakes.hpp"
#include "quota_source.hpp"

using namespace allot;
using namespace allot::mylimits;
using namespace allot::mylimits::testing;

TEST(MountOf, LongestPrefixAndEscapes)
{
    const std::string mi =
        "22 1 253:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw\n"
        "30 22 253:2 / /home rw,relatime shared:2 - xfs /dev/mapper/home rw,usrquota\n"
        "31 22 0:40 / /home/al rw - tmpfs tmpfs rw\n"
        "32 22 7:0 / /mnt/with\\040space rw - ext4 /dev/loop0 rw\n"
        "garbage line\n";
    auto r = mount_of(mi, "/home/alice/x");
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.value().first, "/dev/mapper/home");  // /home/al is not a prefix of /home/alice
    EXPECT_EQ(r.value().second, "/home");
    EXPECT_EQ(mount_of(mi, "/home/al/x").value().second, "/home/al");
    EXPECT_EQ(mount_of(mi, "/var").value().first, "/dev/vda1");
    EXPECT_EQ(mount_of(mi, "/mnt/with space/f").value().first, "/dev/loop0");
    EXPECT_FALSE(mount_of("", "/x").ok());
    EXPECT_FALSE(mount_of(std::string(10000, '\\'), "/x").ok());
    EXPECT_FALSE(mount_of("1 2 3 4 /\\999 o - t s\n", "/a").ok() &&
                 mount_of("1 2 3 4 /\\999 o - t s\n", "/a").value().second == "/");
}

TEST(QuotactlErrors, SayWhatToDo)
{
    EXPECT_EQ(quotactl_error_text(ESRCH, "/home"),
              "quotas are not enabled on /home (quotactl: ESRCH)");
    EXPECT_NE(quotactl_error_text(ENOSYS, "/home").find("does not support quotas"),
              std::string::npos);
    EXPECT_NE(quotactl_error_text(ENOTBLK, "/nfs").find("use a command or snapshot source"),
              std::string::npos);
    EXPECT_NE(quotactl_error_text(EPERM, "/x").find("not allowed"), std::string::npos);
}

TEST(QuotaSource, QuotactlThroughTheSeam)
{
    FakeQuotaSystem sys;
    sys.mounts["/home/alice"] = {"/dev/vda1", "/home"};
    sys.quotactl_errno = 0;
    sys.kernel.bytes_used = 3ull << 30;
    sys.kernel.bytes_soft = 2ull << 30;
    sys.kernel.bytes_hard = 4ull << 30;
    sys.kernel.files_used = 10;
    sys.kernel.block_grace_expires = 1764800000;
    auto r =
        read_quota_source(sys, {"home", quota::SourceKind::Quotactl, "/home/alice"}, "alice", 1001);
    ASSERT_TRUE(r.ok) << r.error;
    ASSERT_EQ(r.usage.size(), 1u);
    EXPECT_EQ(r.usage[0].filesystem, "/home");
    EXPECT_EQ(r.usage[0].bytes_used, 3ull << 30);
    EXPECT_EQ(r.usage[0].bytes_soft, 2ull << 30);
    EXPECT_EQ(r.usage[0].bytes_hard, 4ull << 30);
    EXPECT_FALSE(r.usage[0].files_soft.has_value());
    EXPECT_EQ(r.usage[0].block_grace_expires, 1764800000);
    EXPECT_EQ(sys.last_quota_uid, 1001u);

    sys.kernel = KernelQuota{};  // no limits at all: ok, nothing to show
    r = read_quota_source(sys, {"home", quota::SourceKind::Quotactl, "/home/alice"}, "alice", 1001);
    EXPECT_TRUE(r.ok);
    EXPECT_TRUE(r.usage.empty());

    sys.quotactl_errno = ESRCH;
    r = read_quota_source(sys, {"home", quota::SourceKind::Quotactl, "/home/alice"}, "alice", 1001);
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.error, "quotas are not enabled on /home (quotactl: ESRCH)");

    r = read_quota_source(sys, {"home", quota::SourceKind::Quotactl, "/nowhere"}, "alice", 1001);
    EXPECT_FALSE(r.ok);
}

TEST(QuotaSource, CommandAndSnapshotThroughTheSeam)
{
    FakeQuotaSystem sys;
    sys.command_output["/usr/bin/lfs"] = "garbage";
    auto r =
        read_quota_source(sys, {"p", quota::SourceKind::Command, "/usr/bin/lfs quota"}, "a", 1);
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.error.find("no 'Filesystem' header"), std::string::npos) << r.error;

    sys.files["/s.json"] =
        R"({"schema":"allot.quota-snapshot/1","generated_at":5,"entries":[{"name":"a","bytes_used":9,"bytes_hard":10}]})";
    r = read_quota_source(sys, {"s", quota::SourceKind::Snapshot, "/s.json"}, "a", 1);
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(r.snapshot_time, 5);
    ASSERT_EQ(r.usage.size(), 1u);
    EXPECT_EQ(r.usage[0].bytes_hard, 10u);
    r = read_quota_source(sys, {"s", quota::SourceKind::Snapshot, "/missing.json"}, "a", 1);
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.error.find("No such file"), std::string::npos);
}

// ---------------------------------------------------------------- the real system

TEST(RealQuotaSystem, RunsACommandWithoutAShell)
{
    auto sys = make_real_quota_system();
    auto r = read_quota_source(*sys,
                               {"project", quota::SourceKind::Command,
                                std::string(FIXTURES) + "/fake-lfs.sh quota -u {user} /project"},
                               "alice", 1001);
    ASSERT_TRUE(r.ok) << r.error;
    ASSERT_EQ(r.usage.size(), 1u);
    EXPECT_EQ(r.usage[0].filesystem, "/project");
    EXPECT_TRUE(r.usage[0].over_soft());
    EXPECT_EQ(r.usage[0].block_grace_left, 6 * 86400 + 23 * 3600);
}

TEST(RealQuotaSystem, CommandFailuresAreBoundedAndReported)
{
    auto sys = make_real_quota_system();
    auto r = sys->run({"/bin/sleep", "10"}, 300);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("did not answer"), std::string::npos);
    r = sys->run({"/usr/bin/yes"}, 5000);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("more than 1 MiB"), std::string::npos);
    r = sys->run({"sleep", "1"}, 1000);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("absolute path"), std::string::npos);
    r = sys->run({"/nonexistent/lfs"}, 1000);
    EXPECT_FALSE(r.ok());
    r = sys->run({"/bin/false"}, 1000);
    EXPECT_FALSE(r.ok());
    r = sys->run({"/bin/echo", "Filesystem $(id)"}, 1000);  // no shell: printed verbatim
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.value(), "Filesystem $(id)\n");
}

TEST(RealQuotaSystem, ReadsFilesBoundedAndRefusesSymlinks)
{
    auto sys = make_real_quota_system();
    EXPECT_FALSE(sys->read_file("/nonexistent").ok());
    char dir[] = "/tmp/mylimits-test-XXXXXX";
    ASSERT_TRUE(mkdtemp(dir));
    const std::string f = std::string(dir) + "/snap.json", l = std::string(dir) + "/link";
    std::ofstream(f) << "{}";
    ASSERT_EQ(symlink(f.c_str(), l.c_str()), 0);
    EXPECT_TRUE(sys->read_file(f).ok());
    EXPECT_FALSE(sys->read_file(l).ok());
    unlink(l.c_str());
    unlink(f.c_str());
    rmdir(dir);
}

// The kernel here has no quota format (CONFIG_QFMT_V2 unset), so real quotactl
// can only be shown to fail politely; on a quota-enabled kernel it must succeed.
TEST(RealQuotaSystem, QuotactlOnRootFilesystemFailsPolitelyOrWorks)
{
    auto sys = make_real_quota_system();
    auto dev = sys->device_of("/");
    ASSERT_TRUE(dev.ok()) << dev.error().message;
    KernelQuota k;
    const int err = sys->get_user_quota(dev.value().first, 0, k);
    if (err == 0) GTEST_SKIP() << "quotas are enabled on /: nothing to report";
    auto r = read_quota_source(*sys, {"root", quota::SourceKind::Quotactl, "/"}, "root", 0);
    EXPECT_FALSE(r.ok);
    EXPECT_FALSE(r.error.empty());
    std::cout << "real quotactl on " << dev.value().second << ": " << r.error << "\n";
}
