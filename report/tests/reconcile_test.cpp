// reconcile_test.cpp - sacct's totals over the report's window.
#include "reconcile.hpp"

#include <gtest/gtest.h>

#include "fixture.hpp"

namespace allot::report {
namespace {

using testing::at;

TEST(Reconcile, SacctLinesSumUntypedGpusInsideTheWindow)
{
    const int64_t from = at("2026-12-03T10:00:00Z"), until = at("2026-12-03T12:00:00Z");
    const std::string out =
        "11|2026-12-03T10:00:00|2026-12-03T10:30:00|billing=2,cpu=2,gres/gpu:a100=2,gres/gpu=2\n"
        "12|2026-12-03T09:00:00|2026-12-03T10:10:00|cpu=2,gres/gpu=1\n"  // -T already cut it
        "13|2026-12-03T11:00:00|Unknown|cpu=2,gres/gpu=4\n"              // still running
        "14|Unknown|Unknown|cpu=2,gres/gpu=4\n"                          // never started
        "15|2026-12-03T10:00:00|2026-12-03T11:00:00|cpu=2,mem=1G\n";     // no GPU
    EXPECT_EQ(sacct_gpu_seconds(out, from, until, at("2026-12-03T11:30:00Z")),
              2u * 1800 + 1u * 600 + 4u * 1800);
}

TEST(Reconcile, CommandAsksForEveryRunTruncatedWithoutSteps)
{
    const auto cmd = sacct_command("lab", at("2026-12-03T10:00:00Z"), at("2026-12-03T12:00:00Z"));
    const std::string line = [&] {
        std::string s;
        for (const auto& a : cmd) s += a + " ";
        return s;
    }();
    EXPECT_NE(line.find("--duplicates --truncate -X"), std::string::npos) << line;
    EXPECT_NE(line.find("--starttime 2026-12-03T10:00:00 "), std::string::npos) << line;
    EXPECT_NE(line.find("--clusters lab "), std::string::npos) << line;
}

TEST(Reconcile, LineSaysTheDifference)
{
    EXPECT_EQ(reconciliation_line(7200, 7200u, ""),
              "reconciliation: allot-report 2.00 GPU-h; sacct -D -T -X 2.00 GPU-h; difference 0 "
              "GPU-s");
    EXPECT_NE(reconciliation_line(7300, 7200u, "").find("difference 100 GPU-s ("),
              std::string::npos);
    EXPECT_NE(reconciliation_line(1, std::nullopt, "sacct: not found").find("not available"),
              std::string::npos);
}

TEST(Reconcile, SreportAllocatedFoundByItsColumnName)
{
    const std::string out =
        "Cluster|TRES Name|Allocated|Down|PLND Down|Idle|Planned|Reported\n"
        "lab|gres/gpu|7200|0|0|50400|0|57600\n";
    EXPECT_EQ(sreport_allocated_seconds(out), 7200u);
    // Older releases name a column Reserved where newer ones say Planned: found by name.
    EXPECT_EQ(sreport_allocated_seconds("Cluster|TRES Name|Allocated|Down|PLND Down|Idle|"
                                        "Reserved|Reported\nlab|gres/gpu|60|0|0|0|0|60\n"),
              60u);
    EXPECT_FALSE(sreport_allocated_seconds("Cluster|TRES Name|Allocated\nlab|cpu|60\n"));
    EXPECT_FALSE(sreport_allocated_seconds(""));
}

TEST(Reconcile, SreportOnlyOverWholeRolledUpHours)
{
    const int64_t h = at("2026-12-03T10:00:00Z");
    EXPECT_EQ(rollup_end(h, h + 5 * kHour + 600, h + 5 * kHour + 600), h + 5 * kHour);
    EXPECT_EQ(rollup_end(h, h + 5 * kHour, h + 2 * kHour + 1), h + 2 * kHour);  // now first
    EXPECT_FALSE(rollup_end(h + 60, h + 5 * kHour, h + 5 * kHour));  // window not on an hour
    EXPECT_FALSE(rollup_end(h, h + 600, h + 600));                   // no whole hour yet
}

TEST(Reconcile, SreportClauseExplainsADifference)
{
    EXPECT_EQ(sreport_clause(3600, 3600u, ""),
              "; sreport cluster utilization 1.00 GPU-h allocated against allot-report's 1.00 "
              "GPU-h over the same whole hours, difference 0 GPU-s");
    EXPECT_NE(sreport_clause(3600, 7200u, "").find("reservations"), std::string::npos);
    EXPECT_EQ(sreport_clause(0, std::nullopt, "why"), "; sreport not compared (why)");
}

}  // namespace
}  // namespace allot::report
