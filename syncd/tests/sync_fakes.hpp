// sync_fakes.hpp - fakes for the sync cycle's interfaces (SCIM source,
// accounting store, NSS resolver, cache publisher), shared by the sync unit
// tests; SCIM JSON builders and the fake HTTP client come from lib/tests.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "scim_fakes.hpp"  // lib/tests
#include "sync_engine.hpp"

namespace allot::synctest {

using namespace allot::scimtest;

class FakeSource : public ScimSource {
public:
    Result<ScimDirectory> answer = make_error("unset");
    Result<ScimDirectory> fetch() override { return answer; }
};

class FakeResolver : public UserResolver {
public:
    std::set<std::string> missing;
    bool resolves(const std::string& name, uint32_t) override { return !missing.count(name); }
};

class FakeCaches : public CachePublisher {
public:
    int published = 0;
    bool fail = false;
    ValidatedDirectory last;
    Result<bool> publish(const ValidatedDirectory& d) override
    {
        if (fail) return make_error("disk full");
        ++published;
        last = d;
        return true;
    }
    // What a real cache would hold after the last publish.
    std::optional<std::set<std::string>> published_names() override
    {
        if (!published) return std::nullopt;
        std::set<std::string> names;
        for (const auto& u : last.users) names.insert("user:" + u.name);
        for (const auto& g : last.groups)
            if (g.gid) names.insert("group:" + g.name);
        return names;
    }
};

// Applies plans to an in-memory AccountingState with Slurm's rules that
// matter for ordering (an association needs its account and user; the
// default association cannot go while others remain).
class FakeStore : public AccountingStore {
public:
    AccountingState state;
    bool read_fails = false;
    std::set<std::string> running_jobs;  // assoc keys "user@account" with running jobs
    int applies = 0;
    Result<AccountingState> read() override
    {
        if (read_fails) return make_error("connection refused");
        return state;
    }
    Result<ApplyReport> apply(const Plan& plan) override
    {
        ++applies;
        ApplyReport rep;
        for (const Change& c : plan.changes) {
            std::string err = one(c);
            if (err == "deferred")
                rep.deferred.push_back(c.text());
            else if (!err.empty())
                rep.failed.push_back(c.text() + ": " + err);
            else
                ++rep.applied;
        }
        return rep;
    }

private:
    std::string one(const Change& c)
    {
        switch (c.kind) {
            case ChangeKind::Qos:
                if (c.op == ChangeOp::Remove)
                    state.qos.erase(c.key);
                else
                    for (const auto& p : c.qos.preempt)
                        if (!state.qos.count(p) && p != c.key)
                            return "preempt names unknown qos " + p;
                if (c.op != ChangeOp::Remove) state.qos[c.key] = c.qos;
                return {};
            case ChangeKind::Account:
                if (c.op == ChangeOp::Remove) {
                    state.accounts.erase(c.key);
                    for (auto it = state.assocs.begin(); it != state.assocs.end();)
                        it = it->first.second == c.key ? state.assocs.erase(it) : std::next(it);
                } else {
                    state.accounts[c.key] = c.account;
                }
                return {};
            case ChangeKind::User:
                if (c.op == ChangeOp::Remove) {
                    state.users.erase(c.key);
                    return {};
                }
                state.users[c.key] = c.user;
                return {};
            case ChangeKind::Assoc: {
                auto k = std::make_pair(c.assoc.user, c.assoc.account);
                if (c.op == ChangeOp::Remove) {
                    if (running_jobs.count(c.key)) return "deferred";
                    auto u = state.users.find(c.assoc.user);
                    size_t n = 0;
                    for (auto& [kk, a] : state.assocs) n += kk.first == c.assoc.user;
                    if (u != state.users.end() && u->second.default_account == c.assoc.account &&
                        n > 1)
                        return "cannot remove the default association";
                    state.assocs.erase(k);
                    return {};
                }
                if (!state.accounts.count(c.assoc.account)) return "no such account";
                if (!state.users.count(c.assoc.user)) return "no such user";
                for (const auto& q : c.assoc.qos)
                    if (!state.qos.count(q)) return "no such qos " + q;
                state.assocs[k] = c.assoc;
                return {};
            }
        }
        return {};
    }
};

}  // namespace allot::synctest
