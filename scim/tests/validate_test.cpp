// validate_test.cpp - allot-scimd refuses what allot-syncd would reject
// through normalize_user/normalize_group on lib's identity
// validator, the uid/gid allocator skipping reserved ids, and json_parse
// refusing NULs, trailing bytes and repeated keys.
#include <gtest/gtest.h>

#include "allot/json.hpp"
#include "store.hpp"
#include "test_util.hpp"
#include "validate.hpp"

using namespace allot;
using namespace allot::scimd;

namespace {

DirectoryPolicy policy()
{
    DirectoryPolicy p;
    p.rules.uid_min = 1000;
    p.rules.uid_max = 60000;
    p.rules.gid_min = 1000;
    p.rules.gid_max = 70000;
    p.rules.shells = {"/bin/bash"};
    return p;
}

scim::User user(const std::string& name)
{
    scim::User u;
    u.user_name = name;
    return u;
}

// The error message of normalize_user ("" when accepted).
std::string refusal(scim::User u)
{
    auto r = normalize_user(u, policy());
    return r ? "" : r.error().message;
}

TEST(Validate, AcceptsAndFillsDefaults)
{
    scim::User u = user("alice");
    u.uid = 1500;
    u.ssh_keys = {
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl a ",
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl b"};
    ASSERT_TRUE(normalize_user(u, policy()));
    EXPECT_EQ(u.home, "/home/alice");
    EXPECT_EQ(u.shell, "/bin/bash");
    EXPECT_EQ(u.ssh_keys.size(), 1u);  // the same key twice is kept once
}

TEST(Validate, ReservedAndLocalAccountNamesAreRefused)
{
    for (const char* name : {"root", "daemon", "sshd", "nobody", "bin", "sudo", "wheel", "slurm"})
        EXPECT_NE(refusal(user(name)).find("userName '" + std::string(name) + "' is reserved"),
                  std::string::npos)
            << name;
    scim::Group g;
    g.display_name = "sudo";
    auto r = normalize_group(g, policy());
    ASSERT_FALSE(r);
    EXPECT_TRUE(r.error().is(identity::Errc::ReservedName));
    EXPECT_NE(r.error().message.find("displayName 'sudo'"), std::string::npos);
}

TEST(Validate, NamesWithNulOrOddBytesAreRefused)
{
    EXPECT_NE(refusal(user(std::string("nul\0x", 5))).find("userName"), std::string::npos);
    EXPECT_NE(refusal(user("a:b")).find("userName"), std::string::npos);
    EXPECT_NE(refusal(user("-x")).find("userName"), std::string::npos);
}

TEST(Validate, ReservedAndOutOfRangeIdsAreRefused)
{
    for (int64_t uid : {0, 65534, 999, 60001, -1}) {
        scim::User u = user("alice");
        u.uid = uid;
        EXPECT_NE(refusal(u).find("uidNumber"), std::string::npos) << uid;
    }
    scim::User u = user("alice");
    u.gid = 65534;  // inside gid_min..gid_max, and still nobody's
    EXPECT_NE(refusal(u).find("gidNumber 65534"), std::string::npos);
    scim::Group g;
    g.display_name = "team-a";
    g.gid = 65534;
    auto r = normalize_group(g, policy());
    ASSERT_FALSE(r);
    EXPECT_TRUE(r.error().is(identity::Errc::ReservedId));
}

TEST(Validate, UncleanHomesAreRefused)
{
    for (const char* home : {"/home/./x", "/home//x", "/home/", "/home/x/.", "/home/x/..",
                             "/home/j\xc3\xbcrgen", "/etc/x", "home/x", "/home/a:b"}) {
        scim::User u = user("alice");
        u.home = home;
        EXPECT_NE(refusal(u).find("homeDirectory"), std::string::npos) << home;
    }
}

TEST(Validate, ShellsAndKeys)
{
    scim::User u = user("alice");
    u.shell = "/bin/sh";
    EXPECT_NE(refusal(u).find("loginShell"), std::string::npos);
    u = user("alice");
    u.ssh_keys = {"ssh-ed25519 not-base64"};
    EXPECT_NE(refusal(u).find("sshPublicKeys"), std::string::npos);
}

TEST(Validate, TheAllocatorNeverHandsOutReservedIds)
{
    test::ScratchDir dir;
    std::string err;
    // A range around 65534: every id but nobody's is handed out.
    auto store = open_sqlite_store(dir.file("d.db"), IdRange{65532, 65536, 65532, 65536},
                                   scim::kDefaultPosixUser, &err);
    ASSERT_TRUE(store) << err;
    std::vector<int64_t> uids;
    for (int i = 0;; ++i) {
        scim::User u = user("u" + std::to_string(i));
        u.home = "/home/" + u.user_name;
        u.shell = "/bin/bash";
        auto made = store->create_user(u);
        if (!made) break;
        uids.push_back(made.value().uid.value_or(0));
        ASSERT_LT(i, 10);
    }
    EXPECT_EQ(uids, (std::vector<int64_t>{65532, 65533, 65535, 65536}));
}

TEST(JsonParse, RefusesNulTrailingBytesAndRepeatedKeys)
{
    EXPECT_TRUE(json_parse(R"({"userName":"alice"})"));
    EXPECT_TRUE(json_parse("{\"a\":\"x\\\\u0000\"}\n"));  // an escaped backslash, then text
    EXPECT_FALSE(json_parse(R"({"userName":"nul\u0000x"})"));
    EXPECT_FALSE(json_parse(std::string("{\"userName\":\"nul\0x\"}", 20)));
    EXPECT_FALSE(json_parse(R"({"userName":"alice"} {"userName":"root"})"));
    EXPECT_FALSE(json_parse(R"({"userName":"alice"}x)"));
    EXPECT_FALSE(json_parse(R"({"userName":"alice","userName":"root"})"));
    EXPECT_FALSE(json_parse(R"({"members":[{"value":"a","value":"b"}]})"));
    EXPECT_TRUE(json_parse(R"({"a":{"x":1},"b":{"x":2}})"));
}

TEST(JsonParse, NamesTheKeyWhoseValueHoldsANul)
{
    auto why = [](const std::string& text) {
        std::string reason;
        EXPECT_FALSE(json_parse(text, 1 << 20, &reason)) << text;
        return reason;
    };
    EXPECT_EQ(why(R"({"userName":"nul\u0000x"})"), "\"userName\" holds a NUL character");
    EXPECT_EQ(why(R"({"emails":[{"type":"work","value":"a\u0000"}]})"),
              "\"value\" holds a NUL character");
    EXPECT_EQ(why(R"({"members":["a","b\u0000"]})"), "\"members\" holds a NUL character");
    EXPECT_EQ(why(R"({"a":[{"b":1},"x\u0000"]})"), "\"a\" holds a NUL character");
    EXPECT_EQ(why(R"(["x\u0000"])"), "a string holds a NUL character");
    EXPECT_EQ(why(R"({"a":1} x)"), "bytes follow the document");
    EXPECT_EQ(why(R"({"a":1,"a":2})"), "an object names a key twice");
}

}  // namespace
