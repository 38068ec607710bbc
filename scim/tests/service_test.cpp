// service_test.cpp - Service::handle() end to end on a real SQLite store with a
// fake clock and a fake munge decoder: SCIM CRUD, PATCH semantics as IdPs send
// them, projection, token scopes, hostile requests, and the OIDC token exchange.
#include <gtest/gtest.h>

#include <array>
#include <map>

#include "allot/json.hpp"
#include "service.hpp"
#include "test_util.hpp"
#include "user_snapshot.hpp"
#include "util.hpp"

using namespace allot;
using namespace allot::scimd;

namespace {

class FakeClock final : public Clock {
public:
    int64_t t = 1800000000;
    int64_t now() const override { return t; }
};

class FakeMunge final : public MungeDecoder {
public:
    std::map<std::string, MungeCredential> creds;
    std::map<std::string, Error> errors;
    Result<MungeCredential> decode(const std::string& cred) override
    {
        if (auto e = errors.find(cred); e != errors.end()) return e->second;
        auto it = creds.find(cred);
        if (it == creds.end()) return make_error(cred::Errc::Invalid, "Invalid credential format");
        return it->second;
    }
};

const char* kKey =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl alice@laptop";

class ServiceTest : public ::testing::Test {
protected:
    void SetUp() override
    {
        store = test::open_test_store(dir);
        ServiceOptions o;
        o.public_url = "https://id.test";
        o.policy.rules.shells = {"/bin/bash", "/bin/zsh"};
        o.max_body = 4096;
        o.token.issuer = "https://id.test";
        o.token.audience = "kube";
        o.token.cluster_groups = {"team-a", "team-b"};
        o.token.max_groups = 1;
        o.keys_dir = dir.file("keys");
        auto m = std::make_unique<FakeMunge>();
        munge = m.get();
        service = std::make_unique<Service>(o, *store, std::move(m), clock);
        ASSERT_TRUE(service->init());
        read_token = make_token("reader", "scim:read", 0);
        write_token = make_token("writer", "scim:write", 0);
    }
    std::string make_token(const std::string& name, const std::string& scope, int64_t expires)
    {
        const std::string secret = "allot_" + base64url_encode(random_bytes(32));
        EXPECT_TRUE(store->create_token(name, {scope}, expires, hex(sha256(secret))));
        return secret;
    }
    HttpResponse call(const std::string& method, const std::string& target,
                      const std::string& body = "", const std::string& token = "W")
    {
        HttpRequest r;
        r.method = method;
        const size_t q = target.find('?');
        r.path = target.substr(0, q);
        if (q != std::string::npos) {
            std::string qs = target.substr(q + 1);
            size_t start = 0;
            while (start <= qs.size()) {
                size_t amp = qs.find('&', start);
                if (amp == std::string::npos) amp = qs.size();
                const std::string kv = qs.substr(start, amp - start);
                const size_t eq = kv.find('=');
                r.query.emplace_back(kv.substr(0, eq),
                                     eq == std::string::npos ? "" : kv.substr(eq + 1));
                start = amp + 1;
            }
        }
        if (token == "W")
            r.headers["authorization"] = "Bearer " + write_token;
        else if (token == "R")
            r.headers["authorization"] = "Bearer " + read_token;
        else if (!token.empty())
            r.headers["authorization"] = token;
        if (!body.empty()) r.headers["content-type"] = "application/scim+json";
        r.body = body;
        r.at_hand_only = at_hand;
        return service->handle(r);
    }
    JsonPtr json(const HttpResponse& r) { return json_parse(r.body); }
    std::string create_user(const std::string& name, const std::string& extra = "")
    {
        auto r = call("POST", "/scim/v2/Users",
                      R"({"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":")" +
                          name + "\"" + extra + "}");
        EXPECT_EQ(r.status, 201) << r.body;
        return json_string(json(r).get(), "id").value_or("");
    }
    HttpResponse exchange(const std::string& cred, const std::string& extra = "")
    {
        HttpRequest r;
        r.method = "POST";
        r.path = "/oidc/token";
        r.headers["content-type"] = "application/x-www-form-urlencoded";
        r.body =
            "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Atoken-exchange"
            "&subject_token_type=urn%3Aallot%3Aparams%3Aoauth%3Atoken-type%3Amunge"
            "&subject_token=" +
            cred + extra;
        return service->handle(r);
    }

    test::ScratchDir dir;
    FakeClock clock;
    FakeMunge* munge = nullptr;
    std::unique_ptr<DirectoryStore> store;
    std::unique_ptr<Service> service;
    std::string read_token, write_token;
    bool at_hand = false;  // call() as the server's event loop does
};

const std::string ext = scim::kDefaultPosixUser;

}  // namespace

TEST_F(ServiceTest, CreateGetListDelete)
{
    auto r = call(
        "POST", "/scim/v2/Users",
        R"({"userName":"alice","displayName":"Alice","urn:ietf:params:scim:schemas:extension:allot:2.0:PosixUser":{"sshPublicKeys":[")" +
            std::string(kKey) + "\"]}}");
    ASSERT_EQ(r.status, 201) << r.body;
    JsonPtr u = json(r);
    const std::string id = json_string(u.get(), "id").value();
    bool location = false, etag = false;
    for (auto& [k, v] : r.headers) {
        location |= k == "Location" && v == "https://id.test/scim/v2/Users/" + id;
        etag |= k == "ETag" && v == "W/\"1\"";
    }
    EXPECT_TRUE(location && etag);
    const cJSON* e = cJSON_GetObjectItem(u.get(), ext.c_str());
    EXPECT_EQ(json_integer(e, "uidNumber").value(), 1000);
    EXPECT_EQ(json_string(e, "homeDirectory").value(), "/home/alice");
    EXPECT_EQ(call("GET", "/scim/v2/Users/" + id, "", "R").status, 200);
    auto list = json(call("GET", "/scim/v2/Users?filter=userName eq \"alice\"", "", "R"));
    EXPECT_EQ(json_integer(list.get(), "totalResults").value(), 1);
    EXPECT_EQ(call("POST", "/scim/v2/Users", R"({"userName":"alice"})").status, 409);
    EXPECT_EQ(call("DELETE", "/scim/v2/Users/" + id).status, 204);
    EXPECT_EQ(call("GET", "/scim/v2/Users/" + id, "", "R").status, 404);
    // Recreated: a new uid, never the old one.
    const std::string again = create_user("alice");
    auto a2 = json(call("GET", "/scim/v2/Users/" + again, "", "R"));
    EXPECT_EQ(json_integer(cJSON_GetObjectItem(a2.get(), ext.c_str()), "uidNumber").value(), 1001);
}

