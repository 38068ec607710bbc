// scim_client_test.cpp - SCIM list parsing, paging, retries and record
// validation against a fake HTTP client, with hostile payloads.
#include <gtest/gtest.h>

#include "allot/scim_client.hpp"
#include "scim_fakes.hpp"

using namespace allot;
using namespace allot::scimtest;

namespace {

IdentityConfig identity_config()
{
    IdentityConfig id;
    id.uid_min = 10000;
    id.uid_max = 60000;
    id.gid_min = 10000;
    id.gid_max = 60000;
    return id;
}

ScimDirectory parse_users(const std::vector<std::string>& users,
                          const std::vector<std::string>& groups = {})
{
    ScimDirectory d;
    auto p = parse_user_page(list_json(users, users.size()), kExt);
    EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().message);
    if (p.ok()) d.users = p.value().resources;
    auto g = parse_group_page(list_json(groups, groups.size()), kExt);
    EXPECT_TRUE(g.ok());
    if (g.ok()) d.groups = g.value().resources;
    return d;
}

bool rejected(const ValidatedDirectory& v, const std::string& object,
              const std::string& reason_part)
{
    for (const auto& r : v.rejections)
        if (r.object == object && r.reason.find(reason_part) != std::string::npos) return true;
    return false;
}

// The record was rejected with this code (what metrics and callers decide on).
bool rejected_as(const ValidatedDirectory& v, const std::string& object, identity::Errc code)
{
    for (const auto& r : v.rejections)
        if (r.object == object && r.code == make_error_code(code)) return true;
    return false;
}

}  // namespace

TEST(ScimParse, UserPageWithExtension)
{
    auto p = parse_user_page(
        list_json({user_json("1", "alice", 20001, "", "/bin/bash", "[\"" + kEd25519 + "\"]")}, 1),
        kExt);
    ASSERT_TRUE(p.ok()) << p.error().message;
    ASSERT_EQ(p.value().resources.size(), 1u);
    const auto& u = p.value().resources[0];
    EXPECT_EQ(u.user_name, "alice");
    EXPECT_TRUE(u.has_extension);
    EXPECT_EQ(*u.uid, 20001);
    EXPECT_EQ(u.ssh_keys.size(), 1u);
}

TEST(ScimParse, HostileBodies)
{
    EXPECT_FALSE(parse_user_page("", kExt).ok());
    EXPECT_FALSE(parse_user_page("{\"totalResults\":1,\"Resources\":[{", kExt).ok());  // truncated
    EXPECT_FALSE(parse_user_page("[]", kExt).ok());
    EXPECT_FALSE(parse_user_page("{\"Resources\":[]}", kExt).ok());  // no totalResults
    EXPECT_FALSE(parse_user_page("{\"totalResults\":\"3\",\"Resources\":[]}", kExt).ok());
    EXPECT_FALSE(parse_user_page("{\"totalResults\":-1,\"Resources\":[]}", kExt).ok());
    EXPECT_FALSE(parse_user_page("{\"totalResults\":1,\"Resources\":{}}", kExt).ok());
    EXPECT_FALSE(
        parse_user_page("{\"totalResults\":1,\"nextCursor\":5,\"Resources\":[]}", kExt).ok());
    auto err = parse_user_page(
        R"({"schemas":["urn:ietf:params:scim:api:messages:2.0:Error"],"status":"500","detail":"db down"})",
        kExt);
    ASSERT_FALSE(err.ok());
    EXPECT_NE(err.error().message.find("db down"), std::string::npos);
    // 10 MiB + 1 byte of otherwise valid JSON.
    std::string huge =
        "{\"totalResults\":0,\"Resources\":[],\"pad\":\"" + std::string(10u << 20, 'x') + "\"}";
    auto h = parse_user_page(huge, kExt);
    ASSERT_FALSE(h.ok());
    EXPECT_NE(h.error().message.find("10 MiB"), std::string::npos);
    // Deep nesting must not crash the parser.
    std::string deep(100000, '[');
    EXPECT_FALSE(parse_user_page(deep, kExt).ok());
}

TEST(ScimParse, WrongTypesAreRecordErrors)
{
    auto p = parse_user_page(
        list_json(
            {
                R"({"id":"1","userName":"a1234","urn:ietf:params:scim:schemas:extension:allot:2.0:PosixUser":{"uidNumber":"20001","gidNumber":20001}})",
                R"({"id":"2","userName":7})",
                R"({"id":"3","userName":"b","active":"yes"})",
                R"({"id":"4","userName":"c","urn:ietf:params:scim:schemas:extension:allot:2.0:PosixUser":[]})",
                R"({"id":"5","userName":"d","urn:ietf:params:scim:schemas:extension:allot:2.0:PosixUser":{"uidNumber":20001.5}})",
                R"({"id":"6","userName":"e","urn:ietf:params:scim:schemas:extension:allot:2.0:PosixUser":{"sshPublicKeys":"ssh-ed25519 AAAA"}})",
                R"("just a string")",
            },
            7),
        kExt);
    ASSERT_TRUE(p.ok());
    for (const auto& u : p.value().resources) EXPECT_FALSE(u.type_error.empty()) << u.id;
    ScimDirectory d;
    d.users = p.value().resources;
    auto v = validate_directory(d, identity_config());
    EXPECT_TRUE(v.users.empty());
    EXPECT_EQ(v.rejections.size(), 7u);
}

