// patch.cpp - see patch.hpp.
#include "patch.hpp"

#include <algorithm>
#include <functional>
#include <optional>

#include "filter.hpp"
#include "util.hpp"

namespace allot::scimd {
namespace {

enum class Op { Add, Remove, Replace };

Error err(Errc code, const std::string& detail)
{
    return make_error(code, detail);
}

// A multi-valued PATCH value: an array, or one object that IdPs send bare
// (then wrapped, by reference, in `wrap`); null for anything else.
const cJSON* as_array(const cJSON* v, JsonPtr& wrap)
{
    if (cJSON_IsObject(v)) {
        wrap.reset(cJSON_CreateArray());
        cJSON_AddItemReferenceToArray(wrap.get(), const_cast<cJSON*>(v));
        return wrap.get();
    }
    return cJSON_IsArray(v) ? v : nullptr;
}

// A PATCH may restate an immutable id as long as it does not change it.
bool same_id(const cJSON* v, const std::optional<int64_t>& have)
{
    return cJSON_IsNumber(v) && have && v->valuedouble == static_cast<double>(*have);
}

// In-memory evaluation of a valuePath filter over one multi-valued element.
using Lookup = std::function<std::optional<std::string>(const std::string& sub)>;
bool matches(const Filter& f, const Lookup& get)
{
    switch (f.kind) {
        case Filter::Kind::And: return matches(*f.left, get) && matches(*f.right, get);
        case Filter::Kind::Or: return matches(*f.left, get) || matches(*f.right, get);
        case Filter::Kind::Not: return !matches(*f.left, get);
        case Filter::Kind::ValuePath: return false;
        case Filter::Kind::Compare: break;
    }
    const auto v = get(f.path.attr);
    if (f.op == CompareOp::Pr) return v && !v->empty();
    if (!v) return f.op == CompareOp::Ne;
    std::string want;
    if (f.value.kind == FilterValue::Kind::String)
        want = f.value.text;
    else if (f.value.kind == FilterValue::Kind::Bool)
        want = f.value.boolean ? "true" : "false";
    else
        return false;
    switch (f.op) {
        case CompareOp::Eq: return *v == want;
        case CompareOp::Ne: return *v != want;
        case CompareOp::Co: return v->find(want) != std::string::npos;
        case CompareOp::Sw: return v->compare(0, want.size(), want) == 0;
        case CompareOp::Ew:
            return v->size() >= want.size() &&
                   v->compare(v->size() - want.size(), want.size(), want) == 0;
        case CompareOp::Gt: return *v > want;
        case CompareOp::Ge: return *v >= want;
        case CompareOp::Lt: return *v < want;
        case CompareOp::Le: return *v <= want;
        case CompareOp::Pr: break;
    }
    return false;
}

Result<std::vector<std::pair<std::string, const cJSON*>>> parse_ops(const cJSON* body,
                                                                    std::vector<Op>& ops)
{
    std::vector<std::pair<std::string, const cJSON*>> out;
    if (!cJSON_IsObject(body)) return err(Errc::InvalidSyntax, "body must be a PatchOp object");
    const cJSON* schemas = cJSON_GetObjectItem(body, "schemas");
    bool has_schema = false;
    const cJSON* s = nullptr;
    cJSON_ArrayForEach(s, schemas) has_schema |=
        cJSON_IsString(s) && std::string_view(s->valuestring) == scim::kPatchOp;
    if (!has_schema)
        return err(Errc::InvalidSyntax, std::string("schemas must contain ") + scim::kPatchOp);
    const cJSON* list = cJSON_GetObjectItem(body, "Operations");
    if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) == 0)
        return err(Errc::InvalidSyntax, "Operations must be a non-empty array");
    if (cJSON_GetArraySize(list) > 1000)
        return err(Errc::InvalidSyntax, "more than 1000 operations");
    const cJSON* item = nullptr;
    cJSON_ArrayForEach(item, list)
    {
        auto op = json_string(item, "op");
        if (!op) return err(Errc::InvalidSyntax, "operation without 'op'");
        const std::string lop = to_lower(*op);
        if (lop == "add")
            ops.push_back(Op::Add);
        else if (lop == "remove")
            ops.push_back(Op::Remove);
        else if (lop == "replace")
            ops.push_back(Op::Replace);
        else
            return err(Errc::InvalidSyntax, "unknown op '" + *op + "'");
        const cJSON* path = cJSON_GetObjectItem(item, "path");
        if (path && !cJSON_IsString(path)) return err(Errc::InvalidPath, "path must be a string");
        out.emplace_back(path ? path->valuestring : "", cJSON_GetObjectItem(item, "value"));
        if (ops.back() != Op::Remove && !out.back().second)
            return err(Errc::InvalidValue, "'" + lop + "' needs a value");
        if (ops.back() == Op::Remove && out.back().first.empty())
            return err(Errc::NoTarget, "'remove' needs a path");
    }
    return out;
}

