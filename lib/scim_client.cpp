// scim_client.cpp - SCIM 2.0 list parsing, paging and record validation
// (see allot/scim_client.hpp).
#include "allot/scim_client.hpp"

#include <algorithm>
#include <cctype>
#include <functional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "allot/json.hpp"
#include "allot/ssh_key.hpp"

namespace allot {
namespace {

// System ids stay below this whatever the config says.
constexpr int64_t kMinNonSystemId = 1000;

const cJSON* field(const cJSON* obj, const char* key)
{
    return cJSON_GetObjectItemCaseSensitive(obj, key);
}

// Optional string field: absent/null → nullopt and ok; wrong type → error text.
bool opt_string(const cJSON* obj, const char* key, std::string& out, std::string& err)
{
    const cJSON* item = field(obj, key);
    if (!item || cJSON_IsNull(item)) return true;
    if (!cJSON_IsString(item) || !item->valuestring) {
        if (err.empty()) err = std::string(key) + " is not a string";
        return false;
    }
    out = item->valuestring;
    return true;
}

void opt_integer(const cJSON* obj, const char* key, std::optional<int64_t>& out, std::string& err)
{
    const cJSON* item = field(obj, key);
    if (!item || cJSON_IsNull(item)) return;
    auto v = json_integer(obj, key);
    if (!v) {
        if (err.empty()) err = std::string(key) + " is not a whole number";
        return;
    }
    out = v;
}

scim::User parse_user(const cJSON* res, const std::string& ext_schema)
{
    scim::User u;
    std::string& err = u.type_error;
    if (!cJSON_IsObject(res)) {
        err = "resource is not an object";
        return u;
    }
    opt_string(res, "id", u.id, err);
    opt_string(res, "userName", u.user_name, err);
    opt_string(res, "displayName", u.display_name, err);
    if (u.display_name.empty()) {
        const cJSON* name = field(res, "name");
        if (cJSON_IsObject(name)) opt_string(name, "formatted", u.display_name, err);
    }
    const cJSON* active = field(res, "active");
    if (active && !cJSON_IsNull(active)) {
        if (!cJSON_IsBool(active))
            err = err.empty() ? "active is not a boolean" : err;
        else
            u.active = cJSON_IsTrue(active) != 0;
    }
    const cJSON* ext = field(res, ext_schema.c_str());
    if (ext && !cJSON_IsNull(ext)) {
        if (!cJSON_IsObject(ext)) {
            if (err.empty()) err = "the POSIX extension is not an object";
            return u;
        }
        u.has_extension = true;
        opt_integer(ext, "uidNumber", u.uid, err);
        opt_integer(ext, "gidNumber", u.gid, err);
        opt_string(ext, "homeDirectory", u.home, err);
        opt_string(ext, "loginShell", u.shell, err);
        const cJSON* keys = field(ext, "sshPublicKeys");
        if (keys && !cJSON_IsNull(keys)) {
            if (!cJSON_IsArray(keys)) {
                if (err.empty()) err = "sshPublicKeys is not an array";
            } else {
                const cJSON* k = nullptr;
                cJSON_ArrayForEach(k, keys)
                {
                    // Plain strings, or multi-valued-attribute objects {"value": "..."}.
                    if (cJSON_IsString(k) && k->valuestring) {
                        u.ssh_keys.emplace_back(k->valuestring);
                    } else if (cJSON_IsObject(k) && json_string(k, "value")) {
                        u.ssh_keys.push_back(*json_string(k, "value"));
                    } else if (err.empty()) {
                        err = "sshPublicKeys holds a value that is not a string";
                    }
                }
            }
        }
    }
    return u;
}

scim::Group parse_group(const cJSON* res, const std::string& ext_schema)
{
    scim::Group g;
    std::string& err = g.type_error;
    if (!cJSON_IsObject(res)) {
        err = "resource is not an object";
        return g;
    }
    opt_string(res, "id", g.id, err);
    opt_string(res, "displayName", g.display_name, err);
    opt_integer(res, "gidNumber", g.gid, err);
    // gidNumber may also sit in any extension object (the user extension URN,
    // or a PosixGroup one); take the first found.
    if (!g.gid) {
        const cJSON* item = nullptr;
        cJSON_ArrayForEach(item, res)
        {
            if (cJSON_IsObject(item) && item->string &&
                (ext_schema == item->string ||
                 std::string_view(item->string).rfind("urn:", 0) == 0)) {
                opt_integer(item, "gidNumber", g.gid, err);
                if (g.gid) break;
            }
        }
    }
    const cJSON* members = field(res, "members");
    if (members && !cJSON_IsNull(members)) {
        if (!cJSON_IsArray(members)) {
            if (err.empty()) err = "members is not an array";
            return g;
        }
        const cJSON* m = nullptr;
        cJSON_ArrayForEach(m, members)
        {
            scim::Member member;
            if (!cJSON_IsObject(m) || !json_string(m, "value")) {
                if (err.empty()) err = "a member has no string value";
                continue;
            }
            member.value = *json_string(m, "value");
            member.type = json_string(m, "type").value_or("");
            member.display = json_string(m, "display").value_or("");
            g.members.push_back(std::move(member));
        }
    }
    return g;
}

template <typename T, typename F>
Result<ScimPage<T>> parse_page(std::string_view body, F parse_one)
{
    if (body.size() > kScimMaxBody) return make_error("response larger than 10 MiB");
    JsonPtr root = json_parse(body, kScimMaxBody);
    if (!root) return make_error("response is not valid JSON (truncated or malformed)");
    if (!cJSON_IsObject(root.get())) return make_error("response is not a JSON object");
    if (json_string(root.get(), "detail") || json_string(root.get(), "scimType")) {
        return make_error("SCIM error: " +
                          log_safe(json_string(root.get(), "detail").value_or("")));
    }
    ScimPage<T> page;
    const cJSON* total = field(root.get(), "totalResults");
    if (!total) return make_error("response is not a SCIM ListResponse (no totalResults)");
    auto tr = json_integer(root.get(), "totalResults", 0, INT32_MAX);
    if (!tr) return make_error("totalResults is not a whole number ≥ 0");
    page.total_results = *tr;
    if (field(root.get(), "startIndex")) {
        auto si = json_integer(root.get(), "startIndex", 1, INT32_MAX);
        if (!si) return make_error("startIndex is not a whole number ≥ 1");
        page.start_index = *si;
    }
    if (field(root.get(), "itemsPerPage")) {
        auto ipp = json_integer(root.get(), "itemsPerPage", 0, INT32_MAX);
        if (!ipp) return make_error("itemsPerPage is not a whole number ≥ 0");
        page.items_per_page = *ipp;
    }
    const cJSON* cursor = field(root.get(), "nextCursor");
    if (cursor && !cJSON_IsNull(cursor)) {
        if (!cJSON_IsString(cursor) || !cursor->valuestring)
            return make_error("nextCursor is not a string");
        page.next_cursor = cursor->valuestring;
        if (page.next_cursor.size() > 4096) return make_error("nextCursor longer than 4 KiB");
    }
    const cJSON* resources = field(root.get(), "Resources");
    if (!resources || cJSON_IsNull(resources)) {
        if (page.total_results > 0 && page.items_per_page != 0 && page.next_cursor.empty())
            return make_error("ListResponse has totalResults > 0 but no Resources");
        return page;
    }
    if (!cJSON_IsArray(resources)) return make_error("Resources is not an array");
    const cJSON* res = nullptr;
    cJSON_ArrayForEach(res, resources)
    {
        page.resources.push_back(parse_one(res));
    }
    return page;
}

bool has_dotdot_or_empty_component(std::string_view path)
{
    size_t i = 0;
    while (i <= path.size()) {
        size_t j = path.find('/', i);
        if (j == std::string_view::npos) j = path.size();
        std::string_view comp = path.substr(i, j - i);
        if (i != 0 && (comp.empty() || comp == "." || comp == "..")) return true;
        i = j + 1;
    }
    return false;
}

bool safe_path_chars(std::string_view path)
{
    for (char c : path) {
        const auto u = static_cast<unsigned char>(c);
        if (u < 0x20 || u == 0x7f || c == ':' || u >= 0x80) return false;
    }
    return true;
}

std::string sanitize_gecos(std::string_view text)
{
    std::string out;
    for (char c : text.substr(0, 256)) {
        const auto u = static_cast<unsigned char>(c);
        out.push_back((u < 0x20 || u == 0x7f || c == ':') ? ' ' : c);
    }
    return out;
}

std::string id_problem(std::optional<int64_t> id, const char* what, uint32_t min, uint32_t max)
{
    if (!id) return std::string("no ") + what;
    if (*id == 0) return std::string(what) + " 0 (root) is never allowed";
    if (*id < kMinNonSystemId)
        return std::string(what) + " " + std::to_string(*id) + " is a system id";
    if (*id < min || *id > max)
        return std::string(what) + " " + std::to_string(*id) + " is outside " +
               std::to_string(min) + "-" + std::to_string(max);
    if (*id == 65534) return std::string(what) + " 65534 (nobody) is never allowed";
    return {};
}

}  // namespace

Result<ScimPage<scim::User>> parse_user_page(std::string_view body, const std::string& ext_schema)
{
    return parse_page<scim::User>(body, [&](const cJSON* r) { return parse_user(r, ext_schema); });
}

Result<ScimPage<scim::Group>> parse_group_page(std::string_view body, const std::string& ext_schema)
{
    return parse_page<scim::Group>(body,
                                   [&](const cJSON* r) { return parse_group(r, ext_schema); });
}

RetryDecision retry_decision(const RetryPolicy& policy, uint32_t attempt, long status,
                             uint32_t retry_after_seconds, uint32_t jitter_seed)
{
    RetryDecision d;
    const bool transient = status == 0 || status == 408 || status == 429 || status >= 500;
    if (!transient || attempt >= policy.max_attempts) return d;
    d.retry = true;
    uint64_t delay = policy.base_delay_ms;
    for (uint32_t i = 1; i < attempt && delay < policy.max_delay_ms; ++i) delay *= 2;
    delay = std::min<uint64_t>(delay, policy.max_delay_ms);
    delay += delay * (jitter_seed % 1000) / 4000;  // up to +25 %
    if (retry_after_seconds)
        delay = std::max<uint64_t>(delay, uint64_t(retry_after_seconds) * 1000);
    d.delay_ms = static_cast<uint32_t>(std::min<uint64_t>(delay, 10u * 60 * 1000));
    return d;
}

std::string url_encode(std::string_view value)
{
    static const char* hex = "0123456789ABCDEF";
    std::string out;
    for (char c : value) {
        const auto u = static_cast<unsigned char>(c);
        if (std::isalnum(u) || c == '-' || c == '_' || c == '.' || c == '~') {
            out.push_back(c);
        } else {
            out.push_back('%');
            out.push_back(hex[u >> 4]);
            out.push_back(hex[u & 15]);
        }
    }
    return out;
}

namespace {

Result<std::string> get_with_retry(HttpClient& http, const ScimFetchOptions& o,
                                   const std::string& url, ScimDirectory& stats)
{
    for (uint32_t attempt = 1;; ++attempt) {
        ++stats.requests;
        auto r = http.get(url);
        long status = 0;
        uint32_t retry_after = 0;
        std::string problem;
        if (!r) {
            problem = r.error().message;
        } else {
            status = r.value().status;
            retry_after = r.value().retry_after_seconds;
            if (status == 200) return std::move(r.value().body);
            problem = "HTTP " + std::to_string(status);
            if (status == 401 || status == 403) problem += " (the bearer token was refused)";
            JsonPtr err = json_parse(r.value().body, 64 * 1024);
            if (err && json_string(err.get(), "detail"))
                problem += ": " + log_safe(*json_string(err.get(), "detail"));
        }
        const RetryDecision d =
            retry_decision(o.retry, attempt, status, retry_after, o.jitter ? o.jitter() : 0);
        if (!d.retry)
            return make_error(problem + " after " + std::to_string(attempt) + " attempt(s)");
        ++stats.retries;
        if (o.sleep) o.sleep(d.delay_ms);
    }
}

// Groups carry gidNumber in a PosixGroup extension named like the user one.
std::string group_attributes(const std::string& user_ext)
{
    std::string attrs = "displayName,members,gidNumber";
    const std::string suffix = "PosixUser";
    if (user_ext.size() > suffix.size() &&
        user_ext.compare(user_ext.size() - suffix.size(), suffix.size(), suffix) == 0)
        attrs += "," + user_ext.substr(0, user_ext.size() - suffix.size()) + "PosixGroup";
    return attrs;
}

std::string trimmed_base(const std::string& base)
{
    std::string b = base;
    while (!b.empty() && b.back() == '/') b.pop_back();
    return b;
}

template <typename T, typename Parse>
Result<bool> fetch_all(HttpClient& http, const ScimFetchOptions& o, const std::string& base_query,
                       Parse parse, std::vector<T>& out, ScimDirectory& stats)
{
    int64_t start = 1;
    std::string cursor;
    bool use_cursor = false;
    std::set<std::string> seen_cursors;
    for (uint32_t page_no = 0;; ++page_no) {
        if (page_no >= o.max_pages) return make_error("more than max_pages pages; stopping");
        std::string url = base_query + "&count=" + std::to_string(o.page_size);
        url +=
            use_cursor ? "&cursor=" + url_encode(cursor) : "&startIndex=" + std::to_string(start);
        auto body = get_with_retry(http, o, url, stats);
        if (!body) return body.error();
        auto page = parse(body.value());
        if (!page) return make_error(url + ": " + page.error().message);
        auto& p = page.value();
        const size_t n = p.resources.size();
        for (auto& r : p.resources) out.push_back(std::move(r));
        if (out.size() > o.max_resources) return make_error("more resources than max_resources");
        if (!p.next_cursor.empty()) {
            if (!seen_cursors.insert(p.next_cursor).second)
                return make_error("server repeated a nextCursor; paging would never end");
            use_cursor = true;
            cursor = p.next_cursor;
            continue;
        }
        if (use_cursor || n == 0) break;
        start += static_cast<int64_t>(n);
        if (start > p.total_results) break;
    }
    return true;
}

}  // namespace

Result<ScimDirectory> fetch_directory(HttpClient& http, const ScimFetchOptions& o)
{
    ScimDirectory dir;
    const std::string base = trimmed_base(o.base_url);
    const std::string user_attrs = "userName,displayName,active," + o.ext_schema;
    auto users = fetch_all<scim::User>(
        http, o, base + "/Users?attributes=" + url_encode(user_attrs),
        [&](const std::string& b) { return parse_user_page(b, o.ext_schema); }, dir.users, dir);
    if (!users) return make_error("Users: " + users.error().message);
    auto groups = fetch_all<scim::Group>(
        http, o, base + "/Groups?attributes=" + url_encode(group_attributes(o.ext_schema)),
        [&](const std::string& b) { return parse_group_page(b, o.ext_schema); }, dir.groups, dir);
    if (!groups) return make_error("Groups: " + groups.error().message);
    if (!dir.users.empty() && std::none_of(dir.users.begin(), dir.users.end(),
                                           [](const scim::User& u) { return u.has_extension; }))
        return make_error("the SCIM server returned users without the POSIX extension " +
                          o.ext_schema +
                          " although it was requested in 'attributes'; every user would lack a "
                          "uid, so nothing is synced (check identity.extension_schema and the "
                          "server's schema support)");
    return dir;
}

Result<std::optional<scim::User>> fetch_user(HttpClient& http, const ScimFetchOptions& o,
                                             const std::string& user_name)
{
    if (!valid_posix_name(user_name)) return std::optional<scim::User>();
    ScimDirectory stats;
    const std::string filter = "userName eq \"" + user_name + "\"";
    const std::string url =
        trimmed_base(o.base_url) + "/Users?filter=" + url_encode(filter) +
        "&attributes=" + url_encode("userName,displayName,active," + o.ext_schema);
    auto body = get_with_retry(http, o, url, stats);
    if (!body) return body.error();
    auto page = parse_user_page(body.value(), o.ext_schema);
    if (!page) return page.error();
    for (auto& u : page.value().resources)
        if (u.user_name == user_name) return std::optional<scim::User>(std::move(u));
    return std::optional<scim::User>();
}

ValidatedDirectory validate_directory(const ScimDirectory& source, const IdentityConfig& id)
{
    ValidatedDirectory out;
    auto reject = [&](const char* kind, std::string_view object, std::string reason) {
        out.rejections.push_back({kind, log_safe(object), std::move(reason)});
    };
    std::string prefix = id.home_prefix;
    while (prefix.size() > 1 && prefix.back() == '/') prefix.pop_back();

    // Users: per-record rules first, duplicates across the survivors after.
    std::vector<PosixUser> candidates;
    std::vector<std::string> candidate_ids;
    for (const scim::User& u : source.users) {
        const std::string& label = u.user_name.empty() ? u.id : u.user_name;
        if (!u.type_error.empty()) {
            reject("user", label, "wrong type: " + u.type_error);
            continue;
        }
        if (!u.active) {
            ++out.inactive;
            continue;
        }
        if (!u.has_extension) {
            reject("user", label, "no POSIX extension " + id.extension_schema);
            continue;
        }
        if (!valid_posix_name(u.user_name)) {
            reject("user", label,
                   "userName is not a POSIX portable name ([A-Za-z0-9._-], 1-32, no leading '-', "
                   "not all digits)");
            continue;
        }
        if (auto p = id_problem(u.uid, "uidNumber", id.uid_min, id.uid_max); !p.empty()) {
            reject("user", label, p);
            continue;
        }
        if (auto p = id_problem(u.gid, "gidNumber", id.gid_min, id.gid_max); !p.empty()) {
            reject("user", label, p);
            continue;
        }
        if (u.home.empty() || !safe_path_chars(u.home) || has_dotdot_or_empty_component(u.home) ||
            u.home.size() <= prefix.size() + 1 || u.home.compare(0, prefix.size(), prefix) != 0 ||
            (prefix != "/" && u.home[prefix.size()] != '/')) {
            reject("user", label,
                   "homeDirectory '" + log_safe(u.home) + "' is not a plain path under " + prefix);
            continue;
        }
        if (std::find(id.shells.begin(), id.shells.end(), u.shell) == id.shells.end()) {
            reject("user", label,
                   "loginShell '" + log_safe(u.shell) + "' is not in identity.shells");
            continue;
        }
        PosixUser pu;
        pu.name = u.user_name;
        pu.uid = static_cast<uint32_t>(*u.uid);
        pu.gid = static_cast<uint32_t>(*u.gid);
        pu.gecos = sanitize_gecos(u.display_name);
        pu.home = u.home;
        pu.shell = u.shell;
        std::set<std::string> seen_keys;
        for (const std::string& k : u.ssh_keys) {
            auto key = parse_ssh_public_key(k);
            if (!key) {
                reject("ssh-key", label, key.error().message + " (key dropped, user kept)");
                continue;
            }
            if (seen_keys.insert(key.value().line()).second)
                pu.ssh_keys.push_back(key.value().line());
        }
        candidates.push_back(std::move(pu));
        candidate_ids.push_back(u.id);
    }
    std::unordered_map<std::string, int> name_count;
    std::unordered_map<uint32_t, int> uid_count;
    for (const auto& u : candidates) {
        ++name_count[u.name];
        ++uid_count[u.uid];
    }
    std::unordered_map<std::string, std::string> user_by_scim_id;  // SCIM id → userName
    for (size_t i = 0; i < candidates.size(); ++i) {
        auto& u = candidates[i];
        if (name_count[u.name] > 1) {
            reject("user", u.name, "duplicate userName (every record with it rejected)");
            continue;
        }
        if (uid_count[u.uid] > 1) {
            reject("user", u.name,
                   "duplicate uidNumber " + std::to_string(u.uid) +
                       " (every record with it rejected)");
            continue;
        }
        if (!candidate_ids[i].empty()) user_by_scim_id[candidate_ids[i]] = u.name;
        out.users.push_back(std::move(u));
    }
    std::unordered_set<std::string> valid_users;
    for (const auto& u : out.users) valid_users.insert(u.name);
    std::unordered_set<std::string> known_user_ids;
    for (const auto& u : source.users) known_user_ids.insert(u.id);

    // Groups.
    std::vector<const scim::Group*> good;
    std::unordered_map<std::string, int> gname_count;
    std::unordered_map<int64_t, int> gid_count;
    for (const scim::Group& g : source.groups) {
        const std::string& label = g.display_name.empty() ? g.id : g.display_name;
        if (!g.type_error.empty()) {
            reject("group", label, "wrong type: " + g.type_error);
            continue;
        }
        if (!valid_posix_name(g.display_name)) {
            reject("group", label, "displayName is not a POSIX portable name");
            continue;
        }
        if (g.gid) {
            if (auto p = id_problem(g.gid, "gidNumber", id.gid_min, id.gid_max); !p.empty()) {
                reject("group", label, p);
                continue;
            }
            ++gid_count[*g.gid];
        }
        ++gname_count[g.display_name];
        good.push_back(&g);
    }
    std::unordered_map<std::string, const scim::Group*> group_by_id;
    std::vector<const scim::Group*> kept;
    for (const scim::Group* g : good) {
        if (gname_count[g->display_name] > 1) {
            reject("group", g->display_name,
                   "duplicate displayName (every record with it rejected)");
            continue;
        }
        if (g->gid && gid_count[*g->gid] > 1) {
            reject("group", g->display_name, "duplicate gidNumber " + std::to_string(*g->gid));
            continue;
        }
        if (!g->id.empty()) group_by_id[g->id] = g;
        kept.push_back(g);
    }
    // Flatten nested groups: members of a member group count as members.
    std::function<void(const scim::Group*, std::set<std::string>&, std::set<const scim::Group*>&)>
        collect;
    collect = [&](const scim::Group* g, std::set<std::string>& members,
                  std::set<const scim::Group*>& visiting) {
        if (!visiting.insert(g).second) return;  // cycle or diamond: already counted
        for (const scim::Member& m : g->members) {
            auto uit = user_by_scim_id.find(m.value);
            if (m.type != "Group" && uit != user_by_scim_id.end()) {
                members.insert(uit->second);
                continue;
            }
            auto git = group_by_id.find(m.value);
            if (m.type != "User" && git != group_by_id.end()) {
                collect(git->second, members, visiting);
                continue;
            }
            // Rejected users were reported already; anything else is unknown.
            if (!known_user_ids.count(m.value))
                reject("member", g->display_name,
                       "member '" + log_safe(m.value) + "' is no known user or group (dropped)");
        }
    };
    for (const scim::Group* g : kept) {
        std::set<std::string> members;
        std::set<const scim::Group*> visiting;
        collect(g, members, visiting);
        PosixGroup pg;
        pg.name = g->display_name;
        pg.gid = g->gid ? static_cast<uint32_t>(*g->gid) : 0;
        pg.members.assign(members.begin(), members.end());
        out.groups.push_back(std::move(pg));
    }
    std::sort(out.users.begin(), out.users.end(),
              [](const PosixUser& a, const PosixUser& b) { return a.name < b.name; });
    std::sort(out.groups.begin(), out.groups.end(),
              [](const PosixGroup& a, const PosixGroup& b) { return a.name < b.name; });
    (void)valid_users;
    return out;
}

}  // namespace allot
