// gpu_request_test.cpp - GPU counting over every way a job can ask.
#include <gtest/gtest.h>

#include "allot/gpu_request.hpp"

using namespace allot;

TEST(GpusInTres, AllSpellings)
{
    EXPECT_EQ(gpus_in_tres("gres:gpu:4").value(), 4u);
    EXPECT_EQ(gpus_in_tres("gres/gpu:4").value(), 4u);
    EXPECT_EQ(gpus_in_tres("gpu:2").value(), 2u);
    EXPECT_EQ(gpus_in_tres("gres:gpu:h100:2").value(), 2u);
    EXPECT_EQ(gpus_in_tres("gres:gpu:h100").value(), 1u);
    EXPECT_EQ(gpus_in_tres("gres:gpu").value(), 1u);
    EXPECT_EQ(gpus_in_tres("gres:gpu:a100:1,gres:gpu:h100:2").value(), 3u);
    EXPECT_EQ(gpus_in_tres("gres:shard:4").value(), 0u);
    EXPECT_EQ(gpus_in_tres("gres:gpufake:4").value(), 0u);
    EXPECT_EQ(gpus_in_tres("").value(), 0u);
}

TEST(GpusInTres, MalformedAndHugeAreErrors)
{
    for (const char* bad : {"gres:gpu:-1", "gres:gpu:1x", "gres::4", "gres:gpu:h100:",
                            "gres:gpu:a:b:c", "gres:gpu:99999999999999999999", "gres:gpu:1000001"})
        EXPECT_FALSE(gpus_in_tres(bad).ok()) << bad;
    EXPECT_FALSE(gpus_in_tres(std::string(5000, 'g')).ok());
    std::string many;
    for (int i = 0; i < 300; ++i) many += "gres:gpu:4000,";
    EXPECT_FALSE(gpus_in_tres(many).ok());
}

TEST(CountGpus, MultipliesByNodesTasksSockets)
{
    GpuFields f;
    f.per_node = "gres:gpu:4";
    f.nodes = 2;
    EXPECT_EQ(count_gpus(f).value().total, 8u);

    GpuFields t;
    t.per_task = "gres:gpu:1";
    t.tasks = 6;
    EXPECT_EQ(count_gpus(t).value().total, 6u);

    GpuFields tn;
    tn.per_task = "gres:gpu:2";
    tn.tasks_per_node = 2;
    tn.nodes = 3;
    EXPECT_EQ(count_gpus(tn).value().total, 12u);

    GpuFields s;
    s.per_socket = "gres:gpu:1";
    s.sockets_per_node = 2;
    s.nodes = 2;
    EXPECT_EQ(count_gpus(s).value().total, 4u);

    GpuFields j;
    j.per_job = "gres:gpu:h100:3";
    auto c = count_gpus(j).value();
    EXPECT_EQ(c.total, 3u);
    EXPECT_EQ(c.type, "h100");
}

TEST(CountGpus, NoGpuAndSaturation)
{
    EXPECT_EQ(count_gpus(GpuFields{}).value().total, 0u);
    GpuFields f;
    f.per_node = "gres:gpu:1000000";
    f.nodes = 4000000000u;
    auto c = count_gpus(f);
    ASSERT_TRUE(c.ok());
    EXPECT_GT(c.value().total, kMaxGpuCount);  // saturates, never wraps to a small number
}

TEST(GpusInTres, DuplicatesCountAsSlurmCountsThem)
{
    // slurmctld keeps one record per GPU type; its TRES counts the largest entry.
    EXPECT_EQ(gpus_in_tres("gres:gpu:2,gres:gpu:3").value(), 3u);
    EXPECT_EQ(gpus_in_tres("gres:gpu:9,gres:gpu:2").value(), 9u);
    EXPECT_EQ(gpus_in_tres("gres:gpu:h100:2,gres:gpu:h100:1").value(), 2u);
    // Typed and untyped name the same GPUs: counted once, the larger.
    EXPECT_EQ(gpus_in_tres("gres:gpu:2,gres:gpu:h100:1").value(), 2u);
    EXPECT_EQ(gpus_in_tres("gres:gpu:1,gres:gpu:h100:3").value(), 3u);
}

TEST(CountGpus, NodeRangesCountAtTheirMaximum)
{
    GpuFields f;
    f.per_node = "gres:gpu:2";
    f.nodes = 1;
    f.max_nodes = 3;
    EXPECT_EQ(count_gpus(f).value().total, 6u);
}

TEST(CountGpus, NodesImpliedByTasks)
{
    GpuFields f;
    f.per_node = "gres:gpu:1";
    f.tasks = 20;
    f.tasks_per_node = 4;
    EXPECT_EQ(count_gpus(f).value().total, 5u);  // 20 tasks at 4 per node: 5 nodes

    GpuFields c;
    c.per_node = "gres:gpu:1";
    c.tasks = 20;
    c.node.cpus = 16;
    EXPECT_EQ(count_gpus(c).value().total, 2u);  // 20 one-CPU tasks on 16-CPU nodes
    c.cpus_per_task = 4;
    EXPECT_EQ(count_gpus(c).value().total, 5u);  // 80 CPUs on 16-CPU nodes
}

TEST(CountGpus, TasksPerGpuAndExclusive)
{
    GpuFields t;
    t.tasks = 6;
    t.tasks_per_gpu = 2;
    EXPECT_EQ(count_gpus(t).value().total, 3u);  // slurmctld: tasks / ntasks-per-gpu
    t.per_job = "gres:gpu:4";
    EXPECT_EQ(count_gpus(t).value().total, 4u);  // an explicit count wins

    GpuFields x;
    x.exclusive = true;
    EXPECT_EQ(count_gpus(x).value().total, 0u);  // node shape unknown: nothing implied
    x.node.gpus = 8;
    EXPECT_EQ(count_gpus(x).value().total, 8u);
    x.nodes = 2;
    x.per_node = "gres:gpu:1";
    EXPECT_EQ(count_gpus(x).value().total, 16u);  // whole nodes: all their GPUs
}

TEST(CountGpus, SocketsFromTasksPerSocket)
{
    GpuFields s;
    s.per_socket = "gres:gpu:1";
    s.tasks = 5;
    s.tasks_per_socket = 2;
    EXPECT_EQ(count_gpus(s).value().total, 3u);
}