// Accepts a JSON string, or a single-element array of one (some IdPs wrap).
std::optional<std::string> as_string(const cJSON* v)
{
    if (cJSON_IsArray(v) && cJSON_GetArraySize(v) == 1) v = cJSON_GetArrayItem(v, 0);
    if (cJSON_IsObject(v)) v = cJSON_GetObjectItem(v, "value");
    if (cJSON_IsString(v)) return std::string(v->valuestring);
    return std::nullopt;
}

std::optional<bool> as_bool(const cJSON* v)
{
    if (cJSON_IsBool(v)) return cJSON_IsTrue(v) != 0;
    if (cJSON_IsString(v)) {
        const std::string l = to_lower(v->valuestring);
        if (l == "true") return true;
        if (l == "false") return false;
    }
    return std::nullopt;
}

class UserPatcher {
public:
    UserPatcher(scim::User& u, const std::string& ext) : u_(u), ext_(to_lower(ext)) {}

    Result<Unit> apply(Op op, const std::string& path_text, const cJSON* value)
    {
        if (path_text.empty()) {
            if (!cJSON_IsObject(value))
                return err(Errc::InvalidValue, "no-path operation needs an object value");
            const cJSON* item = nullptr;
            cJSON_ArrayForEach(item, value)
            {
                const std::string key = item->string ? item->string : "";
                if (to_lower(key) == ext_) {
                    if (!cJSON_IsObject(item))
                        return err(Errc::InvalidValue, key + " must be an object");
                    const cJSON* sub = nullptr;
                    cJSON_ArrayForEach(sub, item)
                    {
                        auto r = set(op, ext_, to_lower(sub->string), "", nullptr, sub);
                        if (!r) return r;
                    }
                    continue;
                }
                if (to_lower(key) == "schemas" || to_lower(key) == "id" || to_lower(key) == "meta")
                    continue;
                auto p = parse_patch_path(key);
                if (!p) return err(Errc::InvalidPath, p.error().message);
                auto r = set(op, p.value().path.schema, p.value().path.attr, p.value().path.sub,
                             nullptr, item);
                if (!r) return r;
            }
            return Unit{};
        }
        auto p = parse_patch_path(path_text);
        if (!p) return err(Errc::InvalidPath, p.error().message);
        return set(op, p.value().path.schema, p.value().path.attr,
                   p.value().filter ? p.value().sub_after : p.value().path.sub,
                   p.value().filter.get(), value);
    }

private:
    Result<Unit> set(Op op, const std::string& schema, const std::string& attr,
                     const std::string& sub, const Filter* filter, const cJSON* v)
    {
        const bool in_ext = schema == ext_;
        if (!schema.empty() && !in_ext && schema != "urn:ietf:params:scim:schemas:core:2.0:user")
            return err(Errc::InvalidPath, "unknown schema '" + schema + "'");
        auto str = [&](std::string& field, bool removable) -> Result<Unit> {
            if (op == Op::Remove) {
                if (!removable) return err(Errc::Mutability, attr + " cannot be removed");
                field.clear();
                return Unit{};
            }
            auto s = as_string(v);
            if (!s) return err(Errc::InvalidValue, attr + " must be a string");
            field = *s;
            return Unit{};
        };
        if (!in_ext && filter == nullptr && sub.empty()) {
            if (attr == "username") return str(u_.user_name, false);
            if (attr == "displayname") return str(u_.display_name, true);
            if (attr == "externalid") return str(u_.external_id, true);
            if (attr == "active") {
                if (op == Op::Remove) return err(Errc::Mutability, "active cannot be removed");
                auto b = as_bool(v);
                if (!b) return err(Errc::InvalidValue, "active must be a boolean");
                u_.active = *b;
                return Unit{};
            }
        }
        if (!in_ext && attr == "emails") return emails(op, sub, filter, v);
        if (in_ext || schema.empty()) {
            if (attr == "homedirectory" && !filter) return str(u_.home, true);
            if (attr == "loginshell" && !filter) return str(u_.shell, true);
            if (attr == "uidnumber" || attr == "gidnumber") {
                const auto& have = attr == "uidnumber" ? u_.uid : u_.gid;
                if (op != Op::Remove && same_id(v, have)) return Unit{};
                return err(Errc::Mutability, attr + " is immutable (ids are never changed)");
            }
            if (attr == "sshpublickeys") return keys(op, filter, v);
        }
        if (attr == "groups") return err(Errc::Mutability, "groups is read-only; patch the Group");
        if (attr == "id" || attr == "meta") return err(Errc::Mutability, attr + " is read-only");
        return err(Errc::InvalidPath, "unknown attribute '" + attr + "'");
    }

