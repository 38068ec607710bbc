// config.hpp - the one configuration file, /etc/allot/allot.yaml.
//
// load_config() validates the whole file and reports every problem at once,
// each with its key path and line ("teams[3].gpus: must be a whole number ≥ 0
// (line 41)"). Unknown keys are errors, so a typo never silently disables a
// rule. etc/allot.yaml documents every key; docs/configuration.md explains them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "allot/result.hpp"

namespace allot {

inline constexpr const char* kDefaultConfigPath = "/etc/allot/allot.yaml";
// allot.yaml is read whole; a larger file is refused.
inline constexpr size_t kMaxConfigBytes = 1 << 20;

struct ClusterConfig {
    std::string name = "cluster";
    // The GPU partition the policy governs; jobs in other partitions pass untouched.
    // Empty means every partition.
    std::string partition;
    std::string default_account = "default";  // zero-GPU landing account
    // Appended to the zero-GPU rejection: how a researcher gets assigned to a team.
    std::string join_hint = "ask your team's PI to add you to a team in the identity portal";
    // Who researchers contact (an address or URL), named by mylimits to users without an
    // account. Empty: mylimits names no one.
    std::string support;
    uint64_t mem_per_gpu_mb = 0;  // 0: no default
    uint32_t cpus_per_gpu = 0;    // 0: no default
};

struct TierConfig {
    std::string qos;                          // Slurm QOS name of the tier
    std::optional<uint32_t> default_minutes;  // --time given to jobs that set none
    uint32_t max_minutes = 0;                 // MaxWall written by allot-syncd (0: none)
    uint32_t priority = 0;                    // QOS Priority written by allot-syncd
};

struct GeneralTierConfig : TierConfig {
    GeneralTierConfig()
    {
        qos = "general";
        max_minutes = 3 * 24 * 60;
        priority = 50;
    }
    uint32_t pool_gpus = 0;      // GrpTRES=gres/gpu=<pool>
    uint32_t per_team_gpus = 0;  // MaxTRESPerAccount=gres/gpu=<cap>
};

struct SpotTierConfig : TierConfig {
    SpotTierConfig()
    {
        qos = "spot";
        max_minutes = 24 * 60;
    }
    uint32_t grace_seconds = 600;  // GraceTime
    std::string signal = "TERM";   // sent to the batch script when preempted
};

struct TiersConfig {
    TiersConfig() { project.priority = 100; }
    TierConfig project;  // qos unused: each team names its own project QOS
    GeneralTierConfig general;
    SpotTierConfig spot;
};

struct KubernetesQuota {
    std::string namespace_name;
    uint32_t gpus = 0;
    uint32_t cpus = 0;
    uint64_t memory_mb = 0;
};

struct TeamConfig {
    std::string group;    // SCIM group whose members form the team
    std::string account;  // Slurm account
    std::string qos;      // project QOS (defaults to the account name)
    uint32_t gpus = 0;    // guaranteed share, GrpTRES=gres/gpu=<gpus>
    std::string description;
    std::optional<KubernetesQuota> kubernetes;
};

struct IdentityConfig {
    std::string scim_url;  // https://…/scim/v2
    std::string token_file;
    std::string ca_file;
    uint32_t timeout_seconds = 20;
    uint32_t keys_timeout_ms = 2000;  // allot-keys live lookup budget
    uint32_t uid_min = 10000, uid_max = 2000000000;
    uint32_t gid_min = 10000, gid_max = 2000000000;
    std::vector<std::string> shells = {"/bin/bash", "/bin/sh", "/bin/zsh", "/usr/bin/bash",
                                       "/usr/bin/zsh"};
    std::string home_prefix = "/home";
    std::string cache_dir = "/var/lib/allot";
    std::string cache_owner = "root";  // who besides root may own the caches and their dirs
    uint32_t poll_seconds = 300;
    uint32_t max_removals = 50;  // syncd refuses larger removal plans without --force
    std::string extension_schema = "urn:ietf:params:scim:schemas:extension:allot:2.0:PosixUser";
    // Where allot-syncd reads each POSIX field (allot/scim_client.hpp,
    // ScimAttributeMap): a preset, then per-field paths over it.
    std::string dialect = "allot";                  // allot | coreweave
    std::map<std::string, std::string> attributes;  // uid: "<URN>:uidNumber", members: display…
    // Names no directory user or group may take (besides the node's own
    // accounts and groups); unset: default_reserved_names() of identity_validate.hpp.
    std::optional<std::vector<std::string>> reserved_names;
    // Bounds on one sync cycle's reads, so a broken or hostile source can
    // neither keep allot-syncd paging for ever nor grow it without limit.
    uint32_t source_extra_pages = 2;                 // pages read beyond totalResults
    uint64_t source_max_response_bytes = 10u << 20;  // one response
    uint64_t source_max_cycle_bytes = 256u << 20;    // every response of one cycle
    uint32_t source_deadline_seconds = 600;          // one cycle's reads
};

// No default: a compute node whose role was left out must not admit everyone,
// so pam_allot and allot-keys refuse to decide while it is Unset.
enum class NodeRole { Unset, Login, Compute };

struct NodeConfig {
    NodeRole role = NodeRole::Unset;
    std::string admin_group = "root";
    std::string run_dir = "/run/allot";
};

struct ScimServerConfig {
    std::string listen = "127.0.0.1:8443";
    std::string tls_cert;
    std::string tls_key;
    std::string store = "/var/lib/allot-scimd/directory.db";
    std::string home_template = "/home/{user}";
    std::string shell = "/bin/bash";
    uint32_t max_body_bytes = 1 << 20;
    uint32_t threads = 8;
    // Slow and greedy clients (see scim/server.hpp): deadlines per connection
    // and caps on connections, in total and per client address.
    uint32_t max_header_bytes = 64 * 1024;
    uint32_t header_timeout_seconds = 10;  // accept or last response → end of headers
    uint32_t body_timeout_seconds = 30;    // end of headers → end of body
    uint32_t write_timeout_seconds = 10;   // a whole response
    uint32_t keep_alive_seconds = 5;       // idle between requests
    uint32_t max_connections = 1024;
    uint32_t max_connections_per_address = 64;
    // /Groups also lists each user's private group, marked as synthesised,
    // for consumers that resolve primary gids from the group map (nsscache).
    bool private_groups = false;
};

// A day of JWKS caching already makes every key rotation take a day; a week
// is the longest a rotation may wait for its new key to sign.
inline constexpr uint32_t kMaxJwksMaxAgeSeconds = 86400;
inline constexpr uint32_t kMaxActivateAfterSeconds = 604800;

struct OidcConfig {
    std::string issuer;
    std::string audience;  // the cluster's client id
    uint32_t token_lifetime_seconds = 900;
    std::string keys_dir = "/var/lib/allot-oidc";
    std::string group_prefix;
    uint32_t max_groups = 64;
    // Key rotation: relying parties cache the JWKS for this long (Cache-Control
    // max-age), so a new key signs only once they can have fetched it.
    uint32_t jwks_max_age_seconds = 300;
    // Delay from `keys rotate` to the new key signing; unset: the max-age plus
    // the time a running server takes to publish the key, plus clock skew.
    std::optional<uint32_t> activate_after_seconds;
};

// allot-doctor's software walk (allot-doctor(8)): the shared software roots it
// walks as an ordinary user; its command line overrides each key.
struct DoctorConfig {
    std::vector<std::string> software_roots;  // absolute paths; none: no walk
    std::string software_user = "nobody";     // the ordinary user the walk runs as
    uint64_t software_limit = 200000;         // entries walked per root before it stops
};

struct Config {
    std::string source;  // file the config was read from, for messages
    ClusterConfig cluster;
    TiersConfig tiers;
    std::vector<TeamConfig> teams;
    IdentityConfig identity;
    NodeConfig node;
    ScimServerConfig scim_server;
    OidcConfig oidc;
    DoctorConfig doctor;

    const TeamConfig* team_by_account(std::string_view account) const;
    const TeamConfig* team_by_qos(std::string_view qos) const;
};

// All problems found, one line each, already prefixed with file, key path and line.
struct ConfigErrors {
    std::vector<std::string> lines;
    std::string joined() const;
};

struct ConfigLoad {
    std::optional<Config> config;
    ConfigErrors errors;
    bool ok() const { return config.has_value(); }
};

ConfigLoad parse_config(std::string_view yaml_text, const std::string& source_name);
ConfigLoad load_config(const std::string& path);

}  // namespace allot
