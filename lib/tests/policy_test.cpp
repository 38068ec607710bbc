// policy_test.cpp - every rule of the allocation policy, against a fake QOS cache.
#include <gtest/gtest.h>

#include "allot/policy.hpp"
#include "allot/units.hpp"
#include "fake_limits.hpp"

using namespace allot;
using allot::testing::FakeLimits;

namespace {

Config lab_config()
{
    auto load = parse_config(R"(
cluster:
  partition: main
  default_account: default
  join_hint: "ask your PI"
  mem_per_gpu: 8G
  cpus_per_gpu: 2
tiers:
  general: {pool_gpus: 8, per_team_gpus: 4, default_time: "1-00:00:00"}
  spot: {default_time: "04:00:00", grace_seconds: 600, signal: USR1}
teams:
  - {group: team-a, account: team-a, gpus: 8}
  - {group: team-b, account: team-b, qos: proj-b, gpus: 4}
)",
                             "policy-test");
    EXPECT_TRUE(load.ok()) << load.errors.joined();
    return *load.config;
}

FakeLimits lab_limits()
{
    FakeLimits limits;
    limits.qos_by_name["team-a"] = QosLimits{8, std::nullopt, std::nullopt};
    limits.qos_by_name["proj-b"] = QosLimits{4, std::nullopt, std::nullopt};
    limits.qos_by_name["general"] = QosLimits{8, 4, 3 * 1440};
    limits.qos_by_name["spot"] = QosLimits{std::nullopt, std::nullopt, 1440};
    return limits;
}

JobRequest gpu_job(const std::string& account, const std::string& gpus = "gres:gpu:1")
{
    JobRequest job;
    job.uid = 1001;
    job.account = account;
    job.gpus.per_job = gpus;
    return job;
}

class Policy : public ::testing::Test {
protected:
    Config config = lab_config();
    FakeLimits limits = lab_limits();
};

}  // namespace

TEST_F(Policy, DefaultAccountGpuJobIsRejectedWithHowToJoin)
{
    auto d = decide_submit(gpu_job("default"), config, limits);
    EXPECT_FALSE(d.accepted);
    EXPECT_NE(d.message.find("you are not yet in a team with a GPU allocation"), std::string::npos);
    EXPECT_NE(d.message.find("ask your PI"), std::string::npos);
    EXPECT_NE(d.message.find("-A <team>"), std::string::npos);
}

TEST_F(Policy, DefaultAccountCpuJobPasses)
{
    JobRequest job;
    job.account = "default";
    auto d = decide_submit(job, config, limits);
    EXPECT_TRUE(d.accepted);
    EXPECT_FALSE(d.changes.any());
}

TEST_F(Policy, NoQosMeansProjectQosAndPerGpuDefaults)
{
    auto d = decide_submit(gpu_job("team-b", "gres:gpu:2"), config, limits);
    ASSERT_TRUE(d.accepted) << d.message;
    EXPECT_EQ(d.tier, Tier::Project);
    EXPECT_EQ(d.gpus, 2u);
    EXPECT_EQ(d.changes.qos.value(), "proj-b");
    EXPECT_EQ(d.changes.mem_per_gpu_mb.value(), 8192u);
    EXPECT_EQ(d.changes.cpus_per_gpu.value(), 2u);
    EXPECT_FALSE(d.changes.time_minutes.has_value());  // project tier: no walltime limit
    EXPECT_FALSE(d.changes.set_requeue);
}

TEST_F(Policy, ExplicitMemoryAndCpuChoicesAreKept)
{
    for (int which = 0; which < 4; ++which) {
        auto job = gpu_job("team-a");
        job.mem_set = which == 0;
        job.mem_per_gpu_set = which == 1;
        job.cpus_set = which == 2;
        job.cpus_per_gpu_set = which == 3;
        auto d = decide_submit(job, config, limits);
        ASSERT_TRUE(d.accepted);
        EXPECT_EQ(d.changes.mem_per_gpu_mb.has_value(), which >= 2) << which;
        EXPECT_EQ(d.changes.cpus_per_gpu.has_value(), which < 2) << which;
    }
}

TEST_F(Policy, CpuOnlyJobGetsNoGpuDefaults)
{
    JobRequest job;
    job.account = "team-a";
    auto d = decide_submit(job, config, limits);
    ASSERT_TRUE(d.accepted);
    EXPECT_FALSE(d.changes.mem_per_gpu_mb.has_value());
    EXPECT_FALSE(d.changes.cpus_per_gpu.has_value());
}

