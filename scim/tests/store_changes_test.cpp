// store_changes_test.cpp - StoreChanges against a real SQLite store in WAL
// mode: every commit, by this handle or another one (the CLI), is seen; reads
// and an idle store are not; without the file it always answers "changed".
#include <gtest/gtest.h>
#include <sqlite3.h>

#include "store_changes.hpp"
#include "test_util.hpp"

using namespace allot;
using namespace allot::scimd;

namespace {

// Runs SQL on a connection of its own, as another program would.
void run_sql(const std::string& db, const char* sql)
{
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open_v2(db.c_str(), &raw, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
    EXPECT_EQ(sqlite3_exec(raw, sql, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(raw);
    sqlite3_close_v2(raw);
}

TEST(StoreChanges, WithoutTheStoreEveryCallIsAChange)
{
    test::ScratchDir dir;
    StoreChanges changes(dir.file("missing.db"));
    EXPECT_FALSE(changes.watching());
    EXPECT_TRUE(changes.changed());
    EXPECT_TRUE(changes.changed());
}

TEST(StoreChanges, SeesEveryCommitAndNothingElse)
{
    test::ScratchDir dir;
    auto store = test::open_test_store(dir);
    const std::string db = dir.file("d.db");
    StoreChanges changes(db);
    ASSERT_TRUE(changes.watching());
    EXPECT_TRUE(changes.changed());  // the first call
    EXPECT_FALSE(changes.changed());

    ASSERT_TRUE(store->list_users(ListQuery{}));
    ASSERT_TRUE(store->generation());
    EXPECT_FALSE(changes.changed()) << "a read is no change";

    ASSERT_TRUE(store->create_user(test::user("alice")));
    EXPECT_TRUE(changes.changed()) << "a commit of this handle";
    EXPECT_FALSE(changes.changed());

    auto other = test::open_test_store(dir);  // as the CLI does
    ASSERT_TRUE(other->create_token("ci", {"scim:read"}, 0, std::string(64, 'a')));
    EXPECT_TRUE(changes.changed()) << "a commit of another handle";
    ASSERT_TRUE(other->revoke_token("ci"));
    EXPECT_TRUE(changes.changed()) << "a revocation";
    EXPECT_FALSE(changes.changed());

    // A checkpoint that empties the WAL, then a write that starts it again.
    run_sql(db, "PRAGMA wal_checkpoint(TRUNCATE)");
    ASSERT_TRUE(store->create_user(test::user("bob")));
    EXPECT_TRUE(changes.changed()) << "a commit after the WAL restarted";
}

// Every other connection closes (the last one would normally remove "-shm");
// the mapping stays valid and the next writer's commit is still seen.
TEST(StoreChanges, OutlivesEveryOtherConnection)
{
    test::ScratchDir dir;
    const std::string db = dir.file("d.db");
    test::open_test_store(dir).reset();
    StoreChanges changes(db);
    ASSERT_TRUE(changes.watching());
    EXPECT_TRUE(changes.changed());
    EXPECT_FALSE(changes.changed());
    {
        auto store = test::open_test_store(dir);
        ASSERT_TRUE(store->create_user(test::user("carol")));
    }
    EXPECT_TRUE(changes.changed());
    EXPECT_FALSE(changes.changed());
}

}  // namespace