// allot-scimd marks the private groups it synthesises (PosixGroup
// extension, userPrivateGroup); the parser carries the mark, and a mark of
// the wrong type makes the record an error rather than a group.
TEST(ScimParse, UserPrivateGroupMark)
{
    const std::string pg = "urn:ietf:params:scim:schemas:extension:allot:2.0:PosixGroup";
    auto p = parse_group_page(
        list_json(
            {R"({"id":"1","displayName":"alice",")" + pg +
                 R"(":{"gidNumber":20001,"userPrivateGroup":true},"members":[{"value":"u1"}]})",
             R"({"id":"2","displayName":"team",")" + pg +
                 R"(":{"gidNumber":20002,"userPrivateGroup":false}})",
             R"({"id":"3","displayName":"other",")" + pg + R"(":{"gidNumber":20003}})",
             R"({"id":"4","displayName":"bad",")" + pg +
                 R"(":{"gidNumber":20004,"userPrivateGroup":"true"}})",
             group_json("5", "plain", 20005, {})},
            5),
        kExt);
    ASSERT_TRUE(p.ok()) << p.error().message;
    const auto& g = p.value().resources;
    ASSERT_EQ(g.size(), 5u);
    EXPECT_TRUE(g[0].user_private);
    EXPECT_EQ(g[0].gid, 20001);
    for (size_t i : {1, 2, 4}) {
        EXPECT_FALSE(g[i].user_private) << i;
        EXPECT_TRUE(g[i].type_error.empty()) << i << g[i].type_error;
    }
    EXPECT_EQ(g[3].type_error, "userPrivateGroup is not a boolean");
}

TEST(ScimValidate, UserRules)
{
    auto d = parse_users({
        user_json("1", "alice", 20001),
        user_json("2", "root0", 0),
        user_json("3", "sysid", 999),
        user_json("4", "far", 80000),
        user_json("5", "dotdot", 20005, "/home/../etc"),
        user_json("6", "outside", 20006, "/etc/outside"),
        user_json("7", "prefixtrick", 20007, "/homeevil/x"),
        user_json("8", "badshell", 20008, "", "/bin/evil"),
        user_json("9", "-rf", 20009),
        user_json("10", "a:b", 20010),
        user_json("11", "semi;colon", 20011),
        user_json("12", "12345", 20012),
        user_json("13", "nl\\nname", 20013),
        user_json("14", "bob", 20014, "", "/bin/bash",
                  "[\"" + kEd25519 + "\",\"command=\\\"sh\\\" " + kEd25519 + "\"]"),
        user_json("15", "homeslash", 20015, "/home//x"),
        user_json("16", "homeroot", 20016, "/home"),
        user_json("17", "nobodyish", 65534),
        user_json("18", "ctrlhome", 20018, "/home/a\\u0001b"),
    });
    IdentityConfig id = identity_config();
    id.uid_max = 70000;
    id.gid_max = 70000;
    auto v = validate_directory(d, id);
    ASSERT_EQ(v.users.size(), 2u);
    EXPECT_EQ(v.users[0].name, "alice");
    EXPECT_EQ(v.users[1].name, "bob");
    EXPECT_EQ(v.users[1].ssh_keys.size(), 1u);  // the injected key dropped, user kept
    using E = identity::Errc;
    EXPECT_TRUE(rejected_as(v, "root0", E::ReservedId));
    EXPECT_TRUE(rejected(v, "root0", "(root) is never allowed"));
    EXPECT_TRUE(rejected_as(v, "sysid", E::IdOutOfRange));
    EXPECT_TRUE(rejected_as(v, "far", E::IdOutOfRange));
    EXPECT_TRUE(rejected_as(v, "dotdot", E::InvalidHome));
    EXPECT_TRUE(rejected_as(v, "outside", E::InvalidHome));
    EXPECT_TRUE(rejected_as(v, "prefixtrick", E::InvalidHome));
    EXPECT_TRUE(rejected_as(v, "badshell", E::InvalidShell));
    EXPECT_TRUE(rejected_as(v, "-rf", E::InvalidName));
    EXPECT_TRUE(rejected_as(v, "a:b", E::InvalidName));
    EXPECT_TRUE(rejected_as(v, "semi;colon", E::InvalidName));
    EXPECT_TRUE(rejected_as(v, "12345", E::InvalidName));
    EXPECT_TRUE(rejected_as(v, "nl?name", E::InvalidName));
    EXPECT_TRUE(rejected_as(v, "bob", E::InvalidSshKey));
    EXPECT_TRUE(rejected(v, "bob", "options"));
    EXPECT_TRUE(rejected_as(v, "homeslash", E::InvalidHome));
    EXPECT_TRUE(rejected_as(v, "homeroot", E::InvalidHome));
    EXPECT_TRUE(rejected_as(v, "nobodyish", E::ReservedId));
    EXPECT_TRUE(rejected_as(v, "ctrlhome", E::InvalidHome));
}

