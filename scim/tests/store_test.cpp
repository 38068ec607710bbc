// store_test.cpp - the SQLite directory store: id allocation (never reused,
// never changed), uniqueness, memberships, filters compiled to SQL (including
// injection attempts), index and cursor paging, API tokens, migrations.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <set>

#include "store.hpp"
#include "test_util.hpp"

using namespace allot;
using namespace allot::scimd;

namespace {

class StoreTest : public ::testing::Test {
protected:
    void SetUp() override { reopen(); }
    void reopen()
    {
        store.reset();
        std::string err;
        store = open_sqlite_store(dir.file("dir.db"), range, scim::kDefaultPosixUser, &err);
        ASSERT_TRUE(store) << err;
    }
    scim::User user(const std::string& name) { return test::user(name); }
    scim::User add(const std::string& name)
    {
        auto r = store->create_user(user(name));
        EXPECT_TRUE(r) << r.error().message;
        return r.value();
    }
    std::vector<std::string> names(const char* filter)
    {
        auto f = parse_filter(filter);
        EXPECT_TRUE(f) << filter;
        ListQuery q;
        q.filter = f.value().get();
        auto page = store->list_users(q);
        if (!page)
            return {"ERR " + std::string(http_class(page.error()).scim_type) + ": " +
                    page.error().message};
        std::vector<std::string> out;
        for (auto& u : page.value().items) out.push_back(u.user_name);
        return out;
    }

    test::ScratchDir dir;
    IdRange range{10000, 10009, 20000, 20009};
    std::unique_ptr<DirectoryStore> store;
};

}  // namespace

TEST_F(StoreTest, AllocatesIdsOnceAndNeverReuses)
{
    auto a = add("alice");
    EXPECT_EQ(a.uid, 10000);
    EXPECT_EQ(a.gid, 20000);  // private group id from the gid sequence
    EXPECT_EQ(a.version, 1);
    EXPECT_EQ(a.id.size(), 36u);
    auto b = add("bob");
    EXPECT_EQ(b.uid, 10001);
    ASSERT_TRUE(store->delete_user(b.id));
    // Recreating the same name gets a new uid: quotas are accounted by UID.
    auto b2 = add("bob");
    EXPECT_EQ(b2.uid, 10002);
    // The freed number cannot be claimed explicitly either.
    scim::User c = user("carol");
    c.uid = 10001;
    auto rc = store->create_user(c);
    ASSERT_FALSE(rc);
    EXPECT_TRUE(rc.error().is(scimd::Errc::Uniqueness));
    // Survives a restart (the ledger is in the file).
    reopen();
    EXPECT_EQ(add("dave").uid, 10003);
    // Explicit, never-used, in range: accepted; the sequence skips it later.
    c.uid = 10004;
    ASSERT_TRUE(store->create_user(c));
    EXPECT_EQ(add("erin").uid, 10005);
    // Out of range.
    scim::User x = user("xavier");
    x.uid = 5;
    EXPECT_TRUE(store->create_user(x).error().is(scimd::Errc::InvalidValue));
    // Exhaustion is an error, not a wrap-around.
    for (const char* n : {"f1", "f2", "f3", "f4"}) add(n);
    auto full = store->create_user(user("late"));
    ASSERT_FALSE(full);
    EXPECT_TRUE(full.error().is(scimd::Errc::Exhausted));
}

TEST_F(StoreTest, UpdatesNeverChangeIds)
{
    auto a = add("alice");
    scim::User next = a;
    next.uid = *a.uid + 1;
    auto r = store->replace_user(a.id, next, 0);
    ASSERT_FALSE(r);
    EXPECT_TRUE(r.error().is(scimd::Errc::Mutability));
    next.uid.reset();  // "keep"
    next.gid.reset();
    next.shell = "/bin/zsh";
    auto ok = store->replace_user(a.id, next, a.version);
    ASSERT_TRUE(ok);
    EXPECT_EQ(ok.value().uid, a.uid);
    EXPECT_EQ(ok.value().gid, a.gid);
    EXPECT_EQ(ok.value().version, 2);
    // Stale version → 412.
    EXPECT_TRUE(store->replace_user(a.id, next, 1).error().is(scimd::Errc::VersionMismatch));
    // Rename onto an existing name → 409.
    add("bob");
    next.user_name = "bob";
    EXPECT_TRUE(store->replace_user(a.id, next, 0).error().is(scimd::Errc::Uniqueness));
    EXPECT_TRUE(store->replace_user("nope", next, 0).error().is(scimd::Errc::NotFound));
    EXPECT_TRUE(store->create_user(user("alice")).error().is(scimd::Errc::Uniqueness));
}

