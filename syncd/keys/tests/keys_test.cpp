// keys_test.cpp - allot-keys' decision with fake live source and user
// database, over a cache published by the real writer: directory users only
// (never a local account or reserved name, whatever the source or the caches
// say), trusted caches only, no keys without node.role.
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
        config_.node.role = NodeRole::Login;
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
        // A directory user named like the local root and one like a system account.
        PosixUser root{"root", 20010, 20010, "", "/home/root", "/bin/bash", {kAlice}};
        PosixUser daemon{"daemon", 20011, 20011, "", "/home/daemon", "/bin/bash", {kAlice}};
        ASSERT_TRUE(publish_identity_cache(config_.identity.cache_dir,
                                           {bob, bobby, eve, root, daemon}, {}, o)
                        .ok());
        users_.uids = {
            {"bob", 20001}, {"bobby", 20002}, {"eve", 20003}, {"root", 0}, {"daemon", 1}};
        live_.users = {{"bob", {kBob, kAlice}}, {"root", {kAlice}}, {"daemon", {kAlice}}};
        rules_ = identity_rules(config_.identity,
                                parse_local_identities("root:x:0:0::/root:/bin/bash\n"
                                                       "daemon:x:1:1::/:/bin/false\n",
                                                       "root:x:0:\nhpcadmin:x:900:\n"));
        ctx_.config = &config_;
        ctx_.users = &users_;
        ctx_.node.rules = &rules_;
        ctx_.node.trust = idcache::TrustPolicy{geteuid(), dir_.c_str()};
        ctx_.now = 1000;
        ctx_.registry.require_root_owner = getuid() == 0;
    }
    void TearDown() override { std::system(("rm -rf '" + dir_ + "'").c_str()); }

    std::string dir_;
    Config config_;
    IdentityRules rules_;
    FakeUsers users_;
    FakeLive live_;
    KeysContext ctx_;
};

TEST_F(Keys, LiveAnswerWins)
{
    ctx_.live = &live_;
    auto out = resolve_keys(ctx_, "bob");
    EXPECT_EQ(out.source, KeysSource::Live);
    EXPECT_EQ(out.lines, (std::vector<std::string>{kBob, kAlice}));
    // Unknown at the source: nothing, even though the cache has bobby's key
    // (the key was removed at the source).
    out = resolve_keys(ctx_, "bobby");
    EXPECT_EQ(out.source, KeysSource::None);
    EXPECT_TRUE(out.lines.empty());
}

TEST_F(Keys, SourceDownFallsBackToCacheWithExactNames)
{
    live_.down = true;
    ctx_.live = &live_;
    auto out = resolve_keys(ctx_, "bob");
    EXPECT_EQ(out.source, KeysSource::Cache);
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
        EXPECT_EQ(out.source, KeysSource::InvalidName) << bad;
        EXPECT_TRUE(out.lines.empty());
    }
    EXPECT_EQ(live_.calls, 0);
    EXPECT_EQ(resolve_keys(ctx_, std::string(5000, 'a')).source, KeysSource::InvalidName);
}

TEST_F(Keys, CacheMissingOrCorruptGivesNothing)
{
    ctx_.live = nullptr;
    std::system(("rm -f '" + config_.identity.cache_dir + "/keys.cache'").c_str());
    auto out = resolve_keys(ctx_, "bob");
    EXPECT_EQ(out.source, KeysSource::None);
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
    EXPECT_EQ(out.source, KeysSource::Denied);
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
    EXPECT_EQ(out.source, KeysSource::Live);
    EXPECT_EQ(out.lines.size(), 2u);
    EXPECT_EQ(resolve_keys(ctx_, "bobby").source, KeysSource::Denied);  // bob's job only

    users_.members.insert({"bob", "hpcadmin"});
    ASSERT_TRUE(remove_job_entry(config_.node.run_dir, 77, "n1").ok());
    EXPECT_EQ(resolve_keys(ctx_, "bob").source, KeysSource::Live);  // admin group

    config_.node.role = NodeRole::Login;
    EXPECT_EQ(resolve_keys(ctx_, "bobby").source, KeysSource::None);  // login: never gated
}

// The local root and system accounts never get a directory
// user's key, from the source or from the cache, on any role.
TEST_F(Keys, LocalAccountsGetNoKeys)
{
    for (NodeRole role : {NodeRole::Login, NodeRole::Compute}) {
        config_.node.role = role;
        for (bool down : {false, true}) {
            live_.down = down;
            ctx_.live = &live_;
            for (const char* local : {"root", "daemon"}) {
                const auto out = resolve_keys(ctx_, local);
                EXPECT_EQ(out.source, KeysSource::NotDirectory) << local;
                EXPECT_EQ(out.code, make_error_code(identity::Errc::ReservedName)) << local;
                EXPECT_TRUE(out.lines.empty()) << local;
            }
            ctx_.live = nullptr;
            EXPECT_TRUE(resolve_keys(ctx_, "root").lines.empty());
        }
    }
    EXPECT_EQ(live_.calls, 0);  // refused before any network I/O
    // A name only in the source, not in allot's caches: nothing either.
    live_.down = false;
    live_.users["newcomer"] = {kBob};
    users_.uids["newcomer"] = 20020;
    config_.node.role = NodeRole::Login;
    ctx_.live = &live_;
    const auto out = resolve_keys(ctx_, "newcomer");
    EXPECT_EQ(out.code, make_error_code(node::Errc::NotDirectoryUser));
    EXPECT_TRUE(out.lines.empty());
}

TEST_F(Keys, NoRoleNoKeys)
{
    config_.node.role = NodeRole::Unset;
    ctx_.live = &live_;
    const auto out = resolve_keys(ctx_, "bob");
    EXPECT_EQ(out.source, KeysSource::Denied);
    EXPECT_EQ(out.code, make_error_code(node::Errc::NoRole));
    EXPECT_NE(out.note.find("node.role is not set"), std::string::npos);
    EXPECT_TRUE(out.lines.empty());
}

// A keys.cache (or passwd.cache) anyone could have written
// is not read, and the reason is a code, not a text.
TEST_F(Keys, UntrustedCachesGiveNothing)
{
    const std::string keys = config_.identity.cache_dir + "/keys.cache";
    ASSERT_EQ(resolve_keys(ctx_, "bob").lines.size(), 1u);
    ASSERT_EQ(chmod(keys.c_str(), 0666), 0);
    auto out = resolve_keys(ctx_, "bob");
    EXPECT_TRUE(out.lines.empty());
    EXPECT_EQ(out.code, make_error_code(node::Errc::CacheUntrusted));
    ASSERT_EQ(chmod(keys.c_str(), 0640), 0);
    ASSERT_EQ(chmod(config_.identity.cache_dir.c_str(), 0777), 0);
    out = resolve_keys(ctx_, "bob");
    EXPECT_TRUE(out.lines.empty());
    EXPECT_EQ(out.source, KeysSource::NotDirectory);  // passwd.cache is refused first
    EXPECT_EQ(out.code, make_error_code(node::Errc::CacheUntrusted));
    ASSERT_EQ(chmod(config_.identity.cache_dir.c_str(), 0755), 0);
    EXPECT_EQ(resolve_keys(ctx_, "bob").lines.size(), 1u);
}

}  // namespace