TEST_F(ServiceTest, AuthenticationAndScopes)
{
    auto r = call("GET", "/scim/v2/Users", "", "");
    EXPECT_EQ(r.status, 401);
    ASSERT_FALSE(r.headers.empty());
    EXPECT_EQ(r.headers[0].first, "WWW-Authenticate");
    EXPECT_EQ(call("GET", "/scim/v2/Users", "", "Bearer nope").status, 401);
    EXPECT_EQ(call("GET", "/scim/v2/Users", "", "Basic YWxpY2U6eA==").status, 401);
    EXPECT_EQ(call("GET", "/scim/v2/Users", "", "Bearer " + std::string(100000, 'a')).status, 401);
    EXPECT_EQ(call("GET", "/scim/v2/Users", "", "R").status, 200);
    EXPECT_EQ(call("GET", "/scim/v2/Users", "", "W").status, 200);  // write implies read
    EXPECT_EQ(call("POST", "/scim/v2/Users", R"({"userName":"x"})", "R").status, 403);
    EXPECT_EQ(call("DELETE", "/scim/v2/Users/00000000-0000-4000-8000-000000000000", "", "R").status,
              403);
    const std::string old = make_token("old", "scim:read", clock.t - 1);
    EXPECT_EQ(call("GET", "/scim/v2/Users", "", "Bearer " + old).status, 401);
    ASSERT_TRUE(store->revoke_token("reader"));
    EXPECT_EQ(call("GET", "/scim/v2/Users", "", "R").status, 401);
    // Discovery endpoints are public metadata.
    EXPECT_EQ(call("GET", "/scim/v2/ServiceProviderConfig", "", "").status, 200);
    EXPECT_EQ(call("GET", "/scim/v2/Schemas", "", "").status, 200);
    EXPECT_EQ(call("GET", "/scim/v2/ResourceTypes/User", "", "").status, 200);
    EXPECT_EQ(call("GET", "/scim/v2/Schemas/" + ext, "", "").status, 200);
}

// Consumers such as SUNK's nsscache ignore `active`: a plain read token never
// sees a deactivated user, in lists, filters, by id or as a group member.
TEST_F(ServiceTest, DeactivatedUsersHiddenFromPlainReaders)
{
    const std::string a = create_user("alice"), b = create_user("bob", R"(,"active":false)");
    auto g = call(
        "POST", "/scim/v2/Groups",
        R"({"displayName":"team-a","members":[{"value":")" + a + R"("},{"value":")" + b + "\"}]}");
    ASSERT_EQ(g.status, 201) << g.body;
    const std::string gid = json_string(json(g).get(), "id").value();
    const std::string all = make_token("syncd", "scim:read-inactive", 0);
    auto names = [&](const std::string& target, const std::string& token) {
        auto r = call("GET", target, "", token);
        EXPECT_EQ(r.status, 200) << r.body;
        JsonPtr j = json(r);
        std::vector<std::string> out;
        const cJSON* item = nullptr;
        cJSON_ArrayForEach(item, cJSON_GetObjectItem(j.get(), "Resources"))
            out.push_back(json_string(item, "userName").value_or("?"));
        out.push_back("total=" + std::to_string(json_integer(j.get(), "totalResults").value()));
        return out;
    };
    auto members = [&](const std::string& token) {
        auto r = call("GET", "/scim/v2/Groups/" + gid, "", token);
        EXPECT_EQ(r.status, 200) << r.body;
        JsonPtr j = json(r);
        std::vector<std::string> out;
        const cJSON* m = nullptr;
        cJSON_ArrayForEach(m, cJSON_GetObjectItem(j.get(), "members"))
            out.push_back(json_string(m, "display").value_or("?"));
        return out;
    };
    using V = std::vector<std::string>;
    EXPECT_EQ(names("/scim/v2/Users", "R"), (V{"alice", "total=1"}));
    EXPECT_EQ(names("/scim/v2/Users?cursor=&count=1", "R"), (V{"alice", "total=1"}));
    EXPECT_EQ(names("/scim/v2/Users?filter=userName eq \"bob\"", "R"), (V{"total=0"}));
    EXPECT_EQ(names("/scim/v2/Users?filter=active eq false", "R"), (V{"total=0"}));
    EXPECT_EQ(call("GET", "/scim/v2/Users/" + b, "", "R").status, 404);
    EXPECT_EQ(members("R"), (V{"alice"}));
    auto groups = json(call("GET", "/scim/v2/Groups", "", "R"));
    const cJSON* listed = cJSON_GetArrayItem(cJSON_GetObjectItem(groups.get(), "Resources"), 0);
    EXPECT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(listed, "members")), 1);
    // scim:read-inactive (allot-syncd's token) and scim:write see everyone.
    for (const std::string& token : {"Bearer " + all, std::string("W")}) {
        EXPECT_EQ(names("/scim/v2/Users", token), (V{"alice", "bob", "total=2"}));
        EXPECT_EQ(names("/scim/v2/Users?filter=active eq \"false\"", token), (V{"bob", "total=1"}));
        EXPECT_EQ(call("GET", "/scim/v2/Users/" + b, "", token).status, 200);
        EXPECT_EQ(members(token), (V{"alice", "bob"}));
    }
    // scim:read-inactive reads, it does not write.
    EXPECT_EQ(call("DELETE", "/scim/v2/Users/" + b, "", "Bearer " + all).status, 403);
    // Reactivated, bob is served again.
    ASSERT_EQ(call("PATCH", "/scim/v2/Users/" + b,
                   R"({"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],)"
                   R"("Operations":[{"op":"replace","path":"active","value":true}]})")
                  .status,
              200);
    EXPECT_EQ(call("GET", "/scim/v2/Users/" + b, "", "R").status, 200);
    EXPECT_EQ(members("R"), (V{"alice", "bob"}));
}

