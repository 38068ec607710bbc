// node_access_test.cpp - the compute-node login rule with a fake user database
// and a real passwd.cache: only directory users that resolve through allot's
// caches get in by admin group or job; root is the local root; no role, no entry.
#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <set>

#include "allot/identity_cache.hpp"
#include "allot/node_access.hpp"

namespace {

using namespace allot;

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

PosixUser dir_user(const std::string& name, uint32_t uid)
{
    PosixUser u;
    u.name = name;
    u.uid = uid;
    u.gid = 30000;
    u.home = "/home/" + name;
    u.shell = "/bin/bash";
    return u;
}

class NodeAccessTest : public ::testing::Test {
protected:
    void SetUp() override
    {
        char tmpl[] = "/tmp/allot-access-XXXXXX";
        dir_ = mkdtemp(tmpl);
        chmod(dir_.c_str(), 0755);
        c_.node.role = NodeRole::Compute;
        c_.node.admin_group = "hpcadmin";
        c_.node.run_dir = dir_ + "/run";
        c_.identity.cache_dir = dir_ + "/cache";
        CacheWriteOptions o;
        o.fsync = false;
        // The cache holds what a hostile or broken source could have put there.
        ASSERT_TRUE(publish_identity_cache(c_.identity.cache_dir,
                                           {dir_user("alice", 20001), dir_user("bob", 20002),
                                            dir_user("bobby", 20003), dir_user("carol", 20004),
                                            dir_user("daemon", 20010), dir_user("docker", 20011),
                                            dir_user("mismatch", 20012), dir_user("lowuid", 500)},
                                           {}, o)
                        .ok());
        rules_ =
            identity_rules(c_.identity, parse_local_identities("root:x:0:0::/root:/bin/bash\n"
                                                               "daemon:x:1:1::/:/bin/false\n"
                                                               "toor:x:0:0::/root:/bin/bash\n",
                                                               "root:x:0:\nhpcadmin:x:900:\n"));
        node_.rules = &rules_;
        node_.trust = idcache::TrustPolicy{geteuid(), dir_.c_str()};
        users_.uids = {{"alice", 20001}, {"bob", 20002},    {"bobby", 20003},    {"carol", 20004},
                       {"daemon", 1},    {"docker", 20011}, {"mismatch", 20099}, {"toor", 0},
                       {"lowuid", 500},  {"ghost", 20050}};
        users_.members = {{"carol", "hpcadmin"}, {"daemon", "hpcadmin"}, {"docker", "hpcadmin"}};
    }
    void TearDown() override { std::system(("rm -rf '" + dir_ + "'").c_str()); }

    NodeAccess decide(const std::string& user, int64_t now = 100)
    {
        return decide_node_access(c_, user, users_, node_, now, RegistryOptions{getuid() == 0});
    }
    void add_job(uint32_t id, uint32_t uid, const std::string& user)
    {
        JobEntry e;
        e.job_id = id;
        e.uid = uid;
        e.user = user;
        e.node = "n1";
        e.boot_id = current_boot_id();
        e.expires = 200;
        ASSERT_TRUE(write_job_entry(c_.node.run_dir, e).ok());
    }

