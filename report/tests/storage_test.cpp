// storage_test.cpp - the storage history's lines (round trip, corrupt lines, bound) and the
// storage view (names and teams resolved at report time, team sums, the window).
#include <gtest/gtest.h>

#include "options.hpp"
#include "render.hpp"
#include "storage.hpp"

using namespace allot;
using namespace allot::report;

namespace {

StorageSample sample(int64_t t, const std::string& source, uint32_t uid, uint64_t used)
{
    StorageSample s;
    s.time = t;
    s.source = source;
    s.uid = uid;
    s.filesystem = "/home";
    s.bytes_used = used;
    return s;
}

StorageNames names()
{
    StorageNames n;
    n.user = [](uint32_t uid) {
        return uid == 1001 ? "alice" : uid == 1002 ? "bob" : "uid " + std::to_string(uid);
    };
    n.team = [](uint32_t uid) { return uid == 1003 ? "(no team)" : "team-a"; };
    return n;
}

}  // namespace

TEST(StorageStore, RoundTripKeepsLimitsAndGraceAndNoneAsEmpty)
{
    StorageSample s = sample(1764806400, "home", 1001, 1536000);
    s.bytes_soft = 1024000;
    s.bytes_hard = 2048000;
    s.grace_expires = 1765411200;
    StorageSample none = sample(1764806400, "project", 1002, 0);
    const std::string text = format_sample(s) + format_sample(none);
    EXPECT_EQ(text,
              "1764806400,home,1001,/home,1536000,1024000,2048000,1765411200\n"
              "1764806400,project,1002,/home,0,,,\n");
    auto back = parse_store(text);
    ASSERT_EQ(back.samples.size(), 2u);
    EXPECT_EQ(back.bad_lines, 0u);
    EXPECT_EQ(back.samples[0].bytes_soft, 1024000u);
    EXPECT_EQ(back.samples[0].grace_expires, 1765411200);
    EXPECT_FALSE(back.samples[1].bytes_hard);
    EXPECT_EQ(back.samples[1].source, "project");
}

TEST(StorageStore, CorruptAndCutLinesAreSkippedAndCounted)
{
    const std::string good = "1764806400,home,1001,/home,10,,,\n";
    const std::string text = good + "garbage\n" + "1764806400,home,x,/home,10,,,\n" +
                             "1764806400,home,1001,/home,10,,\n" + "\n" + good +
                             "1764810000,home,1001,/ho";  // cut short by a crash
    auto back = parse_store(text);
    EXPECT_EQ(back.samples.size(), 2u);
    EXPECT_EQ(back.bad_lines, 4u);
}

TEST(StorageStore, CommasInNamesCannotBreakALine)
{
    StorageSample s = sample(1, "home", 1, 5);
    s.filesystem = "srv:/a,b\nc";
    auto back = parse_store(format_sample(s));
    ASSERT_EQ(back.samples.size(), 1u);
    EXPECT_EQ(back.samples[0].filesystem, "srv:/a_b_c");
}

TEST(StorageStore, TailStartsOnALineBoundary)
{
    const std::string text = "1,a,1,/,1,,,\n22,a,1,/,2,,,\n333,a,1,/,3,,,\n";
    EXPECT_EQ(store_tail(text, 1000), text);
    EXPECT_EQ(store_tail(text, 20), "333,a,1,/,3,,,\n");
    EXPECT_EQ(parse_store(store_tail(text, 30)).samples.size(), 2u);
}

TEST(StorageSamples, FromAReadingWithRelativeGraceMadeAbsolute)
{
    quota::Reading r;
    quota::Usage u;
    u.filesystem = "/dev/loop0";
    u.bytes_used = 1500 * 1024;
    u.bytes_soft = 1000 * 1024;
    u.bytes_hard = 2000 * 1024;
    u.block_grace_left = 3600;
    r.usage.push_back(u);
    auto s = samples_of(1000, "loop", 1001, r);
    ASSERT_EQ(s.size(), 1u);
    EXPECT_EQ(s[0].grace_expires, 4600);
    EXPECT_EQ(s[0].bytes_hard, 2000u * 1024);
    EXPECT_EQ(s[0].filesystem, "/dev/loop0");
    EXPECT_TRUE(samples_of(1000, "loop", 1001, quota::Reading{}).empty());
}