TEST_F(Policy, GeneralGetsDefaultTimeAndRejectsOverMax)
{
    auto job = gpu_job("team-a");
    job.qos = "general";
    auto d = decide_submit(job, config, limits);
    ASSERT_TRUE(d.accepted);
    EXPECT_EQ(d.tier, Tier::General);
    EXPECT_EQ(d.changes.time_minutes.value(), 1440u);
    EXPECT_FALSE(d.changes.qos.has_value());

    job.time_minutes = 4 * 1440;
    d = decide_submit(job, config, limits);
    EXPECT_FALSE(d.accepted);
    EXPECT_NE(d.message.find("general jobs may run at most 3-00:00:00"), std::string::npos)
        << d.message;
    EXPECT_NE(d.message.find("4-00:00:00"), std::string::npos);

    job.time_minutes = kUnlimitedMinutes;
    EXPECT_FALSE(decide_submit(job, config, limits).accepted);
    job.time_minutes = 3 * 1440;
    EXPECT_TRUE(decide_submit(job, config, limits).accepted);
}

TEST_F(Policy, SpotIsRequeueableWithBatchSignal)
{
    auto job = gpu_job("team-a", "gres:gpu:16");
    job.qos = "spot";
    auto d = decide_submit(job, config, limits);
    ASSERT_TRUE(d.accepted) << d.message;  // uncapped
    EXPECT_EQ(d.tier, Tier::Spot);
    EXPECT_TRUE(d.changes.set_requeue);
    ASSERT_TRUE(d.changes.batch_signal.has_value());
    EXPECT_EQ(d.changes.batch_signal->name, "USR1");
    EXPECT_EQ(d.changes.batch_signal->seconds, 600u);
    EXPECT_EQ(d.changes.time_minutes.value(), 240u);

    job.signal_set = true;
    job.requeue = true;
    d = decide_submit(job, config, limits);
    EXPECT_FALSE(d.changes.batch_signal.has_value());  // the user's own --signal wins
    EXPECT_FALSE(d.changes.set_requeue);

    job.time_minutes = 2 * 1440;
    d = decide_submit(job, config, limits);
    EXPECT_FALSE(d.accepted);
    EXPECT_NE(d.message.find("spot jobs may run at most 1-00:00:00"), std::string::npos)
        << d.message;
}

TEST_F(Policy, JobLargerThanProjectCapIsRejectedWithAlternatives)
{
    auto job = gpu_job("team-b", "gres:gpu:6");
    auto d = decide_submit(job, config, limits);
    EXPECT_FALSE(d.accepted);
    EXPECT_NE(d.message.find("asks for 6 GPUs but team team-b's project share is 4 GPUs"),
              std::string::npos)
        << d.message;
    EXPECT_NE(d.message.find("--qos=general (up to 4 GPUs per team)"), std::string::npos)
        << d.message;
    EXPECT_NE(d.message.find("--qos=spot"), std::string::npos);

    job.gpus.per_job = "gres:gpu:4";  // exactly the cap: accepted (it may pend)
    EXPECT_TRUE(decide_submit(job, config, limits).accepted);
}

TEST_F(Policy, GeneralPerTeamCapCountsNodes)
{
    auto job = gpu_job("team-a", "");
    job.gpus.per_node = "gres:gpu:3";
    job.gpus.nodes = 2;
    job.qos = "general";
    auto d = decide_submit(job, config, limits);
    EXPECT_FALSE(d.accepted);
    EXPECT_NE(d.message.find("the general tier allows 4 GPUs per team"), std::string::npos)
        << d.message;
    EXPECT_EQ(d.message.find("--qos=general"), std::string::npos);  // not suggested to itself
}

TEST_F(Policy, CapsComeFromSlurmNotConfig)
{
    limits.qos_by_name["team-a"].grp_gpus = 2;  // syncd changed it; config still says 8
    EXPECT_FALSE(decide_submit(gpu_job("team-a", "gres:gpu:3"), config, limits).accepted);
    limits.qos_by_name.erase("team-a");  // QOS unknown to slurmctld: no cap to enforce here
    EXPECT_TRUE(decide_submit(gpu_job("team-a", "gres:gpu:30"), config, limits).accepted);
}

TEST_F(Policy, AnotherTeamsProjectQosIsRejected)
{
    auto job = gpu_job("team-a");
    job.qos = "proj-b";
    auto d = decide_submit(job, config, limits);
    EXPECT_FALSE(d.accepted);
    EXPECT_NE(d.message.find("'proj-b' is the project QOS of account 'team-b'"), std::string::npos);
}