TEST(ScimValidate, DuplicatesRejectEveryHolder)
{
    auto d = parse_users({user_json("1", "alice", 20001), user_json("2", "alice", 20002),
                          user_json("3", "carol", 20003), user_json("4", "dave", 20003),
                          user_json("5", "erin", 20005)});
    auto v = validate_directory(d, identity_config());
    ASSERT_EQ(v.users.size(), 1u);
    EXPECT_EQ(v.users[0].name, "erin");
    EXPECT_TRUE(rejected(v, "alice", "duplicate userName"));
    EXPECT_TRUE(rejected(v, "carol", "duplicate uidNumber"));
    EXPECT_TRUE(rejected(v, "dave", "duplicate uidNumber"));
}

TEST(ScimValidate, InactiveSkippedAndMissingExtensionRejected)
{
    auto d = parse_users({R"({"id":"1","userName":"ghost","active":false})",
                          R"({"id":"2","userName":"noext"})", user_json("3", "ok", 20003)});
    auto v = validate_directory(d, identity_config());
    EXPECT_EQ(v.inactive, 1u);
    EXPECT_EQ(v.users.size(), 1u);
    EXPECT_TRUE(rejected(v, "noext", "no POSIX extension"));
}

TEST(ScimValidate, NestedGroupsAreFlattenedCyclesCut)
{
    auto d = parse_users(
        {user_json("u1", "alice", 20001), user_json("u2", "bob", 20002),
         user_json("u3", "carol", 20003)},
        {group_json("g1", "team-a", 30001, {"u1", "g2"}, ""),
         R"({"id":"g2","displayName":"sub","gidNumber":30002,"members":[{"value":"u2","type":"User"},{"value":"g1","type":"Group"}]})",
         group_json("g3", "team-b", 30003, {"u3", "nosuch"}),
         group_json("g4", "bad group", 30004, {}), group_json("g5", "lowgid", 5, {}),
         group_json("g6", "dupgid", 30003, {})});
    auto v = validate_directory(d, identity_config());
    ASSERT_EQ(v.groups.size(), 2u);  // team-a, sub (team-b and dupgid share a gid)
    EXPECT_EQ(v.groups[1].name, "team-a");
    EXPECT_EQ(v.groups[1].members, (std::vector<std::string>{"alice", "bob"}));
    EXPECT_EQ(v.groups[0].members, (std::vector<std::string>{"alice", "bob"}));
    EXPECT_TRUE(rejected(v, "bad group", "POSIX"));
    EXPECT_TRUE(rejected_as(v, "lowgid", identity::Errc::IdOutOfRange));
    EXPECT_TRUE(rejected(v, "team-b", "duplicate gidNumber"));
}

TEST(ScimValidate, UnknownMemberDroppedWithReason)
{
    auto d = parse_users({user_json("u1", "alice", 20001)},
                         {group_json("g1", "team-a", 30001, {"u1", "zzz"})});
    auto v = validate_directory(d, identity_config());
    ASSERT_EQ(v.groups.size(), 1u);
    EXPECT_EQ(v.groups[0].members, std::vector<std::string>{"alice"});
    EXPECT_TRUE(rejected(v, "team-a", "zzz"));
}

TEST(ScimFetch, StartIndexPaging)
{
    struct Pager : HttpClient {
        std::vector<std::string> urls;
        Result<HttpResponse> get(const std::string& url) override
        {
            urls.push_back(url);
            if (url.find("/Groups") != std::string::npos)
                return HttpResponse{200, list_json({group_json("g1", "team-a", 30001, {"u1"})}, 1),
                                    0};
            if (url.find("startIndex=1") != std::string::npos)
                return HttpResponse{
                    200,
                    list_json({user_json("u1", "alice", 20001), user_json("u2", "bob", 20002)}, 3,
                              1),
                    0};
            if (url.find("startIndex=3") != std::string::npos)
                return HttpResponse{200, list_json({user_json("u3", "carol", 20003)}, 3, 3), 0};
            return HttpResponse{500, "", 0};
        }
    } pager;
    ScimFetchOptions o;
    o.base_url = "https://id.example/scim/v2/";
    o.ext_schema = kExt;
    o.page_size = 2;
    auto d = fetch_directory(pager, o);
    ASSERT_TRUE(d.ok()) << d.error().message;
    EXPECT_EQ(d.value().users.size(), 3u);
    EXPECT_EQ(d.value().groups.size(), 1u);
    ASSERT_EQ(pager.urls.size(), 3u);
    EXPECT_NE(pager.urls[0].find("https://id.example/scim/v2/Users?attributes="),
              std::string::npos);
    EXPECT_NE(pager.urls[0].find(
                  "urn%3Aietf%3Aparams%3Ascim%3Aschemas%3Aextension%3Aallot%3A2.0%3APosixUser"),
              std::string::npos);
    EXPECT_NE(pager.urls[0].find("count=2"), std::string::npos);
}

