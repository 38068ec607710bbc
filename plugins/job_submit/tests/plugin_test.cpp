// plugin_test.cpp - the built job_submit_allot.so, loaded like slurmctld loads it.
//
// dlopen(RTLD_NOW) proves every undefined symbol resolves against what
// slurmctld provides (here: the fake plus the real libslurm). Then the entry
// points are driven through the C ABI: the rules end to end, config reload on
// reconfigure, and a property test that throws random job_desc contents at
// job_submit/job_modify (run it under --enable-sanitizers for ASan/UBSan).
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>

#include "compat/slurmctld.hpp"
#include "fake_slurmctld.hpp"

namespace {

using SubmitFn = int (*)(job_desc_msg_t*, uint32_t, char**);
using ModifyFn = allot::slurm_compat::JobModifyFn;

const char* kConfig = R"(
cluster:
  default_account: default
  join_hint: "ask your PI"
  mem_per_gpu: 8G
  cpus_per_gpu: 2
tiers:
  general: {pool_gpus: 8, per_team_gpus: 4}
  spot: {grace_seconds: 600, signal: TERM}
teams:
  - {group: team-a, account: team-a, gpus: 8}
)";

class Plugin : public ::testing::Test {
protected:
    static void* handle;
    static SubmitFn submit;
    static ModifyFn modify;
    static std::string config_path;
    static std::string state_dir;

    static void SetUpTestSuite()
    {
        char dir[] = "/tmp/allot-plugin-test-XXXXXX";
        ASSERT_NE(mkdtemp(dir), nullptr);
        config_path = std::string(dir) + "/allot.yaml";
        state_dir = dir;
        slurm_conf.state_save_location = slurm_xstrdup(dir);
        std::ofstream(config_path) << kConfig;
        setenv("ALLOT_CONFIG", config_path.c_str(), 1);
        handle = dlopen(PLUGIN_SO, RTLD_NOW | RTLD_LOCAL);
        ASSERT_NE(handle, nullptr) << dlerror();
        submit = reinterpret_cast<SubmitFn>(dlsym(handle, "job_submit"));
        modify = reinterpret_cast<ModifyFn>(dlsym(handle, "job_modify"));
        auto init = reinterpret_cast<int (*)()>(dlsym(handle, "init"));
        ASSERT_TRUE(submit && modify && init);
        ASSERT_EQ(init(), SLURM_SUCCESS);
    }

    void SetUp() override
    {
        fake_slurmctld::reset();
        fake_slurmctld::add_qos("team-a", {"1001=8", "", NO_VAL});
        fake_slurmctld::add_qos("general", {"1001=8", "1001=4", 3 * 1440});
        fake_slurmctld::add_qos("spot", {"", "", 1440});
        fake_slurmctld::set_default_account(1001, "team-a");
        fake_slurmctld::set_default_account(1002, "default");
    }

    int call_modify(job_desc_msg_t* update, uint32_t uid, char** err)
    {
        int dummy_record = 0;
        auto* record = reinterpret_cast<job_record_t*>(&dummy_record);
        return allot::slurm_compat::call_job_modify(modify, update, record, uid, err);
    }
};
void* Plugin::handle = nullptr;
SubmitFn Plugin::submit = nullptr;
ModifyFn Plugin::modify = nullptr;
std::string Plugin::config_path;
std::string Plugin::state_dir;

struct Desc {
    job_desc_msg_t d;
    explicit Desc(uint32_t uid)
    {
        slurm_init_job_desc_msg(&d);
        d.user_id = uid;
        d.het_job_offset = NO_VAL;  // as slurmctld sets it for a job that is not heterogeneous
    }
    ~Desc()
    {
        for (char** f : {&d.account, &d.qos, &d.partition, &d.tres_per_job, &d.tres_per_node,
                         &d.tres_per_task, &d.tres_per_socket, &d.mem_per_tres, &d.cpus_per_tres})
            if (*f) slurm_xfree(reinterpret_cast<void**>(f));
    }
    void set(char** field, const char* value) { *field = slurm_xstrdup(value); }
};

