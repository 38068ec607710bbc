// scimd_config.hpp - allot.yaml (+ command-line overrides) → the options of
// the store, the service and the HTTP server. One place, so `serve`, the
// admin commands and `apply` agree on ranges, templates and the extension URN.
#pragma once

#include <optional>
#include <string>

#include "allot/config.hpp"
#include "server.hpp"
#include "service.hpp"
#include "store.hpp"

namespace allot::scimd {

struct Overrides {
    std::string listen;
    std::string store;
    std::string keys_dir;
    std::string munge_socket;
    std::string alg;  // ES256 | RS256
    int64_t key_overlap = 0;
    // Each unset one comes from allot.yaml (oidc.jwks_max_age_seconds,
    // oidc.activate_after_seconds, scim_server.private_groups).
    std::optional<int64_t> jwks_max_age;    // --jwks-max-age
    std::optional<int64_t> activate_after;  // keys rotate --activate-after
    std::optional<bool> private_groups;     // serve --private-groups / --no-private-groups
    bool insecure_http = false;             // allow plain HTTP on a non-loopback address
    bool access_log = false;
};

// A running server picks up a new key file within a minute (at once on SIGHUP),
// so a scheduled key waits the JWKS max-age plus that minute plus a minute of
// clock skew between this host and the relying parties.
inline constexpr int64_t kActivationMargin = 120;

IdRange id_range(const Config& c);
// Whether /Groups lists the users' private groups: the flag, else the file.
bool private_groups(const Config& c, const Overrides& o);
// Seconds from `keys rotate` to the new key signing: --activate-after, else
// oidc.activate_after_seconds, else the service's JWKS max-age plus the margin.
int64_t activation_delay(const Config& c, const Overrides& o, const ServiceOptions& s);
DirectoryPolicy directory_policy(const Config& c);
Result<ServiceOptions> service_options(const Config& c, const Overrides& o);
Result<ServerOptions> server_options(const Config& c, const Overrides& o);

}  // namespace allot::scimd
