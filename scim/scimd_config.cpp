// scimd_config.cpp - see scimd_config.hpp.
#include "scimd_config.hpp"

#include <thread>

namespace allot::scimd {

IdRange id_range(const Config& c)
{
    return {c.identity.uid_min, c.identity.uid_max, c.identity.gid_min, c.identity.gid_max};
}

bool private_groups(const Config& c, const Overrides& o)
{
    return o.private_groups.value_or(c.scim_server.private_groups);
}

int64_t activation_delay(const Config& c, const Overrides& o, const ServiceOptions& s)
{
    if (o.activate_after) return *o.activate_after;
    if (c.oidc.activate_after_seconds) return *c.oidc.activate_after_seconds;
    return s.jwks_max_age + kActivationMargin;
}

DirectoryPolicy directory_policy(const Config& c)
{
    DirectoryPolicy p;
    p.rules = identity_rules(c.identity);  // the sync's rules, without this host's accounts
    p.home_template = c.scim_server.home_template;
    p.default_shell = c.scim_server.shell;
    return p;
}

Result<ServerOptions> server_options(const Config& c, const Overrides& o)
{
    ServerOptions s;
    auto listen = parse_listen(o.listen.empty() ? c.scim_server.listen : o.listen);
    if (!listen) return listen.error();
    s.host = listen.value().first;
    s.port = listen.value().second;
    s.tls_cert = c.scim_server.tls_cert;
    s.tls_key = c.scim_server.tls_key;
    s.max_body = c.scim_server.max_body_bytes;
    // One event loop per CPU, at most `threads`; workers only run requests that
    // have fully arrived and that a loop cannot answer from memory.
    const size_t threads = static_cast<size_t>(c.scim_server.threads);
    s.event_loops = std::min<size_t>(threads, std::max(1U, std::thread::hardware_concurrency()));
    s.worker_threads = std::max<size_t>(4, 4 * threads);
    s.store_file = o.store.empty() ? c.scim_server.store : o.store;
    s.max_header_bytes = c.scim_server.max_header_bytes;
    s.header_timeout_seconds = static_cast<int>(c.scim_server.header_timeout_seconds);
    s.body_timeout_seconds = static_cast<int>(c.scim_server.body_timeout_seconds);
    s.write_timeout_seconds = static_cast<int>(c.scim_server.write_timeout_seconds);
    s.keep_alive_seconds = static_cast<int>(c.scim_server.keep_alive_seconds);
    s.max_connections = c.scim_server.max_connections;
    s.max_connections_per_address = c.scim_server.max_connections_per_address;
    s.access_log = o.access_log;
    const bool loopback = s.host == "127.0.0.1" || s.host == "::1" || s.host == "localhost";
    if (s.tls_cert.empty() != s.tls_key.empty())
        return make_error("scim_server.tls_cert and tls_key must be set together");
    if (s.tls_cert.empty() && !loopback && !o.insecure_http)
        return make_error("scim_server: refusing plain HTTP on " + s.host +
                          " (set tls_cert/tls_key, or --insecure-http behind a TLS proxy)");
    return s;
}

Result<ServiceOptions> service_options(const Config& c, const Overrides& o)
{
    ServiceOptions s;
    auto server = server_options(c, o);
    if (!server) return server.error();
    const bool tls = !server.value().tls_cert.empty();
    // Public URL: the issuer's origin when configured, else what we listen on.
    std::string origin = c.oidc.issuer;
    if (!origin.empty()) {
        const size_t scheme = origin.find("://");
        const size_t slash = origin.find('/', scheme == std::string::npos ? 0 : scheme + 3);
        if (slash != std::string::npos) origin = origin.substr(0, slash);
    } else {
        origin = std::string(tls ? "https://" : "http://") + server.value().host + ":" +
                 std::to_string(server.value().port);
    }
    s.public_url = origin;
    s.user_extension = c.identity.extension_schema;
    s.policy = directory_policy(c);
    s.max_body = c.scim_server.max_body_bytes;
    s.token.issuer = c.oidc.issuer.empty() ? origin : c.oidc.issuer;
    s.token.audience = c.oidc.audience;
    s.token.lifetime = c.oidc.token_lifetime_seconds;
    s.token.max_groups = c.oidc.max_groups;
    for (const auto& t : c.teams) s.token.cluster_groups.insert(t.group);
    s.keys_dir = o.keys_dir.empty() ? c.oidc.keys_dir : o.keys_dir;
    if (!o.alg.empty()) {
        auto a = alg_from_name(o.alg);
        if (!a) return make_error("--alg must be ES256 or RS256");
        s.alg = *a;
    }
    // Old keys stay published for at least two token lifetimes, and a day by default.
    s.key_overlap = o.key_overlap ? o.key_overlap : std::max<int64_t>(86400, 2 * s.token.lifetime);
    s.jwks_max_age = o.jwks_max_age.value_or(c.oidc.jwks_max_age_seconds);
    return s;
}

}  // namespace allot::scimd
