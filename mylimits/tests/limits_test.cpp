// limits_test.cpp - the mylimits model: tiers, caps, usage and every pending reason in words.
#include <gtest/gtest.h>

#include "limits.hpp"
#include "limits_fixture.hpp"

using namespace allot;
using namespace allot::limits;
using allot::testing::job;
using allot::testing::limits_config;
using allot::testing::limits_facts;

namespace {

const AccountView& account(const Report& r, const std::string& name)
{
    for (const auto& a : r.accounts)
        if (a.account == name) return a;
    ADD_FAILURE() << "no account " << name;
    static AccountView none;
    return none;
}

const TierView& tier(const AccountView& a, Tier t)
{
    for (const auto& v : a.tiers)
        if (v.tier == t) return v;
    ADD_FAILURE() << "no tier " << tier_name(t) << " in " << a.account;
    static TierView none;
    return none;
}

const JobView& job_view(const Report& r, uint32_t id)
{
    for (const auto& j : r.jobs)
        if (j.job.job_id == id) return j;
    ADD_FAILURE() << "no job " << id;
    static JobView none;
    return none;
}

std::string explain(Facts facts, const JobFacts& j)
{
    facts.jobs.push_back(j);
    Config config = limits_config();
    Report r = build_report(facts, config);
    return job_view(r, j.job_id).explanation;
}

}  // namespace

TEST(LimitsModel, AccountsDefaultFirstAndZeroGpuAccountFlagged)
{
    Report r = build_report(limits_facts(), limits_config());
    ASSERT_EQ(r.accounts.size(), 2u);
    EXPECT_EQ(r.accounts[0].account, "team-a");
    EXPECT_TRUE(r.accounts[0].is_default);
    EXPECT_TRUE(r.accounts[0].is_team);
    EXPECT_EQ(r.accounts[0].description, "Team A (vision)");
    EXPECT_FALSE(r.accounts[0].zero_gpu);
    EXPECT_EQ(r.accounts[1].account, "default");
    EXPECT_TRUE(r.accounts[1].zero_gpu);
    EXPECT_FALSE(r.only_default_account);
    EXPECT_EQ(r.cluster, "lab");
}

TEST(LimitsModel, TiersCarryCapsUsageWalltimeAndPreemption)
{
    Report r = build_report(limits_facts(), limits_config());
    const auto& a = account(r, "team-a");
    ASSERT_EQ(a.tiers.size(), 3u);

    const auto& p = tier(a, Tier::Project);
    EXPECT_EQ(p.qos, "team-a");
    EXPECT_TRUE(p.allowed);
    EXPECT_EQ(p.cap_gpus, 8u);
    EXPECT_EQ(p.team_in_use, 8u);
    EXPECT_EQ(p.user_in_use, 4u);
    EXPECT_FALSE(p.max_wall_minutes.has_value());
    EXPECT_FALSE(p.preemptible);
    EXPECT_EQ(p.running_jobs, 1u);
    EXPECT_EQ(p.pending_jobs, 1u);
    EXPECT_EQ(p.running_gpus, 4u);
    EXPECT_EQ(p.pending_gpus, 2u);

    const auto& g = tier(a, Tier::General);
    EXPECT_EQ(g.cap_gpus, 16u);
    EXPECT_EQ(g.team_cap_gpus, 4u);
    EXPECT_EQ(g.pool_in_use, 11u);
    EXPECT_EQ(g.team_in_use, 3u);
    EXPECT_EQ(g.user_in_use, 1u);
    EXPECT_EQ(g.max_wall_minutes, 3u * 1440);
    EXPECT_FALSE(g.preemptible);

    const auto& s = tier(a, Tier::Spot);
    EXPECT_FALSE(s.cap_gpus.has_value());
    EXPECT_EQ(s.team_in_use, 2u);
    EXPECT_EQ(s.user_in_use, 2u);
    EXPECT_EQ(s.max_wall_minutes, 1440u);
    EXPECT_TRUE(s.preemptible);
    EXPECT_EQ(s.pending_jobs, 1u);
}

TEST(LimitsModel, OnlyInDefaultAccountSaysSo)
{
    Facts f = limits_facts();
    f.user.default_account = "default";
    f.assocs.erase(f.assocs.begin());
    f.jobs.clear();
    Report r = build_report(f, limits_config());
    EXPECT_TRUE(r.only_default_account);
    EXPECT_NE(r.join_hint.find("https://id.example.org"), std::string::npos);
}

