// scim_directory.cpp - from SCIM records to POSIX users and groups, record by
// record, with the one identity validator (see allot/scim_client.hpp).
#include <algorithm>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "allot/scim_client.hpp"
#include "allot/ssh_key.hpp"

namespace allot {
namespace {

using IdErrc = identity::Errc;

// validate_directory's steps: each record on its own first, then what only
// the whole set can tell (duplicates), then nested-group flattening.
class DirectoryValidator {
public:
    DirectoryValidator(const ScimDirectory& source, const IdentityRules& rules)
        : source_(source), rules_(rules)
    {
        for (const auto& u : source_.users) known_user_ids_.insert(u.id);
    }

    ValidatedDirectory run()
    {
        for (const scim::User& u : source_.users) admit_user(u);
        keep_unique_users();
        for (const scim::Group& g : source_.groups) admit_group(g);
        keep_unique_groups();
        for (const scim::Group* g : kept_groups_) out_.groups.push_back(flatten(*g));
        std::sort(out_.users.begin(), out_.users.end(),
                  [](const PosixUser& a, const PosixUser& b) { return a.name < b.name; });
        std::sort(out_.groups.begin(), out_.groups.end(),
                  [](const PosixGroup& a, const PosixGroup& b) { return a.name < b.name; });
        return std::move(out_);
    }

private:
    const ScimDirectory& source_;
    const IdentityRules& rules_;
    ValidatedDirectory out_;
    std::vector<PosixUser> candidates_;
    std::vector<std::string> candidate_ids_;  // SCIM id of each candidate
    std::unordered_set<std::string> known_user_ids_;
    std::unordered_map<std::string, std::string> user_by_scim_id_;  // SCIM id → userName
    std::vector<const scim::Group*> candidate_groups_;
    std::vector<const scim::Group*> kept_groups_;
    std::unordered_map<std::string, const scim::Group*> group_by_id_;

    void reject(const char* kind, std::string_view object, std::error_code code, std::string reason)
    {
        out_.rejections.push_back({kind, log_safe(object), std::move(reason), code});
    }
    void reject(const char* kind, std::string_view object, const Error& e)
    {
        reject(kind, object, e.code, e.message);
    }

    // The first problem of a user's POSIX fields, checked in the order the
    // validator documents.
    Status check_user_fields(const scim::User& u) const
    {
        Status s = check_name(u.user_name, rules_, "userName");
        if (s && !u.uid) s = make_error(IdErrc::MissingId, "no uidNumber");
        if (s) s = check_uid(*u.uid, rules_);
        if (s && !u.gid) s = make_error(IdErrc::MissingId, "no gidNumber");
        if (s) s = check_gid(*u.gid, rules_);
        if (s) s = check_home(u.home, rules_);
        if (s) s = check_shell(u.shell, rules_);
        if (s) s = check_ssh_key_count(u.ssh_keys.size());
        return s;
    }

    // A bad key or display name is dropped alone: the user keeps logging in
    // with the other keys.
    void add_keys(const scim::User& u, const std::string& label, PosixUser& pu)
    {
        std::set<std::string> seen;
        for (const std::string& k : u.ssh_keys) {
            auto key = parse_ssh_public_key(k);
            if (!key) {
                reject("ssh-key", label, make_error_code(IdErrc::InvalidSshKey),
                       key.error().message + " (key dropped, user kept)");
                continue;
            }
            if (seen.insert(key.value().line()).second) pu.ssh_keys.push_back(key.value().line());
        }
    }

    void admit_user(const scim::User& u)
    {
        const std::string& label = u.user_name.empty() ? u.id : u.user_name;
        if (!u.type_error.empty())
            return reject("user", label, make_error_code(IdErrc::WrongType),
                          "wrong type: " + u.type_error);
        if (!u.active) {
            ++out_.inactive;
            return;
        }
        if (!u.has_extension)
            return reject("user", label, make_error_code(IdErrc::MissingExtension),
                          "no POSIX extension");
        if (auto s = check_user_fields(u); !s) return reject("user", label, s.error());
        PosixUser pu;
        pu.name = u.user_name;
        pu.uid = static_cast<uint32_t>(*u.uid);
        pu.gid = static_cast<uint32_t>(*u.gid);
        pu.home = u.home;
        pu.shell = u.shell;
        if (auto s = check_display_name(u.display_name); s)
            pu.gecos = u.display_name;
        else
            reject("user", label, s.error().code, s.error().message + " (dropped, user kept)");
        add_keys(u, label, pu);
        candidates_.push_back(std::move(pu));
        candidate_ids_.push_back(u.id);
    }