TEST_F(ServiceTest, PatchUserAsIdpsSendIt)
{
    const std::string id = create_user("bob");
    const std::string path = "/scim/v2/Users/" + id;
    // Okta: no path, object value.
    auto r = call(
        "PATCH", path,
        R"({"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"replace","value":{"active":false,"displayName":"Bob B"}}]})");
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_FALSE(json_bool(json(r).get(), "active").value());
    // Entra ID: capitalised op, "False" as a string, URN-qualified path.
    r = call(
        "PATCH", path,
        R"({"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"Replace","path":"active","value":"True"},{"op":"Replace","path":"urn:ietf:params:scim:schemas:extension:allot:2.0:PosixUser:loginShell","value":"/bin/zsh"}]})");
    ASSERT_EQ(r.status, 200) << r.body;
    JsonPtr u = json(r);
    EXPECT_TRUE(json_bool(u.get(), "active").value());
    EXPECT_EQ(json_string(cJSON_GetObjectItem(u.get(), ext.c_str()), "loginShell").value(),
              "/bin/zsh");
    // Add and remove an ssh key through a value filter.
    r = call(
        "PATCH", path,
        std::string(
            R"({"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"add","path":"urn:ietf:params:scim:schemas:extension:allot:2.0:PosixUser:sshPublicKeys","value":[")") +
            kKey + "\"]}]}");
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(store->get_user(id).value().ssh_keys.size(), 1u);
    r = call(
        "PATCH", path,
        std::string(
            R"({"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"remove","path":"urn:ietf:params:scim:schemas:extension:allot:2.0:PosixUser:sshPublicKeys[value sw \"ssh-ed25519\"]"}]})"));
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_TRUE(store->get_user(id).value().ssh_keys.empty());
    // Emails: add, then change one by filter.
    r = call(
        "PATCH", path,
        R"({"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"add","path":"emails","value":[{"value":"b@x.org","type":"work","primary":true}]},{"op":"replace","path":"emails[type eq \"work\"].value","value":"bob@x.org"}]})");
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(store->get_user(id).value().emails.at(0).value, "bob@x.org");
    const int64_t version = store->get_user(id).value().version;
    // Immutable ids, unknown attributes, bad values: 400 with scimType, and nothing changes.
    for (
        auto [ops, type] : std::vector<std::pair<std::string, std::string>>{
            {R"([{"op":"replace","path":"urn:ietf:params:scim:schemas:extension:allot:2.0:PosixUser:uidNumber","value":4242}])",
             "mutability"},
            {R"([{"op":"replace","value":{"urn:ietf:params:scim:schemas:extension:allot:2.0:PosixUser":{"gidNumber":1}}}])",
             "mutability"},
            {R"([{"op":"replace","path":"active","value":true},{"op":"replace","path":"nosuch","value":1}])",
             "invalidPath"},
            {R"([{"op":"remove","path":"userName"}])", "mutability"},
            {R"([{"op":"remove"}])", "noTarget"},
            {R"([{"op":"frobnicate","path":"active","value":true}])", "invalidSyntax"},
            {R"([{"op":"replace","path":"active","value":"maybe"}])", "invalidValue"},
            {R"([{"op":"replace","path":"members[value eq","value":"x"}])", "invalidPath"},
            {R"([])", "invalidSyntax"},
            {R"("x")", "invalidSyntax"}}) {
        r = call("PATCH", path,
                 R"({"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":)" +
                     ops + "}");
        EXPECT_EQ(r.status, 400) << ops;
        EXPECT_EQ(json_string(json(r).get(), "scimType").value_or(""), type)
            << ops << " " << r.body;
    }
    EXPECT_EQ(store->get_user(id).value().version, version);
    // Validation after patch: a shell outside identity.shells, a key with options.
    r = call(
        "PATCH", path,
        R"({"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"replace","path":"urn:ietf:params:scim:schemas:extension:allot:2.0:PosixUser:loginShell","value":"/tmp/evil"}]})");
    EXPECT_EQ(r.status, 400);
    r = call(
        "PATCH", path,
        R"({"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"add","path":"urn:ietf:params:scim:schemas:extension:allot:2.0:PosixUser:sshPublicKeys","value":["command=\"sh\" ssh-ed25519 AAAA"]}]})");
    EXPECT_EQ(r.status, 400);
    // Missing PatchOp schema.
    EXPECT_EQ(
        call("PATCH", path, R"({"Operations":[{"op":"replace","path":"active","value":true}]})")
            .status,
        400);
    // If-Match with a stale version → 412.
    HttpRequest req;
    req.method = "PATCH";
    req.path = path;
    req.headers["authorization"] = "Bearer " + write_token;
    req.headers["if-match"] = "W/\"1\"";
    req.body =
        R"({"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"replace","path":"active","value":true}]})";
    EXPECT_EQ(service->handle(req).status, 412);
}

TEST_F(ServiceTest, PutKeepsIds)
{
    const std::string id = create_user(
        "carol",
        R"(,"urn:ietf:params:scim:schemas:extension:allot:2.0:PosixUser":{"loginShell":"/bin/zsh"})");
    const auto uid = store->get_user(id).value().uid;
    auto r = call("PUT", "/scim/v2/Users/" + id, R"({"userName":"carol","displayName":"C"})");
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(store->get_user(id).value().uid, uid);
    EXPECT_EQ(store->get_user(id).value().shell, "/bin/zsh");  // kept, not reset
    r = call(
        "PUT", "/scim/v2/Users/" + id,
        R"({"userName":"carol","urn:ietf:params:scim:schemas:extension:allot:2.0:PosixUser":{"uidNumber":7}})");
    EXPECT_EQ(r.status, 400);
}