TEST(LimitsModel, UnknownUsageStaysUnknownButOwnJobsAreAFloor)
{
    Facts f = limits_facts();
    for (auto& q : f.qos) {
        q.usage_known = false;
        q.gpus_in_use.reset();
    }
    Report r = build_report(f, limits_config());
    const auto& p = tier(account(r, "team-a"), Tier::Project);
    EXPECT_FALSE(p.team_in_use.has_value());
    EXPECT_EQ(p.user_in_use, 4u);

    // Counters that lag behind the user's own running jobs are raised to them.
    f = limits_facts();
    f.qos[0].gpus_in_use = 1;
    f.qos[0].gpus_in_use_by_account["team-a"] = 1;
    r = build_report(f, limits_config());
    EXPECT_EQ(tier(account(r, "team-a"), Tier::Project).team_in_use, 4u);
}

TEST(LimitsModel, QosNotInAssociationIsShownAsNotAllowed)
{
    Facts f = limits_facts();
    f.assocs[0].qos = {"team-a"};
    Report r = build_report(f, limits_config());
    EXPECT_TRUE(tier(account(r, "team-a"), Tier::Project).allowed);
    EXPECT_FALSE(tier(account(r, "team-a"), Tier::General).allowed);
    EXPECT_FALSE(tier(account(r, "team-a"), Tier::Spot).allowed);
}

TEST(LimitsModel, JobsSortedRunningFirstAndRequeuedSpotMarked)
{
    Report r = build_report(limits_facts(), limits_config());
    ASSERT_EQ(r.jobs.size(), 6u);
    EXPECT_TRUE(r.jobs[0].running);
    EXPECT_TRUE(r.jobs[1].running);
    EXPECT_TRUE(r.jobs[2].running);
    EXPECT_TRUE(r.jobs[3].pending);
    EXPECT_TRUE(job_view(r, 105).requeued_after_preemption);
    EXPECT_EQ(job_view(r, 105).tier, Tier::Spot);
    EXPECT_FALSE(job_view(r, 102).requeued_after_preemption);
    EXPECT_TRUE(job_view(r, 101).explanation.empty());
}

// build_report skips the sort when slurmctld's order is already right: both
// paths must give running jobs first, then by job id, finished jobs left out.
TEST(LimitsModel, JobOrderTheSameWhetherTheInputIsSortedOrNot)
{
    auto ids = [](const Report& r) {
        std::vector<uint32_t> out;
        for (const auto& j : r.jobs) out.push_back(j.job.job_id);
        return out;
    };
    Facts shuffled = limits_facts();
    shuffled.jobs = {
        job(204, "PENDING", "Priority", "team-a", 1), job(202, "RUNNING", "None", "team-a", 1),
        job(203, "COMPLETED", "None", "team-a", 1), job(201, "PENDING", "Priority", "team-a", 1),
        job(200, "RUNNING", "None", "team-a", 1)};
    const std::vector<uint32_t> want{200, 202, 201, 204};
    EXPECT_EQ(ids(build_report(shuffled, limits_config())), want);

    Facts in_order = shuffled;
    in_order.jobs = {
        job(200, "RUNNING", "None", "team-a", 1), job(202, "RUNNING", "None", "team-a", 1),
        job(201, "PENDING", "Priority", "team-a", 1), job(203, "COMPLETED", "None", "team-a", 1),
        job(204, "PENDING", "Priority", "team-a", 1)};
    EXPECT_EQ(ids(build_report(in_order, limits_config())), want);
}

// ------------------------------------------------------------------ reason texts

TEST(ReasonText, QOSGrpGRESOnProjectNamesTeamCapAndUsage)
{
    Report r = build_report(limits_facts(), limits_config());
    EXPECT_EQ(job_view(r, 102).explanation,
              "waiting for your team's project cap of 8 GPUs; 8 in use by your team. It starts "
              "when your team's running jobs free GPUs");
}

TEST(ReasonText, QOSGrpGRESOnGeneralNamesThePool)
{
    auto e = explain(limits_facts(), job(200, "PENDING", "QOSGrpGRES", "general", 1));
    EXPECT_EQ(e, "waiting for the shared general pool of 16 GPUs; 11 in use by all teams");
}

