// codec.cpp - SCIM User/Group <-> JSON (see codec.hpp).
#include "codec.hpp"

#include <cstdio>
#include <ctime>

namespace allot::scim {
namespace {

void add_string(cJSON* obj, const char* key, const std::string& value)
{
    if (!value.empty()) cJSON_AddStringToObject(obj, key, value.c_str());
}

cJSON* meta(const char* type, const std::string& location, int64_t created, int64_t modified,
            int64_t version)
{
    cJSON* m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "resourceType", type);
    cJSON_AddStringToObject(m, "created", format_time(created).c_str());
    cJSON_AddStringToObject(m, "lastModified", format_time(modified).c_str());
    if (!location.empty()) cJSON_AddStringToObject(m, "location", location.c_str());
    cJSON_AddStringToObject(m, "version", etag(version).c_str());
    return m;
}

// Case-insensitive object lookup: SCIM attribute names are case-insensitive
// (RFC 7643 §2.1), and IdPs differ in how they spell them.
const cJSON* get(const cJSON* obj, const char* key)
{
    return cJSON_GetObjectItem(obj, key);
}

Result<std::optional<std::string>> opt_string(const cJSON* obj, const char* key)
{
    const cJSON* item = get(obj, key);
    if (!item || cJSON_IsNull(item)) return std::optional<std::string>{};
    if (!cJSON_IsString(item) || !item->valuestring)
        return make_error(std::string(key) + ": must be a string");
    return std::optional<std::string>(item->valuestring);
}

Result<std::optional<int64_t>> opt_id_number(const cJSON* obj, const char* key)
{
    const cJSON* item = get(obj, key);
    if (!item || cJSON_IsNull(item)) return std::optional<int64_t>{};
    if (!cJSON_IsNumber(item)) return make_error(std::string(key) + ": must be an integer");
    const double v = item->valuedouble;
    if (!(v >= 1 && v <= 4294967294.0) || static_cast<double>(static_cast<uint32_t>(v)) != v)
        return make_error(std::string(key) + ": must be an integer in 1..4294967294");
    return std::optional<int64_t>(static_cast<int64_t>(v));
}

}  // namespace

std::string etag(int64_t version)
{
    return "W/\"" + std::to_string(version) + "\"";
}

JsonPtr user_to_json(const User& u, const RenderOptions& o)
{
    JsonPtr root(cJSON_CreateObject());
    cJSON* schemas = cJSON_AddArrayToObject(root.get(), "schemas");
    cJSON_AddItemToArray(schemas, cJSON_CreateString(kUserSchema));
    if (o.include_extension)
        cJSON_AddItemToArray(schemas, cJSON_CreateString(o.user_extension.c_str()));
    cJSON_AddStringToObject(root.get(), "id", u.id.c_str());
    add_string(root.get(), "externalId", u.external_id);
    cJSON_AddStringToObject(root.get(), "userName", u.user_name.c_str());
    add_string(root.get(), "displayName", u.display_name);
    cJSON_AddBoolToObject(root.get(), "active", u.active);
    if (!u.emails.empty()) {
        cJSON* emails = cJSON_AddArrayToObject(root.get(), "emails");
        for (const auto& e : u.emails) {
            cJSON* item = cJSON_CreateObject();
            cJSON_AddStringToObject(item, "value", e.value.c_str());
            add_string(item, "type", e.type);
            if (e.primary) cJSON_AddTrueToObject(item, "primary");
            cJSON_AddItemToArray(emails, item);
        }
    }
    if (!u.groups.empty()) {
        cJSON* groups = cJSON_AddArrayToObject(root.get(), "groups");
        for (const auto& g : u.groups) {
            cJSON* item = cJSON_CreateObject();
            cJSON_AddStringToObject(item, "value", g.id.c_str());
            cJSON_AddStringToObject(item, "display", g.name.c_str());
            if (!o.base_url.empty())
                cJSON_AddStringToObject(item, "$ref", (o.base_url + "/Groups/" + g.id).c_str());
            cJSON_AddItemToArray(groups, item);
        }
    }
    if (o.include_extension) {
        cJSON* ext = cJSON_AddObjectToObject(root.get(), o.user_extension.c_str());
        if (u.uid) cJSON_AddNumberToObject(ext, "uidNumber", static_cast<double>(*u.uid));
        if (u.gid) cJSON_AddNumberToObject(ext, "gidNumber", static_cast<double>(*u.gid));
        add_string(ext, "homeDirectory", u.home);
        add_string(ext, "loginShell", u.shell);
        cJSON* keys = cJSON_AddArrayToObject(ext, "sshPublicKeys");
        for (const auto& k : u.ssh_keys) cJSON_AddItemToArray(keys, cJSON_CreateString(k.c_str()));
    }
    cJSON_AddItemToObject(root.get(), "meta",
                          meta("User", o.base_url.empty() ? "" : o.base_url + "/Users/" + u.id,
                               u.created, u.modified, u.version));
    return root;
}