struct ErrMsg {
    char* text = nullptr;
    ~ErrMsg()
    {
        if (text) slurm_xfree(reinterpret_cast<void**>(&text));
    }
};

}  // namespace

TEST_F(Plugin, ExportsExactlyTheSlurmPluginSymbols)
{
    EXPECT_STREQ(static_cast<const char*>(dlsym(handle, "plugin_type")), "job_submit/allot");
    EXPECT_EQ(*static_cast<const uint32_t*>(dlsym(handle, "plugin_version")),
              static_cast<uint32_t>(SLURM_VERSION_NUMBER));
    EXPECT_EQ(
        dlsym(handle, "_ZN5allot13decide_submitERKNS_10JobRequestERKNS_6ConfigERKNS_10LimitsViewE"),
        nullptr);  // the core stays private to the plugin
}

TEST_F(Plugin, DefaultAccountGpuJobRejectedWithMessage)
{
    Desc job(1002);
    job.set(&job.d.tres_per_job, "gres:gpu:1");
    ErrMsg err;
    EXPECT_EQ(submit(&job.d, 1002, &err.text), ESLURM_INVALID_ACCOUNT);
    ASSERT_NE(err.text, nullptr);
    EXPECT_NE(std::string(err.text).find("not yet in a team"), std::string::npos);
    EXPECT_EQ(fake_slurmctld::lock_depth(), 0);
}

TEST_F(Plugin, ProjectJobGetsQosAndPerGpuDefaults)
{
    Desc job(1001);
    job.set(&job.d.tres_per_node, "gres:gpu:2");
    ErrMsg err;
    ASSERT_EQ(submit(&job.d, 1001, &err.text), SLURM_SUCCESS);
    EXPECT_EQ(err.text, nullptr);
    EXPECT_STREQ(job.d.qos, "team-a");
    EXPECT_STREQ(job.d.mem_per_tres, ALLOT_GPU_TRES_PREFIX "8192");
    EXPECT_STREQ(job.d.cpus_per_tres, ALLOT_GPU_TRES_PREFIX "2");
}

TEST_F(Plugin, SpotJobRequeueAndSignal)
{
    Desc job(1001);
    job.set(&job.d.tres_per_job, "gres:gpu:16");
    job.set(&job.d.qos, "spot");
    ErrMsg err;
    ASSERT_EQ(submit(&job.d, 1001, &err.text), SLURM_SUCCESS);
    EXPECT_EQ(job.d.requeue, 1);
    EXPECT_EQ(job.d.warn_flags, KILL_JOB_BATCH);
    EXPECT_EQ(job.d.warn_time, 600);
    EXPECT_EQ(job.d.time_limit, 1440u);
}

TEST_F(Plugin, OverCapRejectedButAtCapAccepted)
{
    Desc big(1001);
    big.set(&big.d.tres_per_job, "gres:gpu:9");
    ErrMsg err;
    EXPECT_EQ(submit(&big.d, 1001, &err.text), ESLURM_ACCOUNTING_POLICY);
    Desc fits(1001);
    fits.set(&fits.d.tres_per_job, "gres:gpu:8");
    ErrMsg none;
    EXPECT_EQ(submit(&fits.d, 1001, &none.text), SLURM_SUCCESS);
}

TEST_F(Plugin, HeterogeneousComponentsAddUpPerThreadAndJob)
{
    // slurmctld validates a het job's components one after another in one thread.
    auto component = [&](uint32_t offset, const char* gpus, char** err) {
        Desc c(1001);
        c.set(&c.d.tres_per_job, gpus);
        c.d.het_job_offset = offset;
        return submit(&c.d, 1001, err);
    };
    ErrMsg first, second;
    EXPECT_EQ(component(0, "gres:gpu:5", &first.text), SLURM_SUCCESS);
    EXPECT_EQ(component(1, "gres:gpu:5", &second.text), ESLURM_ACCOUNTING_POLICY);
    ASSERT_NE(second.text, nullptr);
    EXPECT_NE(std::string(second.text)
                  .find("heterogeneous job component 1: this heterogeneous "
                        "job asks for 10 GPUs in all"),
              std::string::npos)
        << second.text;
    // Offset 0 starts the next job: its tally begins again.
    ErrMsg next0, next1;
    EXPECT_EQ(component(0, "gres:gpu:4", &next0.text), SLURM_SUCCESS);
    EXPECT_EQ(component(1, "gres:gpu:4", &next1.text), SLURM_SUCCESS);
}

