// node_registry_test.cpp - job registry entries: round trip, hostile text,
// trust rules (ownership, modes, boot id, expiry) and tier mapping.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "allot/node_registry.hpp"

namespace {

using namespace allot;

class TempDir {
public:
    TempDir()
    {
        char tmpl[] = "/tmp/allot-registry-XXXXXX";
        path_ = mkdtemp(tmpl);
        chmod(path_.c_str(), 0755);
    }
    ~TempDir() { std::system(("rm -rf '" + path_ + "'").c_str()); }
    const std::string& path() const { return path_; }

private:
    std::string path_;
};

JobEntry entry(uint32_t job, uint32_t uid, int64_t expires = 0)
{
    JobEntry e;
    e.job_id = job;
    e.uid = uid;
    e.user = "u" + std::to_string(uid);
    e.node = "n1";
    e.boot_id = current_boot_id();
    e.start = 1000;
    e.expires = expires;
    e.tier = "spot";
    e.qos = "spot";
    e.preemptible = true;
    e.grace_seconds = 600;
    return e;
}

const RegistryOptions kAnyOwner{getuid() == 0};

TEST(NodeRegistry, FormatParseRoundTrip)
{
    const auto e = entry(42, 1001, 5000);
    auto p = parse_job_entry(format_job_entry(e));
    ASSERT_TRUE(p.ok()) << p.error().message;
    EXPECT_EQ(p.value().job_id, 42u);
    EXPECT_EQ(p.value().uid, 1001u);
    EXPECT_EQ(p.value().user, "u1001");
    EXPECT_EQ(p.value().expires, 5000);
    EXPECT_EQ(p.value().tier, "spot");
    EXPECT_TRUE(p.value().preemptible);
    EXPECT_EQ(p.value().grace_seconds, 600u);
}

TEST(NodeRegistry, HostileTextIsRejected)
{
    const std::string head = "allot-job-entry 1\n";
    for (const std::string& bad :
         {std::string(""), std::string("garbage"), head + "job_id=1\n",  // no uid
          head + "job_id=0\nuid=1\n", head + "job_id=-1\nuid=1\n",
          head + "job_id=1\nuid=99999999999\n", head + "job_id=1\nuid=1",
          head + "job_id=1\nuid=1\nuser=a b\n", head + "job_id=1\nuid=1\nnoequals\n",
          head + "job_id=1\nuid=1\npreemptible=yes\n", head + std::string(5000, 'x'),
          head + "job_id=1\nuid=1\nexpires=99999999999999999999999\n"})
        EXPECT_FALSE(parse_job_entry(bad).ok()) << bad.substr(0, 60);
    EXPECT_TRUE(parse_job_entry(head + "job_id=1\nuid=1\nfuture_key=x\n").ok());
}

TEST(NodeRegistry, EntryNameIsSanitised)
{
    EXPECT_EQ(job_entry_name(7, "n1"), "7.n1");
    EXPECT_EQ(job_entry_name(7, "../../etc"), "7..._.._etc");
    EXPECT_EQ(job_entry_name(7, ""), "7.node");
}

TEST(NodeRegistry, WriteReadRemoveAndExpiry)
{
    TempDir dir;
    const std::string run = dir.path() + "/run";
    ASSERT_TRUE(write_job_entry(run, entry(1, 1001)).ok());
    ASSERT_TRUE(write_job_entry(run, entry(2, 1002, 2000)).ok());
    struct stat st;
    ASSERT_EQ(stat((run + "/jobs/1.n1").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0644u);

    EXPECT_TRUE(user_has_job(run, 1001, 1500, kAnyOwner));
    EXPECT_TRUE(user_has_job(run, 1002, 1500, kAnyOwner));
    EXPECT_FALSE(user_has_job(run, 1002, 2000, kAnyOwner));  // expired
    EXPECT_FALSE(user_has_job(run, 1003, 1500, kAnyOwner));
    auto e = read_job_entry(run, 1, "n1", kAnyOwner);
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->uid, 1001u);
    EXPECT_FALSE(read_job_entry(run, 3, "n1", kAnyOwner).has_value());

    ASSERT_TRUE(remove_job_entry(run, 1, "n1").ok());
    ASSERT_TRUE(remove_job_entry(run, 1, "n1").ok());  // idempotent
    EXPECT_FALSE(user_has_job(run, 1001, 1500, kAnyOwner));
}

TEST(NodeRegistry, OtherBootAndUntrustedFilesDoNotCount)
{
    TempDir dir;
    const std::string run = dir.path() + "/run";
    auto old = entry(5, 1005);
    old.boot_id = "00000000-0000-0000-0000-000000000000";
    ASSERT_TRUE(write_job_entry(run, old).ok());
    EXPECT_FALSE(user_has_job(run, 1005, 1500, kAnyOwner));
    EXPECT_FALSE(read_job_entry(run, 5, "n1", kAnyOwner).has_value());

    // A group/world-writable entry is not a grant.
    ASSERT_TRUE(write_job_entry(run, entry(6, 1006)).ok());
    ASSERT_EQ(chmod((run + "/jobs/6.n1").c_str(), 0666), 0);
    EXPECT_FALSE(user_has_job(run, 1006, 1500, kAnyOwner));
    // Nor is anything in a world-writable directory.
    ASSERT_TRUE(write_job_entry(run, entry(7, 1007)).ok());
    ASSERT_EQ(chmod((run + "/jobs").c_str(), 0777), 0);
    EXPECT_FALSE(user_has_job(run, 1007, 1500, kAnyOwner));
    ASSERT_EQ(chmod((run + "/jobs").c_str(), 0755), 0);
    EXPECT_TRUE(user_has_job(run, 1007, 1500, kAnyOwner));

    // Pruning removes the other boot's entry and the untrusted one.
    prune_job_entries(run, 1500, kAnyOwner);
    EXPECT_NE(access((run + "/jobs/5.n1").c_str(), F_OK), 0);
    EXPECT_NE(access((run + "/jobs/6.n1").c_str(), F_OK), 0);
    EXPECT_EQ(access((run + "/jobs/7.n1").c_str(), F_OK), 0);

    // Missing directory: nobody has a job (fail closed), no crash.
    EXPECT_FALSE(user_has_job(dir.path() + "/nope", 1007, 1500, kAnyOwner));
}

TEST(NodeRegistry, TierFromQos)
{
    auto load = parse_config(
        "tiers:\n  general:\n    qos: general\n  spot:\n    qos: spot\n    grace_seconds: 120\n"
        "teams:\n  - group: team-a\n    account: team-a\n    gpus: 4\n",
        "test.yaml");
    ASSERT_TRUE(load.ok()) << load.errors.joined();
    JobEntry e;
    apply_tier(*load.config, "spot", e);
    EXPECT_EQ(e.tier, "spot");
    EXPECT_TRUE(e.preemptible);
    EXPECT_EQ(e.grace_seconds, 120u);
    apply_tier(*load.config, "general", e);
    EXPECT_EQ(e.tier, "general");
    EXPECT_FALSE(e.preemptible);
    EXPECT_EQ(e.grace_seconds, 0u);
    apply_tier(*load.config, "team-a", e);
    EXPECT_EQ(e.tier, "project");
    apply_tier(*load.config, "normal", e);
    EXPECT_EQ(e.tier, "");
}

// Callers decide on codes: a hostile entry is Invalid or TooLarge, a file
// problem is Io.
TEST(NodeRegistry, ErrorsCarryCodes)
{
    EXPECT_TRUE(parse_job_entry(std::string(kMaxEntryBytes + 1, 'a')).error().is(Errc::TooLarge));
    EXPECT_TRUE(parse_job_entry("not an entry\n").error().is(Errc::Invalid));
    EXPECT_TRUE(parse_job_entry("allot-job-entry 1\njob_id=x\n").error().is(Errc::Invalid));
    JobEntry e;
    e.job_id = 1;
    e.uid = 1000;
    e.node = "n1";
    EXPECT_TRUE(write_job_entry("/proc/allot-no-such-dir", e).error().is(Errc::Io));
}

}  // namespace
