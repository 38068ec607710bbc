// software_walk_test.cpp - the walk report parsed and turned into findings.
#include <gtest/gtest.h>

#include "../software_walk.hpp"

namespace allot::doctor {
namespace {

TEST(WalkReport, ParsedPerRootWithTheFirstPathsAndCounts)
{
    std::vector<WalkResult> r = parse_walk_report(
        "S\t/opt/sw\nR\t/opt/sw/a\nR\t/opt/sw/b\nR\t/opt/sw/c\nN\t40\nS\t/gone\nE\tNo such file\n",
        2);
    ASSERT_EQ(r.size(), 2u);
    EXPECT_EQ(r[0].entries, 40u);
    EXPECT_EQ(r[0].unreadable.count, 3u);
    EXPECT_EQ(r[0].unreadable.first, (std::vector<std::string>{"/opt/sw/a", "/opt/sw/b"}));
    EXPECT_EQ(r[1].error, "No such file");
}

TEST(SoftwareFindings, EachKindWithItsChmod)
{
    std::vector<WalkResult> r = parse_walk_report(
        "S\t/a\nR\t/a/f\nN\t3\nS\t/b\nU\t/b/d\nR\t/b/f\nS\t/c\nW\t/c/lib.so\nO\t/c/lib.so\n"
        "S\t/d\nN\t9\nS\t/e\nN\t5\nT\t\n",
        8);
    Findings f = software_findings(r, "nobody");
    ASSERT_EQ(f.size(), 5u);
    EXPECT_EQ(f[0].id, "software./a");
    EXPECT_EQ(f[0].severity, Severity::Warn);
    EXPECT_EQ(f[0].fix, "`chmod o+r /a/f`");
    EXPECT_EQ(f[1].fix, "`chmod o+rx /b/d`");
    EXPECT_EQ(f[2].severity, Severity::Fail);
    EXPECT_EQ(f[2].fix, "`chown root /c/lib.so`, then `chmod go-w /c/lib.so`");
    EXPECT_EQ(f[3].severity, Severity::Ok);
    EXPECT_EQ(f[4].severity, Severity::Warn);
}

TEST(Tamper, WritableAllotFilesFail)
{
    WalkResult clean;
    EXPECT_EQ(tamper_finding(clean, "nobody").severity, Severity::Ok);
    WalkResult w = parse_walk_report("S\t(allot files)\nW\t/etc/allot\n", 8)[0];
    Finding f = tamper_finding(w, "nobody");
    EXPECT_EQ(f.severity, Severity::Fail);
    EXPECT_EQ(f.fix, "`chmod go-w /etc/allot`");
}

}  // namespace
}  // namespace allot::doctor
