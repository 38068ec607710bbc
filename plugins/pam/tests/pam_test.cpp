// pam_test.cpp - pam_allot.so through the real libpam: a private PAM config
// dir (pam_start_confdir) holds a service that stacks the built module, and
// the host's real accounts decide: root gets in; local accounts (daemon in the
// admin group, nobody with a job entry, bin) are not directory users and never
// get in on a compute node; a missing node.role admits only root. Directory
// users getting in by job or admin group are tested in lib/tests/
// node_access_test.cpp and, through sshd, in syncd/keys/tests/sshd-login.sh.
#include <gtest/gtest.h>
#include <security/pam_appl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "allot/node_registry.hpp"

namespace {

int silent_conv(int n, const pam_message** msg, pam_response** resp, void*)
{
    auto* r = static_cast<pam_response*>(calloc(size_t(n), sizeof(pam_response)));
    for (int i = 0; i < n; ++i) (void)msg[i];
    *resp = r;
    return PAM_SUCCESS;
}

class Pam : public ::testing::Test {
protected:
    void SetUp() override
    {
        char tmpl[] = "/tmp/allot-pam-XXXXXX";
        dir_ = mkdtemp(tmpl);
        chmod(dir_.c_str(), 0755);
        mkdir((dir_ + "/pam.d").c_str(), 0755);
        write_config("compute");
        stack("");
    }
    void TearDown() override { std::system(("rm -rf '" + dir_ + "'").c_str()); }

    void write_config(const std::string& role)
    {
        std::ofstream(dir_ + "/allot.yaml")
            << "node:\n  role: " << role << "\n  admin_group: daemon\n  run_dir: " << dir_
            << "/run\n";
    }
    void stack(const std::string& extra)
    {
        std::ofstream(dir_ + "/pam.d/allot-test")
            << "account required " << PAM_SO << " config=" << dir_ << "/allot.yaml " << extra
            << "\n";
    }
    int account(const char* user)
    {
        pam_handle_t* h = nullptr;
        pam_conv conv{silent_conv, nullptr};
        int rc = pam_start_confdir("allot-test", user, &conv, (dir_ + "/pam.d").c_str(), &h);
        if (rc != PAM_SUCCESS) return -1000 - rc;
        rc = pam_acct_mgmt(h, 0);
        pam_end(h, rc);
        return rc;
    }
    std::string dir_;
};

TEST_F(Pam, ComputeNodeRule)
{
    EXPECT_EQ(account("root"), PAM_SUCCESS);
    EXPECT_EQ(account("nobody"), PAM_PERM_DENIED);
    EXPECT_EQ(account("bin"), PAM_PERM_DENIED);
    EXPECT_EQ(account("no-such-user-xyz"), PAM_PERM_DENIED);
}

// A job entry or the admin group grant a login only to directory
// users; the node's own accounts are not theirs to hand out.
TEST_F(Pam, LocalAccountsGetNothingFromJobsOrTheAdminGroup)
{
    EXPECT_EQ(account("daemon"), PAM_PERM_DENIED);  // admin group (primary group daemon)
    allot::JobEntry e;
    e.job_id = 5;
    e.uid = 65534;
    e.user = "nobody";
    e.node = "n1";
    e.boot_id = allot::current_boot_id();
    ASSERT_TRUE(allot::write_job_entry(dir_ + "/run", e).ok());
    EXPECT_EQ(account("nobody"), PAM_PERM_DENIED);
    EXPECT_EQ(account("root"), PAM_SUCCESS);
}

TEST_F(Pam, LoginRoleIsNeverGated)
{
    write_config("login");
    EXPECT_EQ(account("nobody"), PAM_SUCCESS);
    EXPECT_EQ(account("bin"), PAM_SUCCESS);
}

// `node.role` has no default; without it only root gets in.
TEST_F(Pam, MissingRoleAdmitsOnlyRoot)
{
    std::ofstream(dir_ + "/allot.yaml") << "node:\n  admin_group: daemon\n";
    EXPECT_EQ(account("root"), PAM_SUCCESS);
    EXPECT_EQ(account("daemon"), PAM_PERM_DENIED);
    EXPECT_EQ(account("nobody"), PAM_PERM_DENIED);
    std::ofstream(dir_ + "/allot.yaml") << "";  // an empty file: every default
    EXPECT_EQ(account("root"), PAM_SUCCESS);
    EXPECT_EQ(account("bin"), PAM_PERM_DENIED);
    write_config("login");
    EXPECT_EQ(account("bin"), PAM_SUCCESS);  // the same accounts, once the role is set
}

TEST_F(Pam, FailsClosedButNeverLocksOutRoot)
{
    write_config("login");
    EXPECT_EQ(account("daemon"), PAM_SUCCESS);
    std::ofstream(dir_ + "/allot.yaml") << "node: [this is: not valid\n";
    EXPECT_EQ(account("root"), PAM_SUCCESS);
    EXPECT_EQ(account("daemon"), PAM_PERM_DENIED);
    std::remove((dir_ + "/allot.yaml").c_str());
    EXPECT_EQ(account("root"), PAM_SUCCESS);
    EXPECT_EQ(account("nobody"), PAM_PERM_DENIED);
    write_config("login");
    stack("no_such_option=1");
    EXPECT_EQ(account("root"), PAM_SUCCESS);
    EXPECT_EQ(account("daemon"), PAM_PERM_DENIED);
}

}  // namespace
