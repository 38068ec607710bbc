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
    const auto valid = validate_directory(dir, rules_);
    for (const auto& u : valid.users)
        if (u.name == user) return std::optional<std::vector<std::string>>(u.ssh_keys);
    return std::optional<std::vector<std::string>>();  // inactive or rejected
}

const char* source_name(KeysSource source)
{
    switch (source) {
        case KeysSource::Live: return "live";
        case KeysSource::Cache: return "cache";
        case KeysSource::None: return "none";
        case KeysSource::Denied: return "denied";
        case KeysSource::NotDirectory: return "not-directory-user";
        case KeysSource::InvalidName: return "invalid-name";
    }
    return "unknown";
}

Result<std::vector<std::string>> cached_keys(const std::string& cache_dir, const std::string& user,
                                             uint32_t uid, const idcache::TrustPolicy& trust)
{
    const std::string path = cache_dir + "/" + kKeysCacheFile;
    idcache::Fault fault = idcache::Fault::None;
    const char* why = nullptr;
    idcache::Snapshot* snap =
        idcache::snapshot_open_trusted(path.c_str(), idcache::Kind::Keys, trust, &fault, &why);
    if (!snap)
        return make_error(fault == idcache::Fault::Untrusted ? node::Errc::CacheUntrusted
                                                             : node::Errc::CacheUnavailable,
                          path + ": " + (why ? why : "unavailable"));
    std::vector<std::string> lines;
    idcache::KeysView k;
    bool same_uid = true;
    if (idcache::keys_by_name(snap, user.data(), user.size(), &k)) {
        same_uid = k.uid == uid;
        for (uint32_t i = 0; same_uid && i < k.key_count; ++i) {
            const auto s = idcache::keys_line(k, i);
            lines.emplace_back(s.data, s.size);
        }
    }
    idcache::snapshot_unref(snap);
    if (!same_uid)
        return make_error(node::Errc::NameMismatch, path + ": user " + log_safe(user) +
                                                        " has another uid than in passwd.cache");
    return canonical(lines);
}

namespace {

KeysOutcome refused(KeysSource source, const Error& e)
{
    return {{}, source, e.code, e.describe()};
}

}  // namespace

KeysOutcome resolve_keys(const KeysContext& ctx, const std::string& user)
{
    if (!valid_posix_name(user))
        return refused(KeysSource::InvalidName,
                       make_error(identity::Errc::InvalidName, "not a valid user name"));
    const Config& config = *ctx.config;
    if (config.node.role == NodeRole::Unset)
        return refused(KeysSource::Denied, no_role_error(config));
    auto uid = directory_user(config, user, *ctx.users, ctx.node);
    if (!uid) return refused(KeysSource::NotDirectory, uid.error());
    if (config.node.role == NodeRole::Compute) {
        const auto access =
            admit_directory_user(config, user, uid.value(), *ctx.users, ctx.now, ctx.registry);
        if (!access.allowed) return {{}, KeysSource::Denied, access.code, access.reason};
    }
    std::string note;
    if (ctx.live) {
        auto live = ctx.live->lookup(user);
        if (live) {
            if (!live.value())
                return refused(KeysSource::None,
                               make_error(Errc::NotFound, "unknown at the source"));
            return {canonical(*live.value()), KeysSource::Live, {}, ""};
        }
        note = "live lookup failed (" + live.error().describe() + "); ";
    }
    auto cached = cached_keys(config.identity.cache_dir, user, uid.value(), ctx.node.trust);
    if (!cached)
        return {{}, KeysSource::None, cached.error().code, note + cached.error().describe()};
    return {std::move(cached).value(), KeysSource::Cache, {}, note};
}

}  // namespace allot::keys