    Result<Unit> keys(Op op, const Filter* filter, const cJSON* v)
    {
        if (op == Op::Remove) {
            if (!filter) {
                if (cJSON_IsArray(v)) {  // remove the listed values
                    const cJSON* k = nullptr;
                    cJSON_ArrayForEach(k, v) if (auto s = as_string(k)) u_.ssh_keys.erase(
                        std::remove(u_.ssh_keys.begin(), u_.ssh_keys.end(), *s), u_.ssh_keys.end());
                    return Unit{};
                }
                u_.ssh_keys.clear();
                return Unit{};
            }
            const size_t before = u_.ssh_keys.size();
            u_.ssh_keys.erase(std::remove_if(u_.ssh_keys.begin(), u_.ssh_keys.end(),
                                             [&](const std::string& k) {
                                                 return matches(*filter, [&](const std::string& s) {
                                                     return s == "value"
                                                                ? std::optional<std::string>(k)
                                                                : std::nullopt;
                                                 });
                                             }),
                              u_.ssh_keys.end());
            if (before == u_.ssh_keys.size()) return err(Errc::NoTarget, "no ssh key matches");
            return Unit{};
        }
        if (filter) return err(Errc::InvalidPath, "use add/remove for sshPublicKeys");
        std::vector<std::string> values;
        if (cJSON_IsString(v)) {
            values.emplace_back(v->valuestring);
        } else if (cJSON_IsArray(v)) {
            const cJSON* k = nullptr;
            cJSON_ArrayForEach(k, v)
            {
                auto s = as_string(k);
                if (!s) return err(Errc::InvalidValue, "sshPublicKeys must be strings");
                values.push_back(*s);
            }
        } else {
            return err(Errc::InvalidValue, "sshPublicKeys must be an array of strings");
        }
        if (op == Op::Replace) u_.ssh_keys.clear();
        for (auto& k : values)
            if (std::find(u_.ssh_keys.begin(), u_.ssh_keys.end(), k) == u_.ssh_keys.end())
                u_.ssh_keys.push_back(k);
        return Unit{};
    }

