// config_test.cpp - allot.yaml loading: defaults, every key, and every error with path and line.
#include <gtest/gtest.h>

#include "allot/config.hpp"
#include "allot/yaml_tree.hpp"

using namespace allot;

namespace {

bool has_line(const ConfigLoad& load, const std::string& needle)
{
    for (const auto& line : load.errors.lines)
        if (line.find(needle) != std::string::npos) return true;
    return false;
}

}  // namespace

TEST(Config, EmptyFileMeansDefaults)
{
    auto load = parse_config("", "t.yaml");
    ASSERT_TRUE(load.ok()) << load.errors.joined();
    EXPECT_EQ(load.config->cluster.default_account, "default");
    EXPECT_EQ(load.config->tiers.general.qos, "general");
    EXPECT_EQ(load.config->tiers.general.max_minutes, 3u * 1440);
    EXPECT_EQ(load.config->tiers.spot.max_minutes, 1440u);
    EXPECT_EQ(load.config->tiers.spot.grace_seconds, 600u);
}

TEST(Config, ExampleFileDocumentsEveryKeyAndLoads)
{
    auto load = load_config(std::string(FIXTURES) + "/full.yaml");
    ASSERT_TRUE(load.ok()) << load.errors.joined();
    const Config& c = *load.config;
    EXPECT_EQ(c.cluster.partition, "main");
    EXPECT_EQ(c.cluster.mem_per_gpu_mb, 16384u);
    EXPECT_EQ(c.cluster.cpus_per_gpu, 4u);
    EXPECT_EQ(c.tiers.general.pool_gpus, 8u);
    EXPECT_EQ(c.tiers.general.per_team_gpus, 4u);
    EXPECT_EQ(*c.tiers.spot.default_minutes, 240u);
    ASSERT_EQ(c.teams.size(), 2u);
    EXPECT_EQ(c.teams[0].qos, "team-a");
    EXPECT_EQ(c.teams[1].qos, "team-b");  // defaults to the account
    ASSERT_TRUE(c.teams[0].kubernetes.has_value());
    EXPECT_EQ(c.teams[0].kubernetes->memory_mb, 256u * 1024);
    EXPECT_EQ(c.node.role, NodeRole::Login);
    EXPECT_EQ(c.node.admin_group, "hpcadmin");
    EXPECT_EQ(c.identity.shells.size(), 5u);
    EXPECT_EQ(c.oidc.token_lifetime_seconds, 900u);
    EXPECT_TRUE(c.scim_server.private_groups);
    EXPECT_EQ(c.oidc.jwks_max_age_seconds, 600u);
    EXPECT_EQ(c.oidc.activate_after_seconds, std::optional<uint32_t>(900));
    EXPECT_EQ(c.doctor.software_roots, (std::vector<std::string>{"/opt/software", "/apps"}));
    EXPECT_EQ(c.doctor.software_limit, 5000u);
    EXPECT_EQ(c.team_by_account("team-b"), &c.teams[1]);
    EXPECT_EQ(c.team_by_qos("team-a"), &c.teams[0]);
}

TEST(Config, ReportsEveryProblemWithPathAndLine)
{
    auto load = load_config(std::string(FIXTURES) + "/bad-many.yaml");
    ASSERT_FALSE(load.ok());
    const std::string all = load.errors.joined();
    EXPECT_TRUE(has_line(load, "cluster.defualt_account: unknown key")) << all;
    EXPECT_TRUE(has_line(load, "(line 3)")) << all;
    EXPECT_TRUE(has_line(load, "cluster.mem_per_gpu: 'lots' is not a memory size")) << all;
    EXPECT_TRUE(
        has_line(load, "tiers.general.per_team_gpus: is larger than tiers.general.pool_gpus"))
        << all;
    EXPECT_TRUE(has_line(load, "tiers.spot.signal: must be one of TERM")) << all;
    EXPECT_TRUE(has_line(load, "teams[1].account: must be a Slurm account name")) << all;
    EXPECT_TRUE(has_line(load, "teams[1].gpus: must be a whole number ≥ 0 and ≤ 1000000 (line 17)"))
        << all;
    EXPECT_TRUE(has_line(load, "teams[2].gpus: is required")) << all;
    EXPECT_TRUE(has_line(load, "teams[2].account: account 'team-a' is used by two teams")) << all;
    EXPECT_TRUE(has_line(load, "identity.uid_min: must be a whole number ≥ 1000")) << all;
    EXPECT_TRUE(has_line(load, "node.role: must be login or compute")) << all;
    for (const auto& line : load.errors.lines)
        EXPECT_EQ(line.rfind(std::string(FIXTURES) + "/bad-many.yaml: ", 0), 0u) << line;
}

