// sync_engine_test.cpp - the sync cycle's safety rules with fake SCIM source,
// accounting store, resolver and cache publisher.
#include <gtest/gtest.h>

#include "sync_engine.hpp"
#include "sync_fakes.hpp"

using namespace allot;
using namespace allot::synctest;

namespace {

Config config()
{
    Config c;
    c.tiers.general.qos = "general";
    c.tiers.spot.qos = "spot";
    TeamConfig a;
    a.group = "team-a";
    a.account = "team-a";
    a.gpus = 4;
    c.teams = {a};
    c.identity.uid_min = 10000;
    c.identity.gid_min = 10000;
    return c;
}

ScimDirectory source(int users, bool with_group = true)
{
    ScimDirectory d;
    std::vector<std::string> json;
    for (int i = 0; i < users; ++i)
        json.push_back(user_json("u" + std::to_string(i), "user" + std::to_string(i), 20000 + i));
    d.users = parse_user_page(list_json(json, json.size()), kExt).value().resources;
    if (with_group) {
        std::vector<std::string> ids;
        for (int i = 0; i < users; i += 2) ids.push_back("u" + std::to_string(i));
        d.groups = parse_group_page(list_json({group_json("g", "team-a", 30000, ids)}, 1), kExt)
                       .value()
                       .resources;
    }
    return d;
}

struct Rig {
    Config cfg = config();
    FakeSource src;
    FakeStore store;
    FakeResolver resolver;
    FakeCaches caches;
    SyncOptions opt;
    SyncReport run() { return run_sync(cfg, src, &store, resolver, &caches, opt); }
};

}  // namespace

TEST(SyncCycle, FirstRunCreatesSecondRunIsNoOp)
{
    Rig r;
    r.src.answer = source(6);
    auto rep = r.run();
    ASSERT_EQ(rep.status, SyncStatus::Ok) << rep.message;
    EXPECT_TRUE(rep.caches_published);
    EXPECT_TRUE(rep.accounting_applied);
    EXPECT_GT(rep.applied.applied, 10u);
    EXPECT_EQ(r.store.state.users.size(), 6u);
    auto again = r.run();
    EXPECT_EQ(again.status, SyncStatus::Ok);
    EXPECT_TRUE(again.plan.empty());
    EXPECT_EQ(r.store.applies, 1);  // nothing to write, nothing written
}

TEST(SyncCycle, SourceOutageKeepsCachesAndWritesNothing)
{
    Rig r;
    r.src.answer = make_error("connection refused");
    auto rep = r.run();
    EXPECT_EQ(rep.status, SyncStatus::SourceError);
    EXPECT_EQ(r.caches.published, 0);
    EXPECT_EQ(r.store.applies, 0);
    EXPECT_NE(rep.message.find("last good"), std::string::npos);
}

TEST(SyncCycle, EmptySourceRefusedUnlessForced)
{
    Rig r;
    r.src.answer = source(0);
    auto rep = r.run();
    EXPECT_EQ(rep.status, SyncStatus::Refused);
    EXPECT_EQ(r.caches.published, 0);
    EXPECT_EQ(r.store.applies, 0);
    r.src.answer = source(3, false);  // users but no groups
    EXPECT_EQ(r.run().status, SyncStatus::Refused);
    r.opt.force = true;
    EXPECT_EQ(r.run().status, SyncStatus::Ok);
}

TEST(SyncCycle, AllRecordsInvalidCountsAsEmpty)
{
    Rig r;
    ScimDirectory d;
    d.users = parse_user_page(list_json({user_json("1", "root", 0)}, 1), kExt).value().resources;
    d.groups = source(2).groups;
    r.src.answer = d;
    auto rep = r.run();
    EXPECT_EQ(rep.status, SyncStatus::Refused);
    EXPECT_EQ(rep.directory.rejections.at(0).object, "root");
}

TEST(SyncCycle, RemovalLimit)
{
    Rig r;
    r.src.answer = source(20);
    ASSERT_EQ(r.run().status, SyncStatus::Ok);
    r.opt.max_removals = 5;
    r.src.answer = source(4);
    const int published = r.caches.published;
    auto rep = r.run();
    EXPECT_EQ(rep.status, SyncStatus::Refused);
    EXPECT_NE(rep.message.find("max_removals"), std::string::npos);
    EXPECT_EQ(r.store.state.users.size(), 20u);
    EXPECT_EQ(r.store.applies, 1);
    EXPECT_EQ(r.caches.published, published);  // the shrink reached no cache either
    r.opt.force = true;
    EXPECT_EQ(r.run().status, SyncStatus::Ok);
    EXPECT_EQ(r.store.state.users.size(), 4u);
}

