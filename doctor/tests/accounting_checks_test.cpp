// accounting_checks_test.cpp - the accounting checks over fabricated sacctmgr output.
#include <gtest/gtest.h>

#include "../accounting_checks.hpp"

namespace allot::doctor {
namespace {

Config two_teams()
{
    Config c;
    TeamConfig a;
    a.account = "vision";
    a.qos = "vision";
    TeamConfig b;
    b.account = "nlp";
    b.qos = "nlp-proj";
    c.teams = {a, b};
    return c;
}

// What allot-syncd leaves in slurmdbd for two_teams().
const char* kGoodQos =
    "normal||cluster|00:00:00\n"
    "vision|spot|cluster|00:00:00\n"
    "nlp-proj|spot|cluster|00:00:00\n"
    "general|spot|cluster|00:00:00\n"
    "spot||requeue|00:10:00\n";

AccountingInputs good()
{
    return {parse_qos_rows(kGoodQos), parse_account_rows("root\ndefault\nvision\nnlp\n"), {}, {}};
}

TEST(ParseDuration, SacctmgrForms)
{
    EXPECT_EQ(parse_duration("00:10:00"), 600u);
    EXPECT_EQ(parse_duration("1-00:00:01"), 86401u);
    EXPECT_EQ(parse_duration("05:00"), 300u);
    EXPECT_EQ(parse_duration("42"), 42u);
    EXPECT_EQ(parse_duration(""), std::nullopt);
    EXPECT_EQ(parse_duration("1:x"), std::nullopt);
}

TEST(ParseQosRows, FieldsOfEachRow)
{
    std::vector<QosRow> rows = parse_qos_rows("general|spot,other|Cluster|00:01:00\n\n");
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].name, "general");
    EXPECT_EQ(rows[0].preempt, (std::vector<std::string>{"spot", "other"}));
    EXPECT_EQ(rows[0].preempt_mode, "cluster");
    EXPECT_EQ(rows[0].grace_seconds, 60u);
}

TEST(CheckAccounting, WhatSyncdWritesPasses)
{
    for (const Finding& f : check_accounting(good(), two_teams()))
        EXPECT_EQ(f.severity, Severity::Ok) << f.id << ": " << f.what;
}

TEST(CheckAccounting, MissingTeamQosAndDefaultAccountFail)
{
    AccountingInputs in{
        parse_qos_rows("general|spot|cluster|0\nspot||requeue|00:10:00\n"), {"root"}, {}, {}};
    Findings out = check_accounting(in, two_teams());
    auto find = [&](const std::string& id) {
        for (const Finding& f : out)
            if (f.id == id) return f;
        return Finding{};
    };
    EXPECT_EQ(find("accounting.qos.vision").severity, Severity::Fail);
    EXPECT_EQ(find("accounting.qos.vision").fix.rfind("`sacctmgr -i add qos vision`", 0), 0u);
    EXPECT_EQ(find("accounting.qos.nlp-proj").severity, Severity::Fail);
    EXPECT_EQ(find("accounting.default_account").severity, Severity::Fail);
    EXPECT_NE(find("accounting.default_account").fix.find("sacctmgr -i add account default"),
              std::string::npos);
    EXPECT_EQ(find("accounting.qos.general").severity, Severity::Ok);
}

TEST(CheckAccounting, SpotWithoutRequeueOrWithAnotherGraceTimeFails)
{
    AccountingInputs in = good();
    in.qos.back().preempt_mode = "cancel";
    Finding f = check_spot_requeue(in, two_teams());
    EXPECT_EQ(f.severity, Severity::Fail);
    EXPECT_EQ(f.fix.rfind("`sacctmgr -i modify qos spot set PreemptMode=requeue GraceTime=600`", 0),
              0u);
    in = good();
    in.qos.back().grace_seconds = 0;
    EXPECT_EQ(check_spot_requeue(in, two_teams()).severity, Severity::Fail);
    Config longer = two_teams();
    longer.tiers.spot.grace_seconds = 900;
    EXPECT_NE(check_spot_requeue(good(), longer).fix.find("GraceTime=900"), std::string::npos);
}