TEST(Config, RejectsWrongShapesAndTypes)
{
    EXPECT_FALSE(parse_config("- a\n- b\n", "t").ok());
    EXPECT_FALSE(parse_config("cluster: [1, 2]\n", "t").ok());
    EXPECT_FALSE(parse_config("teams: {a: 1}\n", "t").ok());
    EXPECT_FALSE(parse_config("teams:\n  - group: g\n    account: a\n    gpus: \"8\"\n", "t").ok());
    EXPECT_FALSE(parse_config("teams:\n  - group: g\n    account: a\n    gpus: [8]\n", "t").ok());
    EXPECT_FALSE(parse_config("cluster:\n  name: lab\n  name: lab2\n", "t").ok());
    EXPECT_FALSE(parse_config("identity:\n  scim_url: http://example.org/scim\n", "t").ok());
    EXPECT_TRUE(parse_config("identity:\n  scim_url: http://127.0.0.1:8080/scim/v2\n", "t").ok());
    auto syntax = parse_config("cluster:\n  name: [unclosed\n", "t.yaml");
    ASSERT_FALSE(syntax.ok());
    EXPECT_NE(syntax.errors.lines[0].find("t.yaml: YAML syntax error"), std::string::npos);
    EXPECT_NE(syntax.errors.lines[0].find("(line "), std::string::npos);
}

TEST(Config, TeamMayNotReuseTierOrDefaultNames)
{
    auto load = parse_config(
        "teams:\n  - group: g\n    account: default\n    gpus: 1\n"
        "  - group: h\n    account: x\n    qos: spot\n    gpus: 1\n",
        "t");
    ASSERT_FALSE(load.ok());
    EXPECT_TRUE(has_line(load, "teams[0].account: 'default' is cluster.default_account"));
    EXPECT_TRUE(has_line(load, "teams[1].qos: 'spot' is the name of a shared tier's QOS"));
}

TEST(Config, HostileInputIsBounded)
{
    // Deep nesting, alias bombs, huge files and NUL bytes: clear errors, no crash.
    EXPECT_FALSE(parse_config(std::string(10000, '[') + std::string(10000, ']'), "t").ok());
    std::string bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
    char prev = 'a';
    for (char c = 'b'; c <= 'k'; ++c, ++prev)
        bomb += std::string(1, c) + ": &" + c + " [*" + prev + ", *" + prev + ", *" + prev + ", *" +
                prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + "]\n";
    auto load = parse_config(bomb, "t");
    ASSERT_FALSE(load.ok());
    EXPECT_TRUE(has_line(load, "nodes")) << load.errors.joined();
    EXPECT_FALSE(parse_config(std::string(2 << 20, '#'), "t").ok());
    EXPECT_FALSE(parse_config(std::string("cluster:\n  name: a\0b\n", 22), "t").ok());
    EXPECT_FALSE(load_config("/nonexistent/allot.yaml").ok());
    EXPECT_FALSE(parse_config("cluster:\n  join_hint: \"a\\nb\"\n", "t").ok());
}

// `node.role` has no default (pam_allot and allot-keys then admit
// no one but root); given, it must be login or compute.
TEST(Config, NodeRoleHasNoDefault)
{
    EXPECT_EQ(parse_config("", "t").config->node.role, NodeRole::Unset);
    auto no_role = parse_config("node:\n  admin_group: ops\n", "t");
    ASSERT_TRUE(no_role.ok()) << no_role.errors.joined();
    EXPECT_EQ(no_role.config->node.role, NodeRole::Unset);
    EXPECT_EQ(parse_config("node:\n  role: compute\n", "t").config->node.role, NodeRole::Compute);
    EXPECT_FALSE(parse_config("node:\n  role: \"\"\n", "t").ok());
    EXPECT_EQ(parse_config("", "t").config->identity.cache_owner, "root");
}

// allot-doctor's software walk: no roots by default; given, each is an absolute
// path, the user an ordinary one, the limit a positive count.
TEST(Config, DoctorSoftwareWalk)
{
    auto none = parse_config("", "t");
    EXPECT_TRUE(none.config->doctor.software_roots.empty());
    EXPECT_EQ(none.config->doctor.software_user, "nobody");
    EXPECT_EQ(none.config->doctor.software_limit, 200000u);
    auto bad = parse_config(
        "doctor:\n  software_roots:\n    - /opt/sw\n    - apps\n  software_user: root\n"
        "  software_limit: 0\n  software_root: /x\n",
        "t");
    EXPECT_FALSE(bad.ok());
    EXPECT_TRUE(has_line(bad, "doctor.software_roots[1]: must be an absolute path"));
    EXPECT_TRUE(has_line(bad, "doctor.software_user: must be an ordinary user"));
    EXPECT_TRUE(has_line(bad, "doctor.software_limit: must be a whole number ≥ 1"));
    EXPECT_TRUE(has_line(bad, "doctor.software_root: unknown key"));
    EXPECT_FALSE(parse_config("doctor:\n  software_roots: /opt/sw\n", "t").ok());
    EXPECT_FALSE(parse_config("doctor:\n  software_user: \"a b\"\n", "t").ok());
}

