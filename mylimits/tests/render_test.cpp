// render_test.cpp - mylimits text (80 columns, colour only when asked) and JSON schema.
#include <gtest/gtest.h>

#include <sstream>

#include "allot/json.hpp"
#include "limits_fixture.hpp"
#include "render.hpp"

using namespace allot;
using namespace allot::limits;
using allot::testing::job;
using allot::testing::limits_config;
using allot::testing::limits_facts;

namespace {

Report lab_report()
{
    return build_report(limits_facts(), limits_config());
}

Report report_with_storage()
{
    Facts f = limits_facts();
    quota::SourceResult home;
    home.name = "home";
    home.kind = quota::SourceKind::Quotactl;
    home.where = "/home";
    home.reading = Error(quota::Errc::QuotasOff,
                         "quotas are not enabled on /home (quotactl: No such process)");
    quota::SourceResult proj;
    proj.name = "project";
    proj.kind = quota::SourceKind::Command;
    proj.where = "lfs quota -u alice /project";
    quota::Usage u;
    u.filesystem = "/project";
    u.bytes_used = 5ull << 30;
    u.bytes_soft = 4ull << 30;
    u.bytes_hard = 8ull << 30;
    u.block_grace_left = 3 * 86400;
    u.files_used = 1200;
    u.files_hard = 100000;
    proj.reading = quota::Reading{{u}, std::nullopt};
    f.storage = {home, proj};
    f.notes.push_back("slurmctld hid the usage of other members of your team (PrivateData)");
    return build_report(f, limits_config());
}

std::vector<std::string> lines(const std::string& text)
{
    std::vector<std::string> out;
    std::istringstream in(text);
    std::string l;
    while (std::getline(in, l)) out.push_back(l);
    return out;
}

// Visible width of a line: ANSI escapes take no columns.
size_t visible_width(const std::string& l)
{
    size_t n = 0;
    for (size_t i = 0; i < l.size(); ++i) {
        if (l[i] == '\033') {
            while (i < l.size() && l[i] != 'm') ++i;
            continue;
        }
        ++n;
    }
    return n;
}

}  // namespace

TEST(RenderText, EveryLineFitsEightyColumns)
{
    Report r = report_with_storage();
    // Hostile lengths: long account, QOS, job name, reason and filesystem names.
    r.accounts[0].description = std::string(200, 'd');
    r.accounts[0].tiers[0].qos = std::string(60, 'q');
    auto j = job(999999999, "PENDING", "QOSMaxWallDurationPerJobLimitAndThenSomeMoreText", "spot",
                 123456);
    j.account = std::string(50, 'a');
    j.display_id = "999999999_99999";
    r.jobs.push_back(JobView{j, Tier::Spot, true, false, false, std::string(300, 'x') + " y z"});
    r.storage[1].reading.value().usage[0].filesystem = std::string(100, 'f');
    for (bool color : {false, true}) {
        std::string text = render_text(r, TextOptions{color, 80, 0});
        for (const auto& l : lines(text)) EXPECT_LE(visible_width(l), 80u) << "[" << l << "]";
    }
}

TEST(RenderText, ColourOnlyWhenAsked)
{
    Report r = report_with_storage();
    EXPECT_EQ(render_text(r, TextOptions{false, 80, 30}).find('\033'), std::string::npos);
    EXPECT_NE(render_text(r, TextOptions{true, 80, 30}).find("\033[1m"), std::string::npos);
}

