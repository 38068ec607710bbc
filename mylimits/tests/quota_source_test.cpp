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
    EXPECT_TRUE(mount_of("", "/x").error().is(quota::Errc::NoMount));
    EXPECT_FALSE(mount_of(std::string(10000, '\\'), "/x").ok());
    EXPECT_FALSE(mount_of("1 2 3 4 /\\999 o - t s\n", "/a").ok() &&
                 mount_of("1 2 3 4 /\\999 o - t s\n", "/a").value().second == "/");
}

TEST(QuotactlErrors, CodeForEachCauseAndSayWhatToDo)
{
    const Error off = quotactl_error(ESRCH, "/home");
    EXPECT_TRUE(off.is(quota::Errc::QuotasOff));
    EXPECT_EQ(off.message, "quotas are not enabled on /home (quotactl: ESRCH)");
    EXPECT_TRUE(quotactl_error(ENOSYS, "/home").is(quota::Errc::QuotasUnsupported));
    EXPECT_TRUE(quotactl_error(EOPNOTSUPP, "/home").is(quota::Errc::QuotasUnsupported));
    EXPECT_NE(quotactl_error(ENOSYS, "/home").message.find("does not support quotas"),
              std::string::npos);
    const Error nfs = quotactl_error(ENOTBLK, "/nfs");
    EXPECT_TRUE(nfs.is(quota::Errc::NotLocalDevice));
    EXPECT_NE(nfs.message.find("use a command or snapshot source"), std::string::npos);
    EXPECT_TRUE(quotactl_error(ENODEV, "/nfs").is(quota::Errc::NotLocalDevice));
    const Error denied = quotactl_error(EPERM, "/x");
    EXPECT_TRUE(denied.is(quota::Errc::QuotaDenied));
    EXPECT_NE(denied.message.find("not allowed"), std::string::npos);
    EXPECT_TRUE(quotactl_error(EIO, "/x").is(quota::Errc::QuotactlFailed));
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
    ASSERT_TRUE(r.reading.ok()) << r.reading.error().message;
    const auto& usage = r.reading.value().usage;
    ASSERT_EQ(usage.size(), 1u);
    EXPECT_EQ(usage[0].filesystem, "/home");
    EXPECT_EQ(usage[0].bytes_used, 3ull << 30);
    EXPECT_EQ(usage[0].bytes_soft, 2ull << 30);
    EXPECT_EQ(usage[0].bytes_hard, 4ull << 30);
    EXPECT_FALSE(usage[0].files_soft.has_value());
    EXPECT_EQ(usage[0].block_grace_expires, 1764800000);
    EXPECT_EQ(sys.last_quota_uid, 1001u);

    sys.kernel = KernelQuota{};  // no limits at all: ok, nothing to show
    r = read_quota_source(sys, {"home", quota::SourceKind::Quotactl, "/home/alice"}, "alice", 1001);
    ASSERT_TRUE(r.reading.ok());
    EXPECT_TRUE(r.reading.value().usage.empty());

    sys.quotactl_errno = ESRCH;
    r = read_quota_source(sys, {"home", quota::SourceKind::Quotactl, "/home/alice"}, "alice", 1001);
    ASSERT_FALSE(r.reading.ok());
    EXPECT_TRUE(r.reading.error().is(quota::Errc::QuotasOff));
    EXPECT_EQ(r.reading.error().message, "quotas are not enabled on /home (quotactl: ESRCH)");

    r = read_quota_source(sys, {"home", quota::SourceKind::Quotactl, "/nowhere"}, "alice", 1001);
    ASSERT_FALSE(r.reading.ok());
    EXPECT_TRUE(r.reading.error().is(quota::Errc::NoMount));
}