TEST(ReasonText, MaxGRESPerAccountBothSpellings)
{
    Report r = build_report(limits_facts(), limits_config());
    EXPECT_EQ(job_view(r, 104).explanation,
              "waiting for your team's general burst cap of 4 GPUs; 3 in use by your team in "
              "general");
    auto e = explain(limits_facts(), job(201, "PENDING", "MaxGRESPerAccount", "general", 2));
    EXPECT_EQ(e, job_view(r, 104).explanation);
}

TEST(ReasonText, AssocGrpGRESInZeroGpuAccountSaysNeverAndHowToJoin)
{
    auto e = explain(limits_facts(), job(202, "PENDING", "AssocGrpGRES", "general", 1, "default"));
    EXPECT_NE(e.find("account default has no GPU allocation (0 GPUs)"), std::string::npos) << e;
    EXPECT_NE(e.find("will never start"), std::string::npos);
    EXPECT_NE(e.find("Ask your PI to add you to a team"), std::string::npos);
    EXPECT_NE(e.find("scancel 202"), std::string::npos);
}

TEST(ReasonText, AssocGrpGRESInCappedTeamAccount)
{
    Facts f = limits_facts();
    f.assocs[0].grp_gpus = 12;
    auto e = explain(f, job(203, "PENDING", "AssocGrpGRES", "team-a", 1));
    EXPECT_EQ(e, "waiting for account team-a's GPU limit of 12 GPUs; 13 in use by the account");
}

TEST(ReasonText, PriorityAndResources)
{
    auto p = explain(limits_facts(), job(204, "PENDING", "Priority", "team-a", 1));
    EXPECT_NE(p.find("higher priority"), std::string::npos);
    EXPECT_NE(p.find("your caps are not the problem"), std::string::npos);
    auto j = job(205, "PENDING", "Resources", "team-a", 1);
    j.start_time = 1764727200;
    auto res = explain(limits_facts(), j);
    EXPECT_NE(res.find("waiting for nodes or GPUs to become free"), std::string::npos);
    EXPECT_NE(res.find("expected start"), std::string::npos);
    EXPECT_NE(res.find("spot jobs on them are preempted"), std::string::npos);
}

TEST(ReasonText, WalltimeOverTierLimitGivesTheFix)
{
    auto j = job(206, "PENDING", "QOSMaxWallDurationPerJobLimit", "spot", 1);
    j.time_limit_minutes = 2 * 1440;
    auto e = explain(limits_facts(), j);
    EXPECT_EQ(e,
              "asks for 2-00:00:00, more than the tier's limit of 1-00:00:00; it will never "
              "start: scontrol update jobid=206 TimeLimit=1-00:00:00");
}

TEST(ReasonText, BeginTimeAfterRequeueSaysPreempted)
{
    Report r = build_report(limits_facts(), limits_config());
    const auto& e = job_view(r, 105).explanation;
    EXPECT_EQ(e.rfind("requeued after preemption (restart 1)", 0), 0u) << e;
    auto plain = explain(limits_facts(), job(207, "PENDING", "BeginTime", "team-a", 1));
    EXPECT_EQ(plain.rfind("asked to start no earlier than", 0), 0u) << plain;
}

TEST(ReasonText, HeldDependencyAndOthers)
{
    auto f = limits_facts();
    EXPECT_EQ(explain(f, job(208, "PENDING", "JobHeldUser", "team-a", 1)),
              "held by you: scontrol release 208");
    EXPECT_NE(explain(f, job(209, "PENDING", "JobHeldAdmin", "team-a", 1)).find("administrator"),
              std::string::npos);
    EXPECT_NE(explain(f, job(210, "PENDING", "Dependency", "team-a", 1)).find("--dependency"),
              std::string::npos);
    EXPECT_NE(explain(f, job(211, "PENDING", "DependencyNeverSatisfied", "team-a", 1))
                  .find("never start"),
              std::string::npos);
    EXPECT_NE(explain(f, job(212, "PENDING", "QOSMaxGRESPerJob", "general", 9)).find("9 GPUs"),
              std::string::npos);
    EXPECT_NE(explain(f, job(213, "PENDING", "QOSGrpCpuLimit", "team-a", 1))
                  .find("GPUs are not the limit"),
              std::string::npos);
    EXPECT_NE(explain(f, job(214, "PENDING", "QOSMaxJobsPerUserLimit", "team-a", 1))
                  .find("number of jobs"),
              std::string::npos);
    EXPECT_EQ(explain(f, job(215, "PENDING", "SomethingNew", "team-a", 1)),
              "Slurm reason SomethingNew (see `man squeue`, JOB REASON CODES)");
    EXPECT_NE(explain(f, job(216, "PENDING", "None", "team-a", 1)).find("scheduler"),
              std::string::npos);
}