    Result<Unit> emails(Op op, const std::string& sub, const Filter* filter, const cJSON* v)
    {
        auto lookup = [](const scim::Email& e) {
            return [&e](const std::string& s) -> std::optional<std::string> {
                if (s == "value") return e.value;
                if (s == "type") return e.type;
                if (s == "primary") return std::string(e.primary ? "true" : "false");
                return std::nullopt;
            };
        };
        if (op == Op::Remove) {
            if (!filter) {
                u_.emails.clear();
                return Unit{};
            }
            const size_t before = u_.emails.size();
            u_.emails.erase(
                std::remove_if(u_.emails.begin(), u_.emails.end(),
                               [&](const scim::Email& e) { return matches(*filter, lookup(e)); }),
                u_.emails.end());
            if (before == u_.emails.size()) return err(Errc::NoTarget, "no email matches");
            return Unit{};
        }
        if (filter) {  // emails[type eq "work"].value = "x"
            bool hit = false;
            for (auto& e : u_.emails) {
                if (!matches(*filter, lookup(e))) continue;
                hit = true;
                auto s = as_string(v);
                if (sub == "value" && s)
                    e.value = *s;
                else if (sub == "type" && s)
                    e.type = *s;
                else if (sub == "primary" && as_bool(v))
                    e.primary = *as_bool(v);
                else
                    return err(Errc::InvalidPath, "unsupported emails sub-attribute");
            }
            if (!hit) return err(Errc::NoTarget, "no email matches");
            return Unit{};
        }
        if (!sub.empty()) return err(Errc::InvalidPath, "emails." + sub + " needs a filter");
        std::vector<scim::Email> parsed;
        JsonPtr wrap;
        const cJSON* items = as_array(v, wrap);
        if (!items) return err(Errc::InvalidValue, "emails must be an array");
        const cJSON* e = nullptr;
        cJSON_ArrayForEach(e, items)
        {
            auto value = json_string(e, "value");
            if (!value) return err(Errc::InvalidValue, "emails[].value must be a string");
            const cJSON* primary = cJSON_GetObjectItem(e, "primary");
            parsed.push_back({*value, json_string(e, "type").value_or(""),
                              primary && as_bool(primary).value_or(false)});
        }
        if (op == Op::Replace) u_.emails.clear();
        for (auto& p : parsed) u_.emails.push_back(p);
        return Unit{};
    }

    scim::User& u_;
    std::string ext_;
};

}  // namespace

Result<Unit> apply_user_patch(scim::User& user, const cJSON* body, const std::string& ext)
{
    std::vector<Op> ops;
    auto parsed = parse_ops(body, ops);
    if (!parsed) return parsed.error();
    UserPatcher p(user, ext);
    for (size_t i = 0; i < ops.size(); ++i) {
        auto r = p.apply(ops[i], parsed.value()[i].first, parsed.value()[i].second);
        if (!r) return r;
    }
    return Unit{};
}

namespace {

// The ids of a members value: [{"value": id}, ...] or one such object.
Result<Unit> member_ids(const cJSON* v, std::vector<std::string>& out)
{
    JsonPtr wrap;
    const cJSON* items = as_array(v, wrap);
    if (!items) return err(Errc::InvalidValue, "members must be an array");
    const cJSON* m = nullptr;
    cJSON_ArrayForEach(m, items)
    {
        auto id = json_string(m, "value");
        if (!id) return err(Errc::InvalidValue, "members[].value must be a string");
        out.push_back(*id);
    }
    return Unit{};
}

class GroupPatcher {
public:
    explicit GroupPatcher(scim::Group& g) : g_(g) {}