TEST_F(Plugin, ModifyRefusesTimePastTierMaxUnlessOperator)
{
    job_desc_msg_t current;
    slurm_init_job_desc_msg(&current);
    char account[] = "team-a", qos[] = "general";
    current.account = account;
    current.qos = qos;
    current.time_limit = 60;
    fake_slurmctld::set_current_job(current);

    Desc update(1001);
    update.d.time_limit = 10 * 1440;
    ErrMsg err;
    EXPECT_EQ(call_modify(&update.d, 1001, &err.text), ESLURM_INVALID_TIME_LIMIT);
    fake_slurmctld::set_operator(4242);
    EXPECT_EQ(call_modify(&update.d, 4242, &err.text), SLURM_SUCCESS);
    EXPECT_EQ(call_modify(&update.d, 0, &err.text), SLURM_SUCCESS);

    Desc to_spot(1001);
    to_spot.set(&to_spot.d.qos, "spot");
    ErrMsg why;
    EXPECT_EQ(call_modify(&to_spot.d, 1001, &why.text), ESLURM_ACCESS_DENIED);  // no --signal
#ifdef HAVE_JOB_MODIFY_ERR_MSG  // 23.02+: the refusal says why
    ASSERT_NE(why.text, nullptr);
    EXPECT_NE(std::string(why.text).find("--signal=B:TERM@600"), std::string::npos) << why.text;
#endif
    current.warn_signal = SIGTERM;
    current.warn_time = 600;
    fake_slurmctld::set_current_job(current);
    EXPECT_EQ(call_modify(&to_spot.d, 1001, &err.text), SLURM_SUCCESS);
    EXPECT_EQ(to_spot.d.requeue, 1);
}

TEST_F(Plugin, ReconfigureReloadsAndABadFileKeepsTheOldConfig)
{
    std::ofstream(config_path) << "cluster: {default_account: default, bogus: 1}\n";
    fake_slurmctld::reconfigure();
    Desc job(1002);
    job.set(&job.d.tres_per_job, "gres:gpu:1");
    ErrMsg err;
    EXPECT_EQ(submit(&job.d, 1002, &err.text), ESLURM_INVALID_ACCOUNT);  // old config still on

    std::ofstream(config_path, std::ios::trunc) << "cluster: {default_account: elsewhere}\n";
    fake_slurmctld::reconfigure();
    Desc after(1002);
    after.set(&after.d.tres_per_job, "gres:gpu:1");
    ErrMsg none;
    EXPECT_EQ(submit(&after.d, 1002, &none.text), SLURM_SUCCESS);  // new config applied

    std::ofstream(config_path, std::ios::trunc) << kConfig;
    fake_slurmctld::reconfigure();
}

