// private_groups_test.cpp - `serve --private-groups`: /Groups also lists each
// user's private group (issue 13: SUNK's nsscache synthesises none). Driven
// through Service::handle() on a real SQLite store: the listing, paging by
// index and cursor across the boundary between real and private groups,
// filters, hiding for read tokens, a name clash (the real group wins), the
// refusal of writes to a private group, and its userPrivateGroup mark as
// allot-syncd's SCIM client reads it.
#include <gtest/gtest.h>

#include "allot/json.hpp"
#include "allot/scim_client.hpp"
#include "service.hpp"
#include "test_util.hpp"
#include "util.hpp"

using namespace allot;
using namespace allot::scimd;

namespace {

class NoMunge final : public MungeDecoder {
public:
    Result<MungeCredential> decode(const std::string&) override
    {
        return make_error(cred::Errc::Invalid, "no munge in this test");
    }
};

class FixedClock final : public Clock {
public:
    int64_t now() const override { return 1800000000; }
};

using V = std::vector<std::string>;

class PrivateGroupsTest : public ::testing::Test {
protected:
    void SetUp() override { open(true); }
    void open(bool private_groups)
    {
        service.reset();
        store.reset();
        std::string err;
        store = open_sqlite_store(dir.file("d.db"), IdRange{1000, 60000, 20000, 60000},
                                  scim::kDefaultPosixUser, &err, private_groups);
        ASSERT_TRUE(store) << err;
        ServiceOptions o;
        o.public_url = "https://id.test";
        o.keys_dir = dir.file("keys");
        o.token.issuer = "https://id.test";
        service = std::make_unique<Service>(o, *store, std::make_unique<NoMunge>(), clock);
        ASSERT_TRUE(service->init());
        read_token = token("reader" + std::to_string(++tokens), "scim:read");
        write_token = token("writer" + std::to_string(++tokens), "scim:write");
    }
    std::string token(const std::string& name, const std::string& scope)
    {
        const std::string secret = "allot_" + base64url_encode(random_bytes(32));
        EXPECT_TRUE(store->create_token(name, {scope}, 0, hex(sha256(secret))));
        return secret;
    }
    // alice, bob and carol (deactivated) have private gids; dave's primary gid
    // is team's; a real group is named erin, like the user.
    void populate()
    {
        team_gid = *made(store->create_group(group("team", {}))).gid;
        alice = user("alice", true);
        bob = user("bob", true);
        carol = user("carol", false);
        erin_line =
            "erin:" + std::to_string(*made(store->create_group(group("erin", {alice.id}))).gid) +
            ":alice";
        erin = user("erin", true);
        scim::User d = draft("dave", true);
        d.gid = team_gid;
        made(store->create_user(d));
    }
    template <typename T>
    T made(Result<T> r)
    {
        EXPECT_TRUE(r) << r.error().message;
        return r.value();
    }
    static scim::User draft(const std::string& name, bool active)
    {
        scim::User u;
        u.user_name = name;
        u.home = "/home/" + name;
        u.shell = "/bin/bash";
        u.active = active;
        return u;
    }
    scim::User user(const std::string& name, bool active)
    {
        return made(store->create_user(draft(name, active)));
    }
    static scim::Group group(const std::string& name, const V& member_ids)
    {
        scim::Group g;
        g.display_name = name;
        for (const auto& id : member_ids) g.members.push_back({id, "User", ""});
        return g;
    }
    scimd::HttpResponse call(const std::string& method, const std::string& target,
                             bool write = true, const std::string& body = "")
    {
        HttpRequest r;
        r.method = method;
        const size_t q = target.find('?');
        r.path = target.substr(0, q);
        if (q != std::string::npos) {
            const std::string qs = target.substr(q + 1);
            for (size_t start = 0; start <= qs.size();) {
                size_t amp = qs.find('&', start);
                if (amp == std::string::npos) amp = qs.size();
                const std::string kv = qs.substr(start, amp - start);
                const size_t eq = kv.find('=');
                r.query.emplace_back(kv.substr(0, eq),
                                     eq == std::string::npos ? "" : kv.substr(eq + 1));
                start = amp + 1;
            }
        }
        r.headers["authorization"] = "Bearer " + (write ? write_token : read_token);
        if (!body.empty()) r.headers["content-type"] = "application/scim+json";
        r.body = body;
        return service->handle(r);
    }
    // "name:gid:member,member" per listed group, then "total=N".
    V listing(const std::string& query, bool write = true, std::string* next = nullptr)
    {
        auto r = call("GET", "/scim/v2/Groups" + query, write);
        EXPECT_EQ(r.status, 200) << r.body;
        JsonPtr j = json_parse(r.body);
        V out;
        const cJSON* g = nullptr;
        cJSON_ArrayForEach(g, cJSON_GetObjectItem(j.get(), "Resources")) out.push_back(line(g));
        out.push_back("total=" +
                      std::to_string(json_integer(j.get(), "totalResults").value_or(-1)));
        if (next) *next = json_string(j.get(), "nextCursor").value_or("");
        return out;
    }
    static std::string line(const cJSON* g)
    {
        const cJSON* ext = cJSON_GetObjectItem(g, scim::kPosixGroup);
        std::string s = json_string(g, "displayName").value_or("?") + ":" +
                        std::to_string(json_integer(ext, "gidNumber").value_or(-1)) + ":";
        const cJSON* m = nullptr;
        bool first = true;
        cJSON_ArrayForEach(m, cJSON_GetObjectItem(g, "members"))
        {
            s += (first ? "" : ",") + json_string(m, "display").value_or("?");
            first = false;
        }
        return s;
    }
    std::string pg(const scim::User& u) const
    {
        return u.user_name + ":" + std::to_string(*u.gid) + ":" + u.user_name;
    }

