// periods_test.cpp - ISO weeks in UTC, shorter periods, the window's periods.
#include "periods.hpp"

#include <gtest/gtest.h>

#include "errors.hpp"
#include "fixture.hpp"

namespace allot::report {
namespace {

using testing::at;

TEST(Periods, WeeksStartOnMondayMidnightUtc)
{
    EXPECT_EQ(period_floor(at("2026-12-03T21:40:00Z"), kWeek), at("2026-11-30T00:00:00Z"));
    EXPECT_EQ(period_floor(at("2026-11-30T00:00:00Z"), kWeek), at("2026-11-30T00:00:00Z"));
    EXPECT_EQ(period_floor(at("2026-11-29T23:59:59Z"), kWeek), at("2026-11-23T00:00:00Z"));
    EXPECT_EQ(period_floor(at("1969-12-31T00:00:00Z"), kWeek), at("1969-12-29T00:00:00Z"));
}

TEST(Periods, IsoWeekNumbersIncludingYearEdges)
{
    EXPECT_EQ(iso_week(at("2026-12-03T12:00:00Z")), "2026-W49");
    EXPECT_EQ(iso_week(at("2021-01-03T12:00:00Z")), "2020-W53");  // Sunday of 2020's week 53
    EXPECT_EQ(iso_week(at("2024-12-30T00:00:00Z")), "2025-W01");  // Monday in 2024, week of 2025
    EXPECT_EQ(iso_week(at("2026-01-01T00:00:00Z")), "2026-W01");
}

TEST(Periods, DaylightSavingChangesDoNotBendUtcWeeks)
{
    // The weeks of the EU (2026-03-29) and US (2026-03-08, 2026-11-01) clock changes.
    for (const char* t : {"2026-03-29T02:30:00Z", "2026-03-08T09:00:00Z", "2026-11-01T06:00:00Z"}) {
        const int64_t start = period_floor(at(t), kWeek);
        EXPECT_EQ(period_floor(start + kWeek, kWeek) - start, kWeek) << t;
    }
    EXPECT_EQ(at("2026-03-30T00:00:00Z") - at("2026-03-23T00:00:00Z"), kWeek);
}

TEST(Periods, LengthsMustDivideAWeek)
{
    EXPECT_EQ(parse_period_length("week").value(), kWeek);
    EXPECT_EQ(parse_period_length("1w").value(), kWeek);
    EXPECT_EQ(parse_period_length("1d").value(), kDay);
    EXPECT_EQ(parse_period_length("6h").value(), 6 * kHour);
    EXPECT_EQ(parse_period_length("2m").value(), 120);
    EXPECT_EQ(parse_period_length("90").value(), 90);
    EXPECT_TRUE(parse_period_length("5d").error().is(Errc::Usage));  // 7 is not a multiple of 5
    EXPECT_TRUE(parse_period_length("2w").error().is(Errc::Usage));
    EXPECT_TRUE(parse_period_length("0").error().is(Errc::Usage));
    EXPECT_TRUE(parse_period_length("x").error().is(Errc::Usage));
}

TEST(Periods, ShortPeriodsNestInWeeks)
{
    const int64_t monday = at("2026-11-30T00:00:00Z");
    EXPECT_EQ(period_floor(monday + 125, 120), monday + 120);
    EXPECT_EQ(period_floor(monday - 1, kDay), monday - kDay);
}

TEST(Periods, WindowEndsWithAProvisionalCurrentPeriod)
{
    const auto ps = make_periods(at("2026-12-03T21:40:00Z"), kWeek, 3);
    ASSERT_EQ(ps.size(), 3u);
    EXPECT_EQ(ps[0].label, "2026-W47");
    EXPECT_EQ(ps[2].label, "2026-W49");
    EXPECT_FALSE(ps[1].provisional);
    EXPECT_TRUE(ps[2].provisional);
    EXPECT_EQ(ps[2].end, at("2026-12-03T21:40:00Z"));
    EXPECT_EQ(ps[1].end, ps[2].start);
}

TEST(Periods, WindowEndingOnABoundaryHasNoEmptyPeriod)
{
    const auto ps = make_periods(at("2026-11-30T00:00:00Z"), kWeek, 2);
    ASSERT_EQ(ps.size(), 2u);
    EXPECT_EQ(ps[1].label, "2026-W48");
    EXPECT_FALSE(ps[1].provisional);
}

TEST(Periods, SplittingAnIntervalIsExactAtBoundaries)
{
    const auto ps = make_periods(at("2026-12-07T00:00:00Z"), kWeek, 3);
    std::vector<int64_t> got(3, 0);
    split_interval(ps, at("2026-11-15T23:00:00Z"), at("2026-12-07T01:00:00Z"),
                   [&](size_t i, int64_t s) { got[i] += s; });
    EXPECT_EQ(got, (std::vector<int64_t>{kWeek, kWeek, kWeek}));  // clipped to the window
}

TEST(Periods, UtcTimesRoundTrip)
{
    EXPECT_EQ(utc_time(at("2026-12-03T21:40:05Z")), "2026-12-03T21:40:05Z");
    EXPECT_EQ(parse_utc_time("@0").value(), 0);
    EXPECT_EQ(parse_utc_time("2026-12-03").value(), at("2026-12-03T00:00:00Z"));
    EXPECT_TRUE(parse_utc_time("yesterday").error().is(Errc::Usage));
}

}  // namespace
}  // namespace allot::report
