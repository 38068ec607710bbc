// scim_parse.cpp - SCIM 2.0 ListResponse parsing into the SCIM model
// (see allot/scim_client.hpp). Type checks only: what a valid record is, is
// decided by validate_directory() (scim_directory.cpp).
#include <algorithm>
#include <string>

#include "allot/json.hpp"
#include "allot/scim_client.hpp"

namespace allot {
using SourceErrc = scim_source::Errc;

namespace {

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

// The object holding `path`'s attribute (the resource itself for a core
// attribute, else its extension object) and the attribute's name; nullptr when
// the extension is absent. An extension that is not an object is a type error.
const cJSON* container(const cJSON* res, const std::string& path, std::string& attr,
                       std::string& err)
{
    const size_t colon = path.rfind(':');
    if (colon == std::string::npos) {
        attr = path;
        return res;
    }
    attr = path.substr(colon + 1);
    const cJSON* ext = field(res, path.substr(0, colon).c_str());
    if (!ext || cJSON_IsNull(ext)) return nullptr;
    if (!cJSON_IsObject(ext)) {
        if (err.empty()) err = path.substr(0, colon) + " is not an object";
        return nullptr;
    }
    return ext;
}

void path_string(const cJSON* res, const std::string& path, std::string& out, std::string& err)
{
    std::string attr;
    if (const cJSON* c = container(res, path, attr, err)) opt_string(c, attr.c_str(), out, err);
}

void path_integer(const cJSON* res, const std::string& path, std::optional<int64_t>& out,
                  std::string& err)
{
    std::string attr;
    if (const cJSON* c = container(res, path, attr, err)) opt_integer(c, attr.c_str(), out, err);
}

void path_keys(const cJSON* res, const std::string& path, std::vector<std::string>& out,
               std::string& err)
{
    std::string attr;
    const cJSON* c = container(res, path, attr, err);
    const cJSON* keys = c ? field(c, attr.c_str()) : nullptr;
    if (!keys || cJSON_IsNull(keys)) return;
    if (!cJSON_IsArray(keys)) {
        if (err.empty()) err = attr + " is not an array";
        return;
    }
    const cJSON* k = nullptr;
    cJSON_ArrayForEach(k, keys)
    {
        // Plain strings, or multi-valued-attribute objects {"value": "..."}.
        if (cJSON_IsString(k) && k->valuestring) {
            out.emplace_back(k->valuestring);
        } else if (cJSON_IsObject(k) && json_string(k, "value")) {
            out.push_back(*json_string(k, "value"));
        } else if (err.empty()) {
            err = attr + " holds a value that is not a string";
        }
    }
}

scim::User parse_user(const cJSON* res, const ScimAttributeMap& map)
{
    scim::User u;
    std::string& err = u.type_error;
    if (!cJSON_IsObject(res)) {
        err = "resource is not an object";
        return u;
    }
    opt_string(res, "id", u.id, err);
    path_string(res, map.user_name, u.user_name, err);
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
    // "Has the extension" = the object holding the uid is there.
    std::string attr;
    u.has_extension = container(res, map.uid, attr, err) != nullptr;
    if (!u.has_extension) return u;
    path_integer(res, map.uid, u.uid, err);
    path_integer(res, map.gid, u.gid, err);
    path_string(res, map.home, u.home, err);
    path_string(res, map.shell, u.shell, err);
    path_keys(res, map.ssh_keys, u.ssh_keys, err);
    return u;
}

scim::Group parse_group(const cJSON* res, const ScimAttributeMap& map)
{
    scim::Group g;
    std::string& err = g.type_error;
    if (!cJSON_IsObject(res)) {
        err = "resource is not an object";
        return g;
    }
    opt_string(res, "id", g.id, err);
    path_string(res, map.group_name, g.display_name, err);
    path_integer(res, map.group_gid, g.gid, err);
    // A core gid attribute may also sit in any extension object (the user
    // extension URN, or a PosixGroup one); take the first found.
    if (!g.gid && map.group_gid.find(':') == std::string::npos) {
        const cJSON* item = nullptr;
        cJSON_ArrayForEach(item, res)
        {
            if (cJSON_IsObject(item) && item->string &&
                std::string_view(item->string).rfind("urn:", 0) == 0) {
                opt_integer(item, map.group_gid.c_str(), g.gid, err);
                if (g.gid) break;
            }
        }
    }
    // allot-scimd marks the private groups it synthesises for nsscache; a
    // sync leaves them out (allot-syncd's sync_engine.cpp).
    if (const cJSON* ext = field(res, scim::kPosixGroup); cJSON_IsObject(ext)) {
        const cJSON* upg = field(ext, "userPrivateGroup");
        if (cJSON_IsBool(upg))
            g.user_private = cJSON_IsTrue(upg);
        else if (upg && !cJSON_IsNull(upg) && err.empty())
            err = "userPrivateGroup is not a boolean";
    }
    const cJSON* members = field(res, "members");
    if (members && !cJSON_IsNull(members)) {
        if (!cJSON_IsArray(members)) {
            if (err.empty()) err = "members is not an array";
            return g;
        }
        const char* key = map.members_by_display ? "display" : "value";
        const cJSON* m = nullptr;
        cJSON_ArrayForEach(m, members)
        {
            scim::Member member;
            if (!cJSON_IsObject(m) || !json_string(m, key)) {
                if (err.empty()) err = std::string("a member has no string ") + key;
                continue;
            }
            member.value = json_string(m, "value").value_or("");
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
    if (body.size() > kScimMaxBody)
        return make_error(SourceErrc::ResponseTooLarge, "response larger than 10 MiB");
    JsonPtr root = json_parse(body, kScimMaxBody);
    if (!root)
        return make_error(SourceErrc::Malformed,
                          "response is not valid JSON (truncated or malformed)");
    if (!cJSON_IsObject(root.get()))
        return make_error(SourceErrc::Malformed, "response is not a JSON object");
    if (json_string(root.get(), "detail") || json_string(root.get(), "scimType")) {
        return make_error(
            SourceErrc::Malformed,
            "SCIM error: " + log_safe(json_string(root.get(), "detail").value_or("")));
    }
    ScimPage<T> page;
    const cJSON* total = field(root.get(), "totalResults");
    if (!total)
        return make_error(SourceErrc::Malformed,
                          "response is not a SCIM ListResponse (no totalResults)");
    auto tr = json_integer(root.get(), "totalResults", 0, INT32_MAX);
    if (!tr) return make_error(SourceErrc::Malformed, "totalResults is not a whole number ≥ 0");
    page.total_results = *tr;
    if (field(root.get(), "startIndex")) {
        auto si = json_integer(root.get(), "startIndex", 1, INT32_MAX);
        if (!si) return make_error(SourceErrc::Malformed, "startIndex is not a whole number ≥ 1");
        page.start_index = *si;
    }
    if (field(root.get(), "itemsPerPage")) {
        auto ipp = json_integer(root.get(), "itemsPerPage", 0, INT32_MAX);
        if (!ipp)
            return make_error(SourceErrc::Malformed, "itemsPerPage is not a whole number ≥ 0");
        page.items_per_page = *ipp;
    }
    const cJSON* cursor = field(root.get(), "nextCursor");
    if (cursor && !cJSON_IsNull(cursor)) {
        if (!cJSON_IsString(cursor) || !cursor->valuestring)
            return make_error(SourceErrc::Malformed, "nextCursor is not a string");
        page.next_cursor = cursor->valuestring;
        if (page.next_cursor.size() > 4096)
            return make_error(SourceErrc::Malformed, "nextCursor longer than 4 KiB");
    }
    const cJSON* resources = field(root.get(), "Resources");
    if (!resources || cJSON_IsNull(resources)) {
        if (page.total_results > 0 && page.items_per_page != 0 && page.next_cursor.empty())
            return make_error(SourceErrc::Malformed,
                              "ListResponse has totalResults > 0 but no Resources");
        return page;
    }
    if (!cJSON_IsArray(resources))
        return make_error(SourceErrc::Malformed, "Resources is not an array");
    const cJSON* res = nullptr;
    cJSON_ArrayForEach(res, resources)
    {
        page.resources.push_back(parse_one(res));
    }
    return page;
}

}  // namespace

ScimAttributeMap allot_attribute_map(const std::string& ext_schema)
{
    ScimAttributeMap m;
    m.uid = ext_schema + ":uidNumber";
    m.gid = ext_schema + ":gidNumber";
    m.home = ext_schema + ":homeDirectory";
    m.shell = ext_schema + ":loginShell";
    m.ssh_keys = ext_schema + ":sshPublicKeys";
    return m;
}

namespace {

// CoreWeave's user extension (docs/syncd.md cites the sources).
ScimAttributeMap coreweave_attribute_map()
{
    const std::string ext = kCoreWeaveUserExtension;
    ScimAttributeMap m;
    m.uid = ext + ":uidNumber";
    m.gid = ext + ":gidNumber";
    m.home = ext + ":homeDirectory";
    m.shell = ext + ":loginShell";
    m.ssh_keys = ext + ":sunkSshKeys";
    return m;
}

std::string* map_field(ScimAttributeMap& m, const std::string& key)
{
    if (key == "user_name") return &m.user_name;
    if (key == "uid") return &m.uid;
    if (key == "gid") return &m.gid;
    if (key == "home") return &m.home;
    if (key == "shell") return &m.shell;
    if (key == "ssh_keys") return &m.ssh_keys;
    if (key == "group_name") return &m.group_name;
    if (key == "group_gid") return &m.group_gid;
    return nullptr;
}

}  // namespace

const std::vector<std::string>& scim_attribute_keys()
{
    static const std::vector<std::string> keys = {"user_name",  "uid",       "gid",
                                                  "home",       "shell",     "ssh_keys",
                                                  "group_name", "group_gid", "members"};
    return keys;
}

bool is_scim_dialect(std::string_view name)
{
    return name == "allot" || name == "coreweave";
}

ScimAttributeMap scim_attribute_map(const IdentityConfig& identity)
{
    ScimAttributeMap m = identity.dialect == "coreweave"
                             ? coreweave_attribute_map()
                             : allot_attribute_map(identity.extension_schema);
    for (const auto& [key, path] : identity.attributes) {
        if (key == "members")
            m.members_by_display = path == "display";
        else if (std::string* f = map_field(m, key))
            *f = path;
    }
    return m;
}

std::string user_attribute_request(const ScimAttributeMap& map)
{
    std::vector<std::string> wanted = {"userName", "displayName", "active"};
    for (const std::string* p :
         {&map.user_name, &map.uid, &map.gid, &map.home, &map.shell, &map.ssh_keys}) {
        const size_t colon = p->rfind(':');
        const std::string a = colon == std::string::npos ? *p : p->substr(0, colon);
        if (!a.empty() && std::find(wanted.begin(), wanted.end(), a) == wanted.end())
            wanted.push_back(a);
    }
    std::string out;
    for (const auto& a : wanted) out += (out.empty() ? "" : ",") + a;
    return out;
}

Result<ScimPage<scim::User>> parse_user_page(std::string_view body, const ScimAttributeMap& map)
{
    return parse_page<scim::User>(body, [&](const cJSON* r) { return parse_user(r, map); });
}

Result<ScimPage<scim::Group>> parse_group_page(std::string_view body, const ScimAttributeMap& map)
{
    return parse_page<scim::Group>(body, [&](const cJSON* r) { return parse_group(r, map); });
}

Result<ScimPage<scim::User>> parse_user_page(std::string_view body, const std::string& ext_schema)
{
    return parse_user_page(body, allot_attribute_map(ext_schema));
}

Result<ScimPage<scim::Group>> parse_group_page(std::string_view body, const std::string& ext_schema)
{
    return parse_group_page(body, allot_attribute_map(ext_schema));
}

}  // namespace allot
