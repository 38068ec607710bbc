// app_test.cpp - mylimits options, permissions, exit codes and output modes, on fakes.
#include <gtest/gtest.h>

#include <sstream>

#include "allot/json.hpp"
#include "app.hpp"
#include "fakes.hpp"

using namespace allot;
using namespace allot::mylimits;
using namespace allot::mylimits::testing;

namespace {

const std::string kConfig = std::string(FIXTURES) + "/allot.yaml";

SlurmFacts alice_facts()
{
    SlurmFacts f;
    f.user = {"alice", 1001, "team-a", true};
    limits::AssocFacts a;
    a.account = "team-a";
    a.qos = {"team-a", "general", "spot"};
    limits::AssocFacts d;
    d.account = "default";
    d.qos = {"general", "spot"};
    d.grp_gpus = 0;
    f.assocs = {a, d};
    limits::QosFacts p;
    p.name = "team-a";
    p.grp_gpus = 8;
    p.usage_known = true;
    p.gpus_in_use = 8;
    p.preempt = {"spot"};
    limits::QosFacts s;
    s.name = "spot";
    s.max_wall_minutes = 1440;
    f.qos = {p, s};
    limits::JobFacts j;
    j.job_id = 42;
    j.display_id = "42";
    j.state = "PENDING";
    j.reason = "QOSGrpGRES";
    j.account = "team-a";
    j.qos = "team-a";
    j.gpus = 2;
    limits::JobFacts k = j;
    k.job_id = 43;
    k.display_id = "43";
    k.account = "default";
    k.qos = "general";
    k.reason = "AssocGrpGRES";
    f.jobs = {j, k};
    return f;
}

struct Harness {
    FakeSlurm slurm;
    FakeQuotaSystem quotas;
    Environment env;
    std::ostringstream out, err;

    Harness()
    {
        slurm.facts["alice"] = alice_facts();
        SlurmFacts bob;
        bob.user = {"bob", 1002, "default", true};
        limits::AssocFacts d;
        d.account = "default";
        d.grp_gpus = 0;
        bob.assocs = {d};
        slurm.facts["bob"] = bob;
        env.caller_uid = 1001;
        env.now = 1764723600;
        env.env_config = kConfig;
        env.user_by_name = [](const std::string& n) -> std::optional<PasswdEntry> {
            if (n == "alice") return PasswdEntry{"alice", 1001, "/home/alice"};
            if (n == "bob") return PasswdEntry{"bob", 1002, "/home/bob"};
            if (n == "root") return PasswdEntry{"root", 0, "/root"};
            return std::nullopt;
        };
        env.user_by_uid = [](uint32_t uid) -> std::optional<PasswdEntry> {
            if (uid == 1001) return PasswdEntry{"alice", 1001, "/home/alice"};
            if (uid == 1002) return PasswdEntry{"bob", 1002, "/home/bob"};
            if (uid == 0) return PasswdEntry{"root", 0, "/root"};
            return std::nullopt;
        };
        quotas.mounts["/home/alice"] = {"/dev/vda1", "/home"};
        quotas.mounts["/home/bob"] = {"/dev/vda1", "/home"};
    }

    int run_with(std::vector<std::string> args)
    {
        args.insert(args.begin(), "mylimits");
        auto o = parse_options(args);
        EXPECT_TRUE(o.ok()) << o.error().message;
        if (!o.ok()) return -1;
        out.str("");
        err.str("");
        return run(o.value(), env, slurm, quotas, out, err);
    }
};

}  // namespace

TEST(Options, ParsesEveryOption)
{
    auto o = parse_options({"mylimits", "--json", "-a", "--color=never", "--user=bob", "-A",
                            "team-a", "--config", "/x.yaml", "--quota-conf=/q", "--no-quota"});
    ASSERT_TRUE(o.ok()) << o.error().message;
    EXPECT_TRUE(o.value().json);
    EXPECT_TRUE(o.value().all);
    EXPECT_EQ(o.value().color, ColorMode::Never);
    EXPECT_EQ(o.value().user, "bob");
    EXPECT_EQ(o.value().account, "team-a");
    EXPECT_EQ(o.value().config_path, "/x.yaml");
    EXPECT_EQ(o.value().quota_conf, "/q");
    EXPECT_TRUE(o.value().no_quota);
}

