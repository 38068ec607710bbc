// config.cpp - load and validate allot.yaml (see config.hpp).
//
// The Walker below carries the key path as it descends so each message can
// name exactly where the problem is; it keeps going after an error so one run
// reports everything wrong with the file.
#include "allot/config.hpp"

#include <algorithm>
#include <csignal>
#include <set>

#include "allot/units.hpp"
#include "allot/yaml_tree.hpp"

namespace allot {

const TeamConfig* Config::team_by_account(std::string_view account) const
{
    for (const auto& team : teams)
        if (team.account == account) return &team;
    return nullptr;
}

const TeamConfig* Config::team_by_qos(std::string_view qos) const
{
    for (const auto& team : teams)
        if (team.qos == qos) return &team;
    return nullptr;
}

std::string ConfigErrors::joined() const
{
    std::string out;
    for (const auto& line : lines) out += line + "\n";
    return out;
}

namespace {

// Slurm object names: what sacctmgr accepts for accounts and QOS, kept strict.
bool is_slurm_name(std::string_view s)
{
    if (s.empty() || s.size() > 64) return false;
    for (char c : s)
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.'))
            return false;
    return s.front() != '-' && s.front() != '.';
}

// SCIM group / POSIX names as they appear in caches.
bool is_group_name(std::string_view s)
{
    if (s.empty() || s.size() > 128) return false;
    for (char c : s)
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_' || c == '.'))
            return false;
    return s.front() != '-';
}

bool is_signal_name(std::string_view s)
{
    static const char* const names[] = {"TERM", "USR1", "USR2", "INT",
                                        "HUP",  "URG",  "CONT", "QUIT"};
    for (const char* n : names)
        if (s == n) return true;
    return false;
}

class Walker {
public:
    explicit Walker(std::string source) : source_(std::move(source)) {}

    std::vector<std::string> errors;

    void error(const std::string& path, int line, const std::string& message)
    {
        std::string text = source_ + ": ";
        if (!path.empty()) text += path + ": ";
        text += message;
        if (line > 0) text += " (line " + std::to_string(line) + ")";
        errors.push_back(std::move(text));
    }

    static std::string join(const std::string& path, const std::string& key)
    {
        return path.empty() ? key : path + "." + key;
    }

    // Returns the section if present and a map; reports unknown keys.
    const YamlNode* section(const YamlNode& parent, const std::string& path, const std::string& key,
                            std::initializer_list<const char*> allowed)
    {
        const YamlNode* node = parent.find(key);
        if (!node || node->is_null()) return nullptr;
        return expect_map(*node, join(path, key), allowed) ? node : nullptr;
    }

    bool expect_map(const YamlNode& node, const std::string& path,
                    std::initializer_list<const char*> allowed)
    {
        if (!node.is_map()) {
            error(path, node.line, "must be a mapping of keys to values");
            return false;
        }
        for (const auto& [key, value] : node.map) {
            const bool known = std::any_of(allowed.begin(), allowed.end(),
                                           [&](const char* a) { return key == a; });
            if (!known) {
                std::string list;
                for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
                error(join(path, key), value.line, "unknown key (allowed here: " + list + ")");
            }
        }
        return true;
    }

    const YamlNode* scalar(const YamlNode& map, const std::string& path, const std::string& key,
                           bool required)
    {
        const YamlNode* node = map.find(key);
        if (!node || node->is_null()) {
            if (required) error(join(path, key), map.line, "is required");
            return nullptr;
        }
        if (!node->is_scalar()) {
            error(join(path, key), node->line, "must be a single value, not a list or mapping");
            return nullptr;
        }
        return node;
    }

    void text(const YamlNode& map, const std::string& path, const std::string& key,
              std::string& out, bool required = false, bool (*valid)(std::string_view) = nullptr,
              const char* what = nullptr)
    {
        const YamlNode* node = scalar(map, path, key, required);
        if (!node) return;
        if (node->scalar.find('\n') != std::string::npos || node->scalar.size() > 4096) {
            error(join(path, key), node->line, "must be a single line of at most 4096 characters");
            return;
        }
        if (valid && !valid(node->scalar)) {
            error(join(path, key), node->line, std::string("must be ") + what);
            return;
        }
        out = node->scalar;
    }

