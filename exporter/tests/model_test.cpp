// model_test.cpp - snapshot + allot.yaml -> metrics, counters and rendering.
#include <gtest/gtest.h>

#include "../model.hpp"

namespace allot::exporter {
namespace {

constexpr const char* kYaml = R"(cluster:
  name: lab
  partition: main
tiers:
  general:
    qos: general
    pool_gpus: 8
    per_team_gpus: 4
  spot:
    qos: spot
teams:
  - group: team-a
    account: team-a
    gpus: 8
  - group: team-b
    account: team-b
    gpus: 4
)";

Config lab_config()
{
    ConfigLoad load = parse_config(kYaml, "test.yaml");
    EXPECT_TRUE(load.config.has_value()) << load.errors.joined();
    return *load.config;
}

JobSample job(std::string state, std::string account, std::string qos, uint64_t gpus,
              std::string reason = "None")
{
    JobSample j;
    j.state = std::move(state);
    j.account = std::move(account);
    j.qos = std::move(qos);
    j.partition = "main";
    j.gpus = gpus;
    j.reason = std::move(reason);
    return j;
}

// The value of the sample of `name` whose labels are exactly `labels`.
std::optional<double> value(const std::vector<Family>& fs, const std::string& name,
                            const std::vector<std::pair<std::string, std::string>>& labels)
{
    for (const auto& f : fs)
        if (f.name == name)
            for (const auto& s : f.samples)
                if (s.labels == labels) return s.value;
    return std::nullopt;
}

ExporterState up_state()
{
    ExporterState st;
    st.have_snapshot = st.slurmctld_up = true;
    return st;
}

Snapshot workload()
{
    Snapshot s;
    s.taken_at = 1000;
    s.jobs.push_back(job("RUNNING", "team-a", "team-a", 4));
    s.jobs.push_back(job("RUNNING", "team-a", "general", 2));
    s.jobs.push_back(job("RUNNING", "team-b", "spot", 1));
    s.jobs.push_back(job("RUNNING", "default", "normal", 0));
    s.jobs.push_back(job("PENDING", "team-b", "team-b", 8, "QOSGrpGRES"));
    s.jobs.push_back(job("PENDING", "team-b", "team-b", 2, "QOSGrpGRES"));
    s.jobs.push_back(job("PENDING", "team-a", "general", 3, "QOSMaxGRESPerAccount"));
    s.jobs.push_back(job("COMPLETED", "team-a", "team-a", 8));
    s.nodes.push_back({"n1", {"main"}, 8, 6, false});
    s.nodes.push_back({"n2", {"main", "other"}, 8, 1, false});
    s.nodes.push_back({"n3", {"main"}, 8, 0, true});
    s.nodes.push_back({"x1", {"other"}, 4, 0, false});
    return s;
}

TEST(Labels, TierComesFromTheQos)
{
    Config c = lab_config();
    EXPECT_EQ(tier_label(c, "team-a"), "project");
    EXPECT_EQ(tier_label(c, "GENERAL"), "general");
    EXPECT_EQ(tier_label(c, "spot"), "spot");
    EXPECT_EQ(tier_label(c, "normal"), "none");
    EXPECT_EQ(tier_label(c, ""), "none");
}

TEST(Labels, TeamIsTheConfiguredAccountElseNone)
{
    Config c = lab_config();
    EXPECT_EQ(team_label(c, "team-b"), "team-b");
    EXPECT_EQ(team_label(c, "default"), "none");
    EXPECT_EQ(team_label(c, "alice-private"), "none");
}

TEST(Labels, ReasonsAreBoundedWordsAsMylimitsSaysThem)
{
    EXPECT_EQ(reason_label(job("PENDING", "a", "a", 1, "QOSGrpGRES"), Tier::Project),
              "project cap");
    EXPECT_EQ(reason_label(job("PENDING", "a", "a", 1, "QOSGrpGRES"), Tier::General),
              "general pool");
    EXPECT_EQ(reason_label(job("PENDING", "a", "a", 1, "QOSMaxGRESPerAccount"), Tier::General),
              "team burst cap");
    EXPECT_EQ(reason_label(job("PENDING", "a", "a", 1, "Priority"), Tier::Spot), "priority");
    EXPECT_EQ(reason_label(job("PENDING", "a", "a", 1, "Resources"), Tier::Spot),
              "waiting for nodes or GPUs");
    JobSample requeued = job("PENDING", "a", "spot", 1, "BeginTime");
    requeued.restarts = 1;
    EXPECT_EQ(reason_label(requeued, Tier::Spot), "requeued after preemption");
    EXPECT_EQ(reason_label(job("PENDING", "a", "a", 1, "QOSMaxJobsPerUserLimit"), Tier::Spot),
              "job count limit");
    EXPECT_EQ(reason_label(job("PENDING", "a", "a", 1, "QOSGrpCpuLimit"), Tier::Spot),
              "cpu, memory or time limit");
    // Anything Slurm invents later maps to one fixed word: the label set stays bounded.
    EXPECT_EQ(reason_label(job("PENDING", "a", "a", 1, "SomeFutureReason"), Tier::Spot), "other");
    EXPECT_EQ(reason_label(job("PENDING", "a", "a", 1, "None"), Tier::Spot), "none");
}

TEST(Gres, NodeStringsWithTypesAndIndexes)
{
    EXPECT_EQ(gpus_in_gres("gpu:8"), 8u);
    EXPECT_EQ(gpus_in_gres("gpu:2(IDX:0-1)"), 2u);
    EXPECT_EQ(gpus_in_gres("gpu:a100:4(S:0),gpu:h100:4(S:1)"), 8u);
    EXPECT_EQ(gpus_in_gres("gpu:0(IDX:N/A)"), 0u);
    EXPECT_EQ(gpus_in_gres("(null)"), 0u);
    EXPECT_EQ(gpus_in_gres(""), 0u);
}

TEST(Families, AllocatedByTeamAndTierWithZerosForIdleTeams)
{
    Config c = lab_config();
    Accumulator acc;
    auto fs = families(workload(), c, acc, up_state());
    EXPECT_EQ(value(fs, "allot_gpus_allocated", {{"team", "team-a"}, {"tier", "project"}}), 4);
    EXPECT_EQ(value(fs, "allot_gpus_allocated", {{"team", "team-a"}, {"tier", "general"}}), 2);
    EXPECT_EQ(value(fs, "allot_gpus_allocated", {{"team", "team-b"}, {"tier", "spot"}}), 1);
    EXPECT_EQ(value(fs, "allot_gpus_allocated", {{"team", "team-b"}, {"tier", "project"}}), 0);
    // A finished job holds no GPUs; a running job without GPUs adds no sample.
    EXPECT_FALSE(value(fs, "allot_gpus_allocated", {{"team", "none"}, {"tier", "none"}}));
}

TEST(Families, CapsAndGeneralPool)
{
    Config c = lab_config();
    Accumulator acc;
    auto fs = families(workload(), c, acc, up_state());
    EXPECT_EQ(value(fs, "allot_team_project_cap_gpus", {{"team", "team-a"}}), 8);
    EXPECT_EQ(value(fs, "allot_team_project_cap_gpus", {{"team", "team-b"}}), 4);
    EXPECT_EQ(value(fs, "allot_team_general_cap_gpus", {{"team", "team-b"}}), 4);
    EXPECT_EQ(value(fs, "allot_general_pool_gpus", {}), 8);
    EXPECT_EQ(value(fs, "allot_general_pool_allocated_gpus", {}), 2);
}

TEST(Families, GovernedPartitionOnlyAndDownNodesFreeGpusAreDown)
{
    Config c = lab_config();
    Accumulator acc;
    auto fs = families(workload(), c, acc, up_state());
    EXPECT_EQ(value(fs, "allot_partition_gpus", {{"partition", "main"}}), 24);
    EXPECT_EQ(value(fs, "allot_partition_gpus_allocated", {{"partition", "main"}}), 7);
    EXPECT_EQ(value(fs, "allot_partition_gpus_idle", {{"partition", "main"}}), 9);
    EXPECT_EQ(value(fs, "allot_partition_gpus_down", {{"partition", "main"}}), 8);
    EXPECT_FALSE(value(fs, "allot_partition_gpus", {{"partition", "other"}}));
}

TEST(Families, EveryPartitionWhenNoneIsGoverned)
{
    Config c = lab_config();
    c.cluster.partition.clear();
    Accumulator acc;
    auto fs = families(workload(), c, acc, up_state());
    EXPECT_EQ(value(fs, "allot_partition_gpus", {{"partition", "other"}}), 12);
}

TEST(Families, PendingByTeamTierReason)
{
    Config c = lab_config();
    Accumulator acc;
    auto fs = families(workload(), c, acc, up_state());
    const std::vector<std::pair<std::string, std::string>> b = {
        {"team", "team-b"}, {"tier", "project"}, {"reason", "project cap"}};
    EXPECT_EQ(value(fs, "allot_jobs_pending", b), 2);
    EXPECT_EQ(value(fs, "allot_gpus_pending", b), 10);
    EXPECT_EQ(value(fs, "allot_jobs_pending",
                    {{"team", "team-a"}, {"tier", "general"}, {"reason", "team burst cap"}}),
              1);
}

TEST(Accumulator, GpuSecondsClipEachRunToTheInterval)
{
    Config c = lab_config();
    Accumulator acc;
    Snapshot s1;
    s1.taken_at = 1000;
    acc.add(s1, c);  // the starting point: nothing counted before it
    Snapshot s2;
    s2.taken_at = 1030;
    JobSample long_running = job("RUNNING", "team-a", "team-a", 4);
    long_running.job_id = 1;
    long_running.start_time = 500;  // started before the exporter: only 1000..1030 counts
    JobSample started = job("RUNNING", "team-a", "team-a", 2);
    started.job_id = 2;
    started.start_time = 1020;  // 10 s
    JobSample finished = job("COMPLETED", "team-b", "spot", 1);
    finished.job_id = 3;
    finished.start_time = 990;
    finished.end_time = 1005;  // 5 s inside the interval
    JobSample pending = job("PENDING", "team-b", "team-b", 8);
    pending.job_id = 4;
    s2.jobs = {long_running, started, finished, pending};
    acc.add(s2, c);
    EXPECT_DOUBLE_EQ(acc.gpu_seconds().at({"team-a", "project"}), 4 * 30 + 2 * 10);
    EXPECT_DOUBLE_EQ(acc.gpu_seconds().at({"team-b", "spot"}), 5);
    EXPECT_EQ(acc.gpu_seconds().count({"team-b", "project"}), 0u);
    // The next interval counts the finished job no more and the running ones again.
    Snapshot s3 = s2;
    s3.taken_at = 1040;
    acc.add(s3, c);
    EXPECT_DOUBLE_EQ(acc.gpu_seconds().at({"team-a", "project"}), 140 + 6 * 10);
    EXPECT_DOUBLE_EQ(acc.gpu_seconds().at({"team-b", "spot"}), 5);
}

// A job running since 900 on 4 GPUs, seen at the snapshot of 1000.
struct RequeueCase {
    Config c = lab_config();
    Accumulator acc;
    JobSample ran = job("RUNNING", "team-b", "spot", 4);
    RequeueCase()
    {
        ran.job_id = 7;
        ran.start_time = 900;
        ran.end_time = 900 + 3600;
        Snapshot s1;
        s1.taken_at = 1000;
        s1.jobs = {ran};
        acc.add(s1, c);
    }
    double after(const JobSample& now_shown, int64_t at)
    {
        Snapshot s;
        s.taken_at = at;
        s.jobs = {now_shown};
        acc.add(s, c);
        auto it = acc.gpu_seconds().find({"team-b", "spot"});
        return it == acc.gpu_seconds().end() ? 0 : it->second;
    }
};

TEST(Accumulator, RequeuedBetweenSnapshotsCountsUpToTheRequeue)
{
    RequeueCase k;
    JobSample requeued = job("PENDING", "team-b", "spot", 4, "BeginTime");
    requeued.job_id = 7;
    requeued.restarts = 1;
    requeued.end_time = 1012;  // slurmctld stamps the requeue's time while the job pends
    EXPECT_DOUBLE_EQ(k.after(requeued, 1030), 4 * 12);
    // Still pending at the next snapshot: nothing more, nothing twice.
    EXPECT_DOUBLE_EQ(k.after(requeued, 1060), 4 * 12);
    // It starts again: only the new run counts from there.
    JobSample again = k.ran;
    again.restarts = 1;
    again.start_time = 1080;
    again.end_time = 1080 + 3600;
    EXPECT_DOUBLE_EQ(k.after(again, 1090), 4 * 12 + 4 * 10);
}

TEST(Accumulator, RequeueCompletedCountsUpToTheResetSubmitTime)
{
    // Slurm 22.05: once the requeue completes the job pends with no end time of its own
    // (clients see an expected one, in the future) and its submit time reset to then.
    RequeueCase k;
    JobSample requeued = job("PENDING", "team-b", "spot", 4, "BeginTime");
    requeued.job_id = 7;
    requeued.restarts = 1;
    requeued.submit_time = 1015;
    requeued.end_time = 1015 + 121 + 600;
    EXPECT_DOUBLE_EQ(k.after(requeued, 1030), 4 * 15);
    EXPECT_DOUBLE_EQ(k.after(requeued, 1060), 4 * 15);
}

TEST(Accumulator, RequeueStillCompletingIsCarriedToTheNextSnapshot)
{
    RequeueCase k;
    JobSample completing = job("PENDING", "team-b", "spot", 4, "BeginTime");
    completing.job_id = 7;
    completing.restarts = 1;
    completing.submit_time = 800;  // still the original submission
    completing.end_time = 1030 + 600;
    EXPECT_DOUBLE_EQ(k.after(completing, 1030), 0);
    JobSample done = completing;
    done.submit_time = 1040;
    EXPECT_DOUBLE_EQ(k.after(done, 1060), 4 * 40);
    EXPECT_DOUBLE_EQ(k.after(done, 1090), 4 * 40);
}

TEST(Accumulator, RequeuedAndStartedAnewCountsTheOldRunUpToTheNewStart)
{
    RequeueCase k;
    JobSample again = k.ran;
    again.restarts = 1;
    again.start_time = 1250;
    again.end_time = 1250 + 3600;  // the new run's: says nothing of the old one's end
    EXPECT_DOUBLE_EQ(k.after(again, 1300), 4 * 250 + 4 * 50);
}

TEST(Accumulator, RequeueWithoutAKnownEndCountsNoTimeItMayNotHaveRun)
{
    RequeueCase k;
    JobSample requeued = job("PENDING", "team-b", "spot", 4, "BeginTime");
    requeued.job_id = 7;
    requeued.restarts = 1;
    requeued.end_time = 0;
    EXPECT_DOUBLE_EQ(k.after(requeued, 1030), 0);
}

TEST(Accumulator, ARunThatEndsNormallyIsCountedOnce)
{
    RequeueCase k;
    JobSample done = k.ran;
    done.state = "COMPLETED";
    done.end_time = 1010;
    EXPECT_DOUBLE_EQ(k.after(done, 1030), 4 * 10);
    EXPECT_DOUBLE_EQ(k.after(done, 1060), 4 * 10);
}

TEST(Accumulator, SpotPreemptionsFromRestartsAndThePreemptedState)
{
    Config c = lab_config();
    Accumulator acc;
    auto spot = [](uint32_t id, std::string state, uint32_t restarts) {
        JobSample j = job(std::move(state), "team-b", "spot", 1, "BeginTime");
        j.job_id = id;
        j.restarts = restarts;
        return j;
    };
    Snapshot s1;
    s1.taken_at = 1000;
    s1.jobs = {spot(1, "PENDING", 2)};  // preempted before the exporter started: not counted
    acc.add(s1, c);
    Snapshot s2;
    s2.taken_at = 1030;
    JobSample project = job("PENDING", "team-a", "team-a", 1);
    project.job_id = 9;
    project.restarts = 1;  // requeued, but not a spot job
    s2.jobs = {spot(1, "PENDING", 3), spot(2, "PENDING", 1), spot(3, "PREEMPTED", 0), project};
    acc.add(s2, c);
    Snapshot s3 = s2;  // nothing new: nothing counted twice
    s3.taken_at = 1060;
    acc.add(s3, c);
    EXPECT_EQ(acc.spot_preemptions().at("team-b"), 3u);
    EXPECT_EQ(acc.spot_preemptions().count("team-a"), 0u);
    auto fs = families(s3, c, acc, up_state());
    EXPECT_EQ(value(fs, "allot_spot_preemptions_total", {{"team", "team-b"}}), 3);
    EXPECT_EQ(value(fs, "allot_spot_preemptions_total", {{"team", "team-a"}}), 0);
}

TEST(Families, WithoutAnySnapshotOnlyTheExportersOwnHealth)
{
    Config c = lab_config();
    Accumulator acc;
    ExporterState st;
    st.snapshot_failures = 3;
    auto fs = families(Snapshot{}, c, acc, st);
    EXPECT_EQ(value(fs, "allot_slurmctld_up", {}), 0);
    EXPECT_EQ(value(fs, "allot_snapshot_failures_total", {}), 3);
    EXPECT_FALSE(value(fs, "allot_gpus_allocated", {{"team", "team-a"}, {"tier", "project"}}));
}

TEST(Families, DownKeepsTheLastValuesWithTheirAge)
{
    Config c = lab_config();
    Accumulator acc;
    ExporterState st = up_state();
    st.slurmctld_up = false;
    st.snapshot_age = 95.5;
    auto fs = families(workload(), c, acc, st);
    EXPECT_EQ(value(fs, "allot_slurmctld_up", {}), 0);
    EXPECT_EQ(value(fs, "allot_snapshot_age_seconds", {}), 95.5);
    EXPECT_EQ(value(fs, "allot_gpus_allocated", {{"team", "team-a"}, {"tier", "project"}}), 4);
}

TEST(Render, PrometheusText)
{
    std::vector<Family> fs = {
        {"allot_x", "An x.", Kind::Gauge, {{{{"team", "a\"b\\c"}}, 2}, {{}, 0.25}}},
        {"allot_y_total", "A y.", Kind::Counter, {{{}, 7}}},
    };
    EXPECT_EQ(render(fs, Format::Text004),
              "# HELP allot_x An x.\n# TYPE allot_x gauge\nallot_x{team=\"a\\\"b\\\\c\"} 2\n"
              "allot_x 0.25\n# HELP allot_y_total A y.\n# TYPE allot_y_total counter\n"
              "allot_y_total 7\n");
}

TEST(Render, OpenMetricsNamesCounterFamiliesWithoutTotalAndEnds)
{
    std::vector<Family> fs = {{"allot_y_total", "A y.", Kind::Counter, {{{}, 7}}}};
    EXPECT_EQ(render(fs, Format::OpenMetrics),
              "# HELP allot_y A y.\n# TYPE allot_y counter\nallot_y_total 7\n# EOF\n");
}

TEST(Render, NegotiatesOpenMetricsOnlyWhenAsked)
{
    EXPECT_EQ(negotiate(""), Format::Text004);
    EXPECT_EQ(negotiate("text/plain;version=0.0.4;q=0.5,*/*;q=0.1"), Format::Text004);
    EXPECT_EQ(negotiate("application/openmetrics-text;version=1.0.0,text/plain;q=0.5"),
              Format::OpenMetrics);
    EXPECT_NE(std::string(content_type(Format::Text004)).find("version=0.0.4"), std::string::npos);
}

}  // namespace
}  // namespace allot::exporter
