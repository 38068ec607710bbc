// options_test.cpp - allot-exporter's command line.
#include <gtest/gtest.h>

#include "../options.hpp"

namespace allot::exporter {
namespace {

TEST(Options, Defaults)
{
    auto o = parse_options({}, "");
    ASSERT_TRUE(o.ok());
    EXPECT_EQ(o.value().config, "/etc/allot/allot.yaml");
    EXPECT_EQ(o.value().port, 9733);
    EXPECT_EQ(o.value().interval_seconds, 30u);
    EXPECT_FALSE(o.value().once);
}

TEST(Options, EnvironmentThenFlagForTheConfig)
{
    EXPECT_EQ(parse_options({}, "/lab/allot.yaml").value().config, "/lab/allot.yaml");
    EXPECT_EQ(parse_options({"--config", "/x.yaml"}, "/lab/allot.yaml").value().config, "/x.yaml");
}

TEST(Options, ListenForms)
{
    auto o = parse_options({"--listen=127.0.0.1:0", "--interval=1", "--port-file=/tmp/p"}, "");
    ASSERT_TRUE(o.ok());
    EXPECT_EQ(o.value().host, "127.0.0.1");
    EXPECT_EQ(o.value().port, 0);
    EXPECT_EQ(o.value().interval_seconds, 1u);
    EXPECT_EQ(o.value().port_file, "/tmp/p");
    EXPECT_EQ(parse_options({"--listen", ":9000"}, "").value().host, "0.0.0.0");
    EXPECT_EQ(parse_options({"--listen=[::1]:9000"}, "").value().host, "::1");
}

TEST(Options, BadInputIsAUsageError)
{
    for (auto args : std::vector<std::vector<std::string>>{{"--listen=nohost"},
                                                           {"--listen=h:99999"},
                                                           {"--interval=0"},
                                                           {"--interval=x"},
                                                           {"--bogus"},
                                                           {"--config"},
                                                           {"--once=1"}}) {
        auto o = parse_options(args, "");
        ASSERT_FALSE(o.ok()) << args[0];
        EXPECT_TRUE(o.error().is(Errc::Usage)) << args[0];
    }
}

}  // namespace
}  // namespace allot::exporter