TEST_F(Policy, ForeignAccountsPartitionsAndQosPassUntouched)
{
    auto d = decide_submit(gpu_job("handmade", "gres:gpu:64"), config, limits);
    EXPECT_TRUE(d.accepted);
    EXPECT_FALSE(d.changes.any());

    auto other_partition = gpu_job("default");
    other_partition.partition = "cpu";
    EXPECT_TRUE(decide_submit(other_partition, config, limits).accepted);

    auto site_qos = gpu_job("team-a", "gres:gpu:64");
    site_qos.qos = "debug";
    d = decide_submit(site_qos, config, limits);
    EXPECT_TRUE(d.accepted);
    EXPECT_FALSE(d.changes.any());
}

TEST_F(Policy, MalformedGpuRequestIsRejectedClearly)
{
    auto d = decide_submit(gpu_job("team-a", "gres:gpu:lots:of"), config, limits);
    EXPECT_FALSE(d.accepted);
    EXPECT_NE(d.message.find("cannot read the GPU request"), std::string::npos);
}

TEST_F(Policy, ModifyChecksTheMergedJob)
{
    auto current = gpu_job("team-a");
    current.qos = "general";
    current.time_minutes = 600;

    JobRequest raise_time;
    raise_time.time_minutes = 5 * 1440;
    auto d = decide_modify(current, raise_time, config, limits);
    EXPECT_FALSE(d.accepted);
    EXPECT_NE(d.message.find("at most 3-00:00:00"), std::string::npos);

    JobRequest to_other_team;
    to_other_team.qos = "proj-b";
    EXPECT_FALSE(decide_modify(current, to_other_team, config, limits).accepted);

    // Slurm sets --signal only at submission: a move into spot needs one already.
    JobRequest to_spot;
    to_spot.qos = "spot";
    d = decide_modify(current, to_spot, config, limits);
    EXPECT_FALSE(d.accepted);
    EXPECT_TRUE(d.error.is(policy::Errc::SpotSignal));
    EXPECT_NE(d.message.find("submit it with --qos=spot, or with --signal=B:USR1@600"),
              std::string::npos)
        << d.message;
    auto with_signal = current;
    with_signal.signal_set = true;
    d = decide_modify(with_signal, to_spot, config, limits);
    ASSERT_TRUE(d.accepted) << d.message;
    EXPECT_TRUE(d.changes.set_requeue);
    EXPECT_FALSE(d.changes.batch_signal.has_value());  // the job's own signal stays
    EXPECT_FALSE(d.changes.time_minutes.has_value());  // modify never adds defaults

    auto big = current;
    big.qos = "";
    big.gpus.per_job = "gres:gpu:2";
    JobRequest more_gpus;
    more_gpus.gpus.per_job = "gres:gpu:9";
    EXPECT_FALSE(decide_modify(big, more_gpus, config, limits).accepted);

    JobRequest to_default;
    to_default.account = "default";
    EXPECT_FALSE(decide_modify(current, to_default, config, limits).accepted);
}

TEST_F(Policy, NamesAreComparedAsSlurmctldHoldsThem)
{
    auto upper = gpu_job("TEAM-A", "gres:gpu:12");  // slurmctld lowers accounts after us
    auto d = decide_submit(upper, config, limits);
    EXPECT_FALSE(d.accepted);
    EXPECT_TRUE(d.error.is(policy::Errc::GpuCap));

    auto spot = gpu_job("team-a");
    spot.qos = "SPOT";  // assoc_mgr matches QOS names without case
    d = decide_submit(spot, config, limits);
    ASSERT_TRUE(d.accepted);
    EXPECT_EQ(d.tier, Tier::Spot);
    EXPECT_EQ(d.changes.qos, "spot");  // written back as Slurm spells it
    EXPECT_TRUE(d.changes.set_requeue);

    auto bob = gpu_job("Default");
    EXPECT_TRUE(decide_submit(bob, config, limits).error.is(policy::Errc::ZeroGpuAccount));
}

TEST_F(Policy, PartitionListIsGovernedIfAnyMemberIs)
{
    EXPECT_TRUE(partition_governed("main,main", "main"));
    EXPECT_TRUE(partition_governed("cpu,main", "main"));
    EXPECT_FALSE(partition_governed("cpu,debug", "main"));
    EXPECT_FALSE(partition_governed("Main", "main"));  // partition names are exact
    EXPECT_TRUE(partition_governed("", "main"));
    auto job = gpu_job("default");
    job.partition = "cpu,main";
    EXPECT_FALSE(decide_submit(job, config, limits).accepted);
}