TEST_F(ServiceTest, GroupMembershipPatches)
{
    const std::string a = create_user("alice"), b = create_user("bob"), c = create_user("carol");
    auto r = call("POST", "/scim/v2/Groups",
                  R"({"displayName":"team-a","members":[{"value":")" + a + "\"}]}");
    ASSERT_EQ(r.status, 201) << r.body;
    const std::string g = json_string(json(r).get(), "id").value();
    const std::string path = "/scim/v2/Groups/" + g;
    auto members = [&] {
        std::vector<std::string> out;
        auto grp = store->get_group(g);
        for (auto& m : grp.value().members) out.push_back(m.display);
        return out;
    };
    const std::string po =
        R"({"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":)";
    ASSERT_EQ(call("PATCH", path,
                   po + R"([{"op":"add","path":"members","value":[{"value":")" + b +
                       R"("},{"value":")" + c + "\"}]}]}")
                  .status,
              200);
    EXPECT_EQ(members(), (std::vector<std::string>{"alice", "bob", "carol"}));
    ASSERT_EQ(call("PATCH", path,
                   po + R"([{"op":"remove","path":"members[value eq \")" + b + "\\\"]\"}]}")
                  .status,
              200);
    EXPECT_EQ(members(), (std::vector<std::string>{"alice", "carol"}));
    // Entra ID style removal with a value list; Okta style add without path.
    ASSERT_EQ(call("PATCH", path,
                   po + R"([{"op":"Remove","path":"members","value":[{"value":")" + a + "\"}]}]}")
                  .status,
              200);
    ASSERT_EQ(
        call("PATCH", path, po + R"([{"op":"add","value":{"members":[{"value":")" + b + "\"}]}}]}")
            .status,
        200);
    EXPECT_EQ(members(), (std::vector<std::string>{"bob", "carol"}));
    // Adding a non-user is refused and changes nothing; replace sets exactly.
    EXPECT_EQ(
        call(
            "PATCH", path,
            po +
                R"([{"op":"add","path":"members","value":[{"value":"00000000-0000-4000-8000-000000000000"}]}]})")
            .status,
        400);
    ASSERT_EQ(call("PATCH", path,
                   po + R"([{"op":"replace","path":"members","value":[{"value":")" + a + "\"}]}]}")
                  .status,
              200);
    EXPECT_EQ(members(), std::vector<std::string>{"alice"});
    ASSERT_EQ(call("PATCH", path, po + R"([{"op":"remove","path":"members"}])" + "}").status, 200);
    EXPECT_TRUE(members().empty());
    EXPECT_EQ(
        call(
            "PATCH", path,
            po +
                R"([{"op":"replace","path":"urn:ietf:params:scim:schemas:extension:allot:2.0:PosixGroup:gidNumber","value":5}])" +
                "}")
            .status,
        400);
    auto list = json(call("GET", "/scim/v2/Groups?filter=displayName eq \"team-a\"", "", "R"));
    EXPECT_EQ(json_integer(list.get(), "totalResults").value(), 1);
}

TEST_F(ServiceTest, AttributesProjection)
{
    const std::string id = create_user("dave");
    auto u = json(call("GET", "/scim/v2/Users/" + id + "?attributes=userName," + ext + ":uidNumber",
                       "", "R"));
    EXPECT_TRUE(cJSON_GetObjectItem(u.get(), "id"));
    EXPECT_TRUE(cJSON_GetObjectItem(u.get(), "userName"));
    EXPECT_FALSE(cJSON_GetObjectItem(u.get(), "meta"));
    const cJSON* e = cJSON_GetObjectItem(u.get(), ext.c_str());
    ASSERT_TRUE(e);
    EXPECT_TRUE(cJSON_GetObjectItem(e, "uidNumber"));
    EXPECT_FALSE(cJSON_GetObjectItem(e, "homeDirectory"));
    u = json(call("GET", "/scim/v2/Users/" + id + "?excludedAttributes=meta," + ext, "", "R"));
    EXPECT_FALSE(cJSON_GetObjectItem(u.get(), "meta"));
    EXPECT_FALSE(cJSON_GetObjectItem(u.get(), ext.c_str()));
    EXPECT_TRUE(cJSON_GetObjectItem(u.get(), "userName"));
    u = json(call("GET", "/scim/v2/Users/" + id + "?attributes=meta.lastModified", "", "R"));
    const cJSON* meta = cJSON_GetObjectItem(u.get(), "meta");
    ASSERT_TRUE(meta);
    EXPECT_TRUE(cJSON_GetObjectItem(meta, "lastModified"));
    EXPECT_FALSE(cJSON_GetObjectItem(meta, "created"));
}

