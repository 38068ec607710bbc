// hardening_test.cpp - hostile requests through Service::handle() on a real
// SQLite store: cursor paging with count=0 / a negative count never crashes
// and never hands out a nextCursor, long and/or filters within the documented
// limits run, and no valid list request is answered 500.
#include <gtest/gtest.h>

#include <string>

#include "allot/json.hpp"
#include "service.hpp"
#include "test_util.hpp"
#include "util.hpp"

using namespace allot;
using namespace allot::scimd;

namespace {

class FixedClock final : public Clock {
public:
    int64_t now() const override { return 1800000000; }
};

class HardeningTest : public ::testing::Test {
protected:
    void SetUp() override
    {
        store = test::open_test_store(dir);
        ServiceOptions o;
        o.public_url = "https://id.test";
        o.token.issuer = "https://id.test";
        o.keys_dir = dir.file("keys");
        service = std::make_unique<Service>(o, *store, nullptr, clock);
        token = "allot_" + base64url_encode(random_bytes(32));
        ASSERT_TRUE(store->create_token("writer", {"scim:write"}, 0, hex(sha256(token))));
        for (const char* name : {"alice", "bob", "carol", "dave", "erin"}) {
            scim::User u;
            u.user_name = name;
            ASSERT_TRUE(store->create_user(u));
        }
        for (const char* name : {"team-a", "team-b", "team-c"}) {
            scim::Group g;
            g.display_name = name;
            ASSERT_TRUE(store->create_group(g));
        }
    }

    HttpResponse post(const std::string& path, const std::string& body)
    {
        HttpRequest r;
        r.method = "POST";
        r.path = "/scim/v2" + path;
        r.headers["authorization"] = "Bearer " + token;
        r.headers["content-type"] = "application/scim+json";
        r.body = body;
        return service->handle(r);
    }

    // GET `path` with a query given as already-decoded key/value pairs.
    HttpResponse get(const std::string& path,
                     std::vector<std::pair<std::string, std::string>> query)
    {
        HttpRequest r;
        r.method = "GET";
        r.path = "/scim/v2" + path;
        r.query = std::move(query);
        r.headers["authorization"] = "Bearer " + token;
        return service->handle(r);
    }

    test::ScratchDir dir;
    FixedClock clock;
    std::unique_ptr<DirectoryStore> store;
    std::unique_ptr<Service> service;
    std::string token;
};

// `n` short terms joined by `op`, each true for every row (200 fit in the
// documented 4096 bytes).
std::string chain(size_t n, const std::string& op)
{
    std::string f;
    for (size_t i = 0; i < n; ++i)
        f += (i ? " " + op + " " : "") + std::string("id ne \"") + std::to_string(i) + "\"";
    return f;
}

}  // namespace

TEST_F(HardeningTest, CursorPagingWithCountZeroOrNegativeGivesTotalsOnly)
{
    for (int i = 0; i < 30; ++i) {
        for (const auto& [path, count, total] :
             {std::tuple<std::string, std::string, int>{"/Users", "0", 5},
              {"/Groups", "-1", 3},
              {"/Users", "-1", 5},
              {"/Groups", "0", 3}}) {
            auto r = get(path, {{"cursor", ""}, {"count", count}});
            ASSERT_EQ(r.status, 200) << path << " count=" << count << ": " << r.body;
            JsonPtr j = json_parse(r.body);
            ASSERT_TRUE(j) << r.body;
            EXPECT_EQ(json_integer(j.get(), "totalResults").value_or(-1), total);
            EXPECT_EQ(json_integer(j.get(), "itemsPerPage").value_or(-1), 0);
            EXPECT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(j.get(), "Resources")), 0);
            // No last row was returned, so there is nothing to continue after.
            EXPECT_FALSE(cJSON_GetObjectItem(j.get(), "nextCursor")) << r.body;
        }
    }
    // Index paging with count=0 likewise.
    auto r = get("/Users", {{"count", "0"}});
    ASSERT_EQ(r.status, 200);
    EXPECT_EQ(json_integer(json_parse(r.body).get(), "totalResults").value_or(-1), 5);
}

TEST_F(HardeningTest, CursorPagingWalksEveryRowOnce)
{
    std::vector<std::string> seen;
    std::string cursor;
    for (int page = 0; page < 10; ++page) {
        auto r = get("/Users", {{"cursor", cursor}, {"count", "2"}});
        ASSERT_EQ(r.status, 200) << r.body;
        JsonPtr j = json_parse(r.body);
        const cJSON* u = nullptr;
        cJSON_ArrayForEach(u, cJSON_GetObjectItem(j.get(), "Resources"))
            seen.push_back(json_string(u, "userName").value_or(""));
        auto next = json_string(j.get(), "nextCursor");
        if (!next) break;
        cursor = *next;
    }
    EXPECT_EQ(seen, (std::vector<std::string>{"alice", "bob", "carol", "dave", "erin"}));
    EXPECT_EQ(get("/Users", {{"cursor", "not-ours"}}).status, 400);
}

