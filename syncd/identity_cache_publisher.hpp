// identity_cache_publisher.hpp - CachePublisher over the node engineer's
// identity cache writer (lib/allot/identity_cache.hpp): allot-syncd never
// writes a cache format of its own.
#pragma once

#include <optional>
#include <set>
#include <string>

#include "allot/identity_cache.hpp"
#include "allot/identity_cache_reader.hpp"
#include "sync_engine.hpp"

namespace allot::syncd {

class IdentityCachePublisher : public CachePublisher {
public:
    explicit IdentityCachePublisher(std::string dir) : dir_(std::move(dir)) {}
    Result<bool> publish(const ValidatedDirectory& d) override
    {
        return publish_identity_cache(dir_, d.users, d.groups);
    }

    // Read with the reader libnss_allot uses; a cache that cannot be read
    // counts as none (the publish that follows replaces it).
    std::optional<std::set<std::string>> published_names() override
    {
        std::set<std::string> names;
        bool any = false;
        any |= collect(kPasswdCacheFile, idcache::Kind::Passwd, names);
        any |= collect(kGroupCacheFile, idcache::Kind::Group, names);
        if (!any) return std::nullopt;
        return names;
    }

private:
    std::string dir_;

    bool collect(const char* file, idcache::Kind kind, std::set<std::string>& names) const
    {
        const char* why = nullptr;
        const std::string path = dir_ + "/" + file;
        idcache::Snapshot* snap = idcache::snapshot_open(path.c_str(), kind, &why);
        if (!snap) return false;
        const uint32_t n = idcache::snapshot_count(snap);
        for (uint32_t i = 0; i < n; ++i) {
            if (kind == idcache::Kind::Passwd) {
                idcache::UserView u;
                if (idcache::user_at(snap, i, &u))
                    names.insert("user:" + std::string(u.name.data, u.name.size));
            } else {
                idcache::GroupView g;
                if (idcache::group_at(snap, i, &g))
                    names.insert("group:" + std::string(g.name.data, g.name.size));
            }
        }
        idcache::snapshot_unref(snap);
        return true;
    }
};

}  // namespace allot::syncd