TEST_F(ServiceTest, HostileRequests)
{
    create_user("erin");
    struct Case {
        std::string method, target, body;
        int status;
        std::string scim_type;
    };
    for (
        const Case& c : std::vector<Case>{
            {"POST", "/scim/v2/Users", "{", 400, "invalidSyntax"},
            {"POST", "/scim/v2/Users", "[1,2", 400, "invalidSyntax"},
            {"POST", "/scim/v2/Users", std::string(5000, ' ') + "{}", 413, "tooLarge"},
            {"POST", "/scim/v2/Users", R"({"userName":"Robert'); DROP TABLE users;--"})", 400,
             "invalidValue"},
            {"POST", "/scim/v2/Users", R"({"userName":"root:x:0:0"})", 400, "invalidValue"},
            {"POST", "/scim/v2/Users", R"({"userName":"ok","displayName":"a\nb"})", 400,
             "invalidValue"},
            {"POST", "/scim/v2/Users",
             R"({"userName":"ok","urn:ietf:params:scim:schemas:extension:allot:2.0:PosixUser":{"homeDirectory":"/home/../etc"}})",
             400, "invalidValue"},
            {"POST", "/scim/v2/Users",
             R"({"userName":"ok","urn:ietf:params:scim:schemas:extension:allot:2.0:PosixUser":{"uidNumber":0}})",
             400, "invalidValue"},
            {"POST", "/scim/v2/Users",
             std::string(R"({"userName":"ok","x":)") + std::string(2000, '[') + "}", 400,
             "invalidSyntax"},
            {"GET", "/scim/v2/Users?filter=userName eq", "", 400, "invalidFilter"},
            {"GET", "/scim/v2/Users?filter=userName eq \"x\" or 1 eq 1", "", 400, "invalidFilter"},
            {"GET", "/scim/v2/Users?filter=" + std::string(10000, '('), "", 400, "invalidFilter"},
            {"GET", "/scim/v2/Users?count=abc", "", 400, "invalidValue"},
            {"GET", "/scim/v2/Users?sortBy=password", "", 400, "invalidValue"},
            {"GET", "/scim/v2/Users?cursor=AAAA", "", 400, "invalidCursor"},
            {"GET", "/scim/v2/Users/../Groups", "", 400, "invalidValue"},
            {"GET", "/scim/v2//Users", "", 400, "invalidValue"},
            {"GET", "/scim/v2/Users/..%2f..%2fetc%2fpasswd", "", 400, "invalidValue"},
            {"GET", "/scim/v2/Users/not-a-uuid", "", 404, ""},
            {"GET", "/scim/v2/Users/00000000-0000-4000-8000-000000000000/x", "", 404, ""},
            {"GET", std::string("/scim/v2/Users\0x", 16), "", 400, "invalidValue"},
            {"GET", "/etc/passwd", "", 404, ""},
            {"GET", "/scim/v2/Bulk", "", 404, ""},
            {"PATCH", "/scim/v2/Users", "{}", 405, ""},
        }) {
        auto r = call(c.method, c.target, c.body);
        EXPECT_EQ(r.status, c.status) << c.target.substr(0, 80) << " " << r.body.substr(0, 200);
        JsonPtr j = json(r);
        ASSERT_TRUE(j) << c.target.substr(0, 80);
        EXPECT_EQ(json_string(j.get(), "scimType").value_or(""), c.scim_type)
            << c.target.substr(0, 80);
    }
    // Wrong content type.
    HttpRequest r;
    r.method = "POST";
    r.path = "/scim/v2/Users";
    r.headers["authorization"] = "Bearer " + write_token;
    r.headers["content-type"] = "text/plain";
    r.body = R"({"userName":"x"})";
    EXPECT_EQ(service->handle(r).status, 415);
    // Negative/huge paging values are clamped, not errors (RFC 7644 §3.4.2.4).
    EXPECT_EQ(call("GET", "/scim/v2/Users?startIndex=-5&count=99999999", "", "R").status, 200);
    EXPECT_EQ(
        json_integer(json(call("GET", "/scim/v2/Users?count=-1", "", "R")).get(), "itemsPerPage")
            .value(),
        0);
}

TEST_F(ServiceTest, TokenExchange)
{
    const std::string a = create_user(
        "alice",
        R"(,"urn:ietf:params:scim:schemas:extension:allot:2.0:PosixUser":{"uidNumber":1500})");
    for (const char* g : {"team-b", "team-a", "unrelated"})
        ASSERT_EQ(call("POST", "/scim/v2/Groups",
                       std::string(R"({"displayName":")") + g + R"(","members":[{"value":")" + a +
                           "\"}]}")
                      .status,
                  201);
    auto cred = [&](const std::string& name, uint32_t uid, int64_t age,
                    std::string payload = std::string(kMungePayloadPrefix) + "kube") {
        munge->creds["MUNGE:" + name] = MungeCredential{uid, uid, clock.t - age, 300, payload};
        return "MUNGE:" + name;
    };
    auto r = exchange(cred("good", 1500, 2));
    ASSERT_EQ(r.status, 200) << r.body;
    JsonPtr body = json(r);
    const std::string jwt = json_string(body.get(), "access_token").value();
    EXPECT_EQ(json_string(body.get(), "issued_token_type").value(),
              "urn:ietf:params:oauth:token-type:id_token");
    // Verifies against our own published JWKS, with the expected claims.
    JsonPtr jwks = json_parse(call("GET", "/oidc/jwks", "", "").body);
    std::vector<SigningKey> keys;
    const cJSON* k = nullptr;
    cJSON_ArrayForEach(k, cJSON_GetObjectItem(jwks.get(), "keys"))
        keys.push_back(std::move(SigningKey::from_jwk(k).value()));
    VerifyOptions vo;
    vo.issuer = "https://id.test";
    vo.audience = "kube";
    vo.now = clock.t;
    auto claims = jwt_verify(jwt, {&keys[0]}, vo);
    ASSERT_TRUE(claims) << claims.error().message;
    EXPECT_EQ(json_string(claims.value().get(), "preferred_username").value(), "alice");
    EXPECT_EQ(json_integer(claims.value().get(), "exp").value(), clock.t + 900);
    const cJSON* groups = cJSON_GetObjectItem(claims.value().get(), "groups");
    ASSERT_EQ(cJSON_GetArraySize(groups), 1);  // max_groups = 1; only cluster groups; sorted
    EXPECT_STREQ(cJSON_GetArrayItem(groups, 0)->valuestring, "team-a");

    auto refused = [&](const HttpResponse& resp) {
        EXPECT_EQ(resp.status, 400) << resp.body;
        return json_string(json(resp).get(), "error").value_or("") + ": " +
               json_string(json(resp).get(), "error_description").value_or("");
    };
    EXPECT_EQ(refused(exchange("MUNGE:good")), "invalid_grant: credential already used");
    EXPECT_EQ(refused(exchange(cred("stale", 1500, 120))), "invalid_grant: credential is stale");
    EXPECT_EQ(refused(exchange(cred("future", 1500, -60))),
              "invalid_grant: credential is from the future");
    EXPECT_EQ(refused(exchange(cred("nobody", 4242, 1))),
              "invalid_grant: uid 4242 is not in the directory");
    EXPECT_EQ(refused(exchange(cred("root", 0, 1))),
              "invalid_grant: uid 0 is not in the directory");
    EXPECT_EQ(refused(exchange(cred("other", 1500, 1, "something else"))),
              "invalid_grant: credential was not minted for this token exchange");
    EXPECT_EQ(
        refused(exchange(cred("otheraud", 1500, 1, std::string(kMungePayloadPrefix) + "prod"))),
        "invalid_grant: credential was not minted for this token exchange");
    munge->errors["MUNGE:replayed"] = Error(cred::Errc::Replayed, "Replayed credential");
    EXPECT_EQ(refused(exchange("MUNGE:replayed")), "invalid_grant: credential already used");
    EXPECT_EQ(refused(exchange("MUNGE:garbage")).substr(0, 33),
              "invalid_grant: credential rejecte");
    EXPECT_EQ(refused(exchange("not-munge")).substr(0, 15), "invalid_request");
    EXPECT_EQ(refused(exchange(cred("aud", 1500, 1), "&audience=prod")),
              "invalid_target: unknown audience");
    EXPECT_EQ(refused(exchange(cred("rep", 1500, 1), "&grant_type=x")).substr(0, 15),
              "invalid_request");
    // Disabled accounts get nothing.
    ASSERT_EQ(
        call(
            "PATCH", "/scim/v2/Users/" + a,
            R"({"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"replace","path":"active","value":false}]})")
            .status,
        200);
    EXPECT_EQ(refused(exchange(cred("disabled", 1500, 1))), "invalid_grant: account is disabled");
    HttpRequest wrong;
    wrong.method = "POST";
    wrong.path = "/oidc/token";
    wrong.headers["content-type"] = "application/json";
    wrong.body = "{}";
    EXPECT_EQ(service->handle(wrong).status, 400);
    wrong.method = "GET";
    EXPECT_EQ(service->handle(wrong).status, 405);
}