std::string slurp(const std::string& path)
{
    std::ifstream in(path);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A reconfigure's new slurmctld (SLURMCTLD_RECONF set) starts on the last valid copy when
// allot.yaml is broken; a cold start with the broken file still refuses to start.
TEST_F(Plugin, ANewSlurmctldOfAReconfigureRunsOnTheLastValidCopy)
{
    const std::string copy = state_dir + "/allot.yaml.last-good";
    auto init = reinterpret_cast<int (*)()>(dlsym(handle, "init"));
    auto fini = reinterpret_cast<int (*)()>(dlsym(handle, "fini"));
    fini();
    ASSERT_EQ(init(), SLURM_SUCCESS);
    EXPECT_EQ(slurp(copy), kConfig);  // every valid load is kept
    std::ofstream(config_path, std::ios::trunc) << "cluster: {bogus: 1}\n";
    fini();
    EXPECT_EQ(init(), SLURM_ERROR);  // cold start: fail closed

    setenv("SLURMCTLD_RECONF", "1", 1);
    EXPECT_EQ(init(), SLURM_SUCCESS);
    unsetenv("SLURMCTLD_RECONF");
    Desc job(1002);
    job.set(&job.d.tres_per_job, "gres:gpu:1");
    ErrMsg err;
    EXPECT_EQ(submit(&job.d, 1002, &err.text), ESLURM_INVALID_ACCOUNT);  // the copy's policy
    EXPECT_EQ(slurp(copy), kConfig);  // a broken file never replaces the copy

    std::ofstream(config_path, std::ios::trunc) << kConfig;
    fini();
    ASSERT_EQ(init(), SLURM_SUCCESS);
}

// Property: whatever the job fields hold, the plugin returns a Slurm code, never
// crashes, leaks no lock, and any message it returns is Slurm-allocated text.
TEST_F(Plugin, RandomJobDescriptionsNeverCrash)
{
    std::mt19937_64 rng(12345);
    const char* pieces[] = {"gres:gpu:",
                            "gres/gpu:",
                            "gpu",
                            ":",
                            ",",
                            "h100",
                            "-1",
                            "999999999999",
                            "18446744073709551615",
                            "",
                            "\xff\xfe",
                            "gres:",
                            "=",
                            "team-a",
                            "spot",
                            "general",
                            "default",
                            "%s%n",
                            "\n",
                            "0"};
    auto random_text = [&](bool allow_null) -> const char* {
        static thread_local std::string buffer[16];
        static thread_local int slot = 0;
        if (allow_null && rng() % 4 == 0) return nullptr;
        std::string& s = buffer[slot++ % 16];
        s.clear();
        const int n = static_cast<int>(rng() % 6);
        for (int i = 0; i < n; ++i) s += pieces[rng() % (sizeof pieces / sizeof *pieces)];
        if (rng() % 50 == 0) s.assign(100000, 'g');
        return s.c_str();
    };
    const uint32_t u32[] = {0, 1, 2, 8, NO_VAL, INFINITE, 0x7fffffff};
    const uint16_t u16[] = {0, 1, 2, NO_VAL16, INFINITE16};
    for (int round = 0; round < 20000; ++round) {
        Desc job(rng() % 2 ? 1001 : 1002);
        for (char** f : {&job.d.account, &job.d.qos, &job.d.partition, &job.d.tres_per_job,
                         &job.d.tres_per_node, &job.d.tres_per_task, &job.d.tres_per_socket,
                         &job.d.mem_per_tres, &job.d.cpus_per_tres})
            if (const char* t = random_text(true)) job.set(f, t);
        job.d.min_nodes = u32[rng() % 7];
        job.d.num_tasks = u32[rng() % 7];
        job.d.time_limit = u32[rng() % 7];
        job.d.ntasks_per_node = u16[rng() % 5];
        job.d.sockets_per_node = u16[rng() % 5];
        job.d.cpus_per_task = u16[rng() % 5];
        job.d.warn_signal = u16[rng() % 5];
        job.d.pn_min_memory = rng() % 2 ? NO_VAL64 : rng();
        ErrMsg err;
        const int rc = round % 3 == 0 ? call_modify(&job.d, job.d.user_id, &err.text)
                                      : submit(&job.d, job.d.user_id, &err.text);
        ASSERT_TRUE(rc == SLURM_SUCCESS || rc >= ESLURM_INVALID_PARTITION_NAME) << rc;
        ASSERT_EQ(fake_slurmctld::lock_depth(), 0);
        if (err.text) {
            ASSERT_LT(std::strlen(err.text), 4096u);
        }
        if (round % 3 == 0) {
            job_desc_msg_t current = job.d;
            fake_slurmctld::set_current_job(current);
        }
    }
}
