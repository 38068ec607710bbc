// identity_validate_test.cpp - the one identity validator: names, ids, homes,
// shells, keys, reserved names and ids, and the local passwd/group loader.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "allot/identity_validate.hpp"

using namespace allot;
namespace idv = allot::identity;

namespace {

const std::string kEd25519 =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl";

const char* kPasswd =
    "root:x:0:0:root:/root:/bin/bash\n"
    "# a comment\n"
    "\n"
    "sshd:x:105:65534::/run/sshd:/usr/sbin/nologin\n"
    "localbob:x:20050:20050:Bob:/home/localbob:/bin/bash\n"
    "+nisuser::::::\n"
    "broken-no-id:x\n";
const char* kGroup =
    "root:x:0:\n"
    "sudo:x:27:localbob\n"
    "labgroup:x:30050:\n";

IdentityRules rules()
{
    IdentityConfig c;
    c.uid_min = 10000;
    c.uid_max = 70000;
    c.gid_min = 10000;
    c.gid_max = 70000;
    return identity_rules(c, parse_local_identities(kPasswd, kGroup));
}

PosixUser user(std::string name = "alice", uint32_t uid = 20001)
{
    PosixUser u;
    u.name = std::move(name);
    u.uid = uid;
    u.gid = uid;
    u.home = "/home/" + u.name;
    u.shell = "/bin/bash";
    u.gecos = "Alice A.";
    u.ssh_keys = {kEd25519};
    return u;
}

template <typename E>
void expect_code(const Status& s, E code, const std::string& needle = "")
{
    ASSERT_FALSE(s.ok()) << "expected " << make_error_code(code).message();
    EXPECT_TRUE(s.error().is(code)) << s.error().code.message() << ": " << s.error().message;
    if (!needle.empty()) {
        EXPECT_NE(s.error().message.find(needle), std::string::npos) << s.error().message;
    }
}

}  // namespace

TEST(IdentityValidate, LocalFilesParsed)
{
    const auto local = parse_local_identities(kPasswd, kGroup);
    for (const char* n : {"root", "sshd", "localbob", "sudo", "labgroup"})
        EXPECT_TRUE(local.names.count(n)) << n;
    EXPECT_FALSE(local.names.count("+nisuser"));
    EXPECT_FALSE(local.names.count("broken-no-id"));
    EXPECT_TRUE(local.uids.count(20050));
    EXPECT_TRUE(local.gids.count(30050));
    EXPECT_FALSE(local.uids.count(30050));  // a group's gid is no uid
}

TEST(IdentityValidate, LoaderReadsFilesAndFailsWhenMissing)
{
    const std::string dir = ::testing::TempDir();
    std::ofstream(dir + "/passwd") << kPasswd;
    std::ofstream(dir + "/group") << kGroup;
    auto local = load_local_identities(dir + "/passwd", dir + "/group");
    ASSERT_TRUE(local.ok()) << local.error().message;
    EXPECT_TRUE(local.value().names.count("localbob"));
    auto missing = load_local_identities(dir + "/no-such-passwd", dir + "/group");
    ASSERT_FALSE(missing.ok());
    EXPECT_TRUE(missing.error().is(allot::Errc::Io));
}

TEST(IdentityValidate, ValidUserPasses)
{
    auto s = validate_user(user(), rules());
    EXPECT_TRUE(s.ok()) << s.error().message;
}

TEST(IdentityValidate, NameSyntax)
{
    for (const char* ok : {"alice", "Bob", "a1234", "a.b", "a_b", "a-b", "_svc", "x"})
        EXPECT_TRUE(valid_posix_name(ok)) << ok;
    for (const char* bad : {"", "-rf", ".hidden", "..", ".", "12345", "a:b", "semi;colon", "sp ace",
                            "nl\nname", "é", "a/b", "thirtythree-characters-long-namex"})
        EXPECT_FALSE(valid_posix_name(bad)) << bad;
    expect_code(check_name(std::string("nul\0x", 5), rules(), "userName"), idv::Errc::InvalidName,
                "userName");
}