TEST(Options, RejectsBadInput)
{
    EXPECT_FALSE(parse_options({"mylimits", "--bogus"}).ok());
    EXPECT_FALSE(parse_options({"mylimits", "-z"}).ok());
    EXPECT_FALSE(parse_options({"mylimits", "--color=pink"}).ok());
    EXPECT_FALSE(parse_options({"mylimits", "--user"}).ok());
    EXPECT_FALSE(parse_options({"mylimits", "extra"}).ok());
    EXPECT_FALSE(parse_options({"mylimits", "--user=a;rm -rf"}).ok());
    EXPECT_FALSE(parse_options({"mylimits", "--account=" + std::string(100, 'a')}).ok());
    EXPECT_TRUE(parse_options({"mylimits"}).ok());
    EXPECT_TRUE(parse_options({}).ok());
}

TEST(App, HelpAndVersion)
{
    Harness h;
    EXPECT_EQ(h.run_with({"--help"}), kExitOk);
    EXPECT_NE(h.out.str().find("Exit status"), std::string::npos);
    EXPECT_EQ(h.run_with({"--version"}), kExitOk);
    EXPECT_NE(h.out.str().find("mylimits (allot)"), std::string::npos);
    EXPECT_TRUE(h.slurm.fetched.empty());
}

TEST(App, OwnReportAsksForTheConfiguredCluster)
{
    Harness h;
    EXPECT_EQ(h.run_with({"--no-quota"}), kExitOk) << h.err.str();
    ASSERT_EQ(h.slurm.fetched, std::vector<std::string>{"alice"});
    EXPECT_EQ(h.slurm.last_cluster, "lab");
    EXPECT_NE(h.out.str().find("mylimits for alice (uid 1001) on cluster lab"), std::string::npos);
    EXPECT_NE(h.out.str().find("QOSGrpGRES"), std::string::npos);
    EXPECT_NE(h.out.str().find("project cap of 8 GPUs; 8 in use by your team"), std::string::npos)
        << h.out.str();
}

TEST(App, ConfigErrorsExitThree)
{
    Harness h;
    h.env.env_config = "/nonexistent/allot.yaml";
    EXPECT_EQ(h.run_with({}), kExitConfig);
    EXPECT_NE(h.err.str().find("/nonexistent/allot.yaml"), std::string::npos);
    EXPECT_EQ(h.run_with({"--config=" + kConfig}), kExitOk) << h.err.str();  // option wins
}

TEST(App, SlurmDownExitsFourNamingTheDaemon)
{
    Harness h;
    h.slurm.fail = Error(mylimits::Errc::SlurmctldDown,
                         "cannot reach slurmctld: slurmctld (jobs): Unable to contact slurm "
                         "controller");
    EXPECT_EQ(h.run_with({}), kExitSlurm);
    EXPECT_NE(h.err.str().find("mylimits: cannot reach slurmctld: slurmctld (jobs)"),
              std::string::npos)
        << h.err.str();
    h.slurm.fail =
        Error(mylimits::Errc::SlurmdbdDown, "cannot reach slurmdbd: slurmdbd: Connection refused");
    EXPECT_EQ(h.run_with({}), kExitSlurm);
    EXPECT_NE(h.err.str().find("cannot reach slurmdbd"), std::string::npos);
    EXPECT_TRUE(h.out.str().empty());
}

TEST(App, UserOptionNeedsRootOrOperator)
{
    Harness h;
    EXPECT_EQ(h.run_with({"--user=bob"}), kExitDenied);
    EXPECT_NE(h.err.str().find("--user is for administrators"), std::string::npos);
    EXPECT_EQ(h.slurm.fetched.size(), 0u);  // nothing about bob was fetched

    EXPECT_EQ(h.run_with({"--user=alice"}), kExitOk);  // oneself is fine

    h.slurm.operators["alice"] = true;
    EXPECT_EQ(h.run_with({"--user=bob", "--no-quota"}), kExitOk) << h.err.str();
    EXPECT_NE(h.out.str().find("mylimits for bob (uid 1002)"), std::string::npos);
    EXPECT_NE(h.out.str().find("You are in no team yet."), std::string::npos) << h.out.str();

    h.slurm.operators.clear();
    h.env.caller_uid = 0;
    EXPECT_EQ(h.run_with({"--user=bob", "--no-quota"}), kExitOk);
    EXPECT_EQ(h.run_with({"--user=nobody-here"}), kExitNoSuchUser);
}