    template <typename T>
    void number(const YamlNode& map, const std::string& path, const std::string& key, T& out,
                uint64_t min, uint64_t max, bool required = false)
    {
        const YamlNode* node = scalar(map, path, key, required);
        if (!node) return;
        auto value = parse_count(node->scalar, UINT64_MAX);
        if (!value || node->quoted || *value < min || *value > max) {
            std::string rule = "must be a whole number ≥ " + std::to_string(min);
            if (max < UINT32_MAX) rule += " and ≤ " + std::to_string(max);
            error(join(path, key), node->line, rule);
            return;
        }
        out = static_cast<T>(*value);
    }

    // YAML 1.2's booleans only: yes/no/on/off (YAML 1.1) and quoted text are
    // refused rather than guessed.
    void boolean(const YamlNode& map, const std::string& path, const std::string& key, bool& out)
    {
        const YamlNode* node = scalar(map, path, key, false);
        if (!node) return;
        const std::string& v = node->scalar;
        if (!node->quoted && (v == "true" || v == "True" || v == "TRUE"))
            out = true;
        else if (!node->quoted && (v == "false" || v == "False" || v == "FALSE"))
            out = false;
        else
            error(join(path, key), node->line, "must be true or false");
    }

    void minutes(const YamlNode& map, const std::string& path, const std::string& key,
                 std::optional<uint32_t>& out)
    {
        const YamlNode* node = scalar(map, path, key, false);
        if (!node) return;
        auto value = parse_duration_minutes(node->scalar);
        if (!value) {
            error(join(path, key), node->line, value.error().message);
            return;
        }
        out = value.value();
    }

    void memory(const YamlNode& map, const std::string& path, const std::string& key, uint64_t& out)
    {
        const YamlNode* node = scalar(map, path, key, false);
        if (!node) return;
        auto value = parse_memory_mb(node->scalar);
        if (!value) {
            error(join(path, key), node->line, value.error().message);
            return;
        }
        out = value.value();
    }

