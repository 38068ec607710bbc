// sync_engine.cpp - one sync cycle (see sync_engine.hpp).
//
// The order is the safety argument: every source-wide refusal (source error,
// empty directory, a plan removing too much) happens before the caches or the
// accounting are touched; per-record problems were settled by the validator
// and only drop the record.
#include "sync_engine.hpp"

#include <algorithm>
#include <chrono>

namespace allot {
namespace {

class Cycle {
public:
    Cycle(const Config& config, ScimSource& source, AccountingStore* store, UserResolver& resolver,
          CachePublisher* caches, const SyncOptions& opt)
        : config_(config),
          source_(source),
          store_(store),
          resolver_(resolver),
          caches_(caches),
          opt_(opt)
    {
    }

    // Times `step` as phase `name` of the report.
    template <typename Step>
    auto timed(const char* name, Step step)
    {
        const auto t0 = std::chrono::steady_clock::now();
        auto r = step();
        const std::chrono::duration<double> d = std::chrono::steady_clock::now() - t0;
        rep_.phase_seconds.emplace_back(name, d.count());
        return r;
    }

    SyncReport run()
    {
        if (!timed("fetch+validate", [&] { return fetch_and_validate(); }) ||
            !refuse_empty_directory() || !refuse_cache_shrink())
            return std::move(rep_);
        // slurmdbd being away does not stop the caches (logins keep working);
        // a plan removing too much stops everything.
        const bool have_accounting =
            wants_accounting() && timed("read accounting", [&] { return read_accounting(); });
        if (have_accounting && !timed("removal guard", [&] { return refuse_large_removals(); }))
            return std::move(rep_);
        if (timed("publish caches", [&] { return publish_caches(); }) && have_accounting)
            plan_and_apply();
        return std::move(rep_);
    }

private:
    const Config& config_;
    ScimSource& source_;
    AccountingStore* store_;
    UserResolver& resolver_;
    CachePublisher* caches_;
    const SyncOptions& opt_;
    SyncReport rep_;
    AccountingState current_;
    AccountingState desired_;
    std::vector<std::string> desired_notes_;

    bool wants_accounting() const { return opt_.accounting && store_; }

    bool fail(SyncStatus status, std::string message)
    {
        rep_.status = status;
        rep_.message = std::move(message);
        return false;
    }

    bool fetch_and_validate()
    {
        auto fetched = source_.fetch();
        if (!fetched) {
            rep_.source_error = fetched.error();
            return fail(SyncStatus::SourceError, "identity source: " + fetched.error().message +
                                                     "; nothing changed, last good caches kept");
        }
        rep_.source_requests = fetched.value().requests;
        ScimDirectory& dir = fetched.value();
        // A private group a server lists for nsscache is a copy of the user,
        // not a group of the directory: published, it would turn with the
        // server's option (and trip the shrink guard when turned off) and could
        // stand in for a team's group named like a user. So the caches and the
        // accounting are the same whether the server lists them or not.
        const size_t before = dir.groups.size();
        dir.groups.erase(std::remove_if(dir.groups.begin(), dir.groups.end(),
                                        [](const scim::Group& g) { return g.user_private; }),
                         dir.groups.end());
        rep_.private_groups_skipped = before - dir.groups.size();
        const IdentityRules rules =
            identity_rules(config_.identity, opt_.local ? *opt_.local : LocalIdentities{});
        rep_.directory = validate_directory(dir, rules);
        return true;
    }

    bool refuse_empty_directory()
    {
        const auto& dir = rep_.directory;
        if ((!dir.users.empty() && !dir.groups.empty()) || opt_.force) return true;
        return fail(SyncStatus::Refused,
                    "identity source returned " + std::to_string(dir.users.size()) +
                        " valid users and " + std::to_string(dir.groups.size()) +
                        " valid groups; refusing to sync an empty directory (use --force if "
                        "intended)");
    }