TEST(App, OperatorCheckFailureIsSlurmError)
{
    Harness h;
    h.slurm.operator_lookup_fails = true;
    EXPECT_EQ(h.run_with({"--user=bob"}), kExitSlurm);
}

TEST(App, AccountOptionNarrowsAndGuardsOthers)
{
    Harness h;
    EXPECT_EQ(h.run_with({"--account=team-a", "--json", "--no-quota"}), kExitOk) << h.err.str();
    JsonPtr root = json_parse(h.out.str());
    ASSERT_TRUE(root);
    const cJSON* accounts = cJSON_GetObjectItemCaseSensitive(root.get(), "accounts");
    ASSERT_EQ(cJSON_GetArraySize(accounts), 1);
    EXPECT_EQ(json_string(cJSON_GetArrayItem(accounts, 0), "name"), "team-a");
    EXPECT_EQ(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(root.get(), "jobs")), 1);

    EXPECT_EQ(h.run_with({"--account=team-b"}), kExitDenied);
    h.env.caller_uid = 0;
    EXPECT_EQ(h.run_with({"--user=alice", "--account=team-b"}), kExitNoSuchUser);
}

TEST(App, CallerWithoutPasswdEntry)
{
    Harness h;
    h.env.caller_uid = 4242;
    EXPECT_EQ(h.run_with({}), kExitNoSuchUser);
}

TEST(App, UserUnknownToSlurmIsToldHowToJoin)
{
    Harness h;
    h.slurm.facts.erase("alice");
    EXPECT_EQ(h.run_with({"--no-quota"}), kExitOk);
    EXPECT_NE(h.out.str().find("You have no Slurm account yet"), std::string::npos) << h.out.str();
}

TEST(App, NoQuotaConfMeansHomeQuotactlAndFailureIsReported)
{
    Harness h;
    EXPECT_EQ(h.run_with({}), kExitOk);
    EXPECT_NE(h.out.str().find("home: not available: quotas are not enabled on /home"),
              std::string::npos)
        << h.out.str();
    EXPECT_EQ(h.quotas.last_quota_uid, 1001u);
}

TEST(App, QuotaConfSourcesAreAllRead)
{
    Harness h;
    h.env.env_quota_conf = "/etc/q.conf";
    h.quotas.files["/etc/q.conf"] =
        "home quotactl /home/alice\nproject command /usr/bin/lfs quota -u {user} /project\n"
        "scratch snapshot /var/snap.json\n";
    h.quotas.quotactl_errno = 0;
    h.quotas.kernel.bytes_used = 1 << 20;
    h.quotas.kernel.bytes_hard = 10 << 20;
    h.quotas.command_output["/usr/bin/lfs"] =
        "Filesystem kbytes quota limit grace files quota limit grace\n"
        "/project 2048 4096 8192 - 1 0 0 -\n";
    h.quotas.files["/var/snap.json"] = "{broken";
    EXPECT_EQ(h.run_with({"--json"}), kExitOk) << h.err.str();
    ASSERT_EQ(h.quotas.commands_run.size(), 1u);
    EXPECT_EQ(h.quotas.commands_run[0][3], "alice");
    JsonPtr root = json_parse(h.out.str());
    ASSERT_TRUE(root);
    const cJSON* storage = cJSON_GetObjectItemCaseSensitive(root.get(), "storage");
    ASSERT_EQ(cJSON_GetArraySize(storage), 3);
    EXPECT_EQ(json_bool(cJSON_GetArrayItem(storage, 0), "ok"), true);
    EXPECT_EQ(json_bool(cJSON_GetArrayItem(storage, 1), "ok"), true);
    EXPECT_EQ(json_bool(cJSON_GetArrayItem(storage, 2), "ok"), false);
    EXPECT_EQ(json_string(cJSON_GetArrayItem(storage, 1), "where"),
              "/usr/bin/lfs quota -u alice /project");
}