    // Two records claiming one name or uid: neither can be trusted to be
    // the person the other one is, so every holder is rejected.
    void keep_unique_users()
    {
        std::unordered_map<std::string, int> names;
        std::unordered_map<uint32_t, int> uids;
        for (const auto& u : candidates_) {
            ++names[u.name];
            ++uids[u.uid];
        }
        for (size_t i = 0; i < candidates_.size(); ++i) {
            auto& u = candidates_[i];
            if (names[u.name] > 1) {
                reject("user", u.name, make_error_code(IdErrc::DuplicateName),
                       "duplicate userName (every record with it rejected)");
                continue;
            }
            if (uids[u.uid] > 1) {
                reject("user", u.name, make_error_code(IdErrc::DuplicateId),
                       "duplicate uidNumber " + std::to_string(u.uid) +
                           " (every record with it rejected)");
                continue;
            }
            if (!candidate_ids_[i].empty()) user_by_scim_id_[candidate_ids_[i]] = u.name;
            out_.users.push_back(std::move(u));
        }
    }

    void admit_group(const scim::Group& g)
    {
        const std::string& label = g.display_name.empty() ? g.id : g.display_name;
        if (!g.type_error.empty())
            return reject("group", label, make_error_code(IdErrc::WrongType),
                          "wrong type: " + g.type_error);
        Status s = check_name(g.display_name, rules_, "displayName");
        if (s && g.gid) s = check_gid(*g.gid, rules_);
        if (s && g.members.size() > kMaxGroupMembers)
            s = make_error(IdErrc::TooManyMembers, "members: " + std::to_string(g.members.size()) +
                                                       ", more than " +
                                                       std::to_string(kMaxGroupMembers));
        if (!s) return reject("group", label, s.error());
        candidate_groups_.push_back(&g);
    }

    void keep_unique_groups()
    {
        std::unordered_map<std::string, int> names;
        std::unordered_map<int64_t, int> gids;
        for (const scim::Group* g : candidate_groups_) {
            ++names[g->display_name];
            if (g->gid) ++gids[*g->gid];
        }
        for (const scim::Group* g : candidate_groups_) {
            if (names[g->display_name] > 1) {
                reject("group", g->display_name, make_error_code(IdErrc::DuplicateName),
                       "duplicate displayName (every record with it rejected)");
                continue;
            }
            if (g->gid && gids[*g->gid] > 1) {
                reject("group", g->display_name, make_error_code(IdErrc::DuplicateId),
                       "duplicate gidNumber " + std::to_string(*g->gid));
                continue;
            }
            if (!g->id.empty()) group_by_id_[g->id] = g;
            kept_groups_.push_back(g);
        }
    }

    // Members of a member group count as members (cycles and diamonds are
    // visited once).
    void collect(const scim::Group& g, std::set<std::string>& members,
                 std::set<const scim::Group*>& visiting)
    {
        if (!visiting.insert(&g).second) return;
        for (const scim::Member& m : g.members) {
            auto uit = user_by_scim_id_.find(m.value);
            if (m.type != "Group" && uit != user_by_scim_id_.end()) {
                members.insert(uit->second);
                continue;
            }
            auto git = group_by_id_.find(m.value);
            if (m.type != "User" && git != group_by_id_.end()) {
                collect(*git->second, members, visiting);
                continue;
            }
            // Rejected users were reported already; anything else is unknown.
            if (!known_user_ids_.count(m.value))
                reject("member", g.display_name, make_error_code(IdErrc::UnknownMember),
                       "member '" + log_safe(m.value) + "' is no known user or group (dropped)");
        }
    }

    PosixGroup flatten(const scim::Group& g)
    {
        std::set<std::string> members;
        std::set<const scim::Group*> visiting;
        collect(g, members, visiting);
        PosixGroup pg;
        pg.name = g.display_name;
        pg.gid = g.gid ? static_cast<uint32_t>(*g.gid) : 0;
        pg.members.assign(members.begin(), members.end());
        return pg;
    }
};

}  // namespace

ValidatedDirectory validate_directory(const ScimDirectory& source, const IdentityRules& rules)
{
    return DirectoryValidator(source, rules).run();
}

ValidatedDirectory validate_directory(const ScimDirectory& source, const IdentityConfig& identity)
{
    return validate_directory(source, identity_rules(identity));
}

}  // namespace allot