TEST(SyncCycle, PlanOnlyWritesNothing)
{
    Rig r;
    r.opt.plan_only = true;
    r.src.answer = source(4);
    auto rep = r.run();
    EXPECT_EQ(rep.status, SyncStatus::Ok);
    EXPECT_FALSE(rep.plan.empty());
    EXPECT_EQ(r.store.applies, 0);
    EXPECT_EQ(r.caches.published, 0);
    EXPECT_TRUE(r.store.state.users.empty());
}

TEST(SyncCycle, UnresolvedUsersHeldUntilTheyResolve)
{
    Rig r;
    r.src.answer = source(4);
    r.resolver.missing = {"user2"};
    auto rep = r.run();
    EXPECT_EQ(rep.status, SyncStatus::Ok);
    EXPECT_FALSE(r.store.state.users.count("user2"));
    r.resolver.missing.clear();
    r.run();
    EXPECT_TRUE(r.store.state.users.count("user2"));
}

TEST(SyncCycle, AccountingErrorsReported)
{
    Rig r;
    r.src.answer = source(4);
    r.store.read_fails = true;
    auto rep = r.run();
    EXPECT_EQ(rep.status, SyncStatus::AccountingError);
    EXPECT_TRUE(rep.caches_published);  // caches are independent of slurmdbd
}

TEST(SyncCycle, CacheFailureStopsBeforeAccounting)
{
    Rig r;
    r.src.answer = source(4);
    r.caches.fail = true;
    EXPECT_EQ(r.run().status, SyncStatus::CacheError);
    EXPECT_EQ(r.store.applies, 0);
}

TEST(SyncCycle, RunningJobsDeferRemovalAndSayWhy)
{
    Rig r;
    r.src.answer = source(4);
    r.run();
    r.store.running_jobs = {"user0@team-a"};
    auto d = source(4);
    d.groups[0].members.erase(d.groups[0].members.begin());  // user0 leaves team-a
    r.src.answer = d;
    auto rep = r.run();
    EXPECT_EQ(rep.status, SyncStatus::Ok);
    ASSERT_EQ(rep.applied.deferred.size(), 1u);
    EXPECT_NE(rep.applied.deferred[0].find("user0@team-a"), std::string::npos);
}

TEST(SyncCycle, ReservedAndLocalNamesAreNeverPublished)
{
    Rig r;
    ScimDirectory d = source(4);
    auto extra =
        parse_user_page(list_json({user_json("r", "root", 20100), user_json("l", "localbob", 20101),
                                   user_json("x", "takeslocaluid", 20050)},
                                  3),
                        kExt)
            .value()
            .resources;
    d.users.insert(d.users.end(), extra.begin(), extra.end());
    auto sudo =
        parse_group_page(list_json({group_json("s", "sudo", 30100, {"u0"})}, 1), kExt).value();
    d.groups.push_back(sudo.resources[0]);
    r.src.answer = d;
    const LocalIdentities local =
        parse_local_identities("localbob:x:20050:20050::/home/localbob:/bin/bash\n", "");
    r.opt.local = &local;
    auto rep = r.run();
    ASSERT_EQ(rep.status, SyncStatus::Ok) << rep.message;
    ASSERT_EQ(r.caches.published, 1);
    for (const auto& u : r.caches.last.users) {
        EXPECT_NE(u.name, "root");
        EXPECT_NE(u.name, "localbob");
        EXPECT_NE(u.name, "takeslocaluid");
    }
    EXPECT_EQ(r.caches.last.users.size(), 4u);
    for (const auto& g : r.caches.last.groups) EXPECT_NE(g.name, "sudo");
    EXPECT_FALSE(r.store.state.users.count("root"));
    size_t reserved = 0;
    for (const auto& j : rep.directory.rejections)
        reserved += j.code == make_error_code(identity::Errc::ReservedName) ||
                    j.code == make_error_code(identity::Errc::ReservedId);
    EXPECT_EQ(reserved, 4u);  // root, localbob, takeslocaluid, sudo
}

TEST(SyncCycle, SourceWideErrorKeepsItsCodeAndTouchesNothing)
{
    Rig r;
    r.src.answer = make_error(scim_source::Errc::Endless, "the listing went on");
    auto rep = r.run();
    EXPECT_EQ(rep.status, SyncStatus::SourceError);
    EXPECT_TRUE(rep.source_error.is(scim_source::Errc::Endless));
    EXPECT_EQ(r.caches.published, 0);
    EXPECT_EQ(r.store.applies, 0);
}

