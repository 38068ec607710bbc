// slurm_checks_test.cpp - the Slurm checks over fabricated slurmctld configurations:
// the lab's correct one passes, and each broken key gives its finding and exact fix.
#include <gtest/gtest.h>

#include "../slurm_checks.hpp"

namespace allot::doctor {
namespace {

// What slurmctld reports for tests/lab/lab-up.sh's slurm.conf (24.x form).
SlurmConf good_conf()
{
    return {{"AccountingStorageTRES", "cpu,mem,energy,node,billing,fs/disk,vmem,pages,gres/gpu"},
            {"AccountingStorageEnforce", "associations,limits,qos,safe"},
            {"PreemptType", "preempt/qos"},
            {"PreemptMode", "REQUEUE"},
            {"PreemptParameters", "send_user_signal"},
            {"SlurmctldParameters", "(null)"},
            {"JobSubmitPlugins", "allot"}};
}

Config governed(const std::string& partition)
{
    Config c;
    c.cluster.partition = partition;
    return c;
}

TEST(SplitList, TrimsAndLowersItems)
{
    EXPECT_EQ(split_list(" A, b ,,c"), (std::vector<std::string>{"a", "b", "c"}));
    EXPECT_TRUE(list_has("cpu,GRES/GPU", "gres/gpu"));
    EXPECT_FALSE(list_has("gres/gpu:a100", "gres/gpu"));
}

TEST(CheckSlurm, TheLabConfigurationPasses)
{
    SlurmInputs in{good_conf(), {{"main", true}}, {{"n1", 16, 65536, 8}}, true, "requeue"};
    for (const Finding& f : check_slurm(in, governed("main")))
        EXPECT_EQ(f.severity, Severity::Ok) << f.id << ": " << f.what;
}

TEST(CheckSlurm, AccountingTresWithoutGpuFails)
{
    SlurmConf c = good_conf();
    c["AccountingStorageTRES"] = "cpu,mem,energy,node,billing";
    Finding f = check_accounting_tres(c);
    EXPECT_EQ(f.severity, Severity::Fail);
    EXPECT_NE(f.fix.find("AccountingStorageTRES=gres/gpu"), std::string::npos);
}

TEST(CheckSlurm, EnforceFixKeepsWhatIsThereAndAddsWhatIsMissing)
{
    SlurmConf c = good_conf();
    c["AccountingStorageEnforce"] = "associations";
    Finding f = check_accounting_enforce(c);
    EXPECT_EQ(f.severity, Severity::Fail);
    EXPECT_NE(f.what.find("limits,qos,safe"), std::string::npos);
    EXPECT_NE(f.fix.find("`AccountingStorageEnforce=associations,limits,qos,safe`"),
              std::string::npos);
    c["AccountingStorageEnforce"] = "none";
    EXPECT_NE(check_accounting_enforce(c).fix.find("=none,associations,limits,qos,safe`"),
              std::string::npos);
    c.erase("AccountingStorageEnforce");
    EXPECT_EQ(check_accounting_enforce(c).severity, Severity::Fail);
}

TEST(CheckSlurm, PreemptTypeOtherThanQosFails)
{
    SlurmConf c = good_conf();
    c["PreemptType"] = "preempt/none";
    Finding f = check_preempt_type(c);
    EXPECT_EQ(f.severity, Severity::Fail);
    EXPECT_NE(f.fix.find("`PreemptType=preempt/qos`"), std::string::npos);
}

TEST(CheckSlurm, PreemptModeWithoutRequeueFails)
{
    SlurmConf c = good_conf();
    Config config;
    c["PreemptMode"] = "CANCEL";
    EXPECT_EQ(check_preempt_mode(c, std::nullopt, config).severity, Severity::Fail);
    EXPECT_NE(check_preempt_mode(c, std::nullopt, config).fix.find("`PreemptMode=REQUEUE`"),
              std::string::npos);
    // A spot QOS that defers to slurm.conf changes nothing.
    EXPECT_EQ(check_preempt_mode(c, std::string("cluster"), config).severity, Severity::Fail);
    c["PreemptMode"] = "GANG,REQUEUE";
    EXPECT_EQ(check_preempt_mode(c, std::nullopt, config).severity, Severity::Ok);
}

// Under preempt/qos the spot QOS's own PreemptMode replaces slurm.conf's for spot jobs.
TEST(CheckSlurm, PreemptModeOfTheSpotQosDecides)
{
    SlurmConf c = good_conf();
    Config config;
    c["PreemptMode"] = "CANCEL";
    Finding f = check_preempt_mode(c, std::string("requeue"), config);
    EXPECT_EQ(f.severity, Severity::Ok) << f.what;
    EXPECT_NE(f.what.find("QOS \"spot\" has PreemptMode=requeue"), std::string::npos);
    c["PreemptMode"] = "REQUEUE";
    f = check_preempt_mode(c, std::string("cancel"), config);
    EXPECT_EQ(f.severity, Severity::Fail);
    EXPECT_NE(f.fix.find("`sacctmgr -i modify qos spot set PreemptMode=requeue`"),
              std::string::npos);
}

// REQUEUE cancels jobs that are not requeueable: job_submit/allot marks spot jobs so,
// without it only JobRequeue=1 does.
TEST(CheckSlurm, SpotJobsMustBeRequeueable)
{
    SlurmConf c = good_conf();
    Config config;
    c["JobRequeue"] = "0";
    EXPECT_EQ(check_preempt_mode(c, std::string("requeue"), config).severity, Severity::Ok);
    c["JobSubmitPlugins"] = "lua";
    Finding f = check_preempt_mode(c, std::string("requeue"), config);
    EXPECT_EQ(f.severity, Severity::Fail);
    EXPECT_NE(f.fix.find("`JobRequeue=1`"), std::string::npos);
    c["JobRequeue"] = "1";
    EXPECT_EQ(check_preempt_mode(c, std::string("requeue"), config).severity, Severity::Ok);
}

TEST(CheckSlurm, UserSignalAcceptedUnderEitherNameAndFixNamesTheRelease)
{
    SlurmConf c = good_conf();
    c["PreemptParameters"] = "(null)";
    c["SlurmctldParameters"] = "enable_configless,preempt_send_user_signal";
    EXPECT_EQ(check_preempt_signal(c, false).severity, Severity::Ok);
    c["SlurmctldParameters"] = "enable_configless";
    Finding old_release = check_preempt_signal(c, false);
    EXPECT_EQ(old_release.severity, Severity::Fail);
    EXPECT_NE(
        old_release.fix.find("`SlurmctldParameters=enable_configless,preempt_send_user_signal`"),
        std::string::npos);
    Finding new_release = check_preempt_signal(c, true);
    EXPECT_NE(new_release.fix.find("`PreemptParameters=send_user_signal`"), std::string::npos);
}

TEST(CheckSlurm, JobSubmitWithoutAllotFailsAndTheFixKeepsOtherPlugins)
{
    SlurmConf c = good_conf();
    c["JobSubmitPlugins"] = "lua";
    Finding f = check_job_submit(c);
    EXPECT_EQ(f.severity, Severity::Fail);
    EXPECT_NE(f.fix.find("`JobSubmitPlugins=lua,allot`"), std::string::npos);
    c["JobSubmitPlugins"] = "(null)";
    EXPECT_NE(check_job_submit(c).fix.find("`JobSubmitPlugins=allot`"), std::string::npos);
    c["JobSubmitPlugins"] = "job_submit/allot";
    EXPECT_EQ(check_job_submit(c).severity, Severity::Ok);
}

TEST(CheckSlurm, GovernedPartitionMissingFailsNotDefaultWarns)
{
    EXPECT_EQ(check_partition({{"main", true}}, governed("gpu")).severity, Severity::Fail);
    Finding f = check_partition({{"main", true}, {"gpu", false}}, governed("gpu"));
    EXPECT_EQ(f.severity, Severity::Warn);
    EXPECT_NE(f.fix.find("scontrol update PartitionName=gpu Default=YES"), std::string::npos);
    EXPECT_EQ(check_partition({{"main", true}}, governed("")).severity, Severity::Ok);
}

TEST(CheckSlurm, GpusInGres)
{
    EXPECT_EQ(gpus_in_gres("gpu:8"), 8u);
    EXPECT_EQ(gpus_in_gres("gpu:a100:4(S:0-1),gpu:h100:2,shard:8"), 6u);
    EXPECT_EQ(gpus_in_gres("(null)"), 0u);
}

TEST(CheckSlurm, MemDefaultsConflicts)
{
    Config c;
    c.cluster.mem_per_gpu_mb = 8192;
    c.cluster.cpus_per_gpu = 2;
    SlurmConf conf = {{"DefMemPerCPU", "1024"}, {"JobDefaults", "(null)"}};
    EXPECT_EQ(check_mem_defaults(conf, c).severity, Severity::Ok);
    conf["MaxMemPerCPU"] = "2048";
    Finding f = check_mem_defaults(conf, c);
    EXPECT_EQ(f.severity, Severity::Fail);
    EXPECT_NE(f.fix.find("`MaxMemPerCPU=4096`"), std::string::npos);
    conf.erase("MaxMemPerCPU");
    conf["JobDefaults"] = "DefCpuPerGPU=2,DefMemPerGPU=4096";
    f = check_mem_defaults(conf, c);
    EXPECT_EQ(f.severity, Severity::Warn);
    EXPECT_NE(f.fix.find("`DefMemPerGPU=8192`"), std::string::npos);
}

TEST(CheckSlurm, PerGpuDefaultsMustFitAWholeNode)
{
    Config c;
    c.cluster.mem_per_gpu_mb = 8192;
    c.cluster.cpus_per_gpu = 2;
    std::vector<NodeShape> nodes = {
        {"n1", 16, 64000, 8}, {"n2", 16, 64000, 8}, {"cpu1", 4, 1000, 0}};
    Finding f = check_gpu_defaults_fit(nodes, c);
    EXPECT_EQ(f.severity, Severity::Warn);
    EXPECT_NE(f.fix.find("`RealMemory=65536` on NodeName=n1,n2"), std::string::npos);
    EXPECT_NE(f.fix.find("`cluster.mem_per_gpu: 8000M`"), std::string::npos);
    nodes = {{"n1", 12, 65536, 8}, {"n2", 32, 65536, 8}};
    f = check_gpu_defaults_fit(nodes, c);
    EXPECT_EQ(f.severity, Severity::Warn);
    EXPECT_NE(f.what.find("all GPUs of n1 at 2 CPUs each need 16 CPUs"), std::string::npos);
    EXPECT_NE(f.fix.find("`cluster.cpus_per_gpu: 1`"), std::string::npos);
    nodes = {{"n1", 16, 65536, 8}};
    EXPECT_EQ(check_gpu_defaults_fit(nodes, c).severity, Severity::Ok);
}

}  // namespace
}  // namespace allot::doctor
