// capacity_test.cpp - capacity from the cluster's TRES history and node outages.
#include "capacity.hpp"

#include <gtest/gtest.h>

#include "fixture.hpp"

namespace allot::report {
namespace {

using testing::at;

const int64_t kMon = at("2026-11-30T00:00:00Z");

TEST(Capacity, ConstantClusterGivesGpusTimesSeconds)
{
    std::vector<ClusterTres> h{{kMon - kWeek, std::nullopt, 16}};
    EXPECT_EQ(capacity_gpu_seconds(h, kMon, kMon + kWeek), 16u * kWeek);
}

TEST(Capacity, NodesAddedMidWeekCountFromThen)
{
    // 16 GPUs until Thursday noon, then a third 8-GPU node.
    const int64_t thu = at("2026-12-03T12:00:00Z");
    std::vector<ClusterTres> h{{kMon - kWeek, thu, 16}, {thu, std::nullopt, 24}};
    EXPECT_EQ(capacity_gpu_seconds(h, kMon, kMon + kWeek),
              16u * uint64_t(thu - kMon) + 24u * uint64_t(kMon + kWeek - thu));
}

TEST(Capacity, AnOpenRecordEndsWhereTheNextBegins)
{
    const int64_t wed = at("2026-12-02T00:00:00Z");
    std::vector<ClusterTres> h{{kMon - kWeek, std::nullopt, 16}, {wed, std::nullopt, 8}};
    EXPECT_EQ(capacity_gpu_seconds(h, kMon, kMon + kWeek), 16u * 2 * kDay + 8u * 5 * kDay);
}

TEST(Capacity, NothingBeforeTheClusterExisted)
{
    std::vector<ClusterTres> h{{kMon + kDay, std::nullopt, 8}};
    EXPECT_EQ(capacity_gpu_seconds(h, kMon, kMon + kWeek), 8u * 6 * kDay);
    EXPECT_EQ(capacity_gpu_seconds({}, kMon, kMon + kWeek), 0u);
}

TEST(Outages, ANodeDownForADay)
{
    std::vector<NodeOutage> o{{"n1", kMon + 2 * kDay, kMon + 3 * kDay, 8}};
    EXPECT_EQ(outage_gpu_seconds(o, kMon, kMon + kWeek), 8u * kDay);
    EXPECT_EQ(outage_gpu_seconds(o, kMon + kWeek, kMon + 2 * kWeek), 0u);
}

TEST(Outages, OverlappingRecordsOfOneNodeCountOnce)
{
    // Down at noon Monday, drained from Monday evening while still down, back Tuesday noon.
    std::vector<NodeOutage> o{{"n1", kMon + 12 * kHour, kMon + 20 * kHour, 8},
                              {"n1", kMon + 18 * kHour, kMon + 36 * kHour, 8},
                              {"n2", kMon + 18 * kHour, kMon + 20 * kHour, 8}};
    EXPECT_EQ(outage_gpu_seconds(o, kMon, kMon + kWeek), 8u * 24 * kHour + 8u * 2 * kHour);
}

TEST(Outages, AStillOpenOutageRunsToTheWindowEnd)
{
    std::vector<NodeOutage> o{{"n1", kMon + 6 * kDay, std::nullopt, 8}};
    EXPECT_EQ(outage_gpu_seconds(o, kMon, kMon + kWeek), 8u * kDay);
}

}  // namespace
}  // namespace allot::report