TEST(App, BadQuotaConfIsReportedNotFatal)
{
    Harness h;
    h.env.env_quota_conf = "/etc/q.conf";
    h.quotas.files["/etc/q.conf"] = "home nonsense\n";
    EXPECT_EQ(h.run_with({}), kExitOk);
    EXPECT_NE(h.out.str().find("quota.conf: not available: quota.conf line 1"), std::string::npos)
        << h.out.str();
}

TEST(App, ColourFollowsTtyNoColorAndOption)
{
    Harness h;
    h.env.stdout_is_tty = true;
    EXPECT_EQ(h.run_with({"--no-quota"}), kExitOk);
    EXPECT_NE(h.out.str().find('\033'), std::string::npos);
    h.env.no_color_env = true;
    EXPECT_EQ(h.run_with({"--no-quota"}), kExitOk);
    EXPECT_EQ(h.out.str().find('\033'), std::string::npos);
    h.env.stdout_is_tty = false;
    h.env.no_color_env = false;
    EXPECT_EQ(h.run_with({"--no-quota"}), kExitOk);
    EXPECT_EQ(h.out.str().find('\033'), std::string::npos);
    EXPECT_EQ(h.run_with({"--no-quota", "--color=always"}), kExitOk);
    EXPECT_NE(h.out.str().find('\033'), std::string::npos);
    h.env.stdout_is_tty = true;
    EXPECT_EQ(h.run_with({"--no-quota", "--color=never"}), kExitOk);
    EXPECT_EQ(h.out.str().find('\033'), std::string::npos);
    EXPECT_EQ(h.run_with({"--no-quota", "--json"}), kExitOk);  // JSON is never coloured
    EXPECT_EQ(h.out.str().find('\033'), std::string::npos);
}

TEST(App, HostileSlurmStringsNeverBreakOutput)
{
    Harness h;
    auto& f = h.slurm.facts["alice"];
    f.jobs[0].name = std::string("\x1b[2J\xff", 4) + std::string(5000, 'n');
    f.jobs[0].reason = std::string(3000, 'R');
    f.jobs[0].account = std::string(500, 'a');
    f.jobs.resize(5000, f.jobs[0]);
    EXPECT_EQ(h.run_with({"--no-quota"}), kExitOk);
    std::istringstream in(h.out.str());
    std::string line;
    while (std::getline(in, line)) EXPECT_LE(line.size(), 80u) << line;
    EXPECT_EQ(h.run_with({"--no-quota", "--json"}), kExitOk);
    EXPECT_TRUE(json_parse(h.out.str(), 64u << 20));
}

TEST(Errors, TheCodeDecidesTheExitStatusNotTheText)
{
    using mylimits::Errc;
    EXPECT_EQ(exit_code(Error(Errc::Usage, "")), kExitUsage);
    EXPECT_EQ(exit_code(Error(Errc::Config, "")), kExitConfig);
    EXPECT_EQ(exit_code(Error(Errc::SlurmctldDown, "")), kExitSlurm);
    EXPECT_EQ(exit_code(Error(Errc::SlurmdbdDown, "")), kExitSlurm);
    EXPECT_EQ(exit_code(Error(Errc::Denied, "cannot reach slurmctld")), kExitDenied);
    EXPECT_EQ(exit_code(Error(Errc::NoSuchUser, "")), kExitNoSuchUser);
    EXPECT_EQ(exit_code(Error(Errc::NoAssociation, "")), kExitNoSuchUser);
    // Quota sources never stop the report, and other areas' codes are not mylimits' to map.
    EXPECT_EQ(exit_code(Error(quota::Errc::QuotasOff, "")), kExitInternal);
    EXPECT_EQ(exit_code(Error(allot::Errc::Invalid, "")), kExitInternal);
    EXPECT_STREQ(mylimits::category().name(), "mylimits");
    EXPECT_EQ(Error(Errc::Denied, "").describe(), "permission denied");
    EXPECT_EQ(Error(quota::Errc::BadQuotaData, "").code.message(), "quota data cannot be parsed");
}