    // The caches are held to identity.max_removals like the accounting, on
    // every node (a --no-accounting node has no plan to check): a source that
    // suddenly lists far fewer users changes no cache until --force.
    bool refuse_cache_shrink()
    {
        if (!opt_.caches || !caches_ || opt_.force) return true;
        const auto before = caches_->published_names();
        if (!before) return true;
        std::set<std::string> after;
        for (const auto& u : rep_.directory.users) after.insert("user:" + u.name);
        for (const auto& g : rep_.directory.groups)
            if (g.gid) after.insert("group:" + g.name);
        size_t removed = 0;
        for (const auto& name : *before) removed += after.count(name) == 0;
        if (removed <= opt_.max_removals) return true;
        return fail(SyncStatus::Refused,
                    "the caches would lose " + std::to_string(removed) + " of " +
                        std::to_string(before->size()) +
                        " users and groups, more than identity.max_removals=" +
                        std::to_string(opt_.max_removals) +
                        "; refusing (review with --plan, then use --force); caches and "
                        "accounting untouched");
    }

    bool read_accounting()
    {
        auto current = store_->read();
        if (!current)
            return fail(SyncStatus::AccountingError,
                        "reading accounting: " + current.error().message);
        current_ = std::move(current).value();
        desired_ = desired_state(config_, rep_.directory, desired_notes_);
        return true;
    }

    PlanOptions plan_options(std::set<std::string> held) const
    {
        PlanOptions po;
        po.adopt = opt_.adopt;
        po.last_applied = opt_.last_applied;
        po.held_users = std::move(held);
        return po;
    }

    // Before any cache is replaced: holding users back only keeps objects, so
    // the plan without holds removes at least as much as the one applied.
    bool refuse_large_removals()
    {
        const Plan upper = make_plan(desired_, current_, plan_options({}));
        if (upper.removals() <= opt_.max_removals || opt_.force) return true;
        rep_.plan = upper;
        return fail(
            SyncStatus::Refused,
            "plan removes " + std::to_string(upper.removals()) +
                " objects, more than identity.max_removals=" + std::to_string(opt_.max_removals) +
                "; refusing (review with --plan, then use --force); caches and "
                "accounting untouched");
    }

    // Caches before associations: an association is written only for users
    // who resolve, and on a fresh node they resolve through these caches.
    bool publish_caches()
    {
        if (!opt_.caches || !caches_ || opt_.plan_only) return true;
        auto p = caches_->publish(rep_.directory);
        if (!p) return fail(SyncStatus::CacheError, "publishing caches: " + p.error().message);
        rep_.caches_published = true;
        return true;
    }

    void plan_and_apply()
    {
        std::set<std::string> held = timed("resolve users", [&] {
            std::set<std::string> out;
            for (const auto& u : rep_.directory.users)
                if (!resolver_.resolves(u.name, u.uid)) out.insert(u.name);
            return out;
        });
        rep_.plan = timed(
            "plan", [&] { return make_plan(desired_, current_, plan_options(std::move(held))); });
        rep_.plan.notes.insert(rep_.plan.notes.begin(), desired_notes_.begin(),
                               desired_notes_.end());
        if (opt_.plan_only || rep_.plan.empty()) {
            if (!opt_.plan_only) rep_.new_applied_state = applied_state(desired_);
            rep_.accounting_applied = !opt_.plan_only;
            return;
        }
        auto applied = timed("apply", [&] { return store_->apply(rep_.plan); });
        if (!applied) {
            fail(SyncStatus::AccountingError, "applying plan: " + applied.error().message);
            return;
        }
        rep_.applied = applied.value();
        if (!rep_.applied.failed.empty()) {
            fail(SyncStatus::AccountingError,
                 std::to_string(rep_.applied.failed.size()) + " change(s) failed");
            return;
        }
        rep_.accounting_applied = true;
        rep_.new_applied_state = applied_state(desired_);
    }
};

}  // namespace

SyncReport run_sync(const Config& config, ScimSource& source, AccountingStore* store,
                    UserResolver& resolver, CachePublisher* caches, const SyncOptions& opt)
{
    return Cycle(config, source, store, resolver, caches, opt).run();
}

}  // namespace allot
