// codec_test.cpp - job_desc_msg_t <-> JobRequest/JobChanges with Slurm's real allocator.
#include <gtest/gtest.h>

#include <csignal>

#include "../job_desc_codec.hpp"
#include "../slurm_limits.hpp"
#include "allot/units.hpp"

using namespace allot;
using namespace allot::job_submit;

namespace {

struct JobDesc {
    job_desc_msg_t desc;
    JobDesc() { slurm_init_job_desc_msg(&desc); }
    ~JobDesc()
    {
        for (char** f : {&desc.qos, &desc.mem_per_tres, &desc.cpus_per_tres})
            if (*f) slurm_xfree(reinterpret_cast<void**>(f));
    }
};

}  // namespace

TEST(Codec, UnsetFieldsReadAsUnset)
{
    JobDesc j;
    auto r = to_request(j.desc, "team-a");
    EXPECT_EQ(r.account, "team-a");
    EXPECT_FALSE(r.account_explicit);
    EXPECT_TRUE(r.qos.empty());
    EXPECT_FALSE(r.mem_set);
    EXPECT_FALSE(r.cpus_set);
    EXPECT_FALSE(r.time_minutes.has_value());
    EXPECT_FALSE(r.signal_set);
    EXPECT_FALSE(r.requeue);
    EXPECT_FALSE(r.gpus.nodes.has_value());
}

TEST(Codec, ReadsEveryGpuAndResourceField)
{
    JobDesc j;
    char tpn[] = "gres:gpu:4", tpt[] = "gres:gpu:1", mpt[] = "gres:gpu:1024", acct[] = "x";
    j.desc.account = acct;
    j.desc.tres_per_node = tpn;
    j.desc.tres_per_task = tpt;
    j.desc.min_nodes = 2;
    j.desc.num_tasks = 3;
    j.desc.pn_min_memory = 4096;
    j.desc.mem_per_tres = mpt;
    j.desc.cpus_per_task = 2;
    j.desc.time_limit = INFINITE;
    j.desc.warn_signal = SIGUSR1;
    j.desc.requeue = 1;
    auto r = to_request(j.desc, "x");
    j.desc.account = j.desc.tres_per_node = j.desc.tres_per_task = j.desc.mem_per_tres = nullptr;
    EXPECT_TRUE(r.account_explicit);
    EXPECT_EQ(r.gpus.per_node, "gres:gpu:4");
    EXPECT_EQ(*r.gpus.nodes, 2u);
    EXPECT_EQ(*r.gpus.tasks, 3u);
    EXPECT_TRUE(r.mem_set);
    EXPECT_TRUE(r.mem_per_gpu_set);
    EXPECT_TRUE(r.cpus_set);
    EXPECT_EQ(*r.time_minutes, kUnlimitedMinutes);
    EXPECT_TRUE(r.signal_set);
    EXPECT_TRUE(r.requeue);
}

TEST(Codec, AppliesChangesWithSlurmsAllocator)
{
    JobDesc j;
    char gpus[] = ALLOT_GPU_TRES_PREFIX "2";
    j.desc.tres_per_job = gpus;
    j.desc.qos = slurm_xstrdup("old");
    JobChanges c;
    c.qos = "spot";
    c.time_minutes = 240;
    c.mem_per_gpu_mb = 8192;
    c.cpus_per_gpu = 2;
    c.set_requeue = true;
    c.batch_signal = JobChanges::Signal{"USR1", 600};
    apply_changes(c, j.desc);
    EXPECT_STREQ(j.desc.qos, "spot");
    EXPECT_EQ(j.desc.time_limit, 240u);
    EXPECT_STREQ(j.desc.mem_per_tres, ALLOT_GPU_TRES_PREFIX "8192");
    EXPECT_STREQ(j.desc.cpus_per_tres, ALLOT_GPU_TRES_PREFIX "2");
    EXPECT_EQ(j.desc.requeue, 1);
    EXPECT_EQ(j.desc.warn_signal, SIGUSR1);
    EXPECT_EQ(j.desc.warn_time, 600);
    EXPECT_EQ(j.desc.warn_flags, KILL_JOB_BATCH);
    j.desc.tres_per_job = nullptr;
}

// From 24.11 slurmctld refuses --mem-per-gpu/--cpus-per-gpu on a job that names GPUs in no
// GPU field (--exclusive alone, --ntasks-per-gpu alone); allot adds none there on any release.
TEST(Codec, PerGpuDefaultsOnlyWithAGpuField)
{
    JobChanges c;
    c.mem_per_gpu_mb = 8192;
    c.cpus_per_gpu = 2;
    JobDesc exclusive;
    exclusive.desc.shared = JOB_SHARED_NONE;
    apply_changes(c, exclusive.desc);
    EXPECT_EQ(exclusive.desc.mem_per_tres, nullptr);
    EXPECT_EQ(exclusive.desc.cpus_per_tres, nullptr);
    JobDesc per_gpu_tasks;
    per_gpu_tasks.desc.ntasks_per_tres = 2;
    apply_changes(c, per_gpu_tasks.desc);
    EXPECT_EQ(per_gpu_tasks.desc.mem_per_tres, nullptr);
    JobDesc per_task;
    char tpt[] = "gres/gpu=1";
    per_task.desc.tres_per_task = tpt;
    apply_changes(c, per_task.desc);
    EXPECT_STREQ(per_task.desc.mem_per_tres, ALLOT_GPU_TRES_PREFIX "8192");
    per_task.desc.tres_per_task = nullptr;
}

