// options_test.cpp - allot-report's command line.
#include "options.hpp"

#include <gtest/gtest.h>

namespace allot::report {
namespace {

TEST(Options, DefaultsAreTwelveIsoWeeks)
{
    auto o = parse_options({}, "");
    ASSERT_TRUE(o.ok());
    EXPECT_EQ(o.value().length, kWeek);
    EXPECT_EQ(o.value().periods, 12);
    EXPECT_EQ(o.value().output, Output::Text);
    EXPECT_EQ(o.value().config, "/etc/allot/allot.yaml");
}

TEST(Options, EveryOption)
{
    auto o = parse_options({"--config", "a.yaml", "--period", "2m", "--periods", "5", "--until",
                            "@1000", "--csv", "team", "--no-reconcile"},
                           "env.yaml");
    ASSERT_TRUE(o.ok()) << o.error().describe();
    EXPECT_EQ(o.value().config, "a.yaml");
    EXPECT_EQ(o.value().length, 120);
    EXPECT_EQ(o.value().periods, 5);
    EXPECT_EQ(*o.value().until, 1000);
    EXPECT_EQ(o.value().output, Output::Csv);
    EXPECT_EQ(o.value().csv_view, "team");
    EXPECT_FALSE(o.value().reconcile);
    EXPECT_EQ(parse_options({}, "env.yaml").value().config, "env.yaml");
    EXPECT_TRUE(parse_options({"--csv", "user"}, "").value().by_user);
    EXPECT_EQ(parse_options({"--html", "/tmp/x"}, "").value().html_dir, "/tmp/x");
}

TEST(Options, MistakesAreUsageErrors)
{
    for (std::vector<std::string> bad : {std::vector<std::string>{"--csv", "nope"},
                                         {"--periods", "0"},
                                         {"--period", "5d"},
                                         {"--until"},
                                         {"--bogus"},
                                         {"--until", "soon"}})
        EXPECT_TRUE(parse_options(bad, "").error().is(Errc::Usage)) << bad[0];
}

}  // namespace
}  // namespace allot::report
