// node_access_test.cpp - the compute-node login rule with a fake user database.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <set>

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

TEST(NodeAccess, Rule)
{
    char tmpl[] = "/tmp/allot-access-XXXXXX";
    const std::string dir = mkdtemp(tmpl);
    chmod(dir.c_str(), 0755);
    Config c;
    c.node.role = NodeRole::Compute;
    c.node.admin_group = "hpcadmin";
    c.node.run_dir = dir + "/run";
    FakeUsers users;
    users.uids = {{"alice", 1001}, {"bob", 1002}, {"bobby", 1003}, {"admin", 1004}, {"toor", 0}};
    users.members = {{"admin", "hpcadmin"}};
    const RegistryOptions reg{getuid() == 0};

    EXPECT_TRUE(decide_node_access(c, "root", users, 100, reg).allowed);
    EXPECT_TRUE(decide_node_access(c, "toor", users, 100, reg).allowed);  // uid 0
    EXPECT_TRUE(decide_node_access(c, "admin", users, 100, reg).allowed);
    EXPECT_FALSE(decide_node_access(c, "alice", users, 100, reg).allowed);
    EXPECT_FALSE(decide_node_access(c, "ghost", users, 100, reg).allowed);

    JobEntry e;
    e.job_id = 9;
    e.uid = 1002;
    e.user = "bob";
    e.node = "n1";
    e.boot_id = current_boot_id();
    e.expires = 200;
    ASSERT_TRUE(write_job_entry(c.node.run_dir, e).ok());
    const auto bob = decide_node_access(c, "bob", users, 100, reg);
    EXPECT_TRUE(bob.allowed);
    EXPECT_EQ(bob.reason, "job 9");
    EXPECT_FALSE(decide_node_access(c, "bobby", users, 100, reg).allowed);  // bob's job only
    EXPECT_FALSE(decide_node_access(c, "bob", users, 300, reg).allowed);    // expired

    c.node.role = NodeRole::Login;
    EXPECT_TRUE(decide_node_access(c, "alice", users, 100, reg).allowed);
    std::system(("rm -rf '" + dir + "'").c_str());
}

}  // namespace