JsonPtr group_to_json(const Group& g, const RenderOptions& o)
{
    JsonPtr root(cJSON_CreateObject());
    cJSON* schemas = cJSON_AddArrayToObject(root.get(), "schemas");
    cJSON_AddItemToArray(schemas, cJSON_CreateString(kGroupSchema));
    // A private group's marker is returned always (RFC 7643 §7), with or
    // without the rest of the extension: a client must never take it for a
    // group of the directory.
    const bool ext_object = o.include_extension || g.user_private;
    if (ext_object) cJSON_AddItemToArray(schemas, cJSON_CreateString(kPosixGroup));
    cJSON_AddStringToObject(root.get(), "id", g.id.c_str());
    add_string(root.get(), "externalId", g.external_id);
    cJSON_AddStringToObject(root.get(), "displayName", g.display_name.c_str());
    cJSON* members = cJSON_AddArrayToObject(root.get(), "members");
    for (const auto& m : g.members) {
        cJSON* item = cJSON_CreateObject();
        cJSON_AddStringToObject(item, "value", m.value.c_str());
        cJSON_AddStringToObject(item, "display", m.display.c_str());
        cJSON_AddStringToObject(item, "type", "User");
        if (!o.base_url.empty())
            cJSON_AddStringToObject(item, "$ref", (o.base_url + "/Users/" + m.value).c_str());
        cJSON_AddItemToArray(members, item);
    }
    if (ext_object) {
        cJSON* ext = cJSON_AddObjectToObject(root.get(), kPosixGroup);
        if (g.gid && o.include_extension)
            cJSON_AddNumberToObject(ext, "gidNumber", static_cast<double>(*g.gid));
        // Only on private groups: absent means a group of the directory.
        if (g.user_private) cJSON_AddTrueToObject(ext, "userPrivateGroup");
    }
    cJSON_AddItemToObject(root.get(), "meta",
                          meta("Group", o.base_url.empty() ? "" : o.base_url + "/Groups/" + g.id,
                               g.created, g.modified, g.version));
    return root;
}

