// sync_plan_test.cpp - desired accounting state and the planner: creation,
// convergence, membership change, team removal, ownership and drift.
#include <gtest/gtest.h>

#include "sync_fakes.hpp"
#include "sync_plan.hpp"

using namespace allot;
using namespace allot::synctest;

namespace {

Config config()
{
    Config c;
    c.cluster.default_account = "default";
    c.cluster.cpus_per_gpu = 4;
    c.cluster.mem_per_gpu_mb = 16384;
    c.tiers.project.priority = 100;
    c.tiers.general.qos = "general";
    c.tiers.general.pool_gpus = 8;
    c.tiers.general.per_team_gpus = 4;
    c.tiers.general.max_minutes = 3 * 1440;
    c.tiers.general.priority = 50;
    c.tiers.spot.qos = "spot";
    c.tiers.spot.max_minutes = 1440;
    c.tiers.spot.grace_seconds = 600;
    TeamConfig a;
    a.group = "team-a";
    a.account = "team-a";
    a.gpus = 8;
    TeamConfig b;
    b.group = "grp-b";
    b.account = "team-b";
    b.qos = "proj-b";
    b.gpus = 4;
    c.teams = {a, b};
    return c;
}

ValidatedDirectory directory(std::map<std::string, std::vector<std::string>> groups,
                             std::vector<std::string> users)
{
    ValidatedDirectory d;
    uint32_t uid = 20000;
    for (auto& u : users) {
        PosixUser p;
        p.name = u;
        p.uid = p.gid = ++uid;
        d.users.push_back(p);
    }
    uint32_t gid = 30000;
    for (auto& [n, m] : groups) d.groups.push_back(PosixGroup{n, ++gid, m});
    return d;
}

const Change* find(const Plan& p, ChangeOp op, ChangeKind kind, const std::string& key)
{
    for (const auto& c : p.changes)
        if (c.op == op && c.kind == kind && c.key == key) return &c;
    return nullptr;
}

Plan plan_for(const Config& c, const ValidatedDirectory& d, const AccountingState& cur,
              PlanOptions o = {})
{
    std::vector<std::string> notes;
    return make_plan(desired_state(c, d, notes), cur, o);
}

}  // namespace

TEST(DesiredState, PolicyQosAccountsAndAssociations)
{
    std::vector<std::string> notes;
    auto d = desired_state(config(),
                           directory({{"team-a", {"alice", "carol"}}, {"grp-b", {"carol"}}},
                                     {"alice", "bob", "carol"}),
                           notes);
    const QosSpec& qa = d.qos.at("team-a");
    EXPECT_EQ(tres_string(qa.grp_tres), "cpu=32,gres/gpu=8,mem=131072");
    EXPECT_EQ(qa.priority, 100u);
    EXPECT_EQ(qa.preempt, std::set<std::string>{"spot"});
    EXPECT_EQ(tres_string(d.qos.at("proj-b").grp_tres), "cpu=16,gres/gpu=4,mem=65536");
    const QosSpec& g = d.qos.at("general");
    EXPECT_EQ(tres_string(g.grp_tres), "gres/gpu=8");
    EXPECT_EQ(tres_string(g.max_tres_pa), "gres/gpu=4");
    EXPECT_EQ(g.max_wall_minutes, 4320u);
    EXPECT_EQ(g.preempt, std::set<std::string>{"spot"});
    const QosSpec& s = d.qos.at("spot");
    EXPECT_TRUE(s.requeue);
    EXPECT_EQ(s.grace_seconds, 600u);
    EXPECT_EQ(s.max_wall_minutes, 1440u);
    EXPECT_EQ(tres_string(d.accounts.at("default").grp_tres), "gres/gpu=0");
    EXPECT_TRUE(is_managed(d.accounts.at("team-a")));
    EXPECT_TRUE(is_managed(d.qos.at("spot")));
    EXPECT_EQ(d.users.at("alice").default_account, "team-a");
    EXPECT_EQ(d.users.at("bob").default_account, "default");
    EXPECT_EQ(d.users.at("carol").default_account, "team-a");  // first team in config order
    const auto& cb = d.assocs.at({"carol", "team-b"});
    EXPECT_EQ(cb.qos, (std::set<std::string>{"general", "proj-b", "spot"}));
    EXPECT_EQ(cb.default_qos, "proj-b");
    EXPECT_TRUE(d.assocs.count({"bob", "default"}));
    // No GPU tier for users in no team: a QOS GPU limit would override the account's 0.
    const AssocSpec& bob = d.assocs.at({"bob", "default"});
    EXPECT_EQ(bob.qos, std::set<std::string>{"default"});
    EXPECT_EQ(bob.default_qos, "default");
    EXPECT_TRUE(d.qos.at("default").grp_tres.empty());
    EXPECT_FALSE(d.assocs.count({"alice", "default"}));
}