// `keys rotate`'s schedule: the new key is in the JWKS at once, signs only from
// its activation, and the old one stays published until its tokens have expired.
TEST_F(ServiceTest, ScheduledRotationPublishesBeforeSigning)
{
    const std::string old_kid = service->keys()->signer(clock.t).kid();
    clock.t += 10;
    const int64_t activates = clock.t + 420;
    const std::string file = key_file_name(clock.t, JwsAlg::ES256);
    ASSERT_TRUE(store->set_key_activation(file, activates));
    auto scheduled = store->key_activations();
    ASSERT_TRUE(scheduled);
    EXPECT_EQ(scheduled.value().at(file), activates);
    auto rotated = rotate_keys(dir.file("keys"), JwsAlg::ES256, clock.t, 86400, scheduled.value());
    ASSERT_TRUE(rotated);
    const std::string new_kid = rotated.value().kid;
    ASSERT_TRUE(service->reload_keys());
    auto published = [&] {
        std::set<std::string> kids;
        JsonPtr jwks = json_parse(call("GET", "/oidc/jwks", "", "").body);
        const cJSON* k = nullptr;
        cJSON_ArrayForEach(k, cJSON_GetObjectItem(jwks.get(), "keys"))
            kids.insert(json_string(k, "kid").value_or(""));
        return kids;
    };
    // Pending: published, and the old key still signs (a verifier holding the old JWKS
    // accepts every new token).
    EXPECT_EQ(published(), (std::set<std::string>{old_kid, new_kid}));
    EXPECT_EQ(service->keys()->signer(clock.t).kid(), old_kid);
    clock.t = activates - 1;
    EXPECT_EQ(service->keys()->signer(clock.t).kid(), old_kid);
    // Active from its scheduled time, with no reload; the old key stays published.
    clock.t = activates;
    EXPECT_EQ(service->keys()->signer(clock.t).kid(), new_kid);
    EXPECT_EQ(published(), (std::set<std::string>{old_kid, new_kid}));
    // The old key is published until the new one has signed for the overlap, not
    // for the overlap after it was created: a rotation just before that keeps it.
    clock.t = activates + 86399;
    auto early = rotate_keys(dir.file("keys"), JwsAlg::ES256, clock.t, 86400, scheduled.value());
    ASSERT_TRUE(early);
    EXPECT_TRUE(early.value().removed.empty());
    clock.t = activates + 86400;
    ASSERT_TRUE(service->reload_keys());
    EXPECT_EQ(published().count(old_kid), 0u);
    // The Cache-Control the JWKS is served with is the max-age rotation waits for.
    bool max_age = false;
    for (const auto& [k, v] : call("GET", "/oidc/jwks", "", "").headers)
        max_age |= k == "Cache-Control" && v == "max-age=300";
    EXPECT_TRUE(max_age);
}

