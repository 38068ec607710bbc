// quota_test.cpp - quota.conf, `lfs quota`/`quota -w -p` tables and recorder snapshots.
#include <gtest/gtest.h>

#include "quota.hpp"

using namespace allot::quota;
using allot::quota::Errc;

namespace {

// Each parser fails with its own code, whatever the input.
template <typename R>
bool fails_with(const R& r, Errc code)
{
    return !r.ok() && r.error().is(code);
}

}  // namespace

TEST(QuotaSources, ParsesAllKindsWithCommentsAndArguments)
{
    auto r = parse_sources(R"(# where quotas come from
home     quotactl  /home
project  command   /usr/bin/lfs quota -u {user} /project   # lustre
scratch  snapshot  /var/lib/allot/quota/scratch.json

)");
    ASSERT_TRUE(r.ok()) << r.error().message;
    ASSERT_EQ(r.value().size(), 3u);
    EXPECT_EQ(r.value()[0].name, "home");
    EXPECT_EQ(r.value()[0].kind, SourceKind::Quotactl);
    EXPECT_EQ(r.value()[0].argument, "/home");
    EXPECT_EQ(r.value()[1].kind, SourceKind::Command);
    EXPECT_EQ(r.value()[1].argument, "/usr/bin/lfs quota -u {user} /project");
    EXPECT_EQ(r.value()[2].kind, SourceKind::Snapshot);
}

TEST(QuotaSources, EveryBadLineIsReportedWithItsNumber)
{
    auto r = parse_sources(
        "home quotactl\nx nosuch /a\nbad/name quotactl /a\nrel quotactl home\n"
        "two snapshot /a /b\n");
    ASSERT_TRUE(fails_with(r, Errc::QuotaConfInvalid));
    const auto& m = r.error().message;
    EXPECT_NE(m.find("line 1:"), std::string::npos) << m;
    EXPECT_NE(m.find("line 2: unknown source kind 'nosuch'"), std::string::npos) << m;
    EXPECT_NE(m.find("line 3: name"), std::string::npos) << m;
    EXPECT_NE(m.find("line 4: path must be absolute"), std::string::npos) << m;
    EXPECT_NE(m.find("line 5: path must be a single word"), std::string::npos) << m;
}

TEST(QuotaSources, HostileInputIsBounded)
{
    EXPECT_TRUE(fails_with(parse_sources(std::string(100000, 'a')), Errc::QuotaConfInvalid));
    std::string many;
    for (int i = 0; i < 40; ++i) many += "s" + std::to_string(i) + " quotactl /x\n";
    EXPECT_TRUE(fails_with(parse_sources(many), Errc::QuotaConfInvalid));
    EXPECT_TRUE(parse_sources("").ok());
    EXPECT_TRUE(fails_with(parse_sources(std::string("\0\0\0", 3)), Errc::QuotaConfInvalid));
}

TEST(QuotaSources, CommandArgvSubstitutesWithoutAShell)
{
    auto argv = command_argv("/usr/bin/lfs quota -u {user} --uid={uid} /p;rm", "alice", 1001);
    ASSERT_EQ(argv.size(), 6u);
    EXPECT_EQ(argv[3], "alice");
    EXPECT_EQ(argv[4], "--uid=1001");
    EXPECT_EQ(argv[5], "/p;rm");  // passed as one argument, never interpreted
}

TEST(QuotaTable, LfsQuotaOutput)
{
    auto r = parse_quota_table(R"(Disk quotas for usr alice (uid 1001):
     Filesystem  kbytes   quota   limit   grace   files   quota   limit   grace
       /project  1048576  5242880 6291456       -    1234  100000  200000       -
)");
    ASSERT_TRUE(r.ok()) << r.error().message;
    ASSERT_EQ(r.value().size(), 1u);
    const auto& u = r.value()[0];
    EXPECT_EQ(u.filesystem, "/project");
    EXPECT_EQ(u.bytes_used, 1048576ull * 1024);
    EXPECT_EQ(u.bytes_soft, 5242880ull * 1024);
    EXPECT_EQ(u.bytes_hard, 6291456ull * 1024);
    EXPECT_EQ(u.files_used, 1234u);
    EXPECT_EQ(u.files_soft, 100000u);
    EXPECT_EQ(u.files_hard, 200000u);
    EXPECT_FALSE(u.block_grace_left.has_value());
    EXPECT_FALSE(u.over_soft());
}

