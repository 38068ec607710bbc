// scimd_config_test.cpp - allot.yaml and the command line together: private
// groups, the JWKS max-age and a rotation's activation delay come from the
// file unless a flag says otherwise.
#include <gtest/gtest.h>

#include "scimd_config.hpp"

using namespace allot;
using namespace allot::scimd;

namespace {

Config config(const std::string& yaml)
{
    auto load = parse_config(yaml, "t.yaml");
    EXPECT_TRUE(load.ok()) << load.errors.joined();
    return load.ok() ? *load.config : Config{};
}

}  // namespace

TEST(ScimdConfig, PrivateGroupsFromTheFileUnlessAFlagSays)
{
    const Config off = config(""), on = config("scim_server:\n  private_groups: true\n");
    Overrides none, flag_on, flag_off;
    flag_on.private_groups = true;
    flag_off.private_groups = false;
    EXPECT_FALSE(private_groups(off, none));
    EXPECT_TRUE(private_groups(on, none));
    EXPECT_TRUE(private_groups(off, flag_on));
    EXPECT_FALSE(private_groups(on, flag_off));
}

TEST(ScimdConfig, JwksMaxAgeAndActivationDelay)
{
    Overrides none;
    const Config defaults = config("");
    auto so = service_options(defaults, none);
    ASSERT_TRUE(so) << so.error().message;
    EXPECT_EQ(so.value().jwks_max_age, 300);
    EXPECT_EQ(activation_delay(defaults, none, so.value()), 300 + kActivationMargin);

    // The file's max-age moves the default delay with it, so `keys rotate`
    // and `serve` read one value.
    const Config age = config("oidc:\n  jwks_max_age_seconds: 900\n");
    so = service_options(age, none);
    ASSERT_TRUE(so);
    EXPECT_EQ(so.value().jwks_max_age, 900);
    EXPECT_EQ(activation_delay(age, none, so.value()), 900 + kActivationMargin);

    const Config both =
        config("oidc:\n  jwks_max_age_seconds: 60\n  activate_after_seconds: 3600\n");
    so = service_options(both, none);
    ASSERT_TRUE(so);
    EXPECT_EQ(so.value().jwks_max_age, 60);
    EXPECT_EQ(activation_delay(both, none, so.value()), 3600);

    // Flags win over the file, 0 included.
    Overrides flags;
    flags.jwks_max_age = 0;
    flags.activate_after = 30;
    so = service_options(both, flags);
    ASSERT_TRUE(so);
    EXPECT_EQ(so.value().jwks_max_age, 0);
    EXPECT_EQ(activation_delay(both, flags, so.value()), 30);
    Overrides age_only;
    age_only.jwks_max_age = 10;
    so = service_options(age, age_only);
    ASSERT_TRUE(so);
    EXPECT_EQ(activation_delay(age, age_only, so.value()), 10 + kActivationMargin);
}
