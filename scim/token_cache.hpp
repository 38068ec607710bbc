// token_cache.hpp - API tokens by secret hash, as last read from the store.
//
// Every SCIM request names a token; reading it from SQLite cost as much as
// the rest of a cached read. An entry is good while the store's generation()
// (which every token write moves, the CLI's `token revoke` too) is the one it
// was read at, so a revocation takes effect on the next request as before.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "store.hpp"

namespace allot::scimd {

class TokenCache {
public:
    // The token whose secret hashes to `hash`, as of `generation` (read by the
    // caller before this call), from the cache: nothing when it was not read
    // at that generation (then read() it).
    std::optional<ApiToken> cached(const std::string& hash, int64_t generation)
    {
        std::lock_guard<std::mutex> lock(mu_);
        if (generation != generation_) {
            tokens_.clear();
            generation_ = generation;
        }
        if (auto it = tokens_.find(hash); it != tokens_.end()) return it->second;
        return std::nullopt;
    }
    // The same from the store, kept for the next request at `generation`.
    Result<ApiToken> read(DirectoryStore& store, const std::string& hash, int64_t generation)
    {
        auto t = store.find_token(hash);
        if (!t) return t;
        std::lock_guard<std::mutex> lock(mu_);
        // Unknown secrets are never kept, so guessing cannot grow the map
        // beyond the tokens that exist.
        if (generation == generation_ && tokens_.size() < kMaxEntries) tokens_[hash] = t.value();
        return t;
    }

private:
    static constexpr size_t kMaxEntries = 4096;
    std::mutex mu_;
    int64_t generation_ = -1;
    std::unordered_map<std::string, ApiToken> tokens_;
};

}  // namespace allot::scimd
