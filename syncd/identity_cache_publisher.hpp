// identity_cache_publisher.hpp - CachePublisher over the node engineer's
// identity cache writer (lib/allot/identity_cache.hpp): allot-syncd never
// writes a cache format of its own.
#pragma once

#include <string>

#include "allot/identity_cache.hpp"
#include "sync_engine.hpp"

namespace allot::syncd {

class IdentityCachePublisher : public CachePublisher {
public:
    explicit IdentityCachePublisher(std::string dir) : dir_(std::move(dir)) {}
    Result<bool> publish(const ValidatedDirectory& d) override
    {
        return publish_identity_cache(dir_, d.users, d.groups);
    }

private:
    std::string dir_;
};

}  // namespace allot::syncd