TEST(SyncCycle, CacheShrinkRefusedOnANoAccountingNode)
{
    Rig r;
    r.opt.accounting = false;
    r.src.answer = source(20);
    ASSERT_EQ(r.run().status, SyncStatus::Ok);
    ASSERT_EQ(r.caches.published, 1);
    r.opt.max_removals = 5;
    r.src.answer = source(2);  // 90 % fewer users
    auto rep = r.run();
    EXPECT_EQ(rep.status, SyncStatus::Refused);
    EXPECT_NE(rep.message.find("caches would lose 18"), std::string::npos) << rep.message;
    EXPECT_EQ(r.caches.published, 1);
    EXPECT_EQ(r.caches.last.users.size(), 20u);
    EXPECT_EQ(r.store.applies, 0);
    r.opt.force = true;  // the operator confirms
    EXPECT_EQ(r.run().status, SyncStatus::Ok);
    EXPECT_EQ(r.caches.last.users.size(), 2u);
}

TEST(SyncCycle, CacheShrinkRefusedOnTheControllerBeforeAccounting)
{
    Rig r;
    r.src.answer = source(20);
    ASSERT_EQ(r.run().status, SyncStatus::Ok);
    r.opt.max_removals = 5;
    r.src.answer = source(2);
    auto rep = r.run();
    EXPECT_EQ(rep.status, SyncStatus::Refused);
    EXPECT_EQ(r.caches.published, 1);
    EXPECT_EQ(r.store.applies, 1);
    EXPECT_EQ(r.store.state.users.size(), 20u);
}

TEST(SyncCycle, CacheWithinTheLimitIsPublished)
{
    Rig r;
    r.opt.accounting = false;
    r.src.answer = source(20);
    ASSERT_EQ(r.run().status, SyncStatus::Ok);
    r.opt.max_removals = 5;
    r.src.answer = source(16);
    EXPECT_EQ(r.run().status, SyncStatus::Ok);
    EXPECT_EQ(r.caches.last.users.size(), 16u);
}

// allot-scimd with private groups on lists each user's private group, marked
// (userPrivateGroup). The cycle leaves them out, so caches and accounting are
// those of the same directory without them: no group per user in the cache,
// no team made of a private group named like the team's group, nothing for
// the shrink guard when the server's option is turned off again, and a
// source of users and private groups alone is still an empty directory.
TEST(SyncCycle, PrivateGroupsOfTheSourceAreLeftOut)
{
    const std::string pg = "urn:ietf:params:scim:schemas:extension:allot:2.0:PosixGroup";
    auto private_group = [&](int i) {
        const std::string n = std::to_string(i);
        return R"({"id":"p)" + n + R"(","displayName":"user)" + n + R"(",")" + pg +
               R"(":{"gidNumber":)" + std::to_string(20000 + i) +
               R"(,"userPrivateGroup":true},"members":[{"value":"u)" + n + R"(","type":"User"}]})";
    };
    auto with_private_groups = [&](int users) {
        ScimDirectory d = source(users);
        std::vector<std::string> json;
        for (int i = 0; i < users; ++i) json.push_back(private_group(i));
        auto page = parse_group_page(list_json(json, users), kExt);
        EXPECT_TRUE(page.ok());
        if (page.ok())
            for (auto& g : page.value().resources) d.groups.push_back(std::move(g));
        return d;
    };

    Rig plain;
    plain.cfg.teams[0].group = "user1";  // a team named like a user, whose group the source lacks
    plain.src.answer = source(6);
    auto without = plain.run();
    ASSERT_EQ(without.status, SyncStatus::Ok) << without.message;
    EXPECT_EQ(without.private_groups_skipped, 0u);

    Rig r;
    r.cfg.teams[0].group = "user1";
    r.opt.max_removals = 0;
    r.src.answer = with_private_groups(6);
    auto with = r.run();
    ASSERT_EQ(with.status, SyncStatus::Ok) << with.message;
    EXPECT_EQ(with.private_groups_skipped, 6u);
    ASSERT_EQ(r.caches.last.groups.size(), 1u);
    EXPECT_EQ(r.caches.last.groups[0].name, "team-a");
    EXPECT_TRUE(with.directory.rejections.empty());
    EXPECT_EQ(r.caches.published_names(), plain.caches.published_names());
    EXPECT_EQ(applied_state(r.store.state), applied_state(plain.store.state));
    EXPECT_EQ(r.store.state.users.size(), 6u);
    // user1's private group made no team: no one is in the team's account.
    for (const auto& [key, a] : r.store.state.assocs) EXPECT_NE(key.second, "team-a") << key.first;

    // The server's option turned off: nothing leaves the caches, nothing changes.
    r.src.answer = source(6);
    auto off = r.run();
    EXPECT_EQ(off.status, SyncStatus::Ok) << off.message;
    EXPECT_TRUE(off.plan.empty());

    // Users and their private groups only: as empty as a source without groups.
    r.src.answer = with_private_groups(6);
    r.src.answer.value().groups.erase(r.src.answer.value().groups.begin());
    auto empty = r.run();
    EXPECT_EQ(empty.status, SyncStatus::Refused);
    EXPECT_NE(empty.message.find("0 valid groups"), std::string::npos) << empty.message;
}
