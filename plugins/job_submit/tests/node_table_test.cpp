// node_table_test.cpp - slurm.conf node lines to the shape the policy uses.
#include <gtest/gtest.h>

#include "../node_table.hpp"

using namespace allot;
using namespace allot::job_submit;

TEST(Hostlist, ExpandsRangesListsAndPadding)
{
    EXPECT_EQ(expand_hostlist("n[1-3]"), (std::vector<std::string>{"n1", "n2", "n3"}));
    EXPECT_EQ(expand_hostlist("gpu[01-02,7],cpu9"),
              (std::vector<std::string>{"gpu01", "gpu02", "gpu7", "cpu9"}));
    EXPECT_EQ(expand_hostlist("solo"), (std::vector<std::string>{"solo"}));
}

TEST(NodeShape, LargestGpuNodeAndSmallestShareOfThePartition)
{
    const char* conf = R"(
# lab
NodeName=DEFAULT RealMemory=64000
NodeName=n[1-2] CPUs=16 Gres=gpu:8 State=UNKNOWN
NodeName=big Sockets=2 CoresPerSocket=16 ThreadsPerCore=2 RealMemory=512000 Gres=gpu:h100:4(S:0),gpu:h100:4(S:1)
NodeName=cpu1 CPUs=128 RealMemory=256000
PartitionName=main Nodes=n[1-2],big Default=YES
PartitionName=cpu Nodes=cpu1
)";
    const auto shape = node_shape_from_conf(conf, "main", expand_hostlist);
    EXPECT_EQ(shape.gpus, 8u);
    EXPECT_EQ(shape.cpus, 64u);              // big: 2 x 16 x 2
    EXPECT_EQ(shape.cpus_per_gpu, 2u);       // n1: 16 / 8
    EXPECT_EQ(shape.mem_per_gpu_mb, 8000u);  // n1: 64000 / 8

    const auto cpu = node_shape_from_conf(conf, "cpu", expand_hostlist);
    EXPECT_EQ(cpu.gpus, 0u);
    EXPECT_EQ(cpu.cpus, 128u);
    EXPECT_EQ(cpu.mem_per_gpu_mb, 0u);
}

TEST(NodeShape, UnknownPartitionMeansEveryNodeAndGarbageIsHarmless)
{
    const auto shape =
        node_shape_from_conf("NodeName=a CPUs=8 RealMemory=1000 Gres=gpu:2\n", "", expand_hostlist);
    EXPECT_EQ(shape.gpus, 2u);
    EXPECT_EQ(shape.mem_per_gpu_mb, 500u);
    const auto junk = node_shape_from_conf("NodeName=x Gres=gpu:::\n=\n[[[\nNodeName=\n", "main",
                                           expand_hostlist);
    EXPECT_EQ(junk.gpus, 0u);
}
