// validate.cpp - see validate.hpp.
#include "validate.hpp"

#include <algorithm>

#include "allot/ssh_key.hpp"
#include "errors.hpp"

namespace allot::scimd {
namespace {

bool has_control(const std::string& s)
{
    return std::any_of(s.begin(), s.end(),
                       [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

// The same key with another comment is the same key: keep the first.
void drop_duplicate_keys(std::vector<std::string>& keys)
{
    std::vector<std::string> unique, blobs;
    for (const auto& k : keys) {
        auto parsed = parse_ssh_public_key(k);
        const std::string blob = parsed.value().type + " " + parsed.value().base64;
        if (std::find(blobs.begin(), blobs.end(), blob) != blobs.end()) continue;
        blobs.push_back(blob);
        unique.push_back(k);
    }
    keys = std::move(unique);
}

Status check_external_id(const std::string& id)
{
    if (has_control(id) || id.size() > 256 || id.find(':') != std::string::npos)
        return make_error(Errc::InvalidValue,
                          "externalId: at most 256 characters, no ':' or control character");
    return ok_status();
}

}  // namespace

IdentityRules open_identity_rules()
{
    IdentityRules r;
    r.uid_min = r.gid_min = 1;
    r.uid_max = r.gid_max = 4294967294u;
    const auto& reserved = default_reserved_names();
    r.reserved_names.insert(reserved.begin(), reserved.end());
    return r;
}

Result<bool> normalize_user(scim::User& u, const DirectoryPolicy& p)
{
    const IdentityRules& rules = p.rules;
    if (u.home.empty()) {
        u.home = p.home_template;
        const size_t at = u.home.find("{user}");
        if (at != std::string::npos) u.home.replace(at, 6, u.user_name);
    }
    if (u.shell.empty()) u.shell = p.default_shell;
    for (auto& k : u.ssh_keys)
        while (!k.empty() && k.back() == ' ') k.pop_back();
    // The order of validate_user(); ids the store allocates later are checked there.
    Status s = check_name(u.user_name, rules, "userName");
    if (s && u.uid) s = check_uid(*u.uid, rules);
    if (s && u.gid) s = check_gid(*u.gid, rules);
    if (s) s = check_home(u.home, rules);
    if (s) s = check_shell(u.shell, rules);
    if (s) s = check_display_name(u.display_name);
    if (s) s = check_external_id(u.external_id);
    if (s) s = check_ssh_key_count(u.ssh_keys.size());
    for (size_t i = 0; s && i < u.ssh_keys.size(); ++i) s = check_ssh_key(u.ssh_keys[i]);
    if (!s) return s.error();
    drop_duplicate_keys(u.ssh_keys);
    if (u.emails.size() > 16) return make_error(Errc::InvalidValue, "emails: more than 16");
    for (const auto& e : u.emails)
        if (e.value.size() > 256 || has_control(e.value) || e.type.size() > 32)
            return make_error(Errc::InvalidValue,
                              "emails: value too long or contains control characters");
    return true;
}

Result<bool> normalize_group(scim::Group& g, const DirectoryPolicy& p)
{
    Status s = check_name(g.display_name, p.rules, "displayName");
    if (s && g.gid) s = check_gid(*g.gid, p.rules);
    if (s) s = check_external_id(g.external_id);
    if (!s) return s.error();
    if (g.members.size() > kMaxGroupMembers)
        return make_error(identity::Errc::TooManyMembers,
                          "members: more than " + std::to_string(kMaxGroupMembers));
    return true;
}

}  // namespace allot::scimd
