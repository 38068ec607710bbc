// records_test.cpp - GPU counts from TRES strings, state names, one count per run.
#include "records.hpp"

#include <gtest/gtest.h>

namespace allot::report {
namespace {

TEST(Tres, UntypedGpusByIdIgnoreTypedEntries)
{
    TresTable t;
    t.add(1, "cpu", "");
    t.add(1001, "gres", "gpu");
    t.add(1002, "gres", "gpu:a100");
    ASSERT_EQ(t.gpu_id(), 1001u);
    EXPECT_EQ(untyped_gpus("1=8,4=1,1001=2,1002=2", 1001), 2u);
    EXPECT_EQ(untyped_gpus("1002=2,1001=2", 1001), 2u);  // order does not matter
    EXPECT_EQ(untyped_gpus("1=8,4=1", 1001), 0u);        // a CPU-only job
    EXPECT_EQ(untyped_gpus("", 1001), 0u);
    EXPECT_EQ(untyped_gpus("10010=5,1001=3", 1001), 3u);  // ids compared whole
}

TEST(Tres, NoGpuTresWhenOnlyTypedIsKnown)
{
    TresTable t;
    t.add(1002, "gres", "gpu:a100");
    EXPECT_FALSE(t.gpu_id());
}

TEST(Tres, UntypedGpusByNameAsSacctPrintsThem)
{
    EXPECT_EQ(untyped_gpus_named("billing=4,cpu=4,gres/gpu:a100=2,gres/gpu=2,mem=8G,node=1"), 2u);
    EXPECT_EQ(untyped_gpus_named("cpu=4,mem=8G"), 0u);
}

TEST(States, SlurmNamesMapToRunEnds)
{
    EXPECT_EQ(run_end_from_name("PREEMPTED"), RunEnd::Preempted);
    EXPECT_EQ(run_end_from_name("REQUEUED"), RunEnd::Requeued);
    EXPECT_EQ(run_end_from_name("CANCELLED by 0"), RunEnd::Cancelled);
    EXPECT_EQ(run_end_from_name("OUT_OF_MEMORY"), RunEnd::OutOfMemory);
    EXPECT_EQ(run_end_from_name("whatever"), RunEnd::Other);
    EXPECT_TRUE(lost_to_preemption(RunEnd::Requeued));
    EXPECT_TRUE(lost_to_preemption(RunEnd::Preempted));
    EXPECT_FALSE(lost_to_preemption(RunEnd::Completed));
}

TEST(Runs, TheSameRunFetchedTwiceCountsOnce)
{
    RunRecord a;
    a.job_id = 7;
    a.start = 100;
    RunRecord b = a;  // the same run
    RunRecord c = a;
    c.start = 200;  // the job's next run after a requeue
    auto runs = distinct_runs({a, b, c});
    ASSERT_EQ(runs.size(), 2u);
    EXPECT_EQ(runs[0].start, 100);
    EXPECT_EQ(runs[1].start, 200);
}

}  // namespace
}  // namespace allot::report
