// scim_codec_test.cpp - the SCIM User/Group codec against the docs/scimd.md fixtures.
#include <gtest/gtest.h>

#include "codec.hpp"

using namespace allot;
using namespace allot::scim;

namespace {

const char* kUserFixture = R"({
  "schemas": ["urn:ietf:params:scim:schemas:core:2.0:User",
              "urn:ietf:params:scim:schemas:extension:allot:2.0:PosixUser"],
  "id": "7f3c2a9e-5b1d-4c8e-9a61-0d2f4b8e1c55", "externalId": "00u1abcdEFGH",
  "userName": "alice", "displayName": "Alice Example", "active": true,
  "emails": [{"value": "alice@example.org", "primary": true}],
  "urn:ietf:params:scim:schemas:extension:allot:2.0:PosixUser": {
    "uidNumber": 10001, "gidNumber": 10001, "homeDirectory": "/home/alice",
    "loginShell": "/bin/bash", "sshPublicKeys": ["ssh-ed25519 AAAAC3Nz alice@laptop"]},
  "meta": {"resourceType": "User", "version": "W/\"1\""}
})";

}  // namespace

TEST(ScimCodec, ParsesCanonicalUser)
{
    JsonPtr json = json_parse(kUserFixture);
    ASSERT_TRUE(json);
    auto user = user_from_json(json.get(), kDefaultPosixUser);
    ASSERT_TRUE(user) << user.error().message;
    EXPECT_EQ(user.value().user_name, "alice");
    EXPECT_EQ(user.value().uid, 10001u);
    EXPECT_EQ(user.value().home, "/home/alice");
    ASSERT_EQ(user.value().ssh_keys.size(), 1u);
    ASSERT_EQ(user.value().emails.size(), 1u);
    EXPECT_TRUE(user.value().emails[0].primary);
}

TEST(ScimCodec, RoundTripsUser)
{
    User u;
    u.id = "id-1";
    u.user_name = "bob";
    u.uid = 10002;
    u.gid = 10002;
    u.home = "/home/bob";
    u.shell = "/bin/sh";
    u.ssh_keys = {"ssh-ed25519 AAAA"};
    u.groups = {{"g1", "team-a"}};
    u.version = 3;
    RenderOptions o;
    o.base_url = "https://x/scim/v2";
    JsonPtr json = user_to_json(u, o);
    auto back = user_from_json(json.get(), kDefaultPosixUser);
    ASSERT_TRUE(back);
    EXPECT_EQ(back.value().user_name, "bob");
    EXPECT_EQ(back.value().uid, 10002u);
    EXPECT_EQ(back.value().shell, "/bin/sh");
    EXPECT_EQ(json_string(cJSON_GetObjectItem(json.get(), "meta"), "version").value(), "W/\"3\"");
}

TEST(ScimCodec, RejectsBadTypes)
{
    for (
        const char* bad :
        {R"([])", R"({"userName": 5})", R"({"displayName":"x"})",
         R"({"userName":"a","active":"maybe"})",
         R"({"userName":"a","urn:ietf:params:scim:schemas:extension:allot:2.0:PosixUser":{"uidNumber":1.5}})",
         R"({"userName":"a","urn:ietf:params:scim:schemas:extension:allot:2.0:PosixUser":{"uidNumber":-3}})",
         R"({"userName":"a","urn:ietf:params:scim:schemas:extension:allot:2.0:PosixUser":{"sshPublicKeys":[1]}})",
         R"({"userName":"a","emails":[{"type":"work"}]})"}) {
        JsonPtr json = json_parse(bad);
        ASSERT_TRUE(json) << bad;
        EXPECT_FALSE(user_from_json(json.get(), kDefaultPosixUser)) << bad;
    }
}

TEST(ScimCodec, Group)
{
    JsonPtr json = json_parse(
        R"({"displayName":"team-a","members":[{"value":"u1"}],
            "urn:ietf:params:scim:schemas:extension:allot:2.0:PosixGroup":{"gidNumber":20001}})");
    auto g = group_from_json(json.get());
    ASSERT_TRUE(g);
    EXPECT_EQ(g.value().gid, 20001u);
    ASSERT_EQ(g.value().members.size(), 1u);
    JsonPtr bad = json_parse(R"({"displayName":"x","members":[{"display":"a"}]})");
    EXPECT_FALSE(group_from_json(bad.get()));
}

TEST(ScimCodec, Time)
{
    EXPECT_EQ(format_time(0), "1970-01-01T00:00:00Z");
    EXPECT_EQ(parse_time("2026-12-03T01:15:00Z").value(), 1796260500);
    EXPECT_EQ(parse_time("2026-12-03T02:15:00.123+01:00").value(), 1796260500);
    EXPECT_EQ(format_time(1796260500), "2026-12-03T01:15:00Z");
    for (const char* bad : {"", "2026-13-01T00:00:00Z", "2026-12-03 01:15:00Z",
                            "x026-12-03T01:15:00Z", "2026-12-03T01:15:00", "2026-12-03T01:15:00.Z"})
        EXPECT_FALSE(parse_time(bad)) << bad;
}

TEST(ScimCodec, ErrorBody)
{
    JsonPtr e = json_parse(error_body(400, "invalidFilter", "bad \"x\""));
    ASSERT_TRUE(e);
    EXPECT_EQ(json_string(e.get(), "status").value(), "400");
    EXPECT_EQ(json_string(e.get(), "scimType").value(), "invalidFilter");
}