TEST(ScimFetch, CursorPagingAndRepeatedCursor)
{
    FakeHttp http;
    http.on("/Groups", 200, list_json({}, 0));
    http.on("cursor=c2", 200, list_json({user_json("u2", "bob", 20002)}, 2));
    http.on("startIndex=1", 200, list_json({user_json("u1", "alice", 20001)}, 2, 1, "c2"));
    ScimFetchOptions o;
    o.base_url = "https://x/scim/v2";
    o.ext_schema = kExt;
    auto d = fetch_directory(http, o);
    ASSERT_TRUE(d.ok()) << d.error().message;
    EXPECT_EQ(d.value().users.size(), 2u);

    FakeHttp loop;
    loop.on("/Groups", 200, list_json({}, 0));
    loop.on("/Users", 200, list_json({user_json("u1", "alice", 20001)}, 2, 1, "same"));
    auto bad = fetch_directory(loop, o);
    ASSERT_FALSE(bad.ok());
    EXPECT_TRUE(bad.error().is(scim_source::Errc::Endless));
    EXPECT_NE(bad.error().message.find("repeated"), std::string::npos);
}

TEST(ScimFetch, MissingExtensionFailsTheSync)
{
    FakeHttp http;
    http.on("/Groups", 200, list_json({}, 0));
    http.on("/Users", 200, list_json({R"({"id":"1","userName":"alice"})"}, 1));
    ScimFetchOptions o;
    o.base_url = "https://x";
    o.ext_schema = kExt;
    auto d = fetch_directory(http, o);
    ASSERT_FALSE(d.ok());
    EXPECT_TRUE(d.error().is(scim_source::Errc::NoExtension));
    EXPECT_NE(d.error().message.find(std::string(kExt) + ":uidNumber"), std::string::npos);
}

TEST(ScimFetch, RetriesTransientThenGivesUp)
{
    FakeHttp http;
    http.on("/Users", 503, R"({"detail":"maintenance"})");
    std::vector<uint32_t> sleeps;
    ScimFetchOptions o;
    o.base_url = "https://x";
    o.ext_schema = kExt;
    o.retry.max_attempts = 3;
    o.sleep = [&](uint32_t ms) { sleeps.push_back(ms); };
    auto d = fetch_directory(http, o);
    ASSERT_FALSE(d.ok());
    EXPECT_EQ(http.requests.size(), 3u);
    EXPECT_EQ(sleeps, (std::vector<uint32_t>{500, 1000}));
    EXPECT_TRUE(d.error().is(scim_source::Errc::HttpStatus));
    EXPECT_NE(d.error().message.find("maintenance"), std::string::npos);

    FakeHttp denied;
    denied.on("/Users", 401, "");
    auto e = fetch_directory(denied, o);
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(denied.requests.size(), 1u);  // 401 is not retried
    EXPECT_NE(e.error().message.find("token"), std::string::npos);

    FakeHttp transport;
    transport.routes.emplace_back(
        "/Users", make_error(scim_source::Errc::ResponseTooLarge, "response larger than 10 MiB"));
    auto t = fetch_directory(transport, o);
    ASSERT_FALSE(t.ok());
    EXPECT_TRUE(t.error().is(scim_source::Errc::ResponseTooLarge));
    EXPECT_EQ(transport.requests.size(), 1u);  // the source's answer: not retried
    EXPECT_NE(t.error().message.find("10 MiB"), std::string::npos);

    FakeHttp down;
    down.routes.emplace_back("/Users", make_error("transport: connection refused"));
    auto r = fetch_directory(down, o);
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(r.error().is(scim_source::Errc::Transport));
    EXPECT_EQ(down.requests.size(), 3u);
}

TEST(RetryDecision, BackoffJitterRetryAfterAndLimits)
{
    RetryPolicy p;
    p.max_attempts = 10;
    p.base_delay_ms = 100;
    p.max_delay_ms = 1000;
    EXPECT_EQ(retry_decision(p, 1, 0, 0, 0).delay_ms, 100u);
    EXPECT_EQ(retry_decision(p, 2, 503, 0, 0).delay_ms, 200u);
    EXPECT_EQ(retry_decision(p, 8, 503, 0, 0).delay_ms, 1000u);
    EXPECT_EQ(retry_decision(p, 1, 503, 0, 999).delay_ms, 124u);  // +24.975 % jitter
    EXPECT_EQ(retry_decision(p, 1, 429, 7, 0).delay_ms, 7000u);
    EXPECT_EQ(retry_decision(p, 1, 429, 100000, 0).delay_ms, 600000u);  // capped at 10 min
    EXPECT_FALSE(retry_decision(p, 1, 404, 0, 0).retry);
    EXPECT_FALSE(retry_decision(p, 1, 401, 0, 0).retry);
    EXPECT_FALSE(retry_decision(p, 10, 503, 0, 0).retry);
    EXPECT_TRUE(retry_decision(p, 9, 503, 0, 0).retry);
}

