// apply.cpp - see apply.hpp.
#include "apply.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "allot/yaml_tree.hpp"

namespace allot::scimd {
namespace {

struct WantUser {
    scim::User user;
    int line = 0;
    bool has_active = false;
};
struct WantGroup {
    scim::Group group;
    std::vector<std::string> members;
    int line = 0;
};

Result<uint32_t> number(const YamlNode& n, const std::string& where)
{
    if (!n.is_scalar() || n.quoted || n.scalar.empty() || n.scalar.size() > 10 ||
        n.scalar.find_first_not_of("0123456789") != std::string::npos)
        return make_error(where + ": must be a whole number (line " + std::to_string(n.line) + ")");
    const unsigned long v = std::stoul(n.scalar);
    if (v == 0 || v > 4294967294UL)
        return make_error(where + ": out of range (line " + std::to_string(n.line) + ")");
    return static_cast<uint32_t>(v);
}

Result<std::string> text(const YamlNode& n, const std::string& where)
{
    if (!n.is_scalar())
        return make_error(where + ": must be text (line " + std::to_string(n.line) + ")");
    return n.scalar;
}

Result<std::vector<std::string>> texts(const YamlNode& n, const std::string& where)
{
    if (!n.is_seq())
        return make_error(where + ": must be a list (line " + std::to_string(n.line) + ")");
    std::vector<std::string> out;
    for (size_t i = 0; i < n.seq.size(); ++i) {
        auto t = text(n.seq[i], where + "[" + std::to_string(i) + "]");
        if (!t) return t.error();
        out.push_back(t.value());
    }
    return out;
}

Result<bool> parse(const YamlNode& root, const DirectoryPolicy& policy,
                   std::vector<WantUser>& users, std::vector<WantGroup>& groups)
{
    if (root.is_null()) return true;
    if (!root.is_map()) return make_error("directory file: top level must be a map");
    for (const auto& [key, node] : root.map)
        if (key != "users" && key != "groups")
            return make_error("unknown key '" + key + "' (line " + std::to_string(node.line) + ")");
    std::set<std::string> seen;
    if (const YamlNode* list = root.find("users")) {
        if (!list->is_seq()) return make_error("users: must be a list");
        for (size_t i = 0; i < list->seq.size(); ++i) {
            const YamlNode& n = list->seq[i];
            const std::string where = "users[" + std::to_string(i) + "]";
            if (!n.is_map())
                return make_error(where + ": must be a map (line " + std::to_string(n.line) + ")");
            WantUser w;
            w.line = n.line;
            for (const auto& [key, v] : n.map) {
                const std::string k = where + "." + key;
                Result<bool> ok = true;
                if (key == "name" || key == "display_name" || key == "email" || key == "shell" ||
                    key == "home" || key == "external_id") {
                    auto t = text(v, k);
                    if (!t) return t.error();
                    if (key == "name")
                        w.user.user_name = t.value();
                    else if (key == "display_name")
                        w.user.display_name = t.value();
                    else if (key == "email")
                        w.user.emails = {{t.value(), "work", true}};
                    else if (key == "shell")
                        w.user.shell = t.value();
                    else if (key == "home")
                        w.user.home = t.value();
                    else
                        w.user.external_id = t.value();
                } else if (key == "uid" || key == "gid") {
                    auto num = number(v, k);
                    if (!num) return num.error();
                    (key == "uid" ? w.user.uid : w.user.gid) = num.value();
                } else if (key == "active") {
                    if (!v.is_scalar() || (v.scalar != "true" && v.scalar != "false"))
                        return make_error(k + ": must be true or false");
                    w.user.active = v.scalar == "true";
                    w.has_active = true;
                } else if (key == "ssh_keys") {
                    auto t = texts(v, k);
                    if (!t) return t.error();
                    w.user.ssh_keys = t.value();
                } else {
                    return make_error(k + ": unknown key (line " + std::to_string(v.line) + ")");
                }
            }
            auto ok = normalize_user(w.user, policy);
            if (!ok)
                return make_error(where + " (line " + std::to_string(n.line) +
                                  "): " + ok.error().message);
            if (!seen.insert("u:" + w.user.user_name).second)
                return make_error(where + ": user '" + w.user.user_name + "' listed twice");
            users.push_back(std::move(w));
        }
    }
    if (const YamlNode* list = root.find("groups")) {
        if (!list->is_seq()) return make_error("groups: must be a list");
        for (size_t i = 0; i < list->seq.size(); ++i) {
            const YamlNode& n = list->seq[i];
            const std::string where = "groups[" + std::to_string(i) + "]";
            if (!n.is_map()) return make_error(where + ": must be a map");
            WantGroup w;
            w.line = n.line;
            for (const auto& [key, v] : n.map) {
                const std::string k = where + "." + key;
                if (key == "name") {
                    auto t = text(v, k);
                    if (!t) return t.error();
                    w.group.display_name = t.value();
                } else if (key == "gid") {
                    auto num = number(v, k);
                    if (!num) return num.error();
                    w.group.gid = num.value();
                } else if (key == "members") {
                    auto t = texts(v, k);
                    if (!t) return t.error();
                    w.members = t.value();
                } else {
                    return make_error(k + ": unknown key (line " + std::to_string(v.line) + ")");
                }
            }
            auto ok = normalize_group(w.group, policy);
            if (!ok) return make_error(where + ": " + ok.error().message);
            if (!seen.insert("g:" + w.group.display_name).second)
                return make_error(where + ": group '" + w.group.display_name + "' listed twice");
            groups.push_back(std::move(w));
        }
    }
    return true;
}

template <typename T, typename List>
Result<std::vector<T>> all(List list)
{
    std::vector<T> out;
    ListQuery q;
    q.count = 1000;
    q.cursor = "";
    while (true) {
        auto page = list(q);
        if (!page) return make_error(page.error().message);
        for (auto& item : page.value().items) out.push_back(std::move(item));
        if (page.value().next_cursor.empty()) break;
        q.cursor = page.value().next_cursor;
    }
    return out;
}

}  // namespace

Result<ApplySummary> apply_directory(DirectoryStore& store, const DirectoryPolicy& policy,
                                     const std::string& yaml_text, bool plan_only, bool prune,
                                     std::ostream& out)
{
    YamlLimits limits;
    limits.max_bytes = 16u << 20;  // a directory of ~100k users
    limits.max_nodes = 2000000;
    auto root = parse_yaml(yaml_text, limits);
    if (!root) return root.error();
    std::vector<WantUser> users;
    std::vector<WantGroup> groups;
    auto ok = parse(root.value(), policy, users, groups);
    if (!ok) return ok.error();

    auto have_users = all<scim::User>([&](const ListQuery& q) { return store.list_users(q); });
    if (!have_users) return have_users.error();
    auto have_groups = all<scim::Group>([&](const ListQuery& q) { return store.list_groups(q); });
    if (!have_groups) return have_groups.error();
    std::map<std::string, scim::User> by_name;
    for (auto& u : have_users.value()) by_name[u.user_name] = u;
    std::map<std::string, scim::Group> group_by_name;
    for (auto& g : have_groups.value()) group_by_name[g.display_name] = g;
    std::set<std::string> file_users;
    for (const auto& w : users) file_users.insert(w.user.user_name);

    // Plan first (and refuse id changes) before writing anything.
    ApplySummary s;
    std::vector<std::function<Result<bool>()>> steps;
    for (const auto& w : users) {
        auto it = by_name.find(w.user.user_name);
        if (it == by_name.end()) {
            out << "+ user " << w.user.user_name
                << (w.user.uid ? " uid " + std::to_string(*w.user.uid)
                               : std::string(" (uid allocated)"))
                << "\n";
            ++s.changes;
            steps.push_back([&store, u = w.user]() -> Result<bool> {
                auto r = store.create_user(u);
                if (!r) return make_error("user " + u.user_name + ": " + r.error().message);
                return true;
            });
            continue;
        }
        const scim::User& have = it->second;
        if ((w.user.uid && w.user.uid != have.uid) || (w.user.gid && w.user.gid != have.gid))
            return make_error("user " + w.user.user_name + " (line " + std::to_string(w.line) +
                              "): uid/gid in the file differ from the directory's " +
                              std::to_string(have.uid.value_or(0)) + "/" +
                              std::to_string(have.gid.value_or(0)) + "; ids never change");
        scim::User next = have;
        std::vector<std::string> diffs;
        auto field = [&](const char* name, std::string& cur, const std::string& want) {
            if (cur != want) {
                diffs.push_back(std::string(name) + " '" + cur + "' -> '" + want + "'");
                cur = want;
            }
        };
        field("display_name", next.display_name, w.user.display_name);
        field("shell", next.shell, w.user.shell);
        field("home", next.home, w.user.home);
        field("external_id", next.external_id, w.user.external_id);
        const std::string have_email = have.emails.empty() ? "" : have.emails[0].value;
        const std::string want_email = w.user.emails.empty() ? "" : w.user.emails[0].value;
        if (have_email != want_email) {
            diffs.push_back("email '" + have_email + "' -> '" + want_email + "'");
            next.emails = w.user.emails;
        }
        if (w.user.active != have.active) {
            diffs.push_back(std::string("active ") + (w.user.active ? "true" : "false"));
            next.active = w.user.active;
        }
        if (std::set<std::string>(have.ssh_keys.begin(), have.ssh_keys.end()) !=
            std::set<std::string>(w.user.ssh_keys.begin(), w.user.ssh_keys.end())) {
            diffs.push_back("ssh_keys " + std::to_string(have.ssh_keys.size()) + " -> " +
                            std::to_string(w.user.ssh_keys.size()));
            next.ssh_keys = w.user.ssh_keys;
        }
        if (diffs.empty()) continue;
        for (const auto& d : diffs) out << "~ user " << w.user.user_name << ": " << d << "\n";
        ++s.changes;
        steps.push_back([&store, next, version = have.version]() -> Result<bool> {
            auto r = store.replace_user(next.id, next, version);
            if (!r) return make_error("user " + next.user_name + ": " + r.error().message);
            return true;
        });
    }
    std::set<std::string> file_groups;
    for (const auto& w : groups) {
        file_groups.insert(w.group.display_name);
        for (const auto& m : w.members)
            if (!file_users.count(m) && !by_name.count(m))
                return make_error("group " + w.group.display_name + ": member '" + m +
                                  "' is not a user");
        auto it = group_by_name.find(w.group.display_name);
        const std::set<std::string> want(w.members.begin(), w.members.end());
        if (it == group_by_name.end()) {
            out << "+ group " << w.group.display_name
                << (w.group.gid ? " gid " + std::to_string(*w.group.gid)
                                : std::string(" (gid allocated)"))
                << " members " << want.size() << "\n";
            ++s.changes;
            steps.push_back([&store, g = w.group, want]() -> Result<bool> {
                scim::Group next = g;
                for (const auto& m : want) {
                    auto u = store.get_user_by_name(m);
                    if (!u) return make_error("group " + g.display_name + ": " + u.error().message);
                    next.members.push_back({u.value().id, "User", m});
                }
                auto r = store.create_group(next);
                if (!r) return make_error("group " + g.display_name + ": " + r.error().message);
                return true;
            });
            continue;
        }
        const scim::Group& have = it->second;
        if (w.group.gid && w.group.gid != have.gid)
            return make_error("group " + w.group.display_name +
                              ": gid in the file differs from the directory's " +
                              std::to_string(have.gid.value_or(0)) + "; ids never change");
        std::set<std::string> cur;
        for (const auto& m : have.members) cur.insert(m.display);
        if (cur == want) continue;
        for (const auto& m : want)
            if (!cur.count(m)) out << "~ group " << have.display_name << ": + " << m << "\n";
        for (const auto& m : cur)
            if (!want.count(m)) out << "~ group " << have.display_name << ": - " << m << "\n";
        ++s.changes;
        steps.push_back([&store, have, want]() -> Result<bool> {
            scim::Group next = have;
            next.members.clear();
            for (const auto& m : want) {
                auto u = store.get_user_by_name(m);
                if (!u) return make_error("group " + have.display_name + ": " + u.error().message);
                next.members.push_back({u.value().id, "User", m});
            }
            auto r = store.replace_group(have.id, next, have.version);
            if (!r) return make_error("group " + have.display_name + ": " + r.error().message);
            return true;
        });
    }
    if (prune) {
        for (const auto& [name, g] : group_by_name)
            if (!file_groups.count(name)) {
                out << "- group " << name << " (gid " << g.gid.value_or(0) << " stays allocated)\n";
                ++s.changes;
                steps.push_back([&store, id = g.id, name = name]() -> Result<bool> {
                    auto r = store.delete_group(id);
                    if (!r) return make_error("group " + name + ": " + r.error().message);
                    return true;
                });
            }
        for (const auto& [name, u] : by_name)
            if (!file_users.count(name)) {
                out << "- user " << name << " (uid " << u.uid.value_or(0) << " stays allocated)\n";
                ++s.changes;
                steps.push_back([&store, id = u.id, name = name]() -> Result<bool> {
                    auto r = store.delete_user(id);
                    if (!r) return make_error("user " + name + ": " + r.error().message);
                    return true;
                });
            }
    }
    if (s.changes == 0) out << "= no changes\n";
    if (plan_only) return s;
    for (auto& step : steps) {
        auto r = step();
        if (!r)
            return make_error(r.error().message +
                              " (stopped; earlier changes were applied, rerun to converge)");
    }
    return s;
}

Result<ApplySummary> apply_directory_file(DirectoryStore& store, const DirectoryPolicy& policy,
                                          const std::string& path, bool plan_only, bool prune,
                                          std::ostream& out)
{
    auto text = read_file_bounded(path, 16u << 20);
    if (!text) return make_error(path + ": " + text.error().message);
    return apply_directory(store, policy, text.value(), plan_only, prune, out);
}

}  // namespace allot::scimd