TEST(IdentityValidate, ReservedNamesRefusedByName)
{
    const auto r = rules();
    // On the default reserved list (not in this fake passwd/group).
    for (const char* n : {"daemon", "bin", "nobody", "wheel", "adm", "docker", "slurm", "munge"})
        expect_code(check_name(n, r, "userName"), idv::Errc::ReservedName, "reserved");
    // Local accounts and groups of the node, whatever the list says.
    expect_code(check_name("localbob", r, "userName"), idv::Errc::ReservedName, "local");
    expect_code(check_name("labgroup", r, "displayName"), idv::Errc::ReservedName, "displayName");
    expect_code(validate_user(user("root"), r), idv::Errc::ReservedName, "'root'");
    PosixGroup sudo{"sudo", 30001, {"alice"}};
    expect_code(validate_group(sudo, r), idv::Errc::ReservedName, "'sudo'");
}

TEST(IdentityValidate, ReservedListFromConfigReplacesDefault)
{
    IdentityConfig c;
    c.reserved_names = std::vector<std::string>{"gpuadmin"};
    const auto r = identity_rules(c, parse_local_identities(kPasswd, kGroup));
    expect_code(check_name("gpuadmin", r, "userName"), idv::Errc::ReservedName);
    EXPECT_TRUE(check_name("docker", r, "userName").ok());
    expect_code(check_name("root", r, "userName"), idv::Errc::ReservedName, "local");
}

TEST(IdentityValidate, DefaultReservedListCoversSystemAndAdminNames)
{
    const auto& names = default_reserved_names();
    for (const char* n :
         {"root", "daemon",          "bin",     "sys",     "sync",  "nobody", "sshd",   "www-data",
          "sudo", "wheel",           "adm",     "docker",  "slurm", "munge",  "shadow", "disk",
          "kmem", "systemd-journal", "nogroup", "operator"})
        EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
}

TEST(IdentityValidate, Ids)
{
    const auto r = rules();
    EXPECT_TRUE(check_uid(20001, r).ok());
    EXPECT_TRUE(check_uid(10000, r).ok());
    EXPECT_TRUE(check_uid(70000, r).ok());
    expect_code(check_uid(0, r), idv::Errc::ReservedId, "root");
    expect_code(check_uid(65534, r), idv::Errc::ReservedId, "nobody");  // inside the range
    expect_code(check_uid(999, r), idv::Errc::IdOutOfRange, "outside");
    expect_code(check_uid(9999, r), idv::Errc::IdOutOfRange);
    expect_code(check_uid(70001, r), idv::Errc::IdOutOfRange);
    expect_code(check_uid(-5, r), idv::Errc::IdOutOfRange);
    expect_code(check_uid(int64_t(1) << 40, r), idv::Errc::IdOutOfRange);
    expect_code(check_uid(20050, r), idv::Errc::ReservedId, "local account");
    EXPECT_TRUE(check_gid(20050 + 1, r).ok());
    expect_code(check_gid(30050, r), idv::Errc::ReservedId, "local group");
    EXPECT_TRUE(check_uid(30050, r).ok());  // a local gid is no local uid
}

TEST(IdentityValidate, Homes)
{
    const auto r = rules();
    EXPECT_TRUE(check_home("/home/alice", r).ok());
    EXPECT_TRUE(check_home("/home/lab/alice", r).ok());
    for (const char* bad :
         {"", "home/x", "/home", "/home/", "/home/./x", "/home//x", "/home/x/.", "/home/x/",
          "/home/../etc", "/homeevil/x", "/etc/x", "/home/a\tb", "/home/a:b", "/home/caf\xc3\xa9"})
        expect_code(check_home(bad, r), idv::Errc::InvalidHome, "homeDirectory");
    expect_code(check_home("/home/" + std::string(5000, 'a'), r), idv::Errc::InvalidHome, "longer");
    IdentityConfig c;
    c.home_prefix = "/";
    EXPECT_TRUE(check_home("/u/x", identity_rules(c)).ok());
    c.home_prefix = "/home/";
    EXPECT_TRUE(check_home("/home/x", identity_rules(c)).ok());
}