TEST(QuotaTable, OverQuotaWithGraceAndWrappedFilesystem)
{
    auto r = parse_quota_table(R"(Disk quotas for usr bob (uid 1002):
     Filesystem  kbytes   quota   limit   grace   files   quota   limit   grace
/very/long/lustre/filesystem/name
                5300000* 5242880 6291456 6d23h59m59s      10       0       0       -
)");
    ASSERT_TRUE(r.ok()) << r.error().message;
    ASSERT_EQ(r.value().size(), 1u);
    const auto& u = r.value()[0];
    EXPECT_EQ(u.filesystem, "/very/long/lustre/filesystem/name");
    EXPECT_TRUE(u.over_soft());
    EXPECT_FALSE(u.over_hard());
    EXPECT_EQ(u.block_grace_left, 6 * 86400 + 23 * 3600 + 59 * 60 + 59);
    EXPECT_FALSE(u.files_soft.has_value());  // 0 means no limit
}

TEST(QuotaTable, LinuxQuotaWithAbsoluteGraceAndEmptyLfsGrace)
{
    auto r = parse_quota_table(R"(Disk quotas for user alice (uid 1001):
     Filesystem  blocks   quota   limit   grace   files   quota   limit   grace
      /dev/loop0    3300*   1000    2000 1764800000      5      10      20       0
)");
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r.value()[0].block_grace_expires, 1764800000);
    EXPECT_TRUE(r.value()[0].over_hard());

    auto lfs = parse_quota_table(
        "     Filesystem  kbytes   quota   limit   grace   files   quota   limit   grace\n"
        "        /lustre       4       0       0             1       0       0\n");
    ASSERT_TRUE(lfs.ok()) << lfs.error().message;
    EXPECT_EQ(lfs.value()[0].bytes_used, 4096u);
    EXPECT_EQ(lfs.value()[0].files_used, 1u);
    EXPECT_FALSE(lfs.value()[0].bytes_hard.has_value());
}

TEST(QuotaTable, MalformedAndHostile)
{
    EXPECT_TRUE(fails_with(parse_quota_table(""), Errc::BadQuotaData));
    EXPECT_TRUE(
        fails_with(parse_quota_table("no header here\n/x 1 2 3 - 4 5 6 -\n"), Errc::BadQuotaData));
    EXPECT_TRUE(
        fails_with(parse_quota_table("Filesystem\n/x a b c - d e f -\n"), Errc::BadQuotaData));
    EXPECT_TRUE(fails_with(parse_quota_table("Filesystem\n/x 1 2\n"), Errc::BadQuotaData));
    EXPECT_TRUE(fails_with(parse_quota_table("Filesystem\n/x 99999999999999999999 0 0 - 0 0 0 -\n"),
                           Errc::BadQuotaData));
    EXPECT_TRUE(fails_with(parse_quota_table(std::string(2 << 20, ' ')), Errc::BadQuotaData));
    std::string many = "Filesystem\n";
    for (int i = 0; i < 300; ++i) many += "/x 1 0 0 - 1 0 0 -\n";
    EXPECT_TRUE(fails_with(parse_quota_table(many), Errc::BadQuotaData));
    auto empty_ok = parse_quota_table("Disk quotas for usr x (uid 1): none\nFilesystem k q l\n");
    EXPECT_TRUE(empty_ok.ok());
}

TEST(QuotaGrace, Forms)
{
    EXPECT_EQ(parse_grace("-")->left, std::nullopt);
    EXPECT_EQ(parse_grace("none")->expires, std::nullopt);
    EXPECT_EQ(parse_grace("7days")->left, 7 * 86400);
    EXPECT_EQ(parse_grace("1w2d")->left, 9 * 86400);
    EXPECT_EQ(parse_grace("12:30")->left, 12 * 3600 + 30 * 60);
    EXPECT_EQ(parse_grace("expired")->left, 0);
    EXPECT_EQ(parse_grace("600")->left, 600);
    EXPECT_EQ(parse_grace("1764800000")->expires, 1764800000);
    EXPECT_FALSE(parse_grace("5x").has_value());
    EXPECT_FALSE(parse_grace("d").has_value());
    EXPECT_FALSE(parse_grace("99999999999999d").has_value());
    EXPECT_FALSE(parse_grace("").has_value());
}