    test::ScratchDir dir;
    FixedClock clock;
    std::unique_ptr<DirectoryStore> store;
    std::unique_ptr<Service> service;
    std::string read_token, write_token;
    int tokens = 0;
    int64_t team_gid = 0;
    scim::User alice, bob, carol, erin;
    std::string erin_line;  // the real group erin
};

}  // namespace

TEST_F(PrivateGroupsTest, ListsPrivateGroupsBesideRealOnes)
{
    populate();
    const std::string team = "team:" + std::to_string(team_gid) + ":";
    // dave's primary gid is team's, so he has none; erin's name is a real group's.
    EXPECT_EQ(listing(""), (V{pg(alice), pg(bob), pg(carol), erin_line, team, "total=5"}));
    EXPECT_EQ(listing("?sortOrder=descending&count=2"), (V{team, erin_line, "total=5"}));
    // Off (the default): only real groups.
    open(false);
    EXPECT_EQ(listing(""), (V{erin_line, team, "total=2"}));
}

TEST_F(PrivateGroupsTest, PagingCrossesFromPrivateToRealGroups)
{
    populate();
    const V all = listing("");
    V by_index, by_cursor;
    for (int start = 1; start <= 5; start += 2) {
        V page = listing("?count=2&startIndex=" + std::to_string(start));
        EXPECT_EQ(page.back(), "total=5");
        by_index.insert(by_index.end(), page.begin(), page.end() - 1);
    }
    std::string next;
    V page = listing("?count=2&cursor", true, &next);
    for (int pages = 1;; ++pages) {
        EXPECT_EQ(page.back(), "total=5");
        by_cursor.insert(by_cursor.end(), page.begin(), page.end() - 1);
        if (next.empty() || pages > 5) break;
        page = listing("?count=2&cursor=" + next, true, &next);
    }
    const V items(all.begin(), all.end() - 1);
    EXPECT_EQ(by_index, items);
    EXPECT_EQ(by_cursor, items);
}

TEST_F(PrivateGroupsTest, FiltersSeeThePrivateGroups)
{
    populate();
    EXPECT_EQ(listing("?filter=displayName eq \"alice\""), (V{pg(alice), "total=1"}));
    EXPECT_EQ(listing("?filter=gidNumber eq " + std::to_string(*bob.gid)), (V{pg(bob), "total=1"}));
    EXPECT_EQ(listing("?filter=urn:ietf:params:scim:schemas:extension:allot:2.0:PosixGroup:"
                      "gidNumber eq " +
                      std::to_string(*bob.gid)),
              (V{pg(bob), "total=1"}));
    EXPECT_EQ(listing("?filter=members.value eq \"" + alice.id + "\""),
              (V{pg(alice), erin_line, "total=2"}));
    EXPECT_EQ(listing("?filter=members[display eq \"bob\"]"), (V{pg(bob), "total=1"}));
    EXPECT_EQ(listing("?filter=not (members pr)"),
              (V{"team:" + std::to_string(team_gid) + ":", "total=1"}));
    // The name clash: erin is the real group, whose member is alice.
    EXPECT_EQ(listing("?filter=displayName eq \"erin\""), (V{erin_line, "total=1"}));
}

TEST_F(PrivateGroupsTest, ReadTokensDoNotSeeADeactivatedUsersGroup)
{
    populate();
    const std::string team = "team:" + std::to_string(team_gid) + ":";
    EXPECT_EQ(listing("", false), (V{pg(alice), pg(bob), erin_line, team, "total=4"}));
    EXPECT_EQ(listing("?count=1&startIndex=3", false), (V{erin_line, "total=4"}));
    EXPECT_EQ(listing("?filter=displayName eq \"carol\"", false), (V{"total=0"}));
    const std::string id = private_group_id(carol.id);
    EXPECT_EQ(call("GET", "/scim/v2/Groups/" + id, false).status, 404);
    EXPECT_EQ(call("GET", "/scim/v2/Groups/" + id, true).status, 200);
    // Reactivated, carol's group is listed again.
    scim::User c = carol;
    c.active = true;
    made(store->replace_user(c.id, c, 0));
    EXPECT_EQ(listing("?filter=displayName eq \"carol\"", false), (V{pg(carol), "total=1"}));
}