// allot-scimd's private groups and key rotation schedule: off, 300 s and
// "max-age plus margin" by default; booleans are YAML 1.2's, durations bounded,
// and a key may not sign before relying parties can have fetched it.
TEST(Config, ScimdPrivateGroupsAndKeyRotation)
{
    auto none = parse_config("", "t");
    EXPECT_FALSE(none.config->scim_server.private_groups);
    EXPECT_EQ(none.config->oidc.jwks_max_age_seconds, 300u);
    EXPECT_FALSE(none.config->oidc.activate_after_seconds.has_value());

    auto on = parse_config("scim_server:\n  private_groups: True\n", "t");
    ASSERT_TRUE(on.ok()) << on.errors.joined();
    EXPECT_TRUE(on.config->scim_server.private_groups);
    auto off = parse_config("scim_server:\n  private_groups: false\n", "t");
    ASSERT_TRUE(off.ok()) << off.errors.joined();
    EXPECT_FALSE(off.config->scim_server.private_groups);
    for (const char* v : {"yes", "on", "1", "\"true\"", "[true]", "maybe"}) {
        auto bad = parse_config(
            std::string("scim_server:\n  threads: 4\n  private_groups: ") + v + "\n", "t.yaml");
        EXPECT_FALSE(bad.ok()) << v;
        const char* want = v[0] == '['
                               ? "t.yaml: scim_server.private_groups: must be a single value"
                               : "t.yaml: scim_server.private_groups: must be true or "
                                 "false (line 3)";
        EXPECT_TRUE(has_line(bad, want)) << v << ": " << bad.errors.joined();
    }
    auto typo = parse_config("scim_server:\n  private_group: true\n", "t");
    EXPECT_TRUE(has_line(typo, "scim_server.private_group: unknown key")) << typo.errors.joined();

    auto rot = parse_config("oidc:\n  jwks_max_age_seconds: 0\n  activate_after_seconds: 0\n", "t");
    ASSERT_TRUE(rot.ok()) << rot.errors.joined();
    EXPECT_EQ(rot.config->oidc.jwks_max_age_seconds, 0u);
    EXPECT_EQ(rot.config->oidc.activate_after_seconds, std::optional<uint32_t>(0));
    auto week = parse_config(
        "oidc:\n  jwks_max_age_seconds: 86400\n  activate_after_seconds: 604800\n", "t");
    ASSERT_TRUE(week.ok()) << week.errors.joined();

    auto bad = parse_config("oidc:\n  jwks_max_age_seconds: -5\n  activate_after_seconds: 604801\n",
                            "t.yaml");
    ASSERT_FALSE(bad.ok());
    EXPECT_TRUE(has_line(bad,
                         "t.yaml: oidc.jwks_max_age_seconds: must be a whole number ≥ 0 and ≤ "
                         "86400 (line 2)"))
        << bad.errors.joined();
    EXPECT_TRUE(has_line(bad,
                         "t.yaml: oidc.activate_after_seconds: must be a whole number ≥ 0 and "
                         "≤ 604800 (line 3)"))
        << bad.errors.joined();
    for (const char* v : {"86401", "5m", "\"300\"", "1e3", "99999999999999999999", "[300]"})
        EXPECT_FALSE(
            parse_config(std::string("oidc:\n  jwks_max_age_seconds: ") + v + "\n", "t").ok())
            << v;
    auto early = parse_config("oidc:\n  activate_after_seconds: 60\n  jwks_max_age_seconds: 600\n",
                              "t.yaml");
    ASSERT_FALSE(early.ok());
    EXPECT_TRUE(has_line(early,
                         "t.yaml: oidc.activate_after_seconds: must be at least "
                         "oidc.jwks_max_age_seconds (600): relying parties keep the old "
                         "JWKS that long (line 2)"))
        << early.errors.joined();
    auto typo2 = parse_config("oidc:\n  jwks_maxage_seconds: 300\n", "t");
    EXPECT_TRUE(has_line(typo2, "oidc.jwks_maxage_seconds: unknown key")) << typo2.errors.joined();
}