    Result<Unit> apply(Op op, const std::string& path_text, const cJSON* v)
    {
        if (path_text.empty()) return apply_object(op, v);
        auto p = parse_patch_path(path_text);
        if (!p) return err(Errc::InvalidPath, p.error().message);
        const auto& path = p.value().path;
        const bool ext = path.schema == to_lower(scim::kPosixGroup);
        if (!path.schema.empty() && !ext &&
            path.schema != "urn:ietf:params:scim:schemas:core:2.0:group")
            return err(Errc::InvalidPath, "unknown schema '" + path.schema + "'");
        const bool filtered = p.value().filter != nullptr;
        if (path.attr == "displayname" && !filtered) {
            if (op == Op::Remove) return err(Errc::Mutability, "displayName cannot be removed");
            auto s = as_string(v);
            if (!s) return err(Errc::InvalidValue, "displayName must be a string");
            g_.display_name = *s;
            return Unit{};
        }
        if (path.attr == "externalid" && !filtered) {
            if (op == Op::Remove) {
                g_.external_id.clear();
                return Unit{};
            }
            auto s = as_string(v);
            if (!s) return err(Errc::InvalidValue, "externalId must be a string");
            g_.external_id = *s;
            return Unit{};
        }
        if (path.attr == "gidnumber") {
            if (op != Op::Remove && same_id(v, g_.gid)) return Unit{};
            return err(Errc::Mutability, "gidNumber is immutable");
        }
        if (path.attr != "members")
            return err(Errc::InvalidPath, "unknown attribute '" + path.attr + "'");
        if (op == Op::Remove) return remove_members(p.value().filter.get(), v);
        if (filtered) return err(Errc::InvalidPath, "add/replace members without a filter");
        std::vector<std::string> ids;
        auto r = member_ids(v, ids);
        if (!r) return r;
        if (op == Op::Replace) g_.members.clear();
        add_members(ids);
        return Unit{};
    }

private:
    // No path: the value is an object of attribute -> value (Entra, Okta).
    Result<Unit> apply_object(Op op, const cJSON* v)
    {
        if (!cJSON_IsObject(v))
            return err(Errc::InvalidValue, "no-path operation needs an object value");
        const cJSON* item = nullptr;
        cJSON_ArrayForEach(item, v)
        {
            const std::string key = item->string ? item->string : "";
            const std::string lk = to_lower(key);
            if (lk == "schemas" || lk == "id" || lk == "meta") continue;
            if (lk == to_lower(scim::kPosixGroup)) {
                const cJSON* gid = cJSON_GetObjectItem(item, "gidNumber");
                if (gid && !same_id(gid, g_.gid))
                    return err(Errc::Mutability, "gidNumber is immutable");
                continue;
            }
            auto r = apply(op, key, item);
            if (!r) return r;
        }
        return Unit{};
    }

    // By filter (members[value eq "id"]), by a value list (Entra), or all.
    // Removing an absent member is not an error (idempotent IdP retries).
    Result<Unit> remove_members(const Filter* filter, const cJSON* v)
    {
        if (filter) {
            erase_members([&](const scim::Member& m) {
                return matches(*filter, [&](const std::string& s) -> std::optional<std::string> {
                    if (s == "value") return m.value;
                    if (s == "display") return m.display;
                    return std::nullopt;
                });
            });
            return Unit{};
        }
        if (!v) {
            g_.members.clear();
            return Unit{};
        }
        std::vector<std::string> ids;
        auto r = member_ids(v, ids);
        if (!r) return r;
        erase_members([&](const scim::Member& m) {
            return std::find(ids.begin(), ids.end(), m.value) != ids.end();
        });
        return Unit{};
    }

    template <typename Pred>
    void erase_members(Pred pred)
    {
        g_.members.erase(std::remove_if(g_.members.begin(), g_.members.end(), pred),
                         g_.members.end());
    }

    void add_members(const std::vector<std::string>& ids)
    {
        for (const auto& id : ids)
            if (std::none_of(g_.members.begin(), g_.members.end(),
                             [&](const scim::Member& m) { return m.value == id; }))
                g_.members.push_back({id, "User", ""});
    }

    scim::Group& g_;
};

}  // namespace

Result<Unit> apply_group_patch(scim::Group& g, const cJSON* body)
{
    std::vector<Op> ops;
    auto parsed = parse_ops(body, ops);
    if (!parsed) return parsed.error();
    GroupPatcher patcher(g);
    for (size_t i = 0; i < ops.size(); ++i) {
        auto r = patcher.apply(ops[i], parsed.value()[i].first, parsed.value()[i].second);
        if (!r) return r;
    }
    return Unit{};
}

}  // namespace allot::scimd