TEST(ScimFetch, FetchUserByFilter)
{
    FakeHttp http;
    http.on("filter=userName%20eq%20%22alice%22", 200,
            list_json({user_json("1", "alice", 20001)}, 1));
    ScimFetchOptions o;
    o.base_url = "https://x";
    o.ext_schema = kExt;
    auto u = fetch_user(http, o, "alice");
    ASSERT_TRUE(u.ok());
    ASSERT_TRUE(u.value().has_value());
    EXPECT_EQ(*u.value()->uid, 20001);
    auto none = fetch_user(http, o, "x\"y");  // never reaches the server
    ASSERT_TRUE(none.ok());
    EXPECT_FALSE(none.value().has_value());
    EXPECT_EQ(http.requests.size(), 1u);
}

namespace {

// A source that never runs out: every page holds `per_page` new users and a
// fresh nextCursor (cursor mode) or claims ever more totalResults (index mode).
class EndlessSource : public HttpClient {
public:
    bool cursor = true;
    size_t per_page = 1;
    size_t pad = 0;  // bytes of padding in each user's displayName
    int64_t announced = 3;
    std::vector<std::string> requests;
    Result<HttpResponse> get(const std::string& url) override
    {
        requests.push_back(url);
        if (url.find("/Groups") != std::string::npos) return HttpResponse{200, list_json({}, 0), 0};
        std::vector<std::string> users;
        for (size_t i = 0; i < per_page; ++i) {
            const long n = long(requests.size() * 1000 + i);
            std::string u = user_json("u" + std::to_string(n), "u" + std::to_string(n), 20000 + n);
            if (pad) u.replace(u.find("\"displayName\":\"") + 15, 0, std::string(pad, 'x'));
            users.push_back(u);
        }
        const int64_t total = cursor ? announced : announced * long(requests.size());
        const std::string next = cursor ? "c" + std::to_string(requests.size()) : "";
        return HttpResponse{200, list_json(users, total, 1, next), 0};
    }
};

ScimFetchOptions endless_options()
{
    ScimFetchOptions o;
    o.base_url = "https://x";
    o.ext_schema = kExt;
    o.page_size = 1;
    return o;
}

}  // namespace

TEST(ScimFetchBounds, EndlessCursorStopsPastTotalResults)
{
    EndlessSource src;
    auto d = fetch_directory(src, endless_options());
    ASSERT_FALSE(d.ok());
    EXPECT_TRUE(d.error().is(scim_source::Errc::Endless)) << d.error().message;
    // 3 announced, one per page, 2 extra pages allowed: the 6th page stops it.
    EXPECT_EQ(src.requests.size(), 6u);
}

TEST(ScimFetchBounds, EndlessIndexListingStops)
{
    EndlessSource src;
    src.cursor = false;
    src.per_page = 2;
    src.announced = 4;  // and 4 more with every page
    auto o = endless_options();
    o.page_size = 2;
    auto d = fetch_directory(src, o);
    ASSERT_FALSE(d.ok());
    EXPECT_TRUE(d.error().is(scim_source::Errc::Endless)) << d.error().message;
    EXPECT_EQ(src.requests.size(), 5u);  // 2 pages announced + 2 extra, the 5th stops it
}

TEST(ScimFetchBounds, BytesPerResponseAndPerCycle)
{
    EndlessSource src;
    src.announced = 1000;
    src.pad = 100 * 1024;
    auto o = endless_options();
    o.max_cycle_bytes = 1u << 20;
    auto d = fetch_directory(src, o);
    ASSERT_FALSE(d.ok());
    EXPECT_TRUE(d.error().is(scim_source::Errc::CycleTooLarge)) << d.error().message;
    EXPECT_LE(src.requests.size(), 11u);

    EndlessSource big;
    big.pad = 200 * 1024;
    o.max_response_bytes = 100 * 1024;
    auto e = fetch_directory(big, o);
    ASSERT_FALSE(e.ok());
    EXPECT_TRUE(e.error().is(scim_source::Errc::ResponseTooLarge)) << e.error().message;
    EXPECT_EQ(big.requests.size(), 1u);
}

TEST(ScimFetchBounds, DeadlineStopsPagingAndRetries)
{
    EndlessSource src;
    src.announced = 1000000;
    uint64_t clock = 0;
    auto o = endless_options();
    o.now_ms = [&] { return clock += 100; };  // every look at the clock: 100 ms later
    o.deadline_ms = 1000;
    auto d = fetch_directory(src, o);
    ASSERT_FALSE(d.ok());
    EXPECT_TRUE(d.error().is(scim_source::Errc::DeadlinePassed)) << d.error().message;
    EXPECT_LT(src.requests.size(), 11u);

    // A retry whose back-off would end past the deadline is not slept.
    FakeHttp http;
    http.on("/Users", 503, R"({"detail":"maintenance"})");
    std::vector<uint32_t> sleeps;
    clock = 0;
    o.retry.base_delay_ms = 5000;
    o.sleep = [&](uint32_t ms) { sleeps.push_back(ms); };
    auto r = fetch_directory(http, o);
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(r.error().is(scim_source::Errc::HttpStatus));
    EXPECT_TRUE(sleeps.empty());
    EXPECT_EQ(http.requests.size(), 1u);
}

