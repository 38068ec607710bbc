// scimd_config.hpp - allot.yaml (+ command-line overrides) → the options of
// the store, the service and the HTTP server. One place, so `serve`, the
// admin commands and `apply` agree on ranges, templates and the extension URN.
#pragma once

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
    int64_t jwks_max_age = 0;    // 0: 300 s
    bool insecure_http = false;  // allow plain HTTP on a non-loopback address
    bool access_log = false;
    bool private_groups = false;  // serve --private-groups: /Groups lists users' private groups
};

IdRange id_range(const Config& c);
DirectoryPolicy directory_policy(const Config& c);
Result<ServiceOptions> service_options(const Config& c, const Overrides& o);
Result<ServerOptions> server_options(const Config& c, const Overrides& o);

}  // namespace allot::scimd
