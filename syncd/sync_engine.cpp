// sync_engine.cpp - one sync cycle (see allot/sync_engine.hpp).
#include "sync_engine.hpp"

namespace allot {

SyncReport run_sync(const Config& config, ScimSource& source, AccountingStore* store,
                    UserResolver& resolver, CachePublisher* caches, const SyncOptions& opt)
{
    SyncReport rep;
    auto fetched = source.fetch();
    if (!fetched) {
        rep.status = SyncStatus::SourceError;
        rep.message = "identity source: " + fetched.error().message +
                      "; nothing changed, last good "
                      "caches kept";
        return rep;
    }
    rep.source_requests = fetched.value().requests;
    rep.directory = validate_directory(fetched.value(), config.identity);
    const auto& dir = rep.directory;
    if ((dir.users.empty() || dir.groups.empty()) && !opt.force) {
        rep.status = SyncStatus::Refused;
        rep.message =
            "identity source returned " + std::to_string(dir.users.size()) + " valid users and " +
            std::to_string(dir.groups.size()) +
            " valid groups; refusing to sync an empty directory (use --force if intended)";
        return rep;
    }

    // Caches first: an association is written only for users who resolve,
    // and on a fresh node they resolve through the cache just published.
    if (opt.caches && caches && !opt.plan_only) {
        auto p = caches->publish(dir);
        if (!p) {
            rep.status = SyncStatus::CacheError;
            rep.message = "publishing caches: " + p.error().message;
            return rep;
        }
        rep.caches_published = true;
    }
    if (!opt.accounting || !store) return rep;

    auto current = store->read();
    if (!current) {
        rep.status = SyncStatus::AccountingError;
        rep.message = "reading accounting: " + current.error().message;
        return rep;
    }
    PlanOptions po;
    po.adopt = opt.adopt;
    po.last_applied = opt.last_applied;
    for (const auto& u : dir.users)
        if (!resolver.resolves(u.name, u.uid)) po.held_users.insert(u.name);
    std::vector<std::string> notes;
    const AccountingState desired = desired_state(config, dir, notes);
    rep.plan = make_plan(desired, current.value(), po);
    rep.plan.notes.insert(rep.plan.notes.begin(), notes.begin(), notes.end());

    if (rep.plan.removals() > opt.max_removals && !opt.force) {
        rep.status = SyncStatus::Refused;
        rep.message =
            "plan removes " + std::to_string(rep.plan.removals()) +
            " objects, more than identity.max_removals=" + std::to_string(opt.max_removals) +
            "; refusing (review with --plan, then use --force)";
        return rep;
    }
    if (opt.plan_only || rep.plan.empty()) {
        if (!opt.plan_only) rep.new_applied_state = applied_state(desired);
        rep.accounting_applied = !opt.plan_only;
        return rep;
    }
    auto applied = store->apply(rep.plan);
    if (!applied) {
        rep.status = SyncStatus::AccountingError;
        rep.message = "applying plan: " + applied.error().message;
        return rep;
    }
    rep.applied = applied.value();
    if (!rep.applied.failed.empty()) {
        rep.status = SyncStatus::AccountingError;
        rep.message = std::to_string(rep.applied.failed.size()) + " change(s) failed";
        return rep;
    }
    rep.accounting_applied = true;
    rep.new_applied_state = applied_state(desired);
    return rep;
}

}  // namespace allot