TEST(ScimValidate, ReservedNamesAndLocalAccountsAreRejectedAlone)
{
    auto d = parse_users(
        {user_json("1", "alice", 20001), user_json("2", "root", 20002),
         user_json("3", "daemon", 20003), user_json("4", "localbob", 20004),
         user_json("5", "takesuid", 20050), user_json("6", "carol", 20006)},
        {group_json("g1", "sudo", 30001, {"1"}), group_json("g2", "team-a", 30002, {"1", "6"}),
         group_json("g3", "labgroup", 30003, {"1"}), group_json("g4", "takesgid", 30050, {"1"})});
    IdentityConfig c = identity_config();
    const auto rules = identity_rules(
        c, parse_local_identities("localbob:x:20050:20050::/home/localbob:/bin/bash\n",
                                  "labgroup:x:30050:\n"));
    auto v = validate_directory(d, rules);
    using E = identity::Errc;
    ASSERT_EQ(v.users.size(), 2u);
    EXPECT_EQ(v.users[0].name, "alice");
    EXPECT_EQ(v.users[1].name, "carol");
    EXPECT_TRUE(rejected_as(v, "root", E::ReservedName));
    EXPECT_TRUE(rejected_as(v, "daemon", E::ReservedName));
    EXPECT_TRUE(rejected_as(v, "localbob", E::ReservedName));
    EXPECT_TRUE(rejected_as(v, "takesuid", E::ReservedId));
    ASSERT_EQ(v.groups.size(), 1u);
    EXPECT_EQ(v.groups[0].name, "team-a");
    EXPECT_TRUE(rejected_as(v, "sudo", E::ReservedName));
    EXPECT_TRUE(rejected_as(v, "labgroup", E::ReservedName));
    EXPECT_TRUE(rejected_as(v, "takesgid", E::ReservedId));
}

TEST(ScimValidate, OversizedRecordsAreRejectedAlone)
{
    std::string keys = "[";
    for (int i = 0; i < 1100; ++i) keys += (i ? ",\"" : "\"") + kEd25519 + "\"";
    keys += "]";
    auto d = parse_users({user_json("1", "alice", 20001),
                          user_json("2", "longhome", 20002, "/home/" + std::string(5000, 'h')),
                          user_json("3", "manykeys", 20003, "", "/bin/bash", keys),
                          user_json("4", "bob", 20004)});
    auto v = validate_directory(d, identity_config());
    ASSERT_EQ(v.users.size(), 2u);
    EXPECT_EQ(v.users[0].name, "alice");
    EXPECT_EQ(v.users[1].name, "bob");
    EXPECT_TRUE(rejected_as(v, "longhome", identity::Errc::InvalidHome));
    EXPECT_TRUE(rejected_as(v, "manykeys", identity::Errc::TooManySshKeys));
}

namespace {

// One CoreWeave-dialect user as CoreWeave's user extension carries it.
std::string coreweave_user(const std::string& id, const std::string& name, long uid)
{
    return R"({"id":")" + id + R"(","userName":")" + name + R"(","active":true,")" +
           kCoreWeaveUserExtension + R"(":{"uidNumber":)" + std::to_string(uid) +
           R"(,"gidNumber":)" + std::to_string(uid) + R"(,"homeDirectory":"/home/)" + name +
           R"(","loginShell":"/bin/bash","sunkSshKeys":[")" + kEd25519 + R"("]}})";
}

IdentityConfig coreweave_identity()
{
    IdentityConfig id = identity_config();
    id.dialect = "coreweave";
    return id;
}

}  // namespace

TEST(ScimAttributes, AllotPresetIsTodaysPaths)
{
    const ScimAttributeMap m = scim_attribute_map(identity_config());
    EXPECT_EQ(m.user_name, "userName");
    EXPECT_EQ(m.uid, std::string(kExt) + ":uidNumber");
    EXPECT_EQ(m.ssh_keys, std::string(kExt) + ":sshPublicKeys");
    EXPECT_FALSE(m.members_by_display);
}

TEST(ScimAttributes, CoreWeaveDialectReadsItsExtension)
{
    const ScimAttributeMap m = scim_attribute_map(coreweave_identity());
    auto p = parse_user_page(list_json({coreweave_user("1", "alice", 20001)}, 1), m);
    ASSERT_TRUE(p.ok()) << p.error().message;
    const scim::User& u = p.value().resources.at(0);
    EXPECT_TRUE(u.has_extension);
    EXPECT_EQ(u.uid, 20001);
    EXPECT_EQ(u.gid, 20001);
    EXPECT_EQ(u.home, "/home/alice");
    EXPECT_EQ(u.shell, "/bin/bash");
    ASSERT_EQ(u.ssh_keys.size(), 1u);
    // The allot preset finds nothing in the same record.
    auto q = parse_user_page(list_json({coreweave_user("1", "alice", 20001)}, 1), kExt);
    ASSERT_TRUE(q.ok());
    EXPECT_FALSE(q.value().resources.at(0).uid.has_value());
}