TEST_F(PrivateGroupsTest, APrivateGroupIsReadOnlyWithAStableId)
{
    populate();
    const std::string id = private_group_id(alice.id);
    EXPECT_TRUE(is_private_group_id(id));
    EXPECT_NE(id, alice.id);
    auto got = call("GET", "/scim/v2/Groups/" + id);
    ASSERT_EQ(got.status, 200) << got.body;
    JsonPtr g = json_parse(got.body);
    EXPECT_EQ(json_string(g.get(), "id").value_or(""), id);
    EXPECT_EQ(line(g.get()), pg(alice));
    const std::string body =
        R"({"schemas":["urn:ietf:params:scim:schemas:core:2.0:Group"],"displayName":"alice"})";
    const std::string patch = R"({"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],)"
                              R"("Operations":[{"op":"add","path":"members","value":[{"value":")" +
                              bob.id + R"("}]}]})";
    for (const auto& [method, b] : std::vector<std::pair<std::string, std::string>>{
             {"PUT", body}, {"PATCH", patch}, {"DELETE", ""}}) {
        auto r = call(method, "/scim/v2/Groups/" + id, true, b);
        EXPECT_EQ(r.status, 400) << method << " " << r.body;
        JsonPtr e = json_parse(r.body);
        EXPECT_EQ(json_string(e.get(), "scimType").value_or(""), "mutability") << method;
        EXPECT_NE(r.body.find("private group of user 'alice'"), std::string::npos) << r.body;
    }
    EXPECT_EQ(listing("?filter=displayName eq \"alice\""), (V{pg(alice), "total=1"}));
    // Real groups' ids are never a private group's.
    auto real = made(store->get_group_by_name("team"));
    EXPECT_FALSE(is_private_group_id(real.id));
    // Off, the id names nothing.
    open(false);
    EXPECT_EQ(call("GET", "/scim/v2/Groups/" + id).status, 404);
    EXPECT_EQ(call("DELETE", "/scim/v2/Groups/" + id).status, 404);
}

// Every private group carries userPrivateGroup: true in the PosixGroup
// extension, a real group never; the mark is returned "always", so no
// attributes= or excludedAttributes= leaves it out. allot-syncd's parser,
// given exactly its own /Groups request, sees the same split.
TEST_F(PrivateGroupsTest, PrivateGroupsAreMarkedWhateverTheClientAsks)
{
    populate();
    const std::string pg = scim::kPosixGroup;
    auto marks = [&](const std::string& query) {
        auto r = call("GET", "/scim/v2/Groups" + query);
        EXPECT_EQ(r.status, 200) << r.body;
        JsonPtr j = json_parse(r.body);
        V out;
        const cJSON* g = nullptr;
        cJSON_ArrayForEach(g, cJSON_GetObjectItem(j.get(), "Resources"))
        {
            const cJSON* mark =
                cJSON_GetObjectItem(cJSON_GetObjectItem(g, pg.c_str()), "userPrivateGroup");
            out.push_back(json_string(g, "displayName").value_or("?") + "=" +
                          (cJSON_IsTrue(mark) ? "private"
                           : mark             ? "wrong"
                                              : "real"));
        }
        return out;
    };
    const V want{"alice=private", "bob=private", "carol=private", "erin=real", "team=real"};
    EXPECT_EQ(marks(""), want);
    for (const char* q : {"?attributes=displayName", "?attributes=displayName,gidNumber",
                          "?attributes=displayName,members&excludedAttributes=gidNumber",
                          "?excludedAttributes=urn:ietf:params:scim:schemas:extension:allot:2.0:"
                          "PosixGroup",
                          "?excludedAttributes=urn:ietf:params:scim:schemas:extension:allot:2.0:"
                          "PosixGroup:userPrivateGroup"})
        EXPECT_EQ(marks(q), want) << q;
    auto one = call("GET", "/scim/v2/Groups/" + private_group_id(bob.id));
    EXPECT_NE(one.body.find("\"userPrivateGroup\":true"), std::string::npos) << one.body;

    // allot-syncd's request (lib/scim_fetch.cpp) and parser.
    auto r = call("GET", "/scim/v2/Groups?attributes=displayName,members,gidNumber," + pg);
    auto page = parse_group_page(r.body, scim::kDefaultPosixUser);
    ASSERT_TRUE(page.ok()) << page.error().message;
    V parsed;
    for (const auto& g : page.value().resources) {
        EXPECT_TRUE(g.type_error.empty()) << g.type_error;
        EXPECT_TRUE(g.gid.has_value()) << g.display_name;
        parsed.push_back(g.display_name + "=" + (g.user_private ? "private" : "real"));
    }
    EXPECT_EQ(parsed, want);

    auto schema = call("GET", "/scim/v2/Schemas/" + pg);
    ASSERT_EQ(schema.status, 200) << schema.body;
    EXPECT_NE(schema.body.find("\"name\":\"userPrivateGroup\""), std::string::npos) << schema.body;
    EXPECT_NE(schema.body.find("\"returned\":\"always\""), std::string::npos) << schema.body;

    // Off: nothing is marked.
    open(false);
    EXPECT_EQ(marks(""), (V{"erin=real", "team=real"}));
}