TEST(StorageView, UsersNamedAtReportTimeTeamsSummedWindowApplied)
{
    std::vector<StorageSample> s = {
        sample(7200, "home", 1002, 30),     sample(3600, "home", 1001, 10),
        sample(3600, "home", 1002, 20),     sample(3600, "home", 1003, 5),
        sample(3600, "project", 1001, 100), sample(0, "home", 1001, 999),  // before the window
    };
    s[1].bytes_soft = 50;
    Table t = storage_table(s, names(), 3600, 7200);
    ASSERT_EQ(t.header.size(), 10u);
    EXPECT_EQ(t.header[0], "time");
    // Users ordered by time then uid, then the team sums.
    ASSERT_EQ(t.rows.size(), 5u + 4u);
    EXPECT_EQ(t.rows[0][1], "user");
    EXPECT_EQ(t.rows[0][2], "alice");
    EXPECT_EQ(t.rows[0][4], "home");
    EXPECT_EQ(t.rows[0][7], "50");
    EXPECT_EQ(t.rows[1][2], "alice");
    EXPECT_EQ(t.rows[1][4], "project");
    EXPECT_EQ(t.rows[3][2], "uid 1003");
    EXPECT_EQ(t.rows[3][3], "(no team)");
    EXPECT_EQ(t.rows[4][0], "1970-01-01T02:00:00Z");
    // (3600, (no team), home) 5; (3600, team-a, home) 30; (3600, team-a, project) 100;
    // (7200, team-a, home) 30.
    EXPECT_EQ(t.rows[5][2], "(no team)");
    EXPECT_EQ(t.rows[6][1], "team");
    EXPECT_EQ(t.rows[6][2], "team-a");
    EXPECT_EQ(t.rows[6][6], "30");
    EXPECT_EQ(t.rows[7][6], "100");
    EXPECT_EQ(t.rows[8][0], "1970-01-01T02:00:00Z");
    EXPECT_EQ(t.rows[8][6], "30");
}

TEST(StorageView, InTheJsonAndCsv)
{
    Table t = storage_table({sample(3600, "home", 1001, 10)}, names(), 0, 7200);
    Report r;
    const std::string json = render_json(r, "reconciliation: skipped", &t);
    EXPECT_NE(json.find("\"storage\""), std::string::npos);
    EXPECT_NE(json.find("\"bytes_used\":\t10"), std::string::npos);
    EXPECT_NE(json.find("\"bytes_soft\":\tnull"), std::string::npos);
    EXPECT_NE(json.find("\"grace_expires\":\tnull"), std::string::npos);
    EXPECT_EQ(render_csv(t).substr(0, 5), "time,");
    EXPECT_NE(render_html(r, "", "now", &t).find("id=\"view-storage\""), std::string::npos);
}

TEST(StorageOptions, RecordStorageAndTheStorageView)
{
    auto o = parse_options(
        {"record-storage", "--quota-conf", "/q.conf", "--store", "/s.csv", "--min-uid", "2000"},
        "");
    ASSERT_TRUE(o.ok());
    EXPECT_TRUE(o.value().record_storage);
    EXPECT_EQ(o.value().quota_conf, "/q.conf");
    EXPECT_EQ(o.value().store, "/s.csv");
    EXPECT_EQ(o.value().min_uid, 2000u);
    EXPECT_FALSE(parse_options({"record-storage", "--json"}, "").ok());
    EXPECT_FALSE(parse_options({"--min-uid", "x"}, "").ok());
    auto v = parse_options({"--csv", "storage"}, "");
    ASSERT_TRUE(v.ok());
    EXPECT_EQ(v.value().csv_view, "storage");
    EXPECT_EQ(v.value().store, "/var/lib/allot-report/storage.csv");
}