TEST(ScimAttributes, PerFieldOverridesAndCoreAttributes)
{
    IdentityConfig id = identity_config();
    id.attributes["uid"] = "urn:example:Posix:uid";
    id.attributes["user_name"] = "urn:example:Posix:login";
    id.attributes["shell"] = "shell";  // a core attribute
    const ScimAttributeMap m = scim_attribute_map(id);
    const std::string body =
        list_json({R"({"id":"1","userName":"alice@example.org","shell":"/bin/zsh",)"
                   R"("urn:example:Posix":{"uid":20007,"login":"alice"},)"
                   R"(")" +
                   std::string(kExt) + R"(":{"gidNumber":20007,"homeDirectory":"/home/alice"}})"},
                  1);
    auto p = parse_user_page(body, m);
    ASSERT_TRUE(p.ok()) << p.error().message;
    const scim::User& u = p.value().resources.at(0);
    EXPECT_EQ(u.user_name, "alice");
    EXPECT_EQ(u.uid, 20007);
    EXPECT_EQ(u.gid, 20007);
    EXPECT_EQ(u.shell, "/bin/zsh");
    EXPECT_EQ(user_attribute_request(m),
              "userName,displayName,active,urn:example:Posix," + std::string(kExt) + ",shell");
}

TEST(ScimAttributes, WrongTypeAtAMappedPathRejectsTheUser)
{
    const ScimAttributeMap m = scim_attribute_map(coreweave_identity());
    const std::string bad = R"({"id":"1","userName":"alice",")" +
                            std::string(kCoreWeaveUserExtension) + R"(":{"uidNumber":"x"}})";
    ScimDirectory d;
    d.users = parse_user_page(list_json({bad}, 1), m).value().resources;
    auto v = validate_directory(d, coreweave_identity());
    EXPECT_TRUE(v.users.empty());
    EXPECT_TRUE(rejected_as(v, "alice", identity::Errc::WrongType));
}

TEST(ScimAttributes, UserWithoutMappedUidIsRejectedByName)
{
    FakeHttp http;
    http.on("/Groups", 200, list_json({}, 0));
    http.on("/Users", 200,
            list_json({coreweave_user("1", "alice", 20001),
                       R"({"id":"2","userName":"bob",")" + std::string(kCoreWeaveUserExtension) +
                           R"(":{"homeDirectory":"/home/bob"}})"},
                      2));
    ScimFetchOptions o;
    o.base_url = "https://x";
    o.attributes = scim_attribute_map(coreweave_identity());
    auto d = fetch_directory(http, o);
    ASSERT_TRUE(d.ok()) << d.error().message;
    // The extension was asked for by name.
    EXPECT_NE(http.requests.at(0).find("urn%3Acoreweave%3Aparams"), std::string::npos);
    auto v = validate_directory(d.value(), coreweave_identity());
    ASSERT_EQ(v.users.size(), 1u);
    EXPECT_EQ(v.users[0].name, "alice");
    bool bob_rejected = false;
    for (const auto& r : v.rejections) bob_rejected |= r.object == "bob" && r.kind == "user";
    EXPECT_TRUE(bob_rejected);
}

TEST(ScimAttributes, NoUserWithTheUidPathFailsNamingThePath)
{
    FakeHttp http;
    http.on("/Groups", 200, list_json({}, 0));
    http.on("/Users", 200, list_json({user_json("1", "alice", 20001)}, 1));  // allot-shaped
    ScimFetchOptions o;
    o.base_url = "https://x";
    o.attributes = scim_attribute_map(coreweave_identity());
    auto d = fetch_directory(http, o);
    ASSERT_FALSE(d.ok());
    EXPECT_TRUE(d.error().is(scim_source::Errc::NoExtension));
    EXPECT_NE(d.error().message.find(std::string(kCoreWeaveUserExtension) + ":uidNumber"),
              std::string::npos);
}

TEST(ScimAttributes, MembersByDisplayResolveToUsers)
{
    FakeHttp http;
    http.on("/Groups", 200,
            list_json({R"({"id":"g1","displayName":"team","gidNumber":30001,)"
                       R"("members":[{"display":"alice"},{"display":"carol"}]})"},
                      1));
    http.on("/Users", 200, list_json({user_json("u1", "alice", 20001)}, 1));
    IdentityConfig id = identity_config();
    id.attributes["members"] = "display";
    ScimFetchOptions o;
    o.base_url = "https://x";
    o.attributes = scim_attribute_map(id);
    auto d = fetch_directory(http, o);
    ASSERT_TRUE(d.ok()) << d.error().message;
    auto v = validate_directory(d.value(), id);
    ASSERT_EQ(v.groups.size(), 1u);
    EXPECT_EQ(v.groups[0].members, (std::vector<std::string>{"alice"}));
    EXPECT_TRUE(rejected_as(v, "team", identity::Errc::UnknownMember));  // carol
}

