// node_checks_test.cpp - the node checks over fabricated nsswitch.conf and plugstack.conf.
#include <gtest/gtest.h>

#include "../node_checks.hpp"

namespace allot::doctor {
namespace {

Config with_role(NodeRole role)
{
    Config c;
    c.source = "/etc/allot/allot.yaml";
    c.node.role = role;
    return c;
}

TEST(CheckNode, RoleUnsetFails)
{
    EXPECT_EQ(check_node_role(with_role(NodeRole::Unset)).severity, Severity::Fail);
    EXPECT_EQ(check_node_role(with_role(NodeRole::Compute)).severity, Severity::Ok);
}

TEST(CheckNode, NsswitchNeedsAllotForPasswdAndGroup)
{
    Findings good = check_nsswitch("# comment allot\npasswd: files allot\ngroup:  files allot\n");
    ASSERT_EQ(good.size(), 2u);
    EXPECT_EQ(good[0].severity, Severity::Ok);
    EXPECT_EQ(good[1].severity, Severity::Ok);
    Findings bad = check_nsswitch("passwd: files systemd # allot\ngroup: files allot\n");
    EXPECT_EQ(bad[0].severity, Severity::Fail);
    EXPECT_EQ(bad[0].fix, "set `passwd: files systemd allot` in /etc/nsswitch.conf");
    EXPECT_EQ(bad[1].severity, Severity::Ok);
    EXPECT_EQ(check_nsswitch("")[1].fix, "set `group: files allot` in /etc/nsswitch.conf");
}

TEST(CheckNode, PlugstackChecksOnlyOnComputeNodes)
{
    NodeInputs in{"passwd: files allot\ngroup: files allot\n", "# required spank_allot.so\n"};
    Findings compute = check_node(in, with_role(NodeRole::Compute));
    ASSERT_EQ(compute.size(), 4u);
    EXPECT_EQ(compute[3].severity, Severity::Fail);
    EXPECT_EQ(check_node(in, with_role(NodeRole::Login)).size(), 3u);
    in.plugstack = "required spank_allot.so run_dir=/run/allot\n";
    EXPECT_EQ(check_node(in, with_role(NodeRole::Compute))[3].severity, Severity::Ok);
}

}  // namespace
}  // namespace allot::doctor