TEST(ReasonText, UsageHiddenIsSaidNotInvented)
{
    Facts f = limits_facts();
    for (auto& q : f.qos) {
        q.usage_known = false;
        q.gpus_in_use.reset();
    }
    auto e = explain(f, job(217, "PENDING", "QOSGrpGRES", "team-a", 1));
    EXPECT_NE(e.find("usage of your team not visible"), std::string::npos) << e;
}

TEST(ReasonText, ForeignQosAndAccountStillExplained)
{
    Facts f = limits_facts();
    auto e = explain(f, job(218, "PENDING", "QOSGrpGRES", "other-qos", 1, "other-acct"));
    EXPECT_NE(e.find("QOS other-qos"), std::string::npos) << e;
    EXPECT_NE(e.find("(limit not visible)"), std::string::npos) << e;
}

// ------------------------------------------------------------------ TRES strings

TEST(TresGpus, AllSpellings)
{
    EXPECT_EQ(gpus_in_tres_string("cpu=4,mem=8G,node=1,billing=4,gres/gpu=2"), 2u);
    EXPECT_EQ(gpus_in_tres_string("cpu=4,gres/gpu=4,gres/gpu:a100=4"), 4u);
    EXPECT_EQ(gpus_in_tres_string("cpu=4,gres/gpu:a100=2,gres/gpu:h100=1"), 3u);
    EXPECT_EQ(gpus_in_tres_string("gres:gpu:3"), 3u);
    EXPECT_EQ(gpus_in_tres_string("gres/gpu:2"), 2u);
    EXPECT_EQ(gpus_in_tres_string("gpu:5"), 5u);
    EXPECT_EQ(gpus_in_tres_string("cpu=1,mem=1G"), 0u);
    EXPECT_EQ(gpus_in_tres_string(""), 0u);
    EXPECT_EQ(gpus_in_tres_string("gres/gpu=x"), 0u);
    EXPECT_EQ(gpus_in_tres_string("gres/gpu=99999999999999999999"), 0u);
    EXPECT_EQ(gpus_in_tres_string(",,,=,:"), 0u);
    EXPECT_EQ(gpus_in_tres_string(std::string(10000, 'g')), 0u);
    EXPECT_EQ(gpus_in_tres_string("gres/gpumem=4000"), 0u);
}

TEST(TresGpus, ById)
{
    EXPECT_EQ(tres_id_value("1=16,2=64000,1001=8", 1001), 8u);
    EXPECT_EQ(tres_id_value("1001=0", 1001), 0u);
    EXPECT_EQ(tres_id_value("1=16", 1001), std::nullopt);
    EXPECT_EQ(tres_id_value("1001=18446744073709551615", 1001), std::nullopt);
    EXPECT_EQ(tres_id_value("1001=-1", 1001), std::nullopt);
    EXPECT_EQ(tres_id_value("x=1,1001=", 1001), std::nullopt);
    EXPECT_EQ(tres_id_value("", 1001), std::nullopt);
}

TEST(TierOfQos, ByConfig)
{
    Config c = limits_config();
    EXPECT_EQ(tier_of_qos(c, "team-a"), Tier::Project);
    EXPECT_EQ(tier_of_qos(c, "team-b"), Tier::Project);  // qos defaults to the account
    EXPECT_EQ(tier_of_qos(c, "general"), Tier::General);
    EXPECT_EQ(tier_of_qos(c, "spot"), Tier::Spot);
    EXPECT_EQ(tier_of_qos(c, "normal"), Tier::None);
    EXPECT_EQ(tier_of_qos(c, ""), Tier::None);
}