// 26.05 records an implicit node maximum of one per task for a job submitted without -N;
// read back at job_modify it is no range the user asked for (the job packs on its minimum).
TEST(Codec, ImplicitNodeMaximumIsNoRange)
{
    JobDesc j;
    j.desc.num_tasks = 9;
    j.desc.min_nodes = 1;
    j.desc.max_nodes = 9;
    EXPECT_EQ(to_request(j.desc, "team-a").gpus.max_nodes, 9u);  // -N 1-9
#ifdef HAVE_JOB_IMPLICIT_MAX_NODES
    j.desc.bitflags |= JOB_IMPLICIT_MAX_NODES;
    EXPECT_FALSE(to_request(j.desc, "team-a").gpus.max_nodes.has_value());
#endif
}

// tres_per_task is in TRES form from 24.05 ("gres/gpu=1,cpu=2"), name:count before; both
// reach the core as the same gres list, so the count is the same on every release.
TEST(Codec, ReadsTresPerTaskInEitherForm)
{
    JobDesc j;
    char tres_form[] = "cpu=2,gres/gpu=3", gres_form[] = "gres:gpu:3";
    j.desc.num_tasks = 4;
    j.desc.tres_per_task = tres_form;
    const auto newer = to_request(j.desc, "team-a");
    j.desc.tres_per_task = gres_form;
    const auto older = to_request(j.desc, "team-a");
    j.desc.tres_per_task = nullptr;
    EXPECT_EQ(newer.gpus.per_task, "cpu:2,gres/gpu:3");
    EXPECT_EQ(count_gpus(newer.gpus).value().total, 12u);
    EXPECT_EQ(count_gpus(older.gpus).value().total, 12u);
}

TEST(Codec, RejectionCodesNameTheRule)
{
    Decision d;
    d.accepted = false;
    const struct {
        policy::Errc code;
        int slurm;
    } cases[] = {{policy::Errc::ZeroGpuAccount, ESLURM_INVALID_ACCOUNT},
                 {policy::Errc::Walltime, ESLURM_INVALID_TIME_LIMIT},
                 {policy::Errc::GpuCap, ESLURM_ACCOUNTING_POLICY},
                 {policy::Errc::ForeignQos, ESLURM_INVALID_QOS},
                 {policy::Errc::BadGpuRequest, ESLURM_INVALID_GRES},
                 {policy::Errc::SpotRequeue, ESLURM_ACCESS_DENIED},
                 {policy::Errc::SpotSignal, ESLURM_ACCESS_DENIED}};
    for (const auto& c : cases) {
        d.error = Error(c.code, "x");
        EXPECT_EQ(rejection_code(d), c.slurm);
    }
}

TEST(Codec, ReadsEveryFieldThatCanImplyGpus)
{
    job_desc_msg_t desc;
    slurm_init_job_desc_msg(&desc);
    desc.max_nodes = 4;
    desc.ntasks_per_tres = 2;
    desc.num_tasks = 6;
    desc.shared = JOB_SHARED_NONE;
    desc.het_job_offset = 1;
    desc.requeue = 0;
    const auto job = to_request(desc, "team-a");
    EXPECT_EQ(job.gpus.max_nodes, 4u);
    EXPECT_EQ(job.gpus.tasks_per_gpu, 2u);
    EXPECT_TRUE(job.gpus.exclusive);
    EXPECT_EQ(job.het_component, 1u);
    EXPECT_TRUE(job.requeue_set);
    EXPECT_FALSE(job.requeue);
    slurm_init_job_desc_msg(&desc);
    desc.het_job_offset = NO_VAL;  // as slurmctld sets it for a job that is not heterogeneous
    const auto plain = to_request(desc, "team-a");
    EXPECT_FALSE(plain.gpus.exclusive);
    EXPECT_FALSE(plain.het_component);
    EXPECT_FALSE(plain.requeue_set);
}

TEST(TresCount, ParsesCacheStrings)
{
    EXPECT_EQ(tres_count("1=16,2=64000,1001=8", 1001).value(), 8u);
    EXPECT_EQ(tres_count("1001=0", 1001).value(), 0u);
    EXPECT_FALSE(tres_count("1=16", 1001).has_value());
    EXPECT_FALSE(tres_count(nullptr, 1001).has_value());
    EXPECT_FALSE(tres_count("1001=18446744073709551615", 1001).has_value());  // INFINITE64
    EXPECT_FALSE(tres_count("garbage,,=,1001=x", 1001).has_value());
    EXPECT_EQ(tres_count("10011=5,1001=3", 1001).value(), 3u);
}