TEST(CheckAccounting, ProjectAndGeneralQosMustPreemptSpot)
{
    AccountingInputs in = good();
    in.qos[1].preempt.clear();  // vision
    in.qos[3].preempt.clear();  // general
    Findings out = check_preempts_spot(in, two_teams());
    ASSERT_EQ(out.size(), 3u);
    EXPECT_EQ(out[0].severity, Severity::Fail);
    EXPECT_EQ(out[0].fix.rfind("`sacctmgr -i modify qos vision set Preempt+=spot`", 0), 0u);
    EXPECT_EQ(out[1].severity, Severity::Ok);
    EXPECT_EQ(out[2].id, "accounting.preempts_spot.general");
    EXPECT_EQ(out[2].severity, Severity::Fail);
}

TEST(CheckAccounting, TresParsedWithMemoryInMegabytes)
{
    Tres t = parse_tres("cpu=16,gres/gpu=8,mem=64G");
    EXPECT_EQ(t, (Tres{{"cpu", 16}, {"gres/gpu", 8}, {"mem", 65536}}));
    EXPECT_EQ(parse_tres("mem=512M,mem2=x"), (Tres{{"mem", 512}}));
    EXPECT_TRUE(parse_tres("").empty());
}

Config limited_team()
{
    Config c;
    c.cluster.mem_per_gpu_mb = 8192;
    c.cluster.cpus_per_gpu = 2;
    c.tiers.general.pool_gpus = 8;
    c.tiers.general.per_team_gpus = 4;
    TeamConfig a;
    a.group = a.account = "team-a";
    a.gpus = 8;
    c.teams.push_back(a);
    return c;
}

TEST(CheckAccounting, QosLimitsDriftIsNamedWithTheCommandThatUndoesIt)
{
    const char* rows =
        "spot||requeue|00:10:00|||1-00:00:00|0\n"
        "default||cluster|00:00:00||||0\n"
        "general|spot|cluster|00:00:00|gres/gpu=8|gres/gpu=4|3-00:00:00|50\n"
        "team-a|spot|cluster|00:00:00|cpu=16,gres/gpu=8,mem=64G|||100\n";
    AccountingInputs in;
    in.qos = parse_qos_rows(rows);
    for (const Finding& f : check_qos_settings(in, limited_team()))
        EXPECT_EQ(f.severity, Severity::Ok) << f.id << ": " << f.what;
    in.qos = parse_qos_rows(
        "team-a|spot|cluster|00:00:00|cpu=16,gres/gpu=2,node=1|gres/gpu=1|2:00:00|100\n");
    Findings f = check_qos_settings(in, limited_team());
    ASSERT_EQ(f.size(), 1u);
    EXPECT_EQ(f[0].id, "accounting.qos_settings.team-a");
    EXPECT_EQ(f[0].severity, Severity::Fail);
    EXPECT_NE(f[0].what.find("GrpTRES is cpu=16,gres/gpu=2,node=1"), std::string::npos);
    EXPECT_NE(f[0].fix.find("`sacctmgr -i modify qos team-a set "
                            "GrpTRES=cpu=16,gres/gpu=8,mem=65536,node=-1 "
                            "MaxTRESPerAccount=gres/gpu=-1 MaxWall=-1`"),
              std::string::npos)
        << f[0].fix;
}

TEST(CheckAccounting, AssociationWritesAfterSyncdsLastCycleAreAnotherWriter)
{
    AccountingInputs in;
    EXPECT_EQ(check_other_writer(in).severity, Severity::Ok);
    in.syncd_success = 1000;
    in.since_syncd = {{1000, "Add Associations", "root", "id_assoc=6"},
                      {1001, "Modify QOS", "root", "spot"}};
    EXPECT_EQ(check_other_writer(in).severity, Severity::Ok);
    in.since_syncd.push_back({1002, "Add Associations", "sunk", "id_assoc=12"});
    Finding f = check_other_writer(in);
    EXPECT_EQ(f.severity, Severity::Warn);
    EXPECT_NE(f.what.find("Add Associations id_assoc=12 by sunk"), std::string::npos);
    EXPECT_NE(f.fix.find("`allot-syncd --once`"), std::string::npos);
    std::vector<Transaction> t =
        parse_transactions("2026-12-03T22:14:41|Add Users|root|alice|\nbad|x|y|z\n");
    ASSERT_EQ(t.size(), 1u);
    EXPECT_EQ(t[0].action, "Add Users");
}

}  // namespace
}  // namespace allot::doctor