TEST(ScimReadOnly, ShortPagesAndAnOrgScopedBase)
{
    // Two items per page although 500 were asked, `attributes` ignored (extra
    // core attributes come back), under /api/organizations/<org>/scim/v2.
    struct ShortPager : HttpClient {
        std::vector<std::string> urls;
        Result<HttpResponse> get(const std::string& url) override
        {
            urls.push_back(url);
            if (url.find("/api/organizations/acme/scim/v2/Groups") != std::string::npos)
                return HttpResponse{200, list_json({}, 0), 0};
            std::vector<std::string> all;
            for (int i = 1; i <= 5; ++i)
                all.push_back(
                    user_json("u" + std::to_string(i), "user" + std::to_string(i), 20000 + i));
            const size_t at = url.find("startIndex=");
            const size_t start = at == std::string::npos ? 1 : std::stoul(url.substr(at + 11));
            std::vector<std::string> page;
            for (size_t i = start; i < start + 2 && i <= all.size(); ++i)
                page.push_back(all[i - 1]);
            return HttpResponse{200, list_json(page, 5, long(start)), 0};
        }
    } http;
    ScimFetchOptions o;
    o.base_url = "https://pw.example/api/organizations/acme/scim/v2";
    o.ext_schema = kExt;
    auto d = fetch_directory(http, o);
    ASSERT_TRUE(d.ok()) << d.error().message;
    EXPECT_EQ(d.value().users.size(), 5u);
    EXPECT_EQ(http.urls.size(), 4u);  // 3 user pages, 1 group page
}

TEST(ScimReadOnly, EmptyPageBeforeTotalResultsIsTruncation)
{
    FakeHttp http;
    http.on("/Groups", 200, list_json({}, 0));
    http.on("startIndex=3", 200, list_json({}, 10, 3));
    http.on("startIndex=1", 200,
            list_json({user_json("u1", "alice", 20001), user_json("u2", "bob", 20002)}, 10, 1));
    ScimFetchOptions o;
    o.base_url = "https://x";
    o.ext_schema = kExt;
    auto d = fetch_directory(http, o);
    ASSERT_FALSE(d.ok());
    EXPECT_TRUE(d.error().is(scim_source::Errc::Truncated));
    EXPECT_NE(d.error().message.find("totalResults=10"), std::string::npos);
}

TEST(ScimAttributes, ConfigDialectAndOverrides)
{
    auto load = parse_config(
        "identity:\n  dialect: coreweave\n  attributes:\n    shell: urn:example:X:shell\n"
        "    members: display\n",
        "t.yaml");
    ASSERT_TRUE(load.ok());
    const ScimAttributeMap m = scim_attribute_map(load.config->identity);
    EXPECT_EQ(m.uid, std::string(kCoreWeaveUserExtension) + ":uidNumber");
    EXPECT_EQ(m.shell, "urn:example:X:shell");
    EXPECT_TRUE(m.members_by_display);

    EXPECT_FALSE(parse_config("identity:\n  dialect: okta\n", "t.yaml").ok());
    EXPECT_FALSE(parse_config("identity:\n  attributes:\n    members: id\n", "t.yaml").ok());
    EXPECT_FALSE(parse_config("identity:\n  attributes:\n    uid: \"urn:x:\"\n", "t.yaml").ok());
    EXPECT_FALSE(parse_config("identity:\n  attributes:\n    email: emails\n", "t.yaml").ok());
    // The default is allot's preset.
    auto plain = parse_config("", "t.yaml");
    ASSERT_TRUE(plain.ok());
    EXPECT_EQ(scim_attribute_map(plain.config->identity).uid, std::string(kExt) + ":uidNumber");
}

TEST(ScimReadOnly, CursorListingEndingEmptyBeforeTotalResultsIsTruncation)
{
    FakeHttp http;
    http.on("/Groups", 200, list_json({}, 0));
    http.on("cursor=c2", 200, list_json({}, 5));
    http.on("startIndex=1", 200, list_json({user_json("u1", "alice", 20001)}, 5, 1, "c2"));
    ScimFetchOptions o;
    o.base_url = "https://x";
    o.ext_schema = kExt;
    auto d = fetch_directory(http, o);
    ASSERT_FALSE(d.ok());
    EXPECT_TRUE(d.error().is(scim_source::Errc::Truncated));
}

TEST(ScimReadOnly, CursorListingEndingOnAShortPageBeforeTotalResultsIsTruncation)
{
    FakeHttp http;
    http.on("/Groups", 200, list_json({}, 0));
    // The last page (no nextCursor) has one user of the three still announced.
    http.on("cursor=c2", 200, list_json({user_json("u2", "bob", 20002)}, 5));
    http.on("startIndex=1", 200, list_json({user_json("u1", "alice", 20001)}, 5, 1, "c2"));
    ScimFetchOptions o;
    o.base_url = "https://x";
    o.ext_schema = kExt;
    auto d = fetch_directory(http, o);
    ASSERT_FALSE(d.ok());
    EXPECT_TRUE(d.error().is(scim_source::Errc::Truncated));
    // The same short last page is the end when it completes totalResults.
    FakeHttp whole;
    whole.on("/Groups", 200, list_json({}, 0));
    whole.on("cursor=c2", 200, list_json({user_json("u2", "bob", 20002)}, 2));
    whole.on("startIndex=1", 200, list_json({user_json("u1", "alice", 20001)}, 2, 1, "c2"));
    auto ok = fetch_directory(whole, o);
    ASSERT_TRUE(ok.ok()) << ok.error().message;
    EXPECT_EQ(ok.value().users.size(), 2u);
}