TEST(QuotaSnapshot, PicksTheUsersEntry)
{
    auto r = parse_snapshot(R"({"schema":"allot.quota-snapshot/1","generated_at":1764720000,
      "filesystem":"/project","entries":[
        {"kind":"user","name":"bob","id":1002,"bytes_used":1},
        {"kind":"group","name":"alice","id":1001,"bytes_used":7},
        {"kind":"user","name":"alice","id":1001,"bytes_used":2147483648,
         "bytes_soft":5368709120,"bytes_hard":null,"files_used":12,"files_soft":0,
         "files_hard":1000,"grace_expires":null}]})",
                            "alice", 1001);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r.value().generated_at, 1764720000);
    ASSERT_EQ(r.value().usage.size(), 1u);
    const auto& u = r.value().usage[0];
    EXPECT_EQ(u.filesystem, "/project");
    EXPECT_EQ(u.bytes_used, 2147483648ull);
    EXPECT_EQ(u.bytes_soft, 5368709120ull);
    EXPECT_FALSE(u.bytes_hard.has_value());
    EXPECT_FALSE(u.files_soft.has_value());
    EXPECT_EQ(u.files_hard, 1000u);
}

TEST(QuotaSnapshot, NoEntryIsEmptyNotError)
{
    auto r = parse_snapshot(R"({"schema":"allot.quota-snapshot/1","generated_at":1,"entries":[]})",
                            "alice", 1001);
    ASSERT_TRUE(r.ok());
    EXPECT_TRUE(r.value().usage.empty());
}

TEST(QuotaSnapshot, MalformedAndHostile)
{
    EXPECT_TRUE(fails_with(parse_snapshot("", "a", 1), Errc::BadQuotaData));
    EXPECT_TRUE(fails_with(parse_snapshot("[]", "a", 1), Errc::BadQuotaData));
    EXPECT_TRUE(
        fails_with(parse_snapshot(R"({"schema":"other/1","generated_at":1,"entries":[]})", "a", 1),
                   Errc::BadQuotaData));
    EXPECT_TRUE(
        fails_with(parse_snapshot(R"({"schema":"allot.quota-snapshot/1","entries":[]})", "a", 1),
                   Errc::BadQuotaData));
    EXPECT_TRUE(fails_with(
        parse_snapshot(R"({"schema":"allot.quota-snapshot/1","generated_at":1,"entries":{}})", "a",
                       1),
        Errc::BadQuotaData));
    EXPECT_TRUE(fails_with(parse_snapshot(R"({"schema":"allot.quota-snapshot/1","generated_at":1,
        "entries":[{"name":"a","bytes_used":-5}]})",
                                          "a", 1),
                           Errc::BadQuotaData));
    EXPECT_TRUE(fails_with(parse_snapshot(R"({"schema":"allot.quota-snapshot/1","generated_at":1,
        "entries":[{"name":"a","bytes_used":1.5}]})",
                                          "a", 1),
                           Errc::BadQuotaData));
    EXPECT_TRUE(fails_with(parse_snapshot(R"({"schema":"allot.quota-snapshot/1","generated_at":1,
        "entries":[{"name":"a","bytes_used":1,"bytes_hard":"lots"}]})",
                                          "a", 1),
                           Errc::BadQuotaData));
    // The name matches but the uid is someone else's: refuse rather than show foreign data.
    EXPECT_TRUE(fails_with(parse_snapshot(R"({"schema":"allot.quota-snapshot/1","generated_at":1,
        "entries":[{"name":"a","id":2,"bytes_used":1}]})",
                                          "a", 1),
                           Errc::BadQuotaData));
    EXPECT_TRUE(fails_with(parse_snapshot(R"({"schema":"allot.quota-snapshot/1","generated_at":1,
        "entries":[7]})",
                                          "a", 1),
                           Errc::BadQuotaData));
    std::string deep(100000, '[');
    EXPECT_TRUE(fails_with(parse_snapshot(deep, "a", 1), Errc::BadQuotaData));
}
