// user_snapshot.cpp - see user_snapshot.hpp.
#include "user_snapshot.hpp"

#include <algorithm>

namespace allot::scimd {

const RenderedUser* RenderedUsers::find(const std::string& name) const
{
    auto it = std::lower_bound(
        users.begin(), users.end(), name,
        [](const RenderedUser& u, const std::string& n) { return u.user_name < n; });
    return it != users.end() && it->user_name == name ? &*it : nullptr;
}

std::shared_ptr<const RenderedUsers> render_all_users(DirectoryStore& store,
                                                      const scim::RenderOptions& options)
{
    auto before = store.generation();
    if (!before) return nullptr;
    auto set = std::make_shared<RenderedUsers>();
    set->generation = before.value();
    ListQuery q;
    q.count = 1000;
    q.cursor = "";
    for (;;) {
        auto page = store.list_users(q);
        if (!page) return nullptr;
        for (const auto& u : page.value().items)
            set->users.push_back(
                {u.user_name, u.active, json_print(scim::user_to_json(u, options).get())});
        if (page.value().next_cursor.empty()) break;
        q.cursor = page.value().next_cursor;
    }
    // The pages were read in separate transactions: a write in between could
    // have left a mix of two states.
    auto after = store.generation();
    if (!after || after.value() != before.value()) return nullptr;
    for (const auto& u : set->users) {
        set->everyone.push_back(&u);
        if (u.active) set->active.push_back(&u);
    }
    return set;
}

std::shared_ptr<const RenderedUsers> UserSnapshot::at_hand(int64_t generation)
{
    std::lock_guard<std::mutex> lock(mu_);
    if (!set_ || set_->generation != generation) return nullptr;
    ++served_;
    return set_;
}

std::shared_ptr<const RenderedUsers> UserSnapshot::current(DirectoryStore& store,
                                                           const scim::RenderOptions& options,
                                                           int64_t generation)
{
    if (auto set = at_hand(generation)) return set;
    std::unique_lock<std::mutex> building(build_mu_, std::try_to_lock);
    if (!building) return nullptr;
    if (auto set = at_hand(generation)) return set;  // another thread just finished one
    auto fresh = render_all_users(store, options);
    if (!fresh) return nullptr;
    ++rebuilt_;
    ++served_;
    std::lock_guard<std::mutex> lock(mu_);
    set_ = fresh;
    return fresh;
}

std::shared_ptr<const RenderedUsers> UserSnapshot::for_lookup(DirectoryStore& store,
                                                              const scim::RenderOptions& options,
                                                              int64_t generation)
{
    if (auto set = at_hand(generation)) return set;
    {
        std::lock_guard<std::mutex> lock(mu_);
        if (lookup_generation_ != generation) {
            lookup_generation_ = generation;
            lookup_misses_ = 0;
        }
        if (++lookup_misses_ < kLookupsBeforeRebuild) return nullptr;
    }
    return current(store, options, generation);
}

}  // namespace allot::scimd