TEST_F(HardeningTest, LongAndOrChainsWithinTheLimitRun)
{
    for (const char* op : {"and", "or"}) {
        for (size_t n : {100, 150, 199, 200}) {
            auto r = get("/Users", {{"filter", chain(n, op)}});
            ASSERT_EQ(r.status, 200) << op << " x" << n << ": " << r.body.substr(0, 300);
            EXPECT_EQ(json_integer(json_parse(r.body).get(), "totalResults").value_or(-1), 5);
        }
        // Past the documented 200 terms: refused as an invalid filter, not a 500.
        auto r = get("/Users", {{"filter", chain(201, op)}});
        EXPECT_EQ(r.status, 400) << r.body;
    }
    // A chain inside a valuePath and mixed with grouping compiles flat too.
    std::string mixed = "(" + chain(60, "and") + ") or (" + chain(60, "and") + ") or not (" +
                        chain(60, "and") + ")";
    auto r = get("/Users", {{"filter", mixed}});
    EXPECT_EQ(r.status, 200) << r.body.substr(0, 300);
    r = get("/Groups", {{"filter", "members[" + std::string("value ne \"a\"") + "] or " +
                                       "displayName sw \"team\""}});
    EXPECT_EQ(r.status, 200) << r.body;
}

TEST_F(HardeningTest, DeepNestingWithinTheLimitRunsAndBeyondIsRefused)
{
    // 24 levels is the documented depth: every level a `not (`, the worst case.
    for (size_t depth : {1, 10, 24, 25, 40}) {
        std::string f;
        for (size_t i = 0; i < depth; ++i) f += "not (";
        f += "userName eq \"alice\"";
        for (size_t i = 0; i < depth; ++i) f += ")";
        auto r = get("/Users", {{"filter", f}});
        EXPECT_NE(r.status, 500) << "depth " << depth << ": " << r.body;
        EXPECT_EQ(r.status, depth <= 24 ? 200 : 400) << "depth " << depth << ": " << r.body;
    }
    // Every level a `not` over an and/or chain with a valuePath: the deepest SQL
    // a filter within the limits compiles to.
    std::string f;
    for (size_t i = 0; i < 23; ++i)
        f += (i % 2 ? "emails[value ne \"x\"] or not (" : "id ne \"x\" and not (");
    f += "userName pr";
    for (size_t i = 0; i < 23; ++i) f += ")";
    auto r = get("/Users", {{"filter", f}});
    EXPECT_EQ(r.status, 200) << r.body;
    // and/or alternating at every one of the 24 levels, a valuePath in each.
    f.clear();
    for (size_t i = 0; i < 23; ++i)
        f += (i % 2 ? "emails[value ne \"x\"] or (" : "emails[type ne \"x\"] and (");
    f += "emails[value pr]";
    for (size_t i = 0; i < 23; ++i) f += ")";
    r = get("/Users", {{"filter", f}});
    EXPECT_NE(r.status, 500) << r.body;
    EXPECT_EQ(r.status, 200) << r.body;
}

TEST_F(HardeningTest, ManyDistinctFiltersNeverBreakTheStatementCache)
{
    // More distinct statements than the cache keeps, interleaved with paging.
    for (int i = 0; i < 600; ++i) {
        auto r = get(i % 2 ? "/Users" : "/Groups",
                     {{"filter", "id ne \"" + std::to_string(i) + "\""}, {"count", "1"}});
        ASSERT_EQ(r.status, 200) << i << ": " << r.body;
    }
}

TEST_F(HardeningTest, AmbiguousJsonBodiesAreRefusedNeverTruncated)
{
    // Issue 19: trailing bytes, a key given twice, an embedded NUL.
    for (const std::string& body : {std::string(R"({"userName":"mallory"} {"userName":"root"})"),
                                    std::string(R"({"userName":"mallory"}x)"),
                                    std::string(R"({"userName":"mallory","userName":"root"})"),
                                    std::string(R"({"displayName":"g","displayName":"sudo"})"),
                                    std::string(R"({"userName":"nul\u0000x"})"),
                                    std::string("{\"userName\":\"nul\0x\"}", 20)}) {
        const std::string path =
            body.find("displayName") != std::string::npos ? "/Groups" : "/Users";
        auto r = post(path, body);
        EXPECT_EQ(r.status, 400) << body;
        EXPECT_NE(r.body.find("invalidSyntax"), std::string::npos) << r.body;
    }
    for (const char* name : {"mallory", "root", "nul"})
        EXPECT_FALSE(store->get_user_by_name(name)) << name;
    EXPECT_FALSE(store->get_group_by_name("sudo"));
    // The same body without the ambiguity is parsed (and then judged on its
    // values): the refusals above were the JSON's, from a server that answers.
    auto r = post("/Users", R"({"userName":"mallory"}  )"
                            "\n");
    EXPECT_EQ(r.body.find("invalidSyntax"), std::string::npos) << r.body;
    EXPECT_EQ(get("/Users", {}).status, 200);
}
