// validate.cpp - see validate.hpp.
#include "validate.hpp"

#include <algorithm>

#include "allot/ssh_key.hpp"
#include "util.hpp"

namespace allot::scimd {
namespace {

bool has_control(const std::string& s)
{
    return std::any_of(s.begin(), s.end(),
                       [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

}  // namespace

bool valid_posix_name(const std::string& name)
{
    // Portable: [a-z_][a-z0-9_.-]*, at most 32 bytes (what useradd accepts by default).
    if (name.empty() || name.size() > 32) return false;
    if (!((name[0] >= 'a' && name[0] <= 'z') || name[0] == '_')) return false;
    return std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
    });
}

Result<bool> validate_ssh_key(const std::string& line)
{
    // One validator for the whole project (lib/ssh_key.cpp, shared with allot-syncd/allot-keys).
    auto key = parse_ssh_public_key(line);
    if (!key) return key.error();
    return true;
}

Result<bool> normalize_user(scim::User& u, const DirectoryPolicy& p)
{
    if (!valid_posix_name(u.user_name))
        return make_error("userName '" + u.user_name +
                          "' is not a portable POSIX name ([a-z_][a-z0-9_.-]{0,31})");
    for (const auto* f : {&u.display_name, &u.external_id})
        if (has_control(*f) || f->size() > 256 || f->find(':') != std::string::npos)
            return make_error("displayName/externalId: at most 256 characters, no ':' or control");
    if (u.home.empty()) {
        u.home = p.home_template;
        const size_t at = u.home.find("{user}");
        if (at != std::string::npos) u.home.replace(at, 6, u.user_name);
    }
    const std::string prefix =
        p.home_prefix.empty() || p.home_prefix.back() == '/' ? p.home_prefix : p.home_prefix + "/";
    if (u.home.compare(0, prefix.size(), prefix) != 0 || u.home.find("/../") != std::string::npos ||
        u.home.size() > 4096 || has_control(u.home) || u.home.find(':') != std::string::npos ||
        (u.home.size() >= 3 && u.home.compare(u.home.size() - 3, 3, "/..") == 0))
        return make_error("homeDirectory '" + u.home + "' must be under " + p.home_prefix);
    if (u.shell.empty()) u.shell = p.default_shell;
    if (std::find(p.shells.begin(), p.shells.end(), u.shell) == p.shells.end())
        return make_error("loginShell '" + u.shell + "' is not in identity.shells");
    if (u.ssh_keys.size() > p.max_keys)
        return make_error("more than " + std::to_string(p.max_keys) + " ssh keys");
    for (auto& k : u.ssh_keys) {
        while (!k.empty() && k.back() == ' ') k.pop_back();
        auto ok = validate_ssh_key(k);
        if (!ok) return make_error("sshPublicKeys: " + ok.error().message);
    }
    // The same key with another comment is the same key: keep the first.
    std::vector<std::string> unique, blobs;
    for (const auto& k : u.ssh_keys) {
        auto parsed = parse_ssh_public_key(k);
        const std::string blob = parsed.value().type + " " + parsed.value().base64;
        if (std::find(blobs.begin(), blobs.end(), blob) != blobs.end()) continue;
        blobs.push_back(blob);
        unique.push_back(k);
    }
    u.ssh_keys = unique;
    if (u.emails.size() > 16) return make_error("more than 16 emails");
    for (const auto& e : u.emails)
        if (e.value.size() > 256 || has_control(e.value) || e.type.size() > 32)
            return make_error("emails: value too long or contains control characters");
    return true;
}

Result<bool> normalize_group(scim::Group& g)
{
    if (!valid_posix_name(g.display_name))
        return make_error("displayName '" + g.display_name +
                          "' is not a portable POSIX group name");
    if (has_control(g.external_id) || g.external_id.size() > 256)
        return make_error("externalId: at most 256 characters, no control characters");
    if (g.members.size() > 100000) return make_error("too many members");
    return true;
}

}  // namespace allot::scimd
