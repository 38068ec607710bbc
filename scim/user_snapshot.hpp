// user_snapshot.hpp - the Users read cache: every user rendered once, in
// userName order, for the two reads clients repeat most (a page by
// startIndex/count, and `userName eq "x"`).
//
// Rendering a page user by user (a groups subquery, cJSON, printing) and
// counting/skipping rows in SQLite per request cost far more than the answer;
// this keeps the rendered JSON of every user and is current as long as the
// store's generation() has not moved. Any write (this process or the CLI's)
// moves it; the next read rebuilds the whole set once, and while one thread
// rebuilds, the others answer from the store as before. Only a rendering
// without projection is kept, so what it serves is exactly what the store
// path renders.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "codec.hpp"
#include "store.hpp"

namespace allot::scimd {

struct RenderedUser {
    std::string user_name;
    bool active = true;
    std::string json;  // json_print(user_to_json(user, options))
};

// All users as rendered at one generation of the store.
struct RenderedUsers {
    int64_t generation = 0;
    std::vector<RenderedUser> users;  // by userName, bytewise (SQLite's BINARY order)
    // Into `users`, same order: every one, and the active ones only.
    std::vector<const RenderedUser*> everyone, active;

    // The user named exactly `name`, or null.
    const RenderedUser* find(const std::string& name) const;
};

class UserSnapshot {
public:
    // The rendered users at `generation` (the store's, read by the caller) or
    // later, or null when they are not at hand (another thread is rebuilding
    // them, or the store failed): the caller then reads the store itself.
    // `options` must be the same on every call (the service's, no projection).
    std::shared_ptr<const RenderedUsers> current(DirectoryStore& store,
                                                 const scim::RenderOptions& options,
                                                 int64_t generation);
    // The same for a single-user lookup (`userName eq`), which rebuilds only once the
    // store has stayed at one generation for kLookupsBeforeRebuild lookups: an IdP that
    // looks a name up and then creates it moves the generation between every two reads,
    // and rendering every user for each would make a cheap lookup a directory's work.
    std::shared_ptr<const RenderedUsers> for_lookup(DirectoryStore& store,
                                                    const scim::RenderOptions& options,
                                                    int64_t generation);
    static constexpr uint32_t kLookupsBeforeRebuild = 32;
    // The rendered users if they are current at `generation`, without rebuilding.
    std::shared_ptr<const RenderedUsers> at_hand(int64_t generation);
    uint64_t served() const { return served_; }    // reads answered from a current set
    uint64_t rebuilt() const { return rebuilt_; }  // sets rendered

private:
    std::mutex mu_;        // guards set_, lookup_generation_, lookup_misses_
    std::mutex build_mu_;  // one rebuild at a time
    std::shared_ptr<const RenderedUsers> set_;
    int64_t lookup_generation_ = -1;  // lookups missed at this generation...
    uint32_t lookup_misses_ = 0;      // ...this many times
    std::atomic<uint64_t> served_{0}, rebuilt_{0};
};

// Every user of `store`, rendered with `options`, if no write came in between;
// null otherwise (or on a store error).
std::shared_ptr<const RenderedUsers> render_all_users(DirectoryStore& store,
                                                      const scim::RenderOptions& options);

}  // namespace allot::scimd
