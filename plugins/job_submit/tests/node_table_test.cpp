// node_table_test.cpp - slurm.conf node lines to the shape the policy uses.
#include <gtest/gtest.h>

#include <map>
#include <optional>

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

namespace {

// A reader over named texts, as slurmctld's files would be.
FileReader files(std::map<std::string, std::string> texts)
{
    return [texts = std::move(texts)](const std::string& path) -> std::optional<std::string> {
        const auto it = texts.find(path);
        if (it == texts.end()) return std::nullopt;
        return it->second;
    };
}

}  // namespace

TEST(Include, NodeLinesOfIncludedFilesCountAsSlurmctldReadsThem)
{
    const auto read = files({
        {"/etc/slurm/slurm.conf",
         "ClusterName=Lab\ninclude nodes.conf\nINCLUDE /opt/extra.conf  # absolute\n"
         "Include parts-%c.conf\nInclude *.conf\nInclude missing.conf\n"
         "PartitionName=main Nodes=n[1-2],big,late\n"},
        {"/etc/slurm/nodes.conf",
         "NodeName=DEFAULT RealMemory=64000\n"
         "NodeName=n[1-2] CPUs=16 \\\n  Gres=gpu:8\n"},
        {"/opt/extra.conf", "NodeName = big CPUs=64 RealMemory=1024000 Gres=gpu:8\n"},
        {"/etc/slurm/parts-lab.conf", "NodeName=late CPUs=8 RealMemory=16000 Gres=gpu:4\n"},
        {"/etc/slurm/*.conf", "NodeName=glob CPUs=1 RealMemory=1 Gres=gpu:16\n"},
    });
    const auto text =
        conf_text_with_includes("/etc/slurm/slurm.conf", IncludeBase::SlurmConfDir, read);
    const auto shape = node_shape_from_conf(text, "main", expand_hostlist);
    EXPECT_EQ(shape.gpus, 8u);               // the '*' include is skipped, as Slurm skips it
    EXPECT_EQ(shape.cpus, 64u);              // big, from an absolute Include with spaced '='
    EXPECT_EQ(shape.cpus_per_gpu, 2u);       // late: 8 / 4 ("%c" is the lower-cased ClusterName)
    EXPECT_EQ(shape.mem_per_gpu_mb, 4000u);  // late: 16000 / 4
    EXPECT_EQ(node_shape_from_conf(text, "main", expand_hostlist).gpus, 8u);
    EXPECT_NE(text.find("NodeName=n[1-2] CPUs=16   Gres=gpu:8"), std::string::npos)
        << "a continued line is one line: " << text;
}

TEST(Include, RelativeNamesResolveAsEachSlurmReleaseDoes)
{
    // 22.05: against the including file's directory; 23.02 on: against slurm.conf's.
    const auto read = files({
        {"/etc/slurm/slurm.conf", "Include sub/a.conf\n"},
        {"/etc/slurm/sub/a.conf", "Include b.conf\n"},
        {"/etc/slurm/sub/b.conf", "NodeName=old CPUs=4 RealMemory=4000 Gres=gpu:2\n"},
        {"/etc/slurm/b.conf", "NodeName=new CPUs=4 RealMemory=8000 Gres=gpu:2\n"},
    });
    const auto old_shape = node_shape_from_conf(
        conf_text_with_includes("/etc/slurm/slurm.conf", IncludeBase::IncludingFile, read), "",
        expand_hostlist);
    EXPECT_EQ(old_shape.mem_per_gpu_mb, 2000u);
    const auto new_shape = node_shape_from_conf(
        conf_text_with_includes("/etc/slurm/slurm.conf", IncludeBase::SlurmConfDir, read), "",
        expand_hostlist);
    EXPECT_EQ(new_shape.mem_per_gpu_mb, 4000u);
}

TEST(Include, LoopsStopAndEscapedHashesAreKept)
{
    const auto read = files({
        {"/c/slurm.conf",
         "Include slurm.conf\nNodeName=n1 CPUs=2 RealMemory=2000 Gres=gpu:1\n"
         "NodeName=DeFaUlT RealMemory=100\nNodeName=n2 CPUs=2 Gres=gpu:1\n"
         "Include %c.conf\n"},  // no ClusterName: skipped
    });
    const auto text = conf_text_with_includes("/c/slurm.conf", IncludeBase::SlurmConfDir, read);
    const auto shape = node_shape_from_conf(text, "", expand_hostlist);
    EXPECT_EQ(shape.gpus, 1u);
    EXPECT_EQ(shape.mem_per_gpu_mb, 100u);  // DEFAULT in any case, as Slurm compares it
    EXPECT_EQ(conf_text_with_includes("/c/none.conf", IncludeBase::SlurmConfDir, read), "");
    const auto escaped = files({{"/c/slurm.conf", "Feature=a\\#b # comment\n"}});
    EXPECT_EQ(conf_text_with_includes("/c/slurm.conf", IncludeBase::SlurmConfDir, escaped),
              "Feature=a#b\n");
}

TEST(NodeShape, NodeSetsAllAndPartitionDefaultsAsSlurmctldResolvesThem)
{
    const char* conf = R"(
NodeName=DEFAULT CPUs=16
NodeName=DEFAULT RealMemory=64000
NodeName=g[1-2] Gres=gpu:8 Features=a100,ib
NodeName=h1 CPUs=32 RealMemory=256000 Gres=gpu:4 Feature=h100
NodeName=c1 CPUs=128 RealMemory=512000
NodeSet=gpus Feature=a100
NodeSet=extra Nodes=h1
PartitionName=DEFAULT Nodes=c1
PartitionName=main Nodes=gpus,extra
PartitionName=feat Nodes=gpus
PartitionName=every Nodes=all
PartitionName=cpu
)";
    const auto main = node_shape_from_conf(conf, "main", expand_hostlist);
    EXPECT_EQ(main.gpus, 8u);
    EXPECT_EQ(main.cpus, 32u);              // h1, by the NodeSet's Nodes=
    EXPECT_EQ(main.mem_per_gpu_mb, 8000u);  // g1: both DEFAULT lines apply (64000 / 8)
    EXPECT_EQ(main.cpus_per_gpu, 2u);       // g1: 16 / 8
    const auto feat = node_shape_from_conf(conf, "feat", expand_hostlist);
    EXPECT_EQ(feat.cpus, 16u);  // only the a100 nodes
    EXPECT_EQ(node_shape_from_conf(conf, "every", expand_hostlist).cpus, 128u);
    const auto cpu = node_shape_from_conf(conf, "cpu", expand_hostlist);
    EXPECT_EQ(cpu.cpus, 128u);  // PartitionName=DEFAULT's Nodes=c1
    EXPECT_EQ(cpu.gpus, 0u);
}
