// scim_parse.cpp - SCIM 2.0 ListResponse parsing into the SCIM model
// (see allot/scim_client.hpp). Type checks only: what a valid record is, is
// decided by validate_directory() (scim_directory.cpp).
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

Result<ScimPage<scim::User>> parse_user_page(std::string_view body, const std::string& ext_schema)
{
    return parse_page<scim::User>(body, [&](const cJSON* r) { return parse_user(r, ext_schema); });
}

Result<ScimPage<scim::Group>> parse_group_page(std::string_view body, const std::string& ext_schema)
{
    return parse_page<scim::Group>(body,
                                   [&](const cJSON* r) { return parse_group(r, ext_schema); });
}

}  // namespace allot
