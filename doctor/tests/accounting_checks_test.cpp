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
    return {parse_qos_rows(kGoodQos), parse_account_rows("root\ndefault\nvision\nnlp\n")};
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
    AccountingInputs in{parse_qos_rows("general|spot|cluster|0\nspot||requeue|00:10:00\n"),
                        {"root"}};
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

}  // namespace
}  // namespace allot::doctor