TEST_F(ServiceTest, DiscoveryAndKeyRotation)
{
    JsonPtr d = json_parse(call("GET", "/.well-known/openid-configuration", "", "").body);
    EXPECT_EQ(json_string(d.get(), "issuer").value(), "https://id.test");
    EXPECT_EQ(json_string(d.get(), "jwks_uri").value(), "https://id.test/oidc/jwks");
    JsonPtr jwks = json_parse(call("GET", "/oidc/jwks", "", "").body);
    ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(jwks.get(), "keys")), 1);
    const std::string first_kid =
        json_string(cJSON_GetArrayItem(cJSON_GetObjectItem(jwks.get(), "keys"), 0), "kid").value();
    // An unscheduled key (made with `keys rotate --activate`) signs at once.
    clock.t += 10;
    ASSERT_TRUE(rotate_keys(dir.file("keys"), JwsAlg::ES256, clock.t, 86400));
    clock.t += 61;  // the service re-reads the key directory at most once a minute
    jwks = json_parse(call("GET", "/oidc/jwks", "", "").body);
    ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(jwks.get(), "keys")), 2);
    EXPECT_NE(
        json_string(cJSON_GetArrayItem(cJSON_GetObjectItem(jwks.get(), "keys"), 0), "kid").value(),
        first_kid);
    EXPECT_NE(service->keys()->signer(clock.t).kid(), first_kid);
    // After the overlap, a further rotation retires (deletes) the first key.
    clock.t += 86400;
    auto rotated = rotate_keys(dir.file("keys"), JwsAlg::RS256, clock.t, 86400);
    ASSERT_TRUE(rotated);
    EXPECT_EQ(rotated.value().removed.size(), 1u);
    auto set = load_keys(dir.file("keys"), clock.t, 86400, false, JwsAlg::ES256);
    ASSERT_TRUE(set);
    EXPECT_EQ(set.value()->keys.size(), 2u);
    EXPECT_EQ(set.value()->signer(clock.t).alg(), JwsAlg::RS256);
    for (const auto& key : set.value()->keys) EXPECT_NE(key.kid(), first_kid);
    // Loose permissions on a private key are refused.
    for (const auto& e : std::filesystem::directory_iterator(dir.file("keys")))
        std::filesystem::permissions(e.path(), std::filesystem::perms::group_read,
                                     std::filesystem::perm_options::add);
    EXPECT_FALSE(load_keys(dir.file("keys"), clock.t, 86400, false, JwsAlg::ES256));
}

