// units_test.cpp - Slurm duration/memory/count parsing.
#include <gtest/gtest.h>

#include "allot/units.hpp"

using namespace allot;

TEST(Duration, AcceptsEverySlurmForm)
{
    EXPECT_EQ(parse_duration_minutes("60").value(), 60u);
    EXPECT_EQ(parse_duration_minutes("90:30").value(), 91u);  // seconds round up
    EXPECT_EQ(parse_duration_minutes("1:00:00").value(), 60u);
    EXPECT_EQ(parse_duration_minutes("2-12").value(), 2u * 1440 + 12 * 60);
    EXPECT_EQ(parse_duration_minutes("3-00:00:00").value(), 3u * 1440);
    EXPECT_EQ(parse_duration_minutes("1-02:03").value(), 1440u + 123);
    EXPECT_EQ(parse_duration_minutes("UNLIMITED").value(), kUnlimitedMinutes);
    EXPECT_EQ(parse_duration_minutes("infinite").value(), kUnlimitedMinutes);
}

TEST(Duration, RejectsGarbageAndOverflow)
{
    for (const char* bad : {"", "-", "1-", "abc", "1:2:3:4", "1-2:3:4:5", "-5", "1.5",
                            "99999999999999999999", "100001-00:00:00", " 60", "60 "})
        EXPECT_FALSE(parse_duration_minutes(bad).ok()) << bad;
    EXPECT_FALSE(parse_duration_minutes(std::string(1000, '9')).ok());
}

TEST(Duration, FormatsLikeScontrol)
{
    EXPECT_EQ(format_minutes(3 * 1440), "3-00:00:00");
    EXPECT_EQ(format_minutes(90), "01:30:00");
    EXPECT_EQ(format_minutes(kUnlimitedMinutes), "UNLIMITED");
}

TEST(Memory, ParsesSuffixes)
{
    EXPECT_EQ(parse_memory_mb("16G").value(), 16384u);
    EXPECT_EQ(parse_memory_mb("512M").value(), 512u);
    EXPECT_EQ(parse_memory_mb("2048").value(), 2048u);
    EXPECT_EQ(parse_memory_mb("1T").value(), 1048576u);
    EXPECT_EQ(parse_memory_mb("1500K").value(), 2u);
    EXPECT_FALSE(parse_memory_mb("lots").ok());
    EXPECT_FALSE(parse_memory_mb("G").ok());
    EXPECT_FALSE(parse_memory_mb("99999999999999999999G").ok());
    EXPECT_EQ(format_memory_mb(16384), "16G");
    EXPECT_EQ(format_memory_mb(1500), "1500M");
}

TEST(Count, StrictDecimal)
{
    EXPECT_EQ(parse_count("0").value(), 0u);
    EXPECT_EQ(parse_count("18446744073709551615").value(), UINT64_MAX);
    EXPECT_FALSE(parse_count("18446744073709551616").has_value());
    EXPECT_FALSE(parse_count("+1").has_value());
    EXPECT_FALSE(parse_count("11", 10).has_value());
}