TEST(DesiredState, MissingTeamGroupIsANote)
{
    std::vector<std::string> notes;
    auto d = desired_state(config(), directory({{"team-a", {"alice"}}}, {"alice"}), notes);
    EXPECT_TRUE(d.accounts.count("team-b"));
    ASSERT_EQ(notes.size(), 1u);
    EXPECT_NE(notes[0].find("grp-b"), std::string::npos);
}

TEST(Plan, FirstSyncCreatesEverythingInApplyOrderThenConverges)
{
    auto dir = directory({{"team-a", {"alice"}}, {"grp-b", {"carol"}}}, {"alice", "bob", "carol"});
    FakeStore store;
    Plan p = plan_for(config(), dir, store.state);
    ASSERT_FALSE(p.empty());
    EXPECT_EQ(p.changes.front().key, "spot");  // others preempt it
    EXPECT_EQ(p.removals(), 0u);
    auto rep = store.apply(p);
    ASSERT_TRUE(rep.ok());
    EXPECT_TRUE(rep.value().failed.empty()) << rep.value().failed[0];
    Plan again = plan_for(config(), dir, store.state);
    EXPECT_TRUE(again.empty()) << again.changes[0].text();
}

TEST(Plan, MembershipChangeMovesDefaultAccountBeforeRemoval)
{
    auto c = config();
    FakeStore store;
    store.apply(plan_for(c, directory({{"team-a", {"alice"}}, {"grp-b", {"alice"}}}, {"alice"}),
                         store.state));
    ASSERT_EQ(store.state.users.at("alice").default_account, "team-a");
    // alice leaves team-a, stays in team-b.
    Plan p = plan_for(c, directory({{"team-a", {}}, {"grp-b", {"alice"}}}, {"alice"}), store.state);
    const Change* mod = find(p, ChangeOp::Modify, ChangeKind::User, "alice");
    const Change* rm = find(p, ChangeOp::Remove, ChangeKind::Assoc, "alice@team-a");
    ASSERT_TRUE(mod && rm);
    EXPECT_LT(mod, rm);  // order in the plan
    auto rep = store.apply(p);
    EXPECT_TRUE(rep.value().failed.empty()) << rep.value().failed[0];
    EXPECT_EQ(store.state.users.at("alice").default_account, "team-b");
    EXPECT_TRUE(
        plan_for(c, directory({{"team-a", {}}, {"grp-b", {"alice"}}}, {"alice"}), store.state)
            .empty());
}

TEST(Plan, LeavingEveryTeamLandsInDefault)
{
    auto c = config();
    FakeStore store;
    store.apply(plan_for(c, directory({{"team-a", {"alice"}}}, {"alice"}), store.state));
    Plan p = plan_for(c, directory({{"team-a", {}}}, {"alice"}), store.state);
    auto rep = store.apply(p);
    EXPECT_TRUE(rep.value().failed.empty()) << rep.value().failed[0];
    EXPECT_EQ(store.state.users.at("alice").default_account, "default");
    EXPECT_TRUE(store.state.assocs.count({"alice", "default"}));
    EXPECT_FALSE(store.state.assocs.count({"alice", "team-a"}));
}

TEST(Plan, TeamRemovedFromConfigRemovesAccountQosAndOrphans)
{
    auto c = config();
    FakeStore store;
    auto dir = directory({{"team-a", {"alice"}}, {"grp-b", {"carol"}}}, {"alice", "carol"});
    store.apply(plan_for(c, dir, store.state));
    c.teams.pop_back();  // team-b gone
    Plan p = plan_for(c, dir, store.state);
    EXPECT_TRUE(find(p, ChangeOp::Remove, ChangeKind::Account, "team-b"));
    EXPECT_TRUE(find(p, ChangeOp::Remove, ChangeKind::Qos, "proj-b"));
    EXPECT_TRUE(find(p, ChangeOp::Remove, ChangeKind::Assoc, "carol@team-b"));
    EXPECT_TRUE(find(p, ChangeOp::Add, ChangeKind::Assoc, "carol@default"));
    auto rep = store.apply(p);
    EXPECT_TRUE(rep.value().failed.empty()) << rep.value().failed[0];
    EXPECT_EQ(store.state.users.at("carol").default_account, "default");
    EXPECT_TRUE(plan_for(c, dir, store.state).empty());
}

TEST(Plan, UserGoneFromSourceIsRemovedOnlyIfAllotHeldAllTheirAssociations)
{
    auto c = config();
    FakeStore store;
    store.apply(
        plan_for(c, directory({{"team-a", {"alice", "dan"}}}, {"alice", "dan"}), store.state));
    // dan also has a hand-made association.
    store.state.accounts["physics"] = AccountSpec{"physics", "hand made", "Physics", {}};
    store.state.assocs[{"dan", "physics"}] = AssocSpec{"dan", "physics", {"normal"}, "normal"};
    Plan p = plan_for(c, directory({{"team-a", {}}}, {}), store.state);
    EXPECT_TRUE(find(p, ChangeOp::Remove, ChangeKind::User, "alice"));
    EXPECT_FALSE(find(p, ChangeOp::Remove, ChangeKind::User, "dan"));
    EXPECT_TRUE(find(p, ChangeOp::Remove, ChangeKind::Assoc, "dan@team-a"));
    EXPECT_TRUE(find(p, ChangeOp::Modify, ChangeKind::User, "dan"));  // default → physics
    EXPECT_FALSE(find(p, ChangeOp::Remove, ChangeKind::Account, "physics"));
}

