// identity_validate.cpp - the one identity validator (see identity_validate.hpp).
#include "allot/identity_validate.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "allot/ssh_key.hpp"

namespace allot {

namespace identity {
namespace {
constexpr const char* kTexts[] = {
    "success",
    "not a portable POSIX name",
    "reserved name",
    "missing id",
    "id outside the allowed range",
    "reserved id",
    "invalid home directory",
    "login shell not allowed",
    "invalid display name",
    "invalid SSH public key",
    "too many SSH keys",
    "too many group members",
    "field of the wrong type",
    "no POSIX extension",
    "duplicate name",
    "duplicate id",
    "unknown group member",
};
}  // namespace

const std::error_category& category() noexcept
{
    static const ErrorArea area("identity", kTexts);
    return area;
}
}  // namespace identity

using IdErrc = identity::Errc;

namespace {

// ---- local identities ------------------------------------------------------

// Calls f(name, id) for every "name:x:id:..." line of passwd(5)/group(5) text.
template <typename F>
void for_each_entry(std::string_view text, F f)
{
    size_t pos = 0;
    while (pos < text.size()) {
        size_t end = text.find('\n', pos);
        if (end == std::string_view::npos) end = text.size();
        std::string_view line = text.substr(pos, end - pos);
        pos = end + 1;
        if (line.empty() || line[0] == '#' || line[0] == '+' || line[0] == '-') continue;
        const size_t c1 = line.find(':');
        if (c1 == 0 || c1 == std::string_view::npos) continue;
        const size_t c2 = line.find(':', c1 + 1);
        if (c2 == std::string_view::npos) continue;
        const size_t c3 = line.find(':', c2 + 1);
        std::string_view id_text = line.substr(
            c2 + 1, c3 == std::string_view::npos ? std::string_view::npos : c3 - c2 - 1);
        uint64_t id = 0;
        bool numeric = !id_text.empty() && id_text.size() <= 10;
        for (char c : id_text) {
            if (c < '0' || c > '9') {
                numeric = false;
                break;
            }
            id = id * 10 + static_cast<uint64_t>(c - '0');
        }
        if (!numeric || id > UINT32_MAX) continue;
        f(line.substr(0, c1), static_cast<uint32_t>(id));
    }
}

Result<std::string> read_text(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) return make_error(allot::Errc::Io, "cannot read " + path);
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) return make_error(allot::Errc::Io, "reading " + path + " failed");
    return text.str();
}

// ---- field helpers ---------------------------------------------------------

bool is_control(char c)
{
    const auto u = static_cast<unsigned char>(c);
    return u < 0x20 || u == 0x7f;
}

// Printable ASCII without ':' (the passwd field separator): no control byte,
// no byte that a terminal or a non-UTF-8 consumer could misread.
bool plain_path_chars(std::string_view path)
{
    return std::none_of(path.begin(), path.end(), [](char c) {
        return is_control(c) || c == ':' || static_cast<unsigned char>(c) >= 0x80;
    });
}

// A component that is empty ("//", trailing '/'), "." or "..".
bool has_unclean_component(std::string_view path)
{
    size_t i = 1;  // path starts with '/'
    while (i <= path.size()) {
        size_t j = path.find('/', i);
        if (j == std::string_view::npos) j = path.size();
        const std::string_view comp = path.substr(i, j - i);
        if (comp.empty() || comp == "." || comp == "..") return true;
        i = j + 1;
    }
    return false;
}

bool under_prefix(std::string_view home, const std::string& prefix)
{
    if (prefix == "/") return home.size() > 1;
    return home.size() > prefix.size() + 1 && home.compare(0, prefix.size(), prefix) == 0 &&
           home[prefix.size()] == '/';
}

std::string quoted(std::string_view text)
{
    return "'" + log_safe(text) + "'";
}

Status check_id(int64_t id, const char* what, uint32_t min, uint32_t max,
                const std::unordered_set<uint32_t>& local, const char* local_kind)
{
    const std::string label = std::string(what) + " " + std::to_string(id);
    if (id == 0) return make_error(IdErrc::ReservedId, label + " (root) is never allowed");
    if (id == kNobodyId)
        return make_error(IdErrc::ReservedId, label + " (nobody) is never allowed");
    if (id < min || id > max)
        return make_error(IdErrc::IdOutOfRange,
                          label + " is outside " + std::to_string(min) + "-" + std::to_string(max));
    if (local.count(static_cast<uint32_t>(id)))
        return make_error(IdErrc::ReservedId,
                          label + " belongs to a local " + local_kind + " of this node");
    return ok_status();
}

}  // namespace

