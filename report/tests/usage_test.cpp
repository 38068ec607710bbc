// usage_test.cpp - run records into GPU-seconds per period, team, tier and user.
#include "usage.hpp"

#include <gtest/gtest.h>

#include "fixture.hpp"

namespace allot::report {
namespace {

using testing::at;
using testing::run;

const int64_t kMon = at("2026-11-30T00:00:00Z");  // 2026-W49

class Usage : public ::testing::Test {
protected:
    Config config = testing::lab_config();
    Classifier classify{config};
    ReportRequest req;
    Inputs in;
    void SetUp() override
    {
        req.until = kMon + kWeek;  // through the end of W49
        req.now = req.until;
        req.periods = 4;  // W46..W49
        in.capacity = {{kMon - 10 * kWeek, std::nullopt, 16}};
    }
    Report report() { return build_report(in, classify, req); }
};

TEST_F(Usage, AJobSpanningThreeWeeksIsSplitExactlyAtTheBoundaries)
{
    // From Sunday 22:00 of W47 to Monday 02:00 of W49 on 2 GPUs.
    in.runs = {run(1, "team-a", "team-a", kMon - kWeek - 2 * kHour, kMon + 2 * kHour, 2)};
    Report r = report();
    ASSERT_EQ(r.periods.size(), 4u);
    EXPECT_EQ(r.periods[0].used, 0u);
    EXPECT_EQ(r.periods[1].used, 2u * 2 * kHour);
    EXPECT_EQ(r.periods[2].used, 2u * kWeek);
    EXPECT_EQ(r.periods[3].used, 2u * 2 * kHour);
    EXPECT_EQ(r.total_used(), 2u * uint64_t(kWeek + 4 * kHour));
}

TEST_F(Usage, EveryRunOfARequeuedJobCounts)
{
    // A spot job preempted after 1 h, requeued, preempted again after 30 min, then done in 2 h.
    const int64_t t = kMon + kDay;
    in.runs = {run(5, "team-b", "spot", t, t + kHour, 4, RunEnd::Requeued),
               run(5, "team-b", "spot", t + 2 * kHour, t + 2 * kHour + 1800, 4, RunEnd::Preempted),
               run(5, "team-b", "spot", t + 3 * kHour, t + 5 * kHour, 4)};
    Report r = report();
    EXPECT_EQ(r.periods[3].used, 4u * (3600 + 1800 + 7200));
    EXPECT_EQ(r.periods[3].spot_lost, 4u * (3600 + 1800));
    EXPECT_EQ(r.periods[3].by_tier.at("spot"), 4u * (3600 + 1800 + 7200));
    EXPECT_EQ(r.runs, 3u);
}

TEST_F(Usage, PreemptionOutsideSpotIsNotSpotLoss)
{
    in.runs = {run(6, "team-a", "team-a", kMon, kMon + kHour, 1, RunEnd::Requeued)};
    EXPECT_EQ(report().periods[3].spot_lost, 0u);
}

TEST_F(Usage, ArrayTasksEachCount)
{
    std::vector<RunRecord> runs;
    for (uint32_t task = 0; task < 3; ++task) {
        RunRecord r = run(100 + task, "team-a", "general", kMon, kMon + kHour, 1);
        r.array_job_id = 100;
        r.array_task_id = task;
        runs.push_back(r);
    }
    in.runs = runs;
    Report r = report();
    EXPECT_EQ(r.periods[3].used, 3u * 3600);
    EXPECT_EQ(r.periods[3].by_tier.at("general"), 3u * 3600);
}

TEST_F(Usage, HetComponentsAddTheirOwnGpus)
{
    RunRecord a = run(200, "team-a", "team-a", kMon, kMon + kHour, 2);
    a.het_job_id = 200;
    a.het_offset = 0;
    RunRecord b = run(201, "team-a", "team-a", kMon, kMon + kHour, 0);  // CPU-only part
    b.het_job_id = 200;
    b.het_offset = 1;
    RunRecord c = run(202, "team-a", "team-a", kMon, kMon + kHour, 3);
    c.het_job_id = 200;
    c.het_offset = 2;
    in.runs = {a, b, c};
    Report r = report();
    EXPECT_EQ(r.periods[3].used, 5u * 3600);
    EXPECT_EQ(r.runs, 2u);  // the CPU-only component has no GPU time
}

TEST_F(Usage, RunningJobsCountUpToNowInAProvisionalPeriod)
{
    req.until = req.now = kMon + 3 * kDay;
    in.runs = {run(7, "team-a", "team-a", kMon + kDay, std::nullopt, 2)};
    Report r = report();
    EXPECT_TRUE(r.periods[3].period.provisional);
    EXPECT_EQ(r.periods[3].used, 2u * 2 * kDay);
    EXPECT_EQ(r.periods[3].capacity, 16u * 3 * kDay);  // capacity up to now too
}

TEST_F(Usage, NeverStartedRunsHaveNoTime)
{
    in.runs = {run(8, "team-a", "team-a", 0, kMon, 2)};
    EXPECT_EQ(report().total_used(), 0u);
}

TEST_F(Usage, TeamsAndTiersFromAllotYaml)
{
    in.runs = {run(1, "team-a", "team-a", kMon, kMon + kHour, 1),
               run(2, "team-b", "general", kMon, kMon + kHour, 2),
               run(3, "default", "normal", kMon, kMon + kHour, 1)};
    Report r = report();
    EXPECT_EQ(r.periods[3].by_team.at("team-a"), 3600u);
    EXPECT_EQ(r.periods[3].by_team.at("team-b"), 7200u);
    EXPECT_EQ(r.periods[3].by_team.at(kNoTeam), 3600u);
    EXPECT_EQ(r.periods[3].by_tier.at("project"), 3600u);
    EXPECT_EQ(r.periods[3].by_tier.at("general"), 7200u);
    EXPECT_EQ(r.periods[3].by_tier.at("other"), 3600u);
    EXPECT_EQ(r.teams, (std::vector<std::string>{kNoTeam, "team-a", "team-b"}));
    EXPECT_TRUE(r.periods[3].by_user.empty());
}

TEST_F(Usage, ByUserWhenAsked)
{
    req.by_user = true;
    RunRecord a = run(1, "team-a", "team-a", kMon, kMon + kHour, 1);
    RunRecord b = run(2, "team-a", "team-a", kMon, kMon + kHour, 2);
    b.user = "carol";
    in.runs = {a, b};
    Report r = report();
    EXPECT_EQ(r.periods[3].by_user.at("alice"), 3600u);
    EXPECT_EQ(r.periods[3].by_user.at("carol"), 7200u);
    EXPECT_EQ(r.users, (std::vector<std::string>{"alice", "carol"}));
}

TEST_F(Usage, CapacityAndAvailabilityPerPeriod)
{
    const int64_t thu = kMon + 3 * kDay;
    in.capacity = {{kMon - 10 * kWeek, thu, 16}, {thu, std::nullopt, 24}};
    in.outages = {{"n2", kMon + kDay, kMon + 2 * kDay, 8}};
    in.runs = {run(1, "team-a", "team-a", kMon, kMon + kDay, 8)};
    Report r = report();
    const PeriodUsage& w = r.periods[3];
    EXPECT_EQ(w.capacity, 16u * 3 * kDay + 24u * 4 * kDay);
    EXPECT_EQ(w.down, 8u * kDay);
    EXPECT_EQ(w.available(), w.capacity - 8u * kDay);
    EXPECT_EQ(r.periods[2].capacity, 16u * kWeek);
}

TEST_F(Usage, GpusInUseSeriesIsHourly)
{
    req.until = req.now = kMon + 3 * kHour;
    req.periods = 1;
    in.runs = {run(1, "team-a", "team-a", kMon + 1800, kMon + 2 * kHour, 4)};
    Report r = report();
    ASSERT_EQ(r.series.size(), 3u);
    EXPECT_DOUBLE_EQ(r.series[0].gpus(), 2.0);  // 4 GPUs for half the hour
    EXPECT_DOUBLE_EQ(r.series[1].gpus(), 4.0);
    EXPECT_DOUBLE_EQ(r.series[2].gpus(), 0.0);
}

TEST_F(Usage, ShortPeriodsForTheLab)
{
    req.length = 120;
    req.periods = 3;
    req.until = req.now = kMon + 360;
    in.runs = {run(1, "team-a", "team-a", kMon + 100, kMon + 250, 2)};
    Report r = report();
    ASSERT_EQ(r.periods.size(), 3u);
    EXPECT_EQ(r.periods[0].used, 2u * 20);
    EXPECT_EQ(r.periods[1].used, 2u * 120);
    EXPECT_EQ(r.periods[2].used, 2u * 10);
    EXPECT_EQ(r.series.size(), 3u);  // the series never coarser than a period
}

}  // namespace
}  // namespace allot::report