TEST(Plan, NeverTouchesUnmanagedObjects)
{
    auto c = config();
    FakeStore store;
    store.state.qos["normal"] = QosSpec{"normal", "Normal QOS default", {}, {}, 0, 0, 0, {}, false};
    store.state.qos["spot"] = QosSpec{"spot", "made by hand", {}, {}, 0, 0, 0, {}, false};
    store.state.accounts["root"] = AccountSpec{"root", "default root account", "root", {}};
    store.state.accounts["team-a"] = AccountSpec{"team-a", "hand made", "lab", {}};
    store.state.users["root"] = UserSpec{"root", "root"};
    store.state.assocs[{"root", "root"}] = AssocSpec{"root", "root", {"normal"}, ""};
    store.state.assocs[{"alice", "team-a"}] = AssocSpec{"alice", "team-a", {"normal"}, ""};
    Plan p = plan_for(c, directory({{"team-a", {"alice"}}}, {"alice"}), store.state);
    for (const auto& ch : p.changes) {
        EXPECT_NE(ch.key, "normal");
        EXPECT_NE(ch.key, "root");
        EXPECT_NE(ch.key, "spot") << ch.text();
        if (ch.kind != ChangeKind::Qos) {
            EXPECT_NE(ch.key, "team-a") << ch.text();
        }
        EXPECT_NE(ch.key, "alice@team-a") << ch.text();
    }
    EXPECT_GE(p.notes.size(), 2u);
    // --adopt takes the config-named ones over (never root/normal).
    PlanOptions adopt;
    adopt.adopt = true;
    Plan p2 = plan_for(c, directory({{"team-a", {"alice"}}}, {"alice"}), store.state, adopt);
    EXPECT_TRUE(find(p2, ChangeOp::Modify, ChangeKind::Account, "team-a"));
    EXPECT_TRUE(find(p2, ChangeOp::Modify, ChangeKind::Qos, "spot"));
    for (const auto& ch : p2.changes) EXPECT_TRUE(ch.key != "root" && ch.key != "normal");
}

TEST(Plan, DriftIsDetectedAndFixed)
{
    auto c = config();
    FakeStore store;
    auto dir = directory({{"team-a", {"alice"}}}, {"alice"});
    std::vector<std::string> notes;
    auto desired = desired_state(c, dir, notes);
    store.apply(make_plan(desired, store.state, {}));
    auto last = applied_state(desired);
    store.state.qos["team-a"].grp_tres["gres/gpu"] = 64;  // an admin "fixed" it by hand
    store.state.assocs[{"alice", "team-a"}].qos.insert("normal");
    PlanOptions o;
    o.last_applied = &last;
    Plan p = make_plan(desired, store.state, o);
    ASSERT_EQ(p.drifted(), 2u);
    const Change* q = find(p, ChangeOp::Modify, ChangeKind::Qos, "team-a");
    ASSERT_TRUE(q);
    EXPECT_NE(q->text().find("drift"), std::string::npos);
    store.apply(p);
    EXPECT_TRUE(make_plan(desired, store.state, o).empty());
    // A config change is a modification but not drift.
    c.teams[0].gpus = 6;
    auto desired2 = desired_state(c, dir, notes);
    Plan p2 = make_plan(desired2, store.state, o);
    EXPECT_EQ(p2.drifted(), 0u);
    EXPECT_TRUE(find(p2, ChangeOp::Modify, ChangeKind::Qos, "team-a"));
}

TEST(Plan, HeldUsersAreNeitherAddedNorRemoved)
{
    auto c = config();
    FakeStore store;
    PlanOptions held;
    held.held_users = {"bob"};
    Plan p =
        plan_for(c, directory({{"team-a", {"alice", "bob"}}}, {"alice", "bob"}), store.state, held);
    EXPECT_FALSE(find(p, ChangeOp::Add, ChangeKind::User, "bob"));
    EXPECT_FALSE(find(p, ChangeOp::Add, ChangeKind::Assoc, "bob@team-a"));
    EXPECT_TRUE(find(p, ChangeOp::Add, ChangeKind::User, "alice"));
}

TEST(Plan, TextIsStable)
{
    auto dir = directory({{"team-a", {"alice"}}}, {"alice"});
    FakeStore store;
    Plan p = plan_for(config(), dir, store.state);
    const Change* q = find(p, ChangeOp::Add, ChangeKind::Qos, "general");
    ASSERT_TRUE(q);
    EXPECT_EQ(q->text(),
              "add qos general: Description='allot-managed: general tier' GrpTRES=gres/gpu=8 "
              "MaxTRESPerAccount=gres/gpu=4 MaxWall=3-00:00:00 Priority=50 Preempt=spot "
              "PreemptMode=cluster GraceTime=0");
}