LocalIdentities parse_local_identities(std::string_view passwd_text, std::string_view group_text)
{
    LocalIdentities local;
    for_each_entry(passwd_text, [&](std::string_view name, uint32_t uid) {
        local.names.emplace(name);
        local.uids.insert(uid);
    });
    for_each_entry(group_text, [&](std::string_view name, uint32_t gid) {
        local.names.emplace(name);
        local.gids.insert(gid);
    });
    return local;
}

Result<LocalIdentities> load_local_identities(const std::string& passwd_path,
                                              const std::string& group_path)
{
    auto passwd = read_text(passwd_path);
    if (!passwd) return passwd.error();
    auto group = read_text(group_path);
    if (!group) return group.error();
    return parse_local_identities(passwd.value(), group.value());
}

IdentityRules identity_rules(const IdentityConfig& config, LocalIdentities local)
{
    IdentityRules r;
    r.uid_min = config.uid_min;
    r.uid_max = config.uid_max;
    r.gid_min = config.gid_min;
    r.gid_max = config.gid_max;
    r.home_prefix = config.home_prefix;
    while (r.home_prefix.size() > 1 && r.home_prefix.back() == '/') r.home_prefix.pop_back();
    r.shells = config.shells;
    const auto& reserved =
        config.reserved_names ? *config.reserved_names : default_reserved_names();
    r.reserved_names.insert(reserved.begin(), reserved.end());
    r.local = std::move(local);
    return r;
}

bool valid_posix_name(std::string_view name)
{
    if (name.empty() || name.size() > kMaxPosixNameLen || name[0] == '-' || name[0] == '.')
        return false;
    bool all_digits = true;
    for (char c : name) {
        const bool digit = c >= '0' && c <= '9';
        const bool ok = digit || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '.' ||
                        c == '_' || c == '-';
        if (!ok) return false;
        all_digits = all_digits && digit;
    }
    return !all_digits;
}

Status check_name(std::string_view name, const IdentityRules& rules, const char* what)
{
    if (!valid_posix_name(name))
        return make_error(IdErrc::InvalidName,
                          std::string(what) + " " + quoted(name) +
                              " is not a portable POSIX name ([A-Za-z0-9._-], 1-32, not starting "
                              "with '-' or '.', not all digits)");
    const std::string key(name);
    if (rules.local.names.count(key))
        return make_error(IdErrc::ReservedName, std::string(what) + " " + quoted(name) +
                                                    " is a local account or group of this node");
    if (rules.reserved_names.count(key))
        return make_error(IdErrc::ReservedName, std::string(what) + " " + quoted(name) +
                                                    " is reserved (identity.reserved_names)");
    return ok_status();
}

Status check_uid(int64_t uid, const IdentityRules& rules, const char* what)
{
    return check_id(uid, what, rules.uid_min, rules.uid_max, rules.local.uids, "account");
}

Status check_gid(int64_t gid, const IdentityRules& rules, const char* what)
{
    return check_id(gid, what, rules.gid_min, rules.gid_max, rules.local.gids, "group");
}

Status check_home(std::string_view home, const IdentityRules& rules)
{
    const auto bad = [&](const std::string& why) {
        return make_error(IdErrc::InvalidHome, "homeDirectory " + quoted(home) + " " + why);
    };
    if (home.size() > kMaxHomeLen)
        return bad("is longer than " + std::to_string(kMaxHomeLen) + " bytes");
    if (home.empty() || home[0] != '/') return bad("is not an absolute path");
    if (!plain_path_chars(home)) return bad("holds a control, non-ASCII or ':' character");
    if (has_unclean_component(home)) return bad("has an empty, '.' or '..' component");
    if (!under_prefix(home, rules.home_prefix)) return bad("is not under " + rules.home_prefix);
    return ok_status();
}

Status check_shell(std::string_view shell, const IdentityRules& rules)
{
    if (std::find(rules.shells.begin(), rules.shells.end(), shell) == rules.shells.end())
        return make_error(IdErrc::InvalidShell,
                          "loginShell " + quoted(shell) + " is not in identity.shells");
    return ok_status();
}

Status check_display_name(std::string_view text)
{
    if (text.size() > kMaxDisplayNameLen)
        return make_error(
            IdErrc::InvalidDisplayName,
            "displayName is longer than " + std::to_string(kMaxDisplayNameLen) + " bytes");
    if (std::any_of(text.begin(), text.end(), [](char c) { return is_control(c) || c == ':'; }))
        return make_error(IdErrc::InvalidDisplayName,
                          "displayName holds a control character or ':'");
    return ok_status();
}

Status check_ssh_key(std::string_view line)
{
    auto key = parse_ssh_public_key(line);
    if (!key) return make_error(IdErrc::InvalidSshKey, "sshPublicKeys: " + key.error().message);
    return ok_status();
}