    void text_list(const YamlNode& map, const std::string& path, const std::string& key,
                   std::vector<std::string>& out)
    {
        const YamlNode* node = map.find(key);
        if (!node || node->is_null()) return;
        if (!node->is_seq()) {
            error(join(path, key), node->line, "must be a list");
            return;
        }
        std::vector<std::string> values;
        for (size_t i = 0; i < node->seq.size(); ++i) {
            const auto& item = node->seq[i];
            if (!item.is_scalar() || item.scalar.empty()) {
                error(join(path, key) + "[" + std::to_string(i) + "]", item.line,
                      "must be a non-empty value");
                continue;
            }
            values.push_back(item.scalar);
        }
        out = std::move(values);
    }

private:
    std::string source_;
};

bool is_absolute_path(std::string_view s)
{
    return !s.empty() && s.front() == '/' && s.find("/../") == std::string_view::npos &&
           s.find('\0') == std::string_view::npos;
}

bool is_listen_address(std::string_view s)
{
    const auto colon = s.rfind(':');
    return colon != std::string_view::npos && colon > 0 &&
           parse_count(s.substr(colon + 1), 65535).has_value();
}

bool is_scim_url(std::string_view s)
{
    // HTTPS only, except plain HTTP to loopback (fixtures and same-host setups).
    if (s.rfind("https://", 0) == 0) return s.size() > 8;
    return s.rfind("http://127.", 0) == 0 || s.rfind("http://localhost", 0) == 0 ||
           s.rfind("http://[::1]", 0) == 0;
}

void read_cluster(Walker& w, const YamlNode& root, Config& config)
{
    const YamlNode* s = w.section(
        root, "", "cluster",
        {"name", "partition", "default_account", "join_hint", "support", "mem_per_gpu",
         "cpus_per_gpu"});
    if (!s) return;
    auto& c = config.cluster;
    w.text(*s, "cluster", "name", c.name, false, is_slurm_name, "a Slurm cluster name");
    w.text(*s, "cluster", "partition", c.partition, false, is_slurm_name, "a Slurm partition name");
    w.text(*s, "cluster", "default_account", c.default_account, false, is_slurm_name,
           "a Slurm account name (lowercase letters, digits, - _ .)");
    w.text(*s, "cluster", "join_hint", c.join_hint);
    w.text(*s, "cluster", "support", c.support);
    w.memory(*s, "cluster", "mem_per_gpu", c.mem_per_gpu_mb);
    w.number(*s, "cluster", "cpus_per_gpu", c.cpus_per_gpu, 0, 4096);
}

void read_tier_common(Walker& w, const YamlNode& s, const std::string& path, TierConfig& tier,
                      bool has_qos)
{
    if (has_qos) w.text(s, path, "qos", tier.qos, false, is_slurm_name, "a Slurm QOS name");
    w.minutes(s, path, "default_time", tier.default_minutes);
    std::optional<uint32_t> max;
    w.minutes(s, path, "max_time", max);
    if (max) tier.max_minutes = *max == kUnlimitedMinutes ? 0 : *max;
    w.number(s, path, "priority", tier.priority, 0, 1000000);
}

void read_tiers(Walker& w, const YamlNode& root, Config& config)
{
    auto& t = config.tiers;
    const YamlNode* s = w.section(root, "", "tiers", {"project", "general", "spot"});
    if (!s) return;
    if (const YamlNode* p =
            w.section(*s, "tiers", "project", {"default_time", "max_time", "priority"}))
        read_tier_common(w, *p, "tiers.project", t.project, false);
    if (const YamlNode* g = w.section(
            *s, "tiers", "general",
            {"qos", "default_time", "max_time", "priority", "pool_gpus", "per_team_gpus"})) {
        read_tier_common(w, *g, "tiers.general", t.general, true);
        w.number(*g, "tiers.general", "pool_gpus", t.general.pool_gpus, 0, 1000000);
        w.number(*g, "tiers.general", "per_team_gpus", t.general.per_team_gpus, 0, 1000000);
        if (t.general.per_team_gpus > t.general.pool_gpus)
            w.error("tiers.general.per_team_gpus", g->line,
                    "is larger than tiers.general.pool_gpus (" +
                        std::to_string(t.general.pool_gpus) + ")");
    }
    if (const YamlNode* sp =
            w.section(*s, "tiers", "spot",
                      {"qos", "default_time", "max_time", "priority", "grace_seconds", "signal"})) {
        read_tier_common(w, *sp, "tiers.spot", t.spot, true);
        w.number(*sp, "tiers.spot", "grace_seconds", t.spot.grace_seconds, 0, 65535);
        w.text(*sp, "tiers.spot", "signal", t.spot.signal, false, is_signal_name,
               "one of TERM, USR1, USR2, INT, HUP, URG, CONT, QUIT");
    }
    for (const auto* tier :
         {static_cast<const TierConfig*>(&t.project), static_cast<const TierConfig*>(&t.general),
          static_cast<const TierConfig*>(&t.spot)}) {
        if (tier->default_minutes && tier->max_minutes &&
            *tier->default_minutes > tier->max_minutes)
            w.error("tiers", s->line,
                    "a default_time (" + format_minutes(*tier->default_minutes) +
                        ") is longer than its tier's max_time (" +
                        format_minutes(tier->max_minutes) + ")");
    }
}

void read_teams(Walker& w, const YamlNode& root, Config& config)
{
    const YamlNode* list = root.find("teams");
    if (!list || list->is_null()) return;
    if (!list->is_seq()) {
        w.error("teams", list->line, "must be a list of teams");
        return;
    }
    std::set<std::string> accounts, groups, qos_names;
    for (size_t i = 0; i < list->seq.size(); ++i) {
        const YamlNode& item = list->seq[i];
        const std::string path = "teams[" + std::to_string(i) + "]";
        if (!w.expect_map(item, path,
                          {"group", "account", "qos", "gpus", "description", "kubernetes"}))
            continue;
        TeamConfig team;
        w.text(item, path, "group", team.group, true, is_group_name,
               "a group name (letters, digits, - _ .)");
        w.text(item, path, "account", team.account, true, is_slurm_name,
               "a Slurm account name (lowercase letters, digits, - _ .)");
        w.text(item, path, "qos", team.qos, false, is_slurm_name, "a Slurm QOS name");
        if (team.qos.empty()) team.qos = team.account;
        w.number(item, path, "gpus", team.gpus, 0, 1000000, true);
        w.text(item, path, "description", team.description);
        if (const YamlNode* k =
                w.section(item, path, "kubernetes", {"namespace", "gpus", "cpus", "memory"})) {
            KubernetesQuota quota;
            const std::string kpath = path + ".kubernetes";
            w.text(*k, kpath, "namespace", quota.namespace_name, false, is_slurm_name,
                   "a Kubernetes namespace name");
            if (quota.namespace_name.empty()) quota.namespace_name = team.account;
            w.number(*k, kpath, "gpus", quota.gpus, 0, 1000000);
            w.number(*k, kpath, "cpus", quota.cpus, 0, 10000000);
            w.memory(*k, kpath, "memory", quota.memory_mb);
            team.kubernetes = quota;
        }
        if (!team.account.empty() && !accounts.insert(team.account).second)
            w.error(path + ".account", item.line,
                    "account '" + team.account + "' is used by two teams");
        if (!team.group.empty() && !groups.insert(team.group).second)
            w.error(path + ".group", item.line, "group '" + team.group + "' is used by two teams");
        if (!team.qos.empty() && !qos_names.insert(team.qos).second)
            w.error(path + ".qos", item.line, "QOS '" + team.qos + "' is used by two teams");
        config.teams.push_back(std::move(team));
    }
    for (size_t i = 0; i < config.teams.size(); ++i) {
        const auto& team = config.teams[i];
        const std::string path = "teams[" + std::to_string(i) + "]";
        const int line = list->seq[i].line;
        if (team.account == config.cluster.default_account)
            w.error(path + ".account", line,
                    "'" + team.account + "' is cluster.default_account, the zero-GPU account");
        if (team.qos == config.tiers.general.qos || team.qos == config.tiers.spot.qos)
            w.error(path + ".qos", line, "'" + team.qos + "' is the name of a shared tier's QOS");
    }
}

// identity.dialect picks a preset of attribute paths; identity.attributes.*
// override one field each (allot/scim_client.hpp, ScimAttributeMap).
void read_identity_attributes(Walker& w, const YamlNode& s, IdentityConfig& id)
{
    w.text(s, "identity", "dialect", id.dialect);
    if (id.dialect != "allot" && id.dialect != "coreweave")
        w.error("identity.dialect", s.line, "must be allot or coreweave");
    const YamlNode* a = w.section(s, "identity", "attributes",
                                  {"user_name", "uid", "gid", "home", "shell", "ssh_keys",
                                   "group_name", "group_gid", "members"});
    if (!a) return;
    for (const auto& [key, value] : a->map) {
        std::string path;
        w.text(*a, "identity.attributes", key, path, true);
        if (key == "members" && path != "value" && path != "display")
            w.error("identity.attributes.members", value.line, "must be value or display");
        else if (path.empty() || path.back() == ':' || path.find(' ') != std::string::npos)
            w.error("identity.attributes." + key, value.line,
                    "must be a core attribute or <extension URN>:<attribute>");
        id.attributes[key] = path;
    }
}

void read_identity(Walker& w, const YamlNode& root, Config& config)
{
    const YamlNode* s = w.section(root, "", "identity",
                                  {"scim_url",
                                   "token_file",
                                   "ca_file",
                                   "timeout_seconds",
                                   "keys_timeout_ms",
                                   "uid_min",
                                   "uid_max",
                                   "gid_min",
                                   "gid_max",
                                   "shells",
                                   "home_prefix",
                                   "cache_dir",
                                   "cache_owner",
                                   "poll_seconds",
                                   "max_removals",
                                   "extension_schema",
                                   "dialect",
                                   "attributes",
                                   "reserved_names",
                                   "source_extra_pages",
                                   "source_max_response_bytes",
                                   "source_max_cycle_bytes",
                                   "source_deadline_seconds"});
    if (!s) return;
    auto& id = config.identity;
    const std::string p = "identity";
    w.text(*s, p, "scim_url", id.scim_url, false, is_scim_url,
           "an https:// URL (http:// only to 127.0.0.1 or localhost)");
    w.text(*s, p, "token_file", id.token_file, false, is_absolute_path, "an absolute path");
    w.text(*s, p, "ca_file", id.ca_file, false, is_absolute_path, "an absolute path");
    w.number(*s, p, "timeout_seconds", id.timeout_seconds, 1, 3600);
    w.number(*s, p, "keys_timeout_ms", id.keys_timeout_ms, 10, 60000);
    // UIDs/GIDs below 1000 belong to the system; 0 is root and never allowed.
    w.number(*s, p, "uid_min", id.uid_min, 1000, 4294967294u);
    w.number(*s, p, "uid_max", id.uid_max, 1000, 4294967294u);
    w.number(*s, p, "gid_min", id.gid_min, 1000, 4294967294u);
    w.number(*s, p, "gid_max", id.gid_max, 1000, 4294967294u);
    if (id.uid_min > id.uid_max)
        w.error(p + ".uid_min", s->line, "is larger than identity.uid_max");
    if (id.gid_min > id.gid_max)
        w.error(p + ".gid_min", s->line, "is larger than identity.gid_max");
    w.text_list(*s, p, "shells", id.shells);
    for (size_t i = 0; i < id.shells.size(); ++i)
        if (!is_absolute_path(id.shells[i]))
            w.error(p + ".shells[" + std::to_string(i) + "]", s->line, "must be an absolute path");
    w.text(*s, p, "home_prefix", id.home_prefix, false, is_absolute_path, "an absolute path");
    w.text(*s, p, "cache_dir", id.cache_dir, false, is_absolute_path, "an absolute path");
    w.text(*s, p, "cache_owner", id.cache_owner, false, is_group_name, "a user name");
    w.number(*s, p, "poll_seconds", id.poll_seconds, 5, 86400);
    w.number(*s, p, "max_removals", id.max_removals, 0, 100000000);
    w.text(*s, p, "extension_schema", id.extension_schema);
    read_identity_attributes(w, *s, id);
    if (s->find("reserved_names")) {
        std::vector<std::string> names;
        w.text_list(*s, p, "reserved_names", names);
        id.reserved_names = std::move(names);
    }
    w.number(*s, p, "source_extra_pages", id.source_extra_pages, 0, 1000);
    w.number(*s, p, "source_max_response_bytes", id.source_max_response_bytes, 4096,
             uint64_t(1) << 32);
    w.number(*s, p, "source_max_cycle_bytes", id.source_max_cycle_bytes, 4096, uint64_t(1) << 40);
    w.number(*s, p, "source_deadline_seconds", id.source_deadline_seconds, 1, 86400);
}

void read_node(Walker& w, const YamlNode& root, Config& config)
{
    const YamlNode* s = w.section(root, "", "node", {"role", "admin_group", "run_dir"});
    if (!s) return;
    // Absent stays Unset (see NodeRole); given, it must say which.
    if (s->find("role")) {
        std::string role;
        w.text(*s, "node", "role", role);
        if (role == "compute")
            config.node.role = NodeRole::Compute;
        else if (role == "login")
            config.node.role = NodeRole::Login;
        else
            w.error("node.role", s->find("role")->line, "must be login or compute");
    }
    w.text(*s, "node", "admin_group", config.node.admin_group, false, is_group_name,
           "a group name");
    w.text(*s, "node", "run_dir", config.node.run_dir, false, is_absolute_path, "an absolute path");
}

void read_scim_server(Walker& w, const YamlNode& root, Config& config)
{
    const YamlNode* s =
        w.section(root, "", "scim_server",
                  {"listen", "tls_cert", "tls_key", "store", "home_template", "shell",
                   "max_body_bytes", "threads", "max_header_bytes", "header_timeout_seconds",
                   "body_timeout_seconds", "write_timeout_seconds", "keep_alive_seconds",
                   "max_connections", "max_connections_per_address", "private_groups"});
    if (!s) return;
    auto& c = config.scim_server;
    const std::string p = "scim_server";
    w.text(*s, p, "listen", c.listen, false, is_listen_address, "HOST:PORT");
    w.text(*s, p, "tls_cert", c.tls_cert, false, is_absolute_path, "an absolute path");
    w.text(*s, p, "tls_key", c.tls_key, false, is_absolute_path, "an absolute path");
    w.text(*s, p, "store", c.store, false, is_absolute_path, "an absolute path");
    w.text(*s, p, "home_template", c.home_template);
    w.text(*s, p, "shell", c.shell, false, is_absolute_path, "an absolute path");
    w.number(*s, p, "max_body_bytes", c.max_body_bytes, 1024, 64u << 20);
    w.number(*s, p, "threads", c.threads, 1, 256);
    w.number(*s, p, "max_header_bytes", c.max_header_bytes, 4096, 1u << 20);
    w.number(*s, p, "header_timeout_seconds", c.header_timeout_seconds, 1, 3600);
    w.number(*s, p, "body_timeout_seconds", c.body_timeout_seconds, 1, 3600);
    w.number(*s, p, "write_timeout_seconds", c.write_timeout_seconds, 1, 3600);
    w.number(*s, p, "keep_alive_seconds", c.keep_alive_seconds, 1, 3600);
    w.number(*s, p, "max_connections", c.max_connections, 16, 1000000);
    w.number(*s, p, "max_connections_per_address", c.max_connections_per_address, 1, 1000000);
    w.boolean(*s, p, "private_groups", c.private_groups);
    if (c.tls_cert.empty() != c.tls_key.empty())
        w.error(p, s->line, "tls_cert and tls_key must be given together");
}

void read_oidc(Walker& w, const YamlNode& root, Config& config)
{
    const YamlNode* s =
        w.section(root, "", "oidc",
                  {"issuer", "audience", "token_lifetime_seconds", "keys_dir", "group_prefix",
                   "max_groups", "jwks_max_age_seconds", "activate_after_seconds"});
    if (!s) return;
    auto& c = config.oidc;
    w.text(
        *s, "oidc", "issuer", c.issuer, false,
        [](std::string_view v) { return v.rfind("https://", 0) == 0 && v.size() > 8; },
        "an https:// URL");
    w.text(*s, "oidc", "audience", c.audience);
    w.number(*s, "oidc", "token_lifetime_seconds", c.token_lifetime_seconds, 60, 86400);
    w.text(*s, "oidc", "keys_dir", c.keys_dir, false, is_absolute_path, "an absolute path");
    w.text(*s, "oidc", "group_prefix", c.group_prefix);
    w.number(*s, "oidc", "max_groups", c.max_groups, 1, 1000);
    w.number(*s, "oidc", "jwks_max_age_seconds", c.jwks_max_age_seconds, 0, kMaxJwksMaxAgeSeconds);
    if (const YamlNode* a = s->find("activate_after_seconds"); a && !a->is_null()) {
        uint32_t after = 0;
        const size_t before = w.errors.size();
        w.number(*s, "oidc", "activate_after_seconds", after, 0, kMaxActivateAfterSeconds);
        if (w.errors.size() == before) {
            c.activate_after_seconds = after;
            // Sooner, relying parties holding the old JWKS refuse the new key's tokens.
            if (after < c.jwks_max_age_seconds)
                w.error("oidc.activate_after_seconds", a->line,
                        "must be at least oidc.jwks_max_age_seconds (" +
                            std::to_string(c.jwks_max_age_seconds) +
                            "): relying parties keep the old JWKS that long");
        }
    }
}

void read_doctor(Walker& w, const YamlNode& root, Config& config)
{
    const YamlNode* s =
        w.section(root, "", "doctor", {"software_roots", "software_user", "software_limit"});
    if (!s) return;
    auto& d = config.doctor;
    const std::string p = "doctor";
    w.text_list(*s, p, "software_roots", d.software_roots);
    for (size_t i = 0; i < d.software_roots.size(); ++i)
        if (!is_absolute_path(d.software_roots[i]))
            w.error(p + ".software_roots[" + std::to_string(i) + "]",
                    s->find("software_roots")->line, "must be an absolute path");
    w.text(*s, p, "software_user", d.software_user, false, is_group_name, "a user name");
    if (d.software_user == "root")
        w.error(p + ".software_user", s->find("software_user")->line,
                "must be an ordinary user: root's view hides what others cannot read");
    w.number(*s, p, "software_limit", d.software_limit, 1, 1000000000);
}

}  // namespace

ConfigLoad parse_config(std::string_view yaml_text, const std::string& source_name)
{
    ConfigLoad result;
    auto tree = parse_yaml(yaml_text);
    if (!tree) {
        result.errors.lines.push_back(source_name + ": " + tree.error().message);
        return result;
    }
    const YamlNode& root = tree.value();
    Walker w(source_name);
    Config config;
    config.source = source_name;
    if (root.is_null()) {
        // An empty file is a valid, all-defaults configuration.
    } else if (w.expect_map(root, "",
                            {"cluster", "tiers", "teams", "identity", "node", "scim_server", "oidc",
                             "doctor"})) {
        read_cluster(w, root, config);
        read_tiers(w, root, config);
        read_teams(w, root, config);
        read_identity(w, root, config);
        read_node(w, root, config);
        read_scim_server(w, root, config);
        read_oidc(w, root, config);
        read_doctor(w, root, config);
    }
    if (!w.errors.empty()) {
        result.errors.lines = std::move(w.errors);
        return result;
    }
    result.config = std::move(config);
    return result;
}

ConfigLoad load_config(const std::string& path)
{
    auto text = read_file_bounded(path, kMaxConfigBytes);
    if (!text) {
        ConfigLoad result;
        result.errors.lines.push_back(text.error().message);
        return result;
    }
    return parse_config(text.value(), path);
}

}  // namespace allot