// The pre-rendered users (user_snapshot.hpp) answer a page and `userName eq`
// exactly as the store does (a filter every user passes takes the store's
// path), after every kind of write: create, replace, patch, deactivate,
// rename, delete, group membership and group renames, and a write by another
// handle on the same file (the CLI).
TEST_F(ServiceTest, PreRenderedUsersMatchTheStoreAfterEveryWrite)
{
    auto prerendered = [&] {
        const std::string m = call("GET", "/metrics", "", "").body;
        const std::string key = "\nallot_scimd_user_reads_prerendered_total ";
        return std::stoull(m.substr(m.find(key) + key.size()));
    };
    auto expect_same_reads = [&](const std::string& step) {
        auto users = store->list_users(ListQuery{});
        ASSERT_TRUE(users);
        std::vector<std::string> names;
        for (auto& u : users.value().items) names.push_back(u.user_name);
        for (const char* token : {"R", "W"}) {
            const uint64_t before = prerendered();
            for (const char* page : {"", "startIndex=1&count=100", "startIndex=2&count=2",
                                     "startIndex=4&count=5", "startIndex=99", "count=0"}) {
                auto fast = call("GET", std::string("/scim/v2/Users?") + page, "", token);
                auto slow = call("GET", std::string("/scim/v2/Users?filter=userName pr&") + page,
                                 "", token);
                EXPECT_EQ(fast.status, 200) << step;
                EXPECT_EQ(fast.body, slow.body) << step << " " << token << " " << page;
            }
            for (const auto& n : names) {
                const std::string eq = "/scim/v2/Users?filter=userName eq \"" + n + "\"";
                EXPECT_EQ(call("GET", eq, "", token).body,
                          call("GET", eq + " and userName pr", "", token).body)
                    << step << " " << token << " " << n;
            }
            EXPECT_EQ(prerendered(), before + 6 + names.size()) << step;
        }
    };
    const std::string po =
        R"({"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":)";
    const std::string a = create_user("alice", R"(,"emails":[{"value":"a@x.org","primary":true}])");
    const std::string b =
        create_user("bob", ",\"" + ext + R"(":{"sshPublicKeys":[")" + kKey + "\"]}");
    const std::string c = create_user("carol");
    expect_same_reads("create");
    ASSERT_EQ(
        call("PUT", "/scim/v2/Users/" + b, R"({"userName":"bob","displayName":"Bob B"})").status,
        200);
    expect_same_reads("replace");
    ASSERT_EQ(call("PATCH", "/scim/v2/Users/" + c,
                   po + R"([{"op":"replace","path":"active","value":false}]})")
                  .status,
              200);
    expect_same_reads("patch: deactivate");
    auto g = call(
        "POST", "/scim/v2/Groups",
        R"({"displayName":"team-a","members":[{"value":")" + a + R"("},{"value":")" + b + "\"}]}");
    ASSERT_EQ(g.status, 201) << g.body;
    const std::string group = "/scim/v2/Groups/" + json_string(json(g).get(), "id").value();
    expect_same_reads("group create");
    ASSERT_EQ(call("PATCH", group,
                   po + R"([{"op":"add","path":"members","value":[{"value":")" + c + "\"}]}]}")
                  .status,
              200);
    expect_same_reads("group add member");
    ASSERT_EQ(call("PATCH", group,
                   po + R"([{"op":"remove","path":"members[value eq \")" + a + "\\\"]\"}]}")
                  .status,
              200);
    expect_same_reads("group remove member");
    ASSERT_EQ(
        call("PATCH", group, po + R"([{"op":"replace","path":"displayName","value":"team-z"}]})")
            .status,
        200);
    expect_same_reads("group rename");
    ASSERT_EQ(call("PATCH", "/scim/v2/Users/" + b,
                   po + R"([{"op":"replace","path":"userName","value":"zed"}]})")
                  .status,
              200);
    expect_same_reads("user rename");
    ASSERT_EQ(call("DELETE", "/scim/v2/Users/" + a).status, 204);
    expect_same_reads("user delete");
    ASSERT_EQ(call("DELETE", group).status, 204);
    expect_same_reads("group delete");
    {
        auto other = test::open_test_store(dir);
        scim::User dave;
        dave.user_name = "dave";
        dave.home = "/home/dave";
        dave.shell = "/bin/bash";
        ASSERT_TRUE(other->create_user(dave));
    }
    expect_same_reads("another writer");
    // Projections, cursors and other filters still take the store's path.
    const uint64_t before = prerendered();
    call("GET", "/scim/v2/Users?attributes=userName", "", "R");
    call("GET", "/scim/v2/Users?cursor=", "", "R");
    call("GET", "/scim/v2/Users?filter=userName eq \"dave\" or userName eq \"zed\"", "", "R");
    EXPECT_EQ(prerendered(), before);
}

// An IdP that looks each name up and then creates it moves the store's generation between
// every two lookups: lookups then take the store's path and never render every user, and
// only once the store stays at one generation do they come from the pre-rendered users.
TEST_F(ServiceTest, LookupsBetweenWritesRenderNothing)
{
    auto metric = [&](const std::string& name) {
        const std::string m = call("GET", "/metrics", "", "").body;
        const std::string key = "\n" + name + " ";
        return std::stoull(m.substr(m.find(key) + key.size()));
    };
    const uint64_t renders = metric("allot_scimd_user_renders_total");
    for (int i = 0; i < 50; ++i) {
        const std::string n = "idp" + std::to_string(i);
        auto found = call("GET", "/scim/v2/Users?filter=userName eq \"" + n + "\"", "", "R");
        ASSERT_EQ(found.status, 200);
        ASSERT_NE(found.body.find("\"totalResults\":0"), std::string::npos) << found.body;
        create_user(n);
    }
    EXPECT_EQ(metric("allot_scimd_user_renders_total"), renders);
    const uint64_t fast = metric("allot_scimd_user_reads_prerendered_total");
    for (uint32_t i = 0; i < 2 * UserSnapshot::kLookupsBeforeRebuild; ++i) {
        auto found = call("GET", "/scim/v2/Users?filter=userName eq \"idp7\"", "", "R");
        ASSERT_NE(found.body.find("\"totalResults\":1"), std::string::npos) << found.body;
    }
    EXPECT_EQ(metric("allot_scimd_user_renders_total"), renders + 1);
    EXPECT_EQ(metric("allot_scimd_user_reads_prerendered_total"),
              fast + UserSnapshot::kLookupsBeforeRebuild + 1);
}

// Tokens are cached by secret hash (token_cache.hpp), yet a revocation, by
// this store or another handle on the file (the CLI), holds from the next request.
TEST_F(ServiceTest, RevokedTokenRefusedOnTheNextRequest)
{
    const std::string t = make_token("ci", "scim:read", 0);
    EXPECT_EQ(call("GET", "/scim/v2/Users", "", "Bearer " + t).status, 200);
    EXPECT_EQ(call("GET", "/scim/v2/Users", "", "Bearer " + t).status, 200);
    ASSERT_TRUE(test::open_test_store(dir)->revoke_token("ci"));
    EXPECT_EQ(call("GET", "/scim/v2/Users", "", "Bearer " + t).status, 401);
    EXPECT_EQ(call("GET", "/scim/v2/Users", "", "R").status, 200);
    ASSERT_TRUE(store->revoke_token("reader"));
    EXPECT_EQ(call("GET", "/scim/v2/Users", "", "R").status, 401);
}

// The event loop's requests (HttpRequest::at_hand_only) are answered only from
// a cached token and the pre-rendered users, with the same bytes as a worker's
// answer; everything that needs the store is declined, and not counted.
TEST_F(ServiceTest, AtHandOnlyAnswersFromMemoryOrDeclines)
{
    const std::string id = create_user("alice");
    const std::string lookup = "/scim/v2/Users?filter=userName eq \"alice\"";
    auto at_hand_call = [&](const std::string& method, const std::string& target,
                            const std::string& body = "", const std::string& token = "R") {
        at_hand = true;
        HttpResponse r = call(method, target, body, token);
        at_hand = false;
        return r;
    };
    auto requests = [&] {
        const std::string m = call("GET", "/metrics", "", "").body;
        const std::string key = "\nallot_scimd_requests_total ";
        return std::stoull(m.substr(m.find(key) + key.size()));
    };
    EXPECT_EQ(at_hand_call("GET", lookup).status, kNotAtHand);  // the token is not cached yet
    const HttpResponse page = call("GET", "/scim/v2/Users", "", "R");  // caches it, renders all
    ASSERT_EQ(page.status, 200);
    const HttpResponse worker = call("GET", lookup, "", "R");
    const uint64_t before = requests();
    const HttpResponse loop = at_hand_call("GET", lookup);
    EXPECT_EQ(loop.status, 200);
    EXPECT_EQ(loop.body, worker.body);
    EXPECT_EQ(at_hand_call("GET", "/scim/v2/Users").body, page.body);
    EXPECT_EQ(at_hand_call("GET", "/scim/v2/Users?filter=userName eq").status, 400);
    EXPECT_EQ(requests(), before + 4);  // the first /metrics and the three answers

    const std::string unknown = "Bearer allot_" + base64url_encode(random_bytes(32));
    for (auto [method, target, token] : std::vector<std::array<std::string, 3>>{
             {"GET", lookup, unknown},                            // not cached: refused by a worker
             {"GET", "/scim/v2/Users?attributes=userName", "R"},  // projection
             {"GET", "/scim/v2/Users?filter=displayName eq \"x\"", "R"},  // another filter
             {"GET", "/scim/v2/Users/" + id, "R"},
             {"GET", "/scim/v2/Groups", "R"},
             {"GET", "/scim/v2/ServiceProviderConfig", "R"},
             {"GET", "/healthz", ""},
             {"DELETE", "/scim/v2/Users/" + id, "W"},
         }) {
        SCOPED_TRACE(method + " " + target);
        EXPECT_EQ(at_hand_call(method, target, "", token).status, kNotAtHand);
    }
    EXPECT_EQ(at_hand_call("POST", "/scim/v2/Users", R"({"userName":"bob"})", "W").status,
              kNotAtHand);
    EXPECT_EQ(requests(), before + 5);  // declines are not requests: only the second /metrics

    create_user("carol");  // the generation moves: the rendered users are stale
    EXPECT_EQ(at_hand_call("GET", lookup).status, kNotAtHand);
    EXPECT_EQ(call("GET", "/scim/v2/Users?filter=userName eq \"carol\"", "", "R").status, 200);
}