Status check_ssh_key_count(size_t count)
{
    if (count > kMaxSshKeysPerUser)
        return make_error(IdErrc::TooManySshKeys, "sshPublicKeys: " + std::to_string(count) +
                                                      " keys, more than " +
                                                      std::to_string(kMaxSshKeysPerUser));
    return ok_status();
}

Status validate_user(const PosixUser& u, const IdentityRules& rules)
{
    Status s = check_name(u.name, rules, "userName");
    if (s) s = check_uid(u.uid, rules);
    if (s) s = check_gid(u.gid, rules);
    if (s) s = check_home(u.home, rules);
    if (s) s = check_shell(u.shell, rules);
    if (s) s = check_display_name(u.gecos);
    if (s) s = check_ssh_key_count(u.ssh_keys.size());
    for (size_t i = 0; s && i < u.ssh_keys.size(); ++i) s = check_ssh_key(u.ssh_keys[i]);
    return s;
}

Status validate_group(const PosixGroup& g, const IdentityRules& rules, bool allow_no_gid)
{
    auto s = check_name(g.name, rules, "displayName");
    if (!s) return s;
    if (!(allow_no_gid && g.gid == 0)) {
        s = check_gid(g.gid, rules);
        if (!s) return s;
    }
    if (g.members.size() > kMaxGroupMembers)
        return make_error(IdErrc::TooManyMembers, "members: " + std::to_string(g.members.size()) +
                                                      ", more than " +
                                                      std::to_string(kMaxGroupMembers));
    for (const auto& m : g.members)
        if (!valid_posix_name(m))
            return make_error(IdErrc::InvalidName,
                              "members: " + quoted(m) + " is not a portable POSIX name");
    return ok_status();
}

std::string log_safe(std::string_view text)
{
    std::string out;
    for (char c : text.substr(0, 64)) {
        const auto u = static_cast<unsigned char>(c);
        out.push_back((u < 0x20 || u >= 0x7f) ? '?' : c);
    }
    if (text.size() > 64) out += "...";
    return out;
}

const std::vector<std::string>& default_reserved_names()
{
    // Debian base-passwd and RHEL setup/systemd system users and groups, then
    // the admin and service names a cluster node commonly grants power to.
    static const std::vector<std::string> names = {
        // accounts (Debian, RHEL)
        "root",
        "daemon",
        "bin",
        "sys",
        "sync",
        "games",
        "man",
        "lp",
        "mail",
        "news",
        "uucp",
        "proxy",
        "www-data",
        "backup",
        "list",
        "irc",
        "gnats",
        "nobody",
        "_apt",
        "shutdown",
        "halt",
        "operator",
        "ftp",
        "adm",
        "sshd",
        "messagebus",
        "dbus",
        "polkitd",
        "chrony",
        "tss",
        "rpc",
        "rpcuser",
        "nfsnobody",
        "systemd-network",
        "systemd-resolve",
        "systemd-timesync",
        "systemd-coredump",
        "systemd-oom",
        "systemd-journal",
        "systemd-journal-remote",
        "nscd",
        "nslcd",
        "sssd",
        "postfix",
        "ntp",
        "avahi",
        "colord",
        "geoclue",
        "pulse",
        "rtkit",
        "saned",
        "usbmux",
        "dnsmasq",
        "uuidd",
        "tcpdump",
        "unbound",
        "apache",
        "nginx",
        "mysql",
        "postgres",
        "redis",
        "libstoragemgmt",
        "setroubleshoot",
        "cockpit-ws",
        "cockpit-wsinstance",
        "clevis",
        "pesign",
        "gluster",
        "qemu",
        // groups (Debian, RHEL)
        "tty",
        "disk",
        "kmem",
        "dialout",
        "fax",
        "voice",
        "cdrom",
        "floppy",
        "tape",
        "audio",
        "dip",
        "src",
        "shadow",
        "utmp",
        "video",
        "sasl",
        "plugdev",
        "staff",
        "users",
        "nogroup",
        "input",
        "sgx",
        "kvm",
        "render",
        "netdev",
        "crontab",
        "mem",
        "lock",
        "ssh_keys",
        "printadmin",
        "utempter",
        "wheel",
        "sudo",
        "admin",
        "lpadmin",
        "ssl-cert",
        "lxd",
        "libvirt",
        "libvirt-qemu",
        "ssh",
        // cluster services and groups that grant power
        "docker",
        "podman",
        "slurm",
        "slurmdbd",
        "munge",
        "allot",
        "sudoers",
        "nvidia-persistenced",
        "singularity",
        "apptainer",
    };
    return names;
}

}  // namespace allot