TEST_F(StoreTest, GroupsAndMembers)
{
    auto a = add("alice");
    auto b = add("bob");
    scim::Group g;
    g.display_name = "team-a";
    g.members = {{b.id, "User", ""}, {a.id, "User", ""}, {a.id, "User", ""}};
    auto made = store->create_group(g);
    ASSERT_TRUE(made) << made.error().message;
    EXPECT_EQ(made.value().gid, 20002);  // after the two private gids
    ASSERT_EQ(made.value().members.size(), 2u);
    EXPECT_EQ(made.value().members[0].display, "alice");  // sorted by userName
    auto alice = store->get_user(a.id);
    ASSERT_EQ(alice.value().groups.size(), 1u);
    EXPECT_EQ(alice.value().groups[0].name, "team-a");
    // Unknown member ids are refused and nothing changes.
    scim::Group bad = made.value();
    bad.members.push_back({"no-such-user", "User", ""});
    EXPECT_TRUE(
        store->replace_group(made.value().id, bad, 0).error().is(scimd::Errc::InvalidValue));
    EXPECT_EQ(store->get_group(made.value().id).value().members.size(), 2u);
    // Deleting a user removes the membership.
    ASSERT_TRUE(store->delete_user(b.id));
    EXPECT_EQ(store->get_group(made.value().id).value().members.size(), 1u);
    // A group's gid is never reused either.
    ASSERT_TRUE(store->delete_group(made.value().id));
    scim::Group again;
    again.display_name = "team-a";
    EXPECT_EQ(store->create_group(again).value().gid, 20003);
    again.gid = 20002;
    again.display_name = "team-b";
    EXPECT_TRUE(store->create_group(again).error().is(scimd::Errc::Uniqueness));
}

TEST_F(StoreTest, FiltersCompileToSql)
{
    for (const char* n : {"alice", "bob", "carol", "dave"}) add(n);
    scim::User e = user("erin");
    e.active = false;
    e.emails = {{"erin@Example.org", "work", true}};
    e.ssh_keys = {"ssh-ed25519 AAAAerin"};
    ASSERT_TRUE(store->create_user(e));
    scim::Group g;
    g.display_name = "team-a";
    g.members = {{store->get_user_by_name("bob").value().id, "User", ""}};
    ASSERT_TRUE(store->create_group(g));

    using V = std::vector<std::string>;
    EXPECT_EQ(names(R"(userName eq "alice")"), V{"alice"});
    EXPECT_EQ(names(R"(USERNAME EQ "alice")"), V{"alice"});
    EXPECT_EQ(names(R"(userName ne "alice")"), (V{"bob", "carol", "dave", "erin"}));
    EXPECT_EQ(names(R"(userName co "a")"), (V{"alice", "carol", "dave"}));
    EXPECT_EQ(names(R"(userName sw "ca")"), V{"carol"});
    EXPECT_EQ(names(R"(userName ew "ve")"), V{"dave"});
    EXPECT_EQ(names(R"(userName gt "carol")"), (V{"dave", "erin"}));
    EXPECT_EQ(names("uidNumber ge 10003"), (V{"dave", "erin"}));
    EXPECT_EQ(names("uidNumber lt 10001 or uidNumber le 10001 and userName eq \"bob\""),
              (V{"alice", "bob"}));
    EXPECT_EQ(
        names("urn:ietf:params:scim:schemas:extension:allot:2.0:PosixUser:uidNumber eq 10002"),
        V{"carol"});
    EXPECT_EQ(names("active eq false"), V{"erin"});
    EXPECT_EQ(names("not (active eq true)"), V{"erin"});
    // SUNK's nsscache example quotes the boolean: the strings name the booleans.
    EXPECT_EQ(names(R"(active eq "true")"), (V{"alice", "bob", "carol", "dave"}));
    EXPECT_EQ(names(R"(active eq "FALSE")"), V{"erin"});
    EXPECT_EQ(names(R"(active ne "true")"), V{"erin"});
    EXPECT_EQ(names(R"(emails[primary eq "true"])"), V{"erin"});
    EXPECT_EQ(names(R"(active eq "yes")")[0].substr(0, 17), "ERR invalidFilter");
    EXPECT_EQ(names(R"(active gt "true")")[0].substr(0, 17), "ERR invalidFilter");
    // Negation is pushed to the leaves (De Morgan) with the same meaning; a
    // missing attribute (NULL) counts as false under `not`.
    EXPECT_EQ(names(R"(not (active eq true or userName eq "erin"))"), V{});
    EXPECT_EQ(names(R"(not (active eq true and userName ne "erin"))"), V{"erin"});
    EXPECT_EQ(names(R"(not (not (userName eq "bob")))"), V{"bob"});
    EXPECT_EQ(names("not (emails pr)").size(), 4u);
    EXPECT_EQ(names("emails pr"), V{"erin"});
    EXPECT_EQ(names(R"(emails[type eq "work" and value co "@Example"])"), V{"erin"});
    EXPECT_EQ(names(R"(emails.value sw "erin")"), V{"erin"});
    EXPECT_EQ(names(R"(sshPublicKeys co "AAAAerin")"), V{"erin"});
    EXPECT_EQ(names(R"(groups.display eq "team-a")"), V{"bob"});
    EXPECT_EQ(names(R"(meta.created gt "2000-01-01T00:00:00Z")").size(), 5u);
    EXPECT_EQ(names("externalId eq null").size(), 0u);  // stored as '' not NULL
    // Type errors and unknown attributes are invalidFilter, not 500s.
    EXPECT_EQ(names(R"(uidNumber eq "10000")")[0].substr(0, 17), "ERR invalidFilter");
    EXPECT_EQ(names(R"(userName gt 5)")[0].substr(0, 17), "ERR invalidFilter");
    EXPECT_EQ(names(R"(password eq "x")")[0].substr(0, 17), "ERR invalidFilter");
    EXPECT_EQ(names(R"(active co "t")")[0].substr(0, 17), "ERR invalidFilter");
    EXPECT_EQ(names(R"(urn:x:y:userName eq "alice")")[0].substr(0, 17), "ERR invalidFilter");
}