TEST_F(Policy, TeamMemberChargingTheDefaultAccountIsToldTheirTeams)
{
    auto job = gpu_job("default", "gres:gpu:2");
    job.user_teams = {"team-a", "team-b"};
    auto d = decide_submit(job, config, limits);
    EXPECT_FALSE(d.accepted);
    EXPECT_EQ(d.message.find("not yet in a team"), std::string::npos) << d.message;
    EXPECT_NE(d.message.find("asks for 2 GPUs"), std::string::npos) << d.message;
    EXPECT_NE(d.message.find("-A team-a or -A team-b"), std::string::npos) << d.message;
}

TEST_F(Policy, HeterogeneousComponentsAddUpAndAreNamed)
{
    auto job = gpu_job("team-a", "gres:gpu:5");
    job.het_component = 1;
    job.het_gpus_before = 5;  // component 0 asked for 5 in team-a's project QOS
    auto d = decide_submit(job, config, limits);
    EXPECT_FALSE(d.accepted);
    EXPECT_NE(d.message.find("heterogeneous job component 1: this heterogeneous job asks for "
                             "10 GPUs in all (5 GPUs in this component)"),
              std::string::npos)
        << d.message;

    auto bob = gpu_job("default");
    bob.het_component = 2;
    d = decide_submit(bob, config, limits);
    EXPECT_NE(d.message.find("allot: heterogeneous job component 2: you are not yet"),
              std::string::npos)
        << d.message;
}

TEST_F(Policy, DefaultsNeverExceedWhatANodeGives)
{
    auto job = gpu_job("team-a");
    job.gpus.node.gpus = 8;
    job.gpus.node.cpus = 8;
    job.gpus.node.cpus_per_gpu = 1;
    job.gpus.node.mem_per_gpu_mb = 4000;
    auto d = decide_submit(job, config, limits);
    ASSERT_TRUE(d.accepted);
    EXPECT_EQ(d.changes.mem_per_gpu_mb, 4000u);  // config says 8G
    EXPECT_EQ(d.changes.cpus_per_gpu, 1u);       // config says 2
}

TEST_F(Policy, DefaultTimeAboveMaxWallIsLoweredNotRejected)
{
    limits.qos_by_name["general"].max_wall_minutes = 600;  // config default is 1 day
    auto job = gpu_job("team-a");
    job.qos = "general";
    auto d = decide_submit(job, config, limits);
    ASSERT_TRUE(d.accepted) << d.message;
    EXPECT_EQ(d.changes.time_minutes, 600u);
}

TEST_F(Policy, UpdatesAreDecidedAsTheMergedJobSubmittedAnew)
{
    auto current = gpu_job("team-a");
    current.qos = "team-a";
    current.time_minutes = kUnlimitedMinutes;  // project jobs have no limit
    current.signal_set = true;                 // submitted with --signal (spot needs one)

    JobRequest to_general;
    to_general.qos = "general";
    auto d = decide_modify(current, to_general, config, limits);
    ASSERT_TRUE(d.accepted) << d.message;
    EXPECT_EQ(d.changes.time_minutes, 1440u);  // the tier's default, not UNLIMITED

    JobRequest to_spot;
    to_spot.qos = "spot";
    d = decide_modify(current, to_spot, config, limits);
    ASSERT_TRUE(d.accepted) << d.message;
    EXPECT_EQ(d.changes.time_minutes, 240u);
    EXPECT_TRUE(d.changes.set_requeue);

    auto spot = current;
    spot.qos = "spot";
    spot.time_minutes = 60;
    spot.requeue = true;
    JobRequest no_requeue;
    no_requeue.requeue_set = true;
    no_requeue.requeue = false;
    d = decide_modify(spot, no_requeue, config, limits);
    EXPECT_FALSE(d.accepted);
    EXPECT_TRUE(d.error.is(policy::Errc::SpotRequeue));

    JobRequest explicit_time;
    explicit_time.qos = "general";
    explicit_time.time_minutes = 5 * 1440;
    EXPECT_TRUE(
        decide_modify(current, explicit_time, config, limits).error.is(policy::Errc::Walltime));

    JobRequest more_nodes;  // nodes/tasks changes are counted too
    current.gpus.per_job.clear();
    current.gpus.per_node = "gres:gpu:4";
    more_nodes.gpus.nodes = 3;
    EXPECT_TRUE(decide_modify(current, more_nodes, config, limits).error.is(policy::Errc::GpuCap));

    JobRequest other_account;  // team-b's account with team-a's QOS
    other_account.account = "team-b";
    EXPECT_TRUE(
        decide_modify(current, other_account, config, limits).error.is(policy::Errc::ForeignQos));
}
