// login_checks_test.cpp - the sshd and PAM checks over fabricated `sshd -T` output and stacks.
#include <gtest/gtest.h>

#include <map>

#include "../login_checks.hpp"

namespace allot::doctor {
namespace {

TEST(Sshd, KeysCommandMustBeAllotKeysWithTheUser)
{
    Result<std::string> good = std::string(
        "port 22\nauthorizedkeyscommand /usr/libexec/allot/allot-keys %u\nusepam yes\n");
    EXPECT_EQ(check_sshd_keys_command(good).severity, Severity::Ok);
    EXPECT_EQ(check_sshd_use_pam(good).severity, Severity::Ok);
    Result<std::string> none = std::string("authorizedkeyscommand none\nusepam no\n");
    Finding f = check_sshd_keys_command(none);
    EXPECT_EQ(f.severity, Severity::Fail);
    EXPECT_NE(f.fix.find("`AuthorizedKeysCommand /usr/libexec/allot/allot-keys %u`"),
              std::string::npos);
    EXPECT_EQ(check_sshd_use_pam(none).severity, Severity::Fail);
    Result<std::string> no_user = std::string("authorizedkeyscommand /opt/allot-keys\n");
    EXPECT_EQ(check_sshd_keys_command(no_user).severity, Severity::Fail);
    // OpenSSH 10 (Debian sid) prints keywords in their documented case.
    Result<std::string> openssh10 = std::string(
        "Port 22\nAuthorizedKeysCommand /usr/libexec/allot/allot-keys %u\nUsePAM yes\n");
    EXPECT_EQ(check_sshd_keys_command(openssh10).severity, Severity::Ok);
    EXPECT_EQ(check_sshd_use_pam(openssh10).severity, Severity::Ok);
    Result<std::string> failed = make_error("`sshd -T` failed: bad line 3");
    EXPECT_NE(check_sshd_keys_command(failed).what.find("bad line 3"), std::string::npos);
}

TEST(Sshd, PenaltiesOnAComputeNodeExemptTheLoginNodes)
{
    Result<std::string> old_sshd = std::string("usepam yes\n");
    EXPECT_EQ(check_sshd_penalties(old_sshd).severity, Severity::Ok);
    const std::string on =
        "persourcepenalties crash:90 authfail:5 noauth:1 max:600 min:15\n";
    Result<std::string> none = on + "persourcepenaltyexemptlist none\n";
    Finding f = check_sshd_penalties(none);
    EXPECT_EQ(f.severity, Severity::Warn);
    EXPECT_NE(f.fix.find("PerSourcePenaltyExemptList"), std::string::npos);
    Result<std::string> exempt = on + "PerSourcePenaltyExemptList 10.0.0.0/8\n";
    EXPECT_EQ(check_sshd_penalties(exempt).severity, Severity::Ok);
    Result<std::string> off = std::string("persourcepenalties no\n");
    EXPECT_EQ(check_sshd_penalties(off).severity, Severity::Ok);
    EXPECT_EQ(check_sshd_penalties(make_error("`sshd -T` failed")).severity, Severity::Fail);
}

TEST(Pam, IncludesAreFollowedAndOnlyAccountLinesKept)
{
    std::map<std::string, std::string> files = {
        {"common-account",
         "account [success=1 new_authtok_reqd=done default=ignore] pam_unix.so\n"
         "account requisite pam_deny.so\n"},
        {"extra", "account required pam_allot.so\n"}};
    auto read = [&](const std::string& n) { return files[n]; };
    std::string lines = expand_pam_account(
        "auth required pam_env.so\n@include common-account\naccount include extra\n", read);
    EXPECT_EQ(lines.find("pam_env"), std::string::npos);
    EXPECT_NE(lines.find("pam_unix.so"), std::string::npos);
    EXPECT_NE(lines.find("pam_allot.so"), std::string::npos);
    EXPECT_EQ(check_pam_account(lines, "/etc/pam.d/sshd").severity, Severity::Ok);
}

TEST(Pam, AllotMustGateBeforeAnythingThatAdmitsAlone)
{
    EXPECT_EQ(
        check_pam_account("account required /lib/security/pam_allot.so debug\n", "s").severity,
        Severity::Ok);
    EXPECT_EQ(check_pam_account("account optional pam_allot.so\n", "s").severity, Severity::Fail);
    Finding f = check_pam_account("account sufficient pam_unix.so\naccount required pam_allot.so\n",
                                  "/etc/pam.d/sshd");
    EXPECT_EQ(f.severity, Severity::Fail);
    EXPECT_NE(f.what.find("sufficient pam_unix.so"), std::string::npos);
    EXPECT_EQ(check_pam_account("# account required pam_allot.so\n", "s").severity, Severity::Fail);
}

}  // namespace
}  // namespace allot::doctor