TEST_F(StoreTest, SqlInjectionThroughFiltersIsInert)
{
    add("alice");
    add("bob");
    for (const char* evil :
         {R"(userName eq "x' OR '1'='1")", R"(userName eq "alice\"; DROP TABLE users; --")",
          R"(userName co "%")", R"(userName co "_")", R"(userName sw "' OR 1=1 --")",
          R"(emails[value eq "') OR 1=1 --"])",
          R"(userName eq "\u0027 or \u00271\u0027=\u00271")"}) {
        auto got = names(evil);
        EXPECT_TRUE(got.empty()) << evil << " -> " << (got.empty() ? "" : got[0]);
    }
    // Still intact.
    EXPECT_EQ(names("uidNumber pr").size(), 2u);
}

TEST_F(StoreTest, IndexAndCursorPaging)
{
    range = IdRange{10000, 20000, 20000, 30000};
    reopen();
    std::set<std::string> all;
    for (int i = 0; i < 25; ++i) {
        char n[8];
        snprintf(n, sizeof n, "u%02d", (i * 7) % 25);
        add(n);
        all.insert(n);
    }
    ListQuery q;
    q.count = 10;
    q.start_index = 21;
    auto page = store->list_users(q);
    ASSERT_TRUE(page);
    EXPECT_EQ(page.value().total, 25u);
    ASSERT_EQ(page.value().items.size(), 5u);
    EXPECT_EQ(page.value().items[0].user_name, "u20");
    // Cursor pages: every user once, in order, across pages.
    std::vector<std::string> seen;
    q.cursor = "";
    for (int pages = 0; pages < 10; ++pages) {
        auto p = store->list_users(q);
        ASSERT_TRUE(p);
        for (auto& u : p.value().items) seen.push_back(u.user_name);
        if (p.value().next_cursor.empty()) break;
        q.cursor = p.value().next_cursor;
    }
    EXPECT_EQ(seen, std::vector<std::string>(all.begin(), all.end()));
    q.order = SortOrder::Descending;
    q.cursor = "";
    EXPECT_EQ(store->list_users(q).value().items[0].user_name, "u24");
    q.cursor = "not-a-cursor";
    EXPECT_TRUE(store->list_users(q).error().is(scimd::Errc::InvalidCursor));
    q.cursor.reset();
    q.count = 0;
    EXPECT_TRUE(store->list_users(q).value().items.empty());
}

TEST_F(StoreTest, ApiTokens)
{
    auto t = store->create_token("syncd", {"scim:read"}, 0, "hash1");
    ASSERT_TRUE(t);
    EXPECT_EQ(store->find_token("hash1").value().name, "syncd");
    EXPECT_EQ(store->find_token("hash1").value().scopes, std::vector<std::string>{"scim:read"});
    EXPECT_FALSE(store->find_token("hash2"));
    EXPECT_TRUE(store->create_token("syncd", {}, 0, "hash3").error().is(scimd::Errc::Uniqueness));
    ASSERT_TRUE(store->revoke_token("syncd"));
    EXPECT_TRUE(store->find_token("hash1").value().revoked);
    EXPECT_TRUE(store->revoke_token("nope").error().is(scimd::Errc::NotFound));
}

TEST_F(StoreTest, RefusesNewerSchemaAndUsesWal)
{
    store.reset();
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(dir.file("dir.db").c_str(), &db), SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, nullptr);
    ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
    EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)), "wal");
    sqlite3_finalize(st);
    sqlite3_exec(db, "PRAGMA user_version = 99", nullptr, nullptr, nullptr);
    sqlite3_close(db);
    std::string err;
    EXPECT_FALSE(open_sqlite_store(dir.file("dir.db"), range, scim::kDefaultPosixUser, &err));
    EXPECT_NE(err.find("newer"), std::string::npos) << err;
}