Result<User> user_from_json(const cJSON* json, const std::string& user_extension)
{
    if (!cJSON_IsObject(json)) return make_error("body: must be a JSON object");
    User u;
    auto user_name = opt_string(json, "userName");
    if (!user_name) return user_name.error();
    if (!user_name.value() || user_name.value()->empty()) return make_error("userName: required");
    u.user_name = *user_name.value();
    for (auto [key, field] :
         {std::pair{"externalId", &u.external_id}, std::pair{"displayName", &u.display_name}}) {
        auto v = opt_string(json, key);
        if (!v) return v.error();
        if (v.value()) *field = *v.value();
    }
    if (const cJSON* active = get(json, "active"); active && !cJSON_IsNull(active)) {
        // Some IdPs send "True"/"False" strings; accept those, nothing else.
        if (cJSON_IsBool(active)) {
            u.active = cJSON_IsTrue(active);
        } else if (cJSON_IsString(active) && (std::string_view(active->valuestring) == "true" ||
                                              std::string_view(active->valuestring) == "True")) {
            u.active = true;
        } else if (cJSON_IsString(active) && (std::string_view(active->valuestring) == "false" ||
                                              std::string_view(active->valuestring) == "False")) {
            u.active = false;
        } else {
            return make_error("active: must be a boolean");
        }
    }
    if (const cJSON* emails = get(json, "emails"); emails && !cJSON_IsNull(emails)) {
        if (!cJSON_IsArray(emails)) return make_error("emails: must be an array");
        const cJSON* e = nullptr;
        cJSON_ArrayForEach(e, emails)
        {
            auto value = opt_string(e, "value");
            if (!cJSON_IsObject(e) || !value || !value.value())
                return make_error("emails[].value: required string");
            auto type = opt_string(e, "type");
            if (!type) return type.error();
            const cJSON* primary = get(e, "primary");
            u.emails.push_back(
                {*value.value(), type.value().value_or(""), primary && cJSON_IsTrue(primary)});
        }
    }
    if (const cJSON* ext = get(json, user_extension.c_str()); ext && !cJSON_IsNull(ext)) {
        if (!cJSON_IsObject(ext)) return make_error(user_extension + ": must be an object");
        auto uid = opt_id_number(ext, "uidNumber");
        if (!uid) return uid.error();
        u.uid = uid.value();
        auto gid = opt_id_number(ext, "gidNumber");
        if (!gid) return gid.error();
        u.gid = gid.value();
        for (auto [key, field] :
             {std::pair{"homeDirectory", &u.home}, std::pair{"loginShell", &u.shell}}) {
            auto v = opt_string(ext, key);
            if (!v) return v.error();
            if (v.value()) *field = *v.value();
        }
        if (const cJSON* keys = get(ext, "sshPublicKeys"); keys && !cJSON_IsNull(keys)) {
            if (!cJSON_IsArray(keys)) return make_error("sshPublicKeys: must be an array");
            const cJSON* k = nullptr;
            cJSON_ArrayForEach(k, keys)
            {
                if (!cJSON_IsString(k)) return make_error("sshPublicKeys[]: must be strings");
                u.ssh_keys.emplace_back(k->valuestring);
            }
        }
    }
    return u;
}

Result<Group> group_from_json(const cJSON* json)
{
    if (!cJSON_IsObject(json)) return make_error("body: must be a JSON object");
    Group g;
    auto name = opt_string(json, "displayName");
    if (!name) return name.error();
    if (!name.value() || name.value()->empty()) return make_error("displayName: required");
    g.display_name = *name.value();
    auto external = opt_string(json, "externalId");
    if (!external) return external.error();
    g.external_id = external.value().value_or("");
    if (const cJSON* members = get(json, "members"); members && !cJSON_IsNull(members)) {
        if (!cJSON_IsArray(members)) return make_error("members: must be an array");
        const cJSON* m = nullptr;
        cJSON_ArrayForEach(m, members)
        {
            auto value = opt_string(m, "value");
            if (!cJSON_IsObject(m) || !value || !value.value())
                return make_error("members[].value: required string");
            g.members.push_back({*value.value(), "", ""});
        }
    }
    if (const cJSON* ext = get(json, kPosixGroup); ext && !cJSON_IsNull(ext)) {
        if (!cJSON_IsObject(ext))
            return make_error(std::string(kPosixGroup) + ": must be an object");
        auto gid = opt_id_number(ext, "gidNumber");
        if (!gid) return gid.error();
        g.gid = gid.value();
    }
    return g;
}

std::string error_body(int status, std::string_view scim_type, std::string_view detail)
{
    JsonPtr root(cJSON_CreateObject());
    cJSON* schemas = cJSON_AddArrayToObject(root.get(), "schemas");
    cJSON_AddItemToArray(schemas, cJSON_CreateString(kErrorSchema));
    cJSON_AddStringToObject(root.get(), "status", std::to_string(status).c_str());
    if (!scim_type.empty())
        cJSON_AddStringToObject(root.get(), "scimType", std::string(scim_type).c_str());
    cJSON_AddStringToObject(root.get(), "detail", std::string(detail).c_str());
    return json_print(root.get());
}

}  // namespace allot::scim