TEST(IdentityValidate, ShellsDisplayNamesAndKeys)
{
    const auto r = rules();
    EXPECT_TRUE(check_shell("/bin/bash", r).ok());
    expect_code(check_shell("/bin/evil", r), idv::Errc::InvalidShell, "loginShell");
    EXPECT_TRUE(check_display_name("Ada Lovelace").ok());
    expect_code(check_display_name("a:b"), idv::Errc::InvalidDisplayName);
    expect_code(check_display_name("a\nb"), idv::Errc::InvalidDisplayName);
    expect_code(check_display_name(std::string(300, 'x')), idv::Errc::InvalidDisplayName);
    EXPECT_TRUE(check_ssh_key(kEd25519).ok());
    expect_code(check_ssh_key("command=\"sh\" " + kEd25519), idv::Errc::InvalidSshKey,
                "sshPublicKeys");
    auto u = user();
    u.ssh_keys.assign(1100, kEd25519);
    expect_code(validate_user(u, r), idv::Errc::TooManySshKeys, "1100");
    u.ssh_keys.assign(kMaxSshKeysPerUser, kEd25519);
    EXPECT_TRUE(validate_user(u, r).ok());
}

TEST(IdentityValidate, Groups)
{
    const auto r = rules();
    EXPECT_TRUE(validate_group({"team-a", 30001, {"alice", "bob"}}, r).ok());
    expect_code(validate_group({"team-a", 0, {}}, r), idv::Errc::ReservedId);
    EXPECT_TRUE(validate_group({"team-a", 0, {}}, r, /*allow_no_gid=*/true).ok());
    expect_code(validate_group({"team-a", 30001, {"bad:name"}}, r), idv::Errc::InvalidName,
                "members");
    expect_code(validate_group({"9999", 30001, {}}, r), idv::Errc::InvalidName);
}

TEST(IdentityValidate, ErrorAreaHasTexts)
{
    EXPECT_STREQ(idv::category().name(), "identity");
    EXPECT_EQ(make_error_code(idv::Errc::ReservedName).message(), "reserved name");
    EXPECT_EQ(make_error_code(idv::Errc::TooManyMembers).message(), "too many group members");
}

TEST(IdentityValidate, LogSafe)
{
    EXPECT_EQ(log_safe("a\nb"), "a?b");
    EXPECT_EQ(log_safe(std::string(70, 'x')), std::string(64, 'x') + "...");
}

TEST(IdentityValidate, ConfigKeys)
{
    auto load = parse_config(
        "identity:\n  reserved_names: [gpuadmin, ops]\n  source_extra_pages: 3\n"
        "  source_max_response_bytes: 65536\n  source_max_cycle_bytes: 1048576\n"
        "  source_deadline_seconds: 30\n",
        "t.yaml");
    ASSERT_TRUE(load.ok()) << load.errors.joined();
    const auto& id = load.config->identity;
    ASSERT_TRUE(id.reserved_names.has_value());
    EXPECT_EQ(*id.reserved_names, (std::vector<std::string>{"gpuadmin", "ops"}));
    EXPECT_EQ(id.source_extra_pages, 3u);
    EXPECT_EQ(id.source_max_response_bytes, 65536u);
    EXPECT_EQ(id.source_max_cycle_bytes, 1048576u);
    EXPECT_EQ(id.source_deadline_seconds, 30u);
    auto defaults = parse_config("", "t.yaml");
    ASSERT_TRUE(defaults.ok());
    EXPECT_FALSE(defaults.config->identity.reserved_names.has_value());
    const auto r = identity_rules(defaults.config->identity);
    EXPECT_TRUE(r.reserved_names.count("sudo"));
    auto bad = parse_config("identity:\n  reserved_names: root\n  source_deadline_seconds: 0\n",
                            "t.yaml");
    EXPECT_FALSE(bad.ok());
    EXPECT_NE(bad.errors.joined().find("identity.reserved_names: must be a list"),
              std::string::npos)
        << bad.errors.joined();
    EXPECT_NE(bad.errors.joined().find("identity.source_deadline_seconds"), std::string::npos);
}