TEST(RenderText, ShowsTheNumbersInAlignedColumns)
{
    std::string text = render_text(lab_report(), TextOptions{});
    // TIER QOS CAP TEAM POOL YOU MAX-TIME PREEMPTIBLE
    EXPECT_NE(text.find("  project team-a         8     8       -    4  unlimited   no"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("  general general        4     3   11/16    1  3-00:00:00  no"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("  spot    spot        none     2       5    2  1-00:00:00  yes, requeued"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("Accounts: team-a (default), default"), std::string::npos) << text;
    EXPECT_NE(text.find("Jobs: 3 running (7 GPUs), 3 pending (5 GPUs)"), std::string::npos) << text;
    EXPECT_NE(text.find("  team-a/project          1 running (4 GPUs), 1 pending (2 GPUs)"),
              std::string::npos)
        << text;
    // The Slurm reason name is kept next to the words, so it can be searched.
    EXPECT_NE(text.find("  102         project team-a        2  PENDING   QOSGrpGRES"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("    waiting for your team's project cap of 8 GPUs; 8 in use by your"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("BeginTime (requeued 1x)"), std::string::npos) << text;
    EXPECT_NE(text.find("Account default\n  no GPUs"), std::string::npos) << text;
}

TEST(RenderText, StorageAndMissingSourcesAndNotes)
{
    std::string text = render_text(report_with_storage(), TextOptions{});
    EXPECT_NE(text.find("  home: not available: quotas are not enabled on /home"),
              std::string::npos)
        << text;
    EXPECT_NE(
        text.find("  project  /project            5.0 GiB   4.0 GiB   8.0 GiB  3-00:00:00 left"),
        std::string::npos)
        << text;
    EXPECT_NE(text.find("files                  1200         -    100000"), std::string::npos)
        << text;
    EXPECT_NE(text.find("note: slurmctld hid the usage"), std::string::npos) << text;
}

TEST(RenderText, OnlyDefaultAccountExplainsHowToJoin)
{
    Facts f = limits_facts();
    f.user.default_account = "default";
    f.assocs.erase(f.assocs.begin());
    f.jobs = {job(7, "PENDING", "AssocGrpGRES", "general", 1, "default")};
    std::string text = render_text(build_report(f, limits_config()), TextOptions{});
    EXPECT_NE(text.find("You are in no team yet."), std::string::npos) << text;
    EXPECT_NE(text.find("ask your PI to add you to a team"), std::string::npos) << text;
    EXPECT_NE(text.find("will never start"), std::string::npos) << text;
}

TEST(RenderText, NoAccountNamesTheSupportAddressFromTheConfig)
{
    Facts f = limits_facts();
    f.user.known_to_slurm = false;
    f.assocs.clear();
    f.jobs.clear();
    auto load =
        parse_config("cluster:\n  name: lab\n  support: hpc-help@example.org\n", "support-test");
    ASSERT_TRUE(load.ok()) << load.errors.joined();
    std::string text = render_text(build_report(f, *load.config), TextOptions{});
    EXPECT_NE(text.find("You have no Slurm account yet"), std::string::npos) << text;
    EXPECT_NE(text.find("Questions: hpc-help@example.org."), std::string::npos) << text;
    EXPECT_EQ(render_text(build_report(f, limits_config()), TextOptions{}).find("Questions:"),
              std::string::npos);
}

TEST(RenderText, LongJobListsAreCutWithAHint)
{
    Facts f = limits_facts();
    for (uint32_t i = 0; i < 100; ++i)
        f.jobs.push_back(job(1000 + i, "PENDING", "Priority", "spot", 1));
    std::string text = render_text(build_report(f, limits_config()), TextOptions{false, 80, 10});
    EXPECT_NE(text.find("... 96 more jobs (mylimits --all lists every job)"), std::string::npos)
        << text;
    std::string all = render_text(build_report(f, limits_config()), TextOptions{false, 80, 0});
    EXPECT_EQ(all.find("more jobs"), std::string::npos);
}

TEST(RenderHelpers, BytesAndWrap)
{
    EXPECT_EQ(format_bytes(0), "0 B");
    EXPECT_EQ(format_bytes(1023), "1023 B");
    EXPECT_EQ(format_bytes(1536), "1.5 KiB");
    EXPECT_EQ(format_bytes(12ull << 30), "12 GiB");
    EXPECT_EQ(format_bytes(UINT64_MAX), "16 EiB");
    EXPECT_EQ(wrap("a b c", 2, 80), "  a b c\n");
    for (const auto& l : lines(wrap(std::string(500, 'x') + " tail", 4, 80)))
        EXPECT_LE(l.size(), 80u);
}

// ------------------------------------------------------------------ JSON

TEST(RenderJson, SchemaIdentityAndTopLevelTypes)
{
    std::string text = render_json(report_with_storage());
    JsonPtr root = json_parse(text);
    ASSERT_TRUE(root) << text;
    EXPECT_EQ(json_string(root.get(), "schema"), "allot.mylimits/1");
    EXPECT_EQ(json_integer(root.get(), "version"), 1);
    EXPECT_EQ(json_integer(root.get(), "generated_at"), 1764723600);
    EXPECT_EQ(json_string(root.get(), "cluster"), "lab");
    EXPECT_EQ(json_bool(root.get(), "only_default_account"), false);
    const cJSON* user = cJSON_GetObjectItemCaseSensitive(root.get(), "user");
    EXPECT_EQ(json_string(user, "name"), "alice");
    EXPECT_EQ(json_integer(user, "uid"), 1001);
    EXPECT_EQ(json_string(user, "default_account"), "team-a");
    for (const char* k : {"accounts", "jobs", "storage", "notes"})
        EXPECT_TRUE(cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(root.get(), k))) << k;
}

TEST(RenderJson, TiersJobsAndStorageFields)
{
    JsonPtr root = json_parse(render_json(report_with_storage()));
    ASSERT_TRUE(root);
    const cJSON* acct =
        cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root.get(), "accounts"), 0);
    EXPECT_EQ(json_string(acct, "name"), "team-a");
    EXPECT_EQ(json_bool(acct, "default"), true);
    EXPECT_TRUE(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(acct, "gpu_limit")));
    EXPECT_EQ(json_integer(acct, "gpus_in_use"), 13);
    const cJSON* tiers = cJSON_GetObjectItemCaseSensitive(acct, "tiers");
    ASSERT_EQ(cJSON_GetArraySize(tiers), 3);
    const cJSON* g = cJSON_GetArrayItem(tiers, 1);
    EXPECT_EQ(json_string(g, "tier"), "general");
    EXPECT_EQ(json_integer(g, "gpu_cap"), 16);
    EXPECT_EQ(json_integer(g, "team_gpu_cap"), 4);
    EXPECT_EQ(json_integer(g, "pool_gpus_in_use"), 11);
    EXPECT_EQ(json_integer(g, "team_gpus_in_use"), 3);
    EXPECT_EQ(json_integer(g, "user_gpus_in_use"), 1);
    EXPECT_EQ(json_integer(g, "max_wall_minutes"), 4320);
    EXPECT_EQ(json_bool(g, "preemptible"), false);
    const cJSON* p = cJSON_GetArrayItem(tiers, 0);
    EXPECT_TRUE(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(p, "max_wall_minutes")));

    const cJSON* jobs = cJSON_GetObjectItemCaseSensitive(root.get(), "jobs");
    ASSERT_EQ(cJSON_GetArraySize(jobs), 6);
    const cJSON* pending = cJSON_GetArrayItem(jobs, 3);
    EXPECT_EQ(json_integer(pending, "job_id"), 102);
    EXPECT_EQ(json_string(pending, "reason"), "QOSGrpGRES");
    EXPECT_EQ(json_string(pending, "tier"), "project");
    EXPECT_NE(json_string(pending, "explanation").value_or("").find("project cap of 8 GPUs"),
              std::string::npos);
    const cJSON* running = cJSON_GetArrayItem(jobs, 0);
    EXPECT_TRUE(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(running, "explanation")));

    const cJSON* storage = cJSON_GetObjectItemCaseSensitive(root.get(), "storage");
    const cJSON* home = cJSON_GetArrayItem(storage, 0);
    EXPECT_EQ(json_bool(home, "ok"), false);
    EXPECT_EQ(json_string(home, "source"), "quotactl");
    const cJSON* proj = cJSON_GetArrayItem(storage, 1);
    EXPECT_TRUE(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(proj, "error")));
    const cJSON* u = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(proj, "usage"), 0);
    EXPECT_EQ(json_integer(u, "bytes_used"), int64_t(5) << 30);
    EXPECT_EQ(json_integer(u, "grace_seconds_left"), 3 * 86400);
}

TEST(RenderJson, HostileStringsStayValidJson)
{
    Report r = lab_report();
    r.user.name = "al\"ice\\\n\x01";
    r.jobs[0].job.name = std::string("\xff\xfe", 2) + "</script>";
    JsonPtr root = json_parse(render_json(r));
    ASSERT_TRUE(root);
    EXPECT_EQ(json_string(cJSON_GetObjectItemCaseSensitive(root.get(), "user"), "name"),
              r.user.name);
}