TEST(QuotaSource, CommandAndSnapshotThroughTheSeam)
{
    FakeQuotaSystem sys;
    sys.command_output["/usr/bin/lfs"] = "garbage";
    auto r =
        read_quota_source(sys, {"p", quota::SourceKind::Command, "/usr/bin/lfs quota"}, "a", 1);
    ASSERT_FALSE(r.reading.ok());
    EXPECT_TRUE(r.reading.error().is(quota::Errc::BadQuotaData));
    EXPECT_NE(r.reading.error().message.find("no 'Filesystem' header"), std::string::npos);
    r = read_quota_source(sys, {"p", quota::SourceKind::Command, "/usr/bin/quota"}, "a", 1);
    ASSERT_FALSE(r.reading.ok());
    EXPECT_TRUE(r.reading.error().is(quota::Errc::CommandFailed));

    sys.files["/s.json"] =
        R"({"schema":"allot.quota-snapshot/1","generated_at":5,"entries":[{"name":"a","bytes_used":9,"bytes_hard":10}]})";
    r = read_quota_source(sys, {"s", quota::SourceKind::Snapshot, "/s.json"}, "a", 1);
    ASSERT_TRUE(r.reading.ok()) << r.reading.error().message;
    EXPECT_EQ(r.reading.value().snapshot_time, 5);
    ASSERT_EQ(r.reading.value().usage.size(), 1u);
    EXPECT_EQ(r.reading.value().usage[0].bytes_hard, 10u);
    r = read_quota_source(sys, {"s", quota::SourceKind::Snapshot, "/missing.json"}, "a", 1);
    ASSERT_FALSE(r.reading.ok());
    EXPECT_TRUE(r.reading.error().is(allot::Errc::NotFound));
    sys.files["/bad.json"] = "[]";
    r = read_quota_source(sys, {"s", quota::SourceKind::Snapshot, "/bad.json"}, "a", 1);
    ASSERT_FALSE(r.reading.ok());
    EXPECT_TRUE(r.reading.error().is(quota::Errc::BadQuotaData));
    EXPECT_EQ(r.reading.error().message.rfind("/bad.json: ", 0), 0u);
}

// ---------------------------------------------------------------- the real system

TEST(RealQuotaSystem, RunsACommandWithoutAShell)
{
    auto sys = make_real_quota_system();
    auto r = read_quota_source(*sys,
                               {"project", quota::SourceKind::Command,
                                std::string(FIXTURES) + "/fake-lfs.sh quota -u {user} /project"},
                               "alice", 1001);
    ASSERT_TRUE(r.reading.ok()) << r.reading.error().message;
    const auto& usage = r.reading.value().usage;
    ASSERT_EQ(usage.size(), 1u);
    EXPECT_EQ(usage[0].filesystem, "/project");
    EXPECT_TRUE(usage[0].over_soft());
    EXPECT_EQ(usage[0].block_grace_left, 6 * 86400 + 23 * 3600);
}

TEST(RealQuotaSystem, CommandFailuresAreBoundedAndReported)
{
    auto sys = make_real_quota_system();
    auto r = sys->run({"/bin/sleep", "10"}, 300);
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(r.error().is(quota::Errc::CommandTimedOut));
    EXPECT_NE(r.error().message.find("did not answer"), std::string::npos);
    r = sys->run({"/usr/bin/yes"}, 5000);
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(r.error().is(allot::Errc::TooLarge));
    EXPECT_NE(r.error().message.find("more than 1 MiB"), std::string::npos);
    r = sys->run({"sleep", "1"}, 1000);
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(r.error().is(quota::Errc::CommandFailed));
    EXPECT_NE(r.error().message.find("absolute path"), std::string::npos);
    r = sys->run({"/nonexistent/lfs"}, 1000);
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(r.error().is(quota::Errc::CommandFailed));
    r = sys->run({"/bin/false"}, 1000);
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(r.error().is(quota::Errc::CommandFailed));
    r = sys->run({"/bin/echo", "Filesystem $(id)"}, 1000);  // no shell: printed verbatim
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.value(), "Filesystem $(id)\n");
}

TEST(RealQuotaSystem, ReadsFilesBoundedAndRefusesSymlinks)
{
    auto sys = make_real_quota_system();
    EXPECT_TRUE(sys->read_file("/nonexistent").error().is(allot::Errc::NotFound));
    char dir[] = "/tmp/mylimits-test-XXXXXX";
    ASSERT_TRUE(mkdtemp(dir));
    const std::string f = std::string(dir) + "/snap.json", l = std::string(dir) + "/link";
    std::ofstream(f) << "{}";
    ASSERT_EQ(symlink(f.c_str(), l.c_str()), 0);
    EXPECT_TRUE(sys->read_file(f).ok());
    EXPECT_TRUE(sys->read_file(l).error().is(allot::Errc::Io));  // O_NOFOLLOW: ELOOP
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
    ASSERT_FALSE(r.reading.ok());
    EXPECT_EQ(r.reading.error().code, quotactl_error(err, dev.value().second).code);
    std::cout << "real quotactl on " << dev.value().second << ": " << r.reading.error().message
              << "\n";
}