    std::string dir_;
    Config c_;
    IdentityRules rules_;
    NodeIdentity node_;
    FakeUsers users_;
};

TEST_F(NodeAccessTest, RootAdminsAndJobs)
{
    EXPECT_TRUE(decide("root").allowed);
    EXPECT_TRUE(decide("toor").allowed);  // uid 0 through the node's own files
    EXPECT_TRUE(decide("carol").allowed);
    const auto alice = decide("alice");
    EXPECT_FALSE(alice.allowed);
    EXPECT_EQ(alice.code, make_error_code(node::Errc::NoJob));
    EXPECT_EQ(decide("ghost").code, make_error_code(node::Errc::NotDirectoryUser));
    EXPECT_EQ(decide("nobody-at-all").code, make_error_code(node::Errc::NotDirectoryUser));

    add_job(9, 20002, "bob");
    const auto bob = decide("bob");
    EXPECT_TRUE(bob.allowed);
    EXPECT_EQ(bob.reason, "job 9");
    EXPECT_FALSE(decide("bobby").allowed);     // bob's job only
    EXPECT_FALSE(decide("bob", 300).allowed);  // expired

    c_.node.role = NodeRole::Login;
    EXPECT_TRUE(decide("alice").allowed);
}

// A directory user named like a local account or a reserved name
// gets nothing from a job or the admin group, whatever the caches say.
TEST_F(NodeAccessTest, LocalAndReservedNamesAreNeverDirectoryUsers)
{
    add_job(10, 20010, "daemon");
    add_job(11, 1, "daemon");
    add_job(12, 20011, "docker");
    const auto daemon = decide("daemon");
    EXPECT_FALSE(daemon.allowed);
    EXPECT_EQ(daemon.code, make_error_code(identity::Errc::ReservedName)) << daemon.reason;
    EXPECT_EQ(decide("docker").code, make_error_code(identity::Errc::ReservedName));
    // In the cache with an id below uid_min: refused by the same rule as syncd.
    EXPECT_EQ(decide("lowuid").code, make_error_code(identity::Errc::IdOutOfRange));
    // The node resolves the name to another account than allot's cache.
    EXPECT_EQ(decide("mismatch").code, make_error_code(node::Errc::NameMismatch));
    auto uid = directory_user(c_, "alice", users_, node_);
    ASSERT_TRUE(uid.ok()) << uid.error().describe();
    EXPECT_EQ(uid.value(), 20001u);
}

TEST_F(NodeAccessTest, FailsClosed)
{
    // No role: nobody but root, with an error that says what to set.
    c_.node.role = NodeRole::Unset;
    const auto none = decide("carol");
    EXPECT_FALSE(none.allowed);
    EXPECT_EQ(none.code, make_error_code(node::Errc::NoRole));
    EXPECT_NE(none.reason.find("node.role is not set"), std::string::npos);
    EXPECT_TRUE(decide("root").allowed);
    c_.node.role = NodeRole::Compute;

    // Local accounts unknown: nobody is a directory user.
    node_.rules = nullptr;
    EXPECT_EQ(decide("carol").code, make_error_code(node::Errc::NoLocalAccounts));
    node_.rules = &rules_;

    // An untrusted cache directory or file: refused, then fine once fixed.
    for (const std::string& path :
         {c_.identity.cache_dir, c_.identity.cache_dir + "/passwd.cache"}) {
        const mode_t good = path == c_.identity.cache_dir ? 0755 : 0644;
        ASSERT_EQ(chmod(path.c_str(), good | 0002), 0);
        EXPECT_EQ(decide("carol").code, make_error_code(node::Errc::CacheUntrusted)) << path;
        ASSERT_EQ(chmod(path.c_str(), good), 0);
        EXPECT_TRUE(decide("carol").allowed);
    }
    ASSERT_EQ(unlink((c_.identity.cache_dir + "/passwd.cache").c_str()), 0);
    EXPECT_EQ(decide("carol").code, make_error_code(node::Errc::CacheUnavailable));
}

}  // namespace

TEST(NodeAccessTrust, CacheOwnerNamesWhoBesidesRootMayOwnTheCaches)
{
    Config c;
    EXPECT_EQ(cache_trust(c).owner, idcache::kNoOwner);  // root only
    c.identity.cache_owner = "daemon";                   // a local account of every node
    EXPECT_EQ(cache_trust(c).owner, getpwnam("daemon")->pw_uid);
    c.identity.cache_owner = "no-such-owner-xyz";  // unknown: root only, never anyone
    EXPECT_EQ(cache_trust(c).owner, idcache::kNoOwner);
    EXPECT_EQ(cache_trust(c).top, nullptr);  // always up to /
}
