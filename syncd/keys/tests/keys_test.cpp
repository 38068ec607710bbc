// keys_test.cpp - allot-keys' decision with fake live source and user
// database, over a cache published by the real writer.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <set>

#include "allot/identity_cache.hpp"
#include "keys_core.hpp"

namespace {

using namespace allot;
using namespace allot::keys;

const std::string kAlice =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKFMTZxG3K4ue1Z5rz770KZ2+3q1QC0VeNgndGq9OwYU alice@laptop";
const std::string kBob =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAILwffpGnQCkK3IdVr/CvrvqT3mu+izSf6/tKMYDEa3bH bob@laptop";

class FakeLive : public LiveKeys {
public:
    std::map<std::string, std::vector<std::string>> users;
    bool down = false;
    int calls = 0;
    Result<std::optional<std::vector<std::string>>> lookup(const std::string& user) override
    {
        ++calls;
        if (down) return make_error("connect timeout");
        auto it = users.find(user);
        if (it == users.end()) return std::optional<std::vector<std::string>>();
        return std::optional<std::vector<std::string>>(it->second);
    }
};

class FakeUsers : public UserDb {
public:
    std::map<std::string, uint32_t> uids;
    std::set<std::pair<std::string, std::string>> members;
    std::optional<uint32_t> uid_of(const std::string& u) const override
    {
        auto it = uids.find(u);
        if (it == uids.end()) return std::nullopt;
        return it->second;
    }
    bool in_group(const std::string& u, const std::string& g) const override
    {
        return members.count({u, g}) > 0;
    }
};

class Keys : public ::testing::Test {
protected:
    void SetUp() override
    {
        char tmpl[] = "/tmp/allot-keys-XXXXXX";
        dir_ = mkdtemp(tmpl);
        chmod(dir_.c_str(), 0755);
        config_.identity.cache_dir = dir_ + "/cache";
        config_.node.run_dir = dir_ + "/run";
        config_.node.admin_group = "hpcadmin";
        PosixUser bob{"bob", 20001, 20001, "", "/home/bob", "/bin/bash", {kBob}};
        PosixUser bobby{"bobby", 20002, 20002, "", "/home/bobby", "/bin/bash", {kAlice}};
        PosixUser eve{"eve",
                      20003,
                      20003,
                      "",
                      "/home/eve",
                      "/bin/bash",
                      {"command=\"/bin/sh\" " + kBob, "ssh-ed25519 AAAAnotbase64!!"}};
        CacheWriteOptions o;
        o.fsync = false;
        ASSERT_TRUE(
            publish_identity_cache(config_.identity.cache_dir, {bob, bobby, eve}, {}, o).ok());
        users_.uids = {{"bob", 20001}, {"bobby", 20002}, {"eve", 20003}, {"admin", 20004}};
        users_.members = {{"admin", "hpcadmin"}};
        live_.users = {{"bob", {kBob, kAlice}}};
        ctx_.config = &config_;
        ctx_.users = &users_;
        ctx_.now = 1000;
        ctx_.registry.require_root_owner = getuid() == 0;
    }
    void TearDown() override { std::system(("rm -rf '" + dir_ + "'").c_str()); }

    std::string dir_;
    Config config_;
    FakeUsers users_;
    FakeLive live_;
    KeysContext ctx_;
};

TEST_F(Keys, LiveAnswerWins)
{
    ctx_.live = &live_;
    auto out = resolve_keys(ctx_, "bob");
    EXPECT_EQ(out.source, "live");
    EXPECT_EQ(out.lines, (std::vector<std::string>{kBob, kAlice}));
    // Unknown at the source: nothing, even though the cache has bobby's key
    // (the key was removed at the source).
    out = resolve_keys(ctx_, "bobby");
    EXPECT_EQ(out.source, "none");
    EXPECT_TRUE(out.lines.empty());
}

TEST_F(Keys, SourceDownFallsBackToCacheWithExactNames)
{
    live_.down = true;
    ctx_.live = &live_;
    auto out = resolve_keys(ctx_, "bob");
    EXPECT_EQ(out.source, "cache");
    EXPECT_EQ(out.lines, (std::vector<std::string>{kBob}));
    out = resolve_keys(ctx_, "bobby");
    EXPECT_EQ(out.lines, (std::vector<std::string>{kAlice}));
    for (const char* miss : {"bo", "bobb", "BOB", "carol"}) {
        out = resolve_keys(ctx_, miss);
        EXPECT_TRUE(out.lines.empty()) << miss;
    }
    // Keys with options or a bad blob never come out, even from the cache.
    out = resolve_keys(ctx_, "eve");
    EXPECT_TRUE(out.lines.empty());
}

TEST_F(Keys, InvalidNamesNeverReachTheSource)
{
    ctx_.live = &live_;
    for (const char* bad : {"", "-o", "bob\nroot", "a b", "../../etc", "bob\"", "0"}) {
        auto out = resolve_keys(ctx_, bad);
        EXPECT_EQ(out.source, "invalid-name") << bad;
        EXPECT_TRUE(out.lines.empty());
    }
    EXPECT_EQ(live_.calls, 0);
    EXPECT_EQ(resolve_keys(ctx_, std::string(5000, 'a')).source, "invalid-name");
}

TEST_F(Keys, CacheMissingOrCorruptGivesNothing)
{
    ctx_.live = nullptr;
    std::system(("rm -f '" + config_.identity.cache_dir + "/keys.cache'").c_str());
    auto out = resolve_keys(ctx_, "bob");
    EXPECT_EQ(out.source, "none");
    EXPECT_TRUE(out.lines.empty());
    std::system(
        ("head -c 100 /dev/urandom > '" + config_.identity.cache_dir + "/keys.cache'").c_str());
    out = resolve_keys(ctx_, "bob");
    EXPECT_TRUE(out.lines.empty());
}

TEST_F(Keys, ComputeNodeGating)
{
    config_.node.role = NodeRole::Compute;
    ctx_.live = &live_;
    auto out = resolve_keys(ctx_, "bob");
    EXPECT_EQ(out.source, "denied");
    EXPECT_TRUE(out.lines.empty());
    EXPECT_EQ(live_.calls, 0);  // denied before any network I/O

    JobEntry e;
    e.job_id = 77;
    e.uid = 20001;
    e.user = "bob";
    e.node = "n1";
    e.boot_id = current_boot_id();
    ASSERT_TRUE(write_job_entry(config_.node.run_dir, e).ok());
    out = resolve_keys(ctx_, "bob");
    EXPECT_EQ(out.source, "live");
    EXPECT_EQ(out.lines.size(), 2u);
    EXPECT_EQ(resolve_keys(ctx_, "bobby").source, "denied");  // bob's job is not bobby's

    users_.members.insert({"bob", "hpcadmin"});
    ASSERT_TRUE(remove_job_entry(config_.node.run_dir, 77, "n1").ok());
    EXPECT_EQ(resolve_keys(ctx_, "bob").source, "live");  // admin group

    config_.node.role = NodeRole::Login;
    EXPECT_EQ(resolve_keys(ctx_, "bobby").source, "none");  // login nodes: never gated
}

}  // namespace
