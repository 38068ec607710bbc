// keys_core.cpp - allot-keys' decision (see keys_core.hpp).
#include "keys_core.hpp"

#include "allot/identity_cache.hpp"
#include "allot/identity_cache_reader.hpp"
#include "allot/ssh_key.hpp"

namespace allot::keys {
namespace {

std::vector<std::string> canonical(const std::vector<std::string>& lines)
{
    std::vector<std::string> out;
    for (const auto& l : lines) {
        auto k = parse_ssh_public_key(l);
        if (k) out.push_back(k.value().line());
    }
    return out;
}

}  // namespace

Result<std::optional<std::vector<std::string>>> ScimLiveKeys::lookup(const std::string& user)
{
    auto found = fetch_user(http_, options_, user);
    if (!found) return found.error();
    if (!found.value()) return std::optional<std::vector<std::string>>();
    ScimDirectory dir;
    dir.users.push_back(std::move(*found.value()));
    const auto valid = validate_directory(dir, identity_);
    for (const auto& u : valid.users)
        if (u.name == user) return std::optional<std::vector<std::string>>(u.ssh_keys);
    return std::optional<std::vector<std::string>>();  // inactive or rejected
}

Result<std::vector<std::string>> cached_keys(const std::string& cache_dir, const std::string& user)
{
    const std::string path = cache_dir + "/" + kKeysCacheFile;
    const char* why = nullptr;
    idcache::Snapshot* snap = idcache::snapshot_open(path.c_str(), idcache::Kind::Keys, &why);
    if (!snap) return make_error(path + ": " + (why ? why : "unavailable"));
    std::vector<std::string> lines;
    idcache::KeysView k;
    if (idcache::keys_by_name(snap, user.data(), user.size(), &k)) {
        for (uint32_t i = 0; i < k.key_count; ++i) {
            const auto s = idcache::keys_line(k, i);
            lines.emplace_back(s.data, s.size);
        }
    }
    idcache::snapshot_unref(snap);
    return canonical(lines);
}

KeysOutcome resolve_keys(const KeysContext& ctx, const std::string& user)
{
    if (!valid_posix_name(user)) return {{}, "invalid-name", "not a valid user name"};
    const Config& config = *ctx.config;
    if (config.node.role == NodeRole::Compute) {
        const auto access = decide_node_access(config, user, *ctx.users, ctx.now, ctx.registry);
        if (!access.allowed) return {{}, "denied", access.reason};
    }
    std::string note;
    if (ctx.live) {
        auto live = ctx.live->lookup(user);
        if (live) {
            if (!live.value()) return {{}, "none", "unknown at the source"};
            return {canonical(*live.value()), "live", ""};
        }
        note = "live lookup failed (" + live.error().message + "); ";
    }
    auto cached = cached_keys(config.identity.cache_dir, user);
    if (!cached) return {{}, "none", note + cached.error().message};
    return {std::move(cached).value(), "cache", note};
}

}  // namespace allot::keys
