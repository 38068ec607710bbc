// service_projection.cpp - see service_projection.hpp.
#include "service_projection.hpp"

#include <algorithm>

#include "service_http.hpp"
#include "util.hpp"

namespace allot::scimd {

namespace {

std::string lower_key(const cJSON* item)
{
    return to_lower(item->string ? item->string : "");
}

bool always_kept(const std::string& key)
{
    return key == "id" || key == "schemas";
}

// Returned "always" inside an extension: the marker of a synthesised private
// group survives any attributes/excludedAttributes (codec.cpp, group_to_json).
constexpr const char* kAlwaysInExtension = "userprivategroup";

bool has_marker(const cJSON* ext)
{
    return cJSON_IsObject(ext) && cJSON_GetObjectItem(ext, kAlwaysInExtension);
}

// Drops the members of `obj` (or of each object in the array `obj`) not named in `subs`.
void keep_children(cJSON* obj, const std::vector<std::string>& subs)
{
    auto prune = [&](cJSON* o) {
        for (cJSON* c = o->child; c;) {
            cJSON* next = c->next;
            if (std::find(subs.begin(), subs.end(), lower_key(c)) == subs.end())
                cJSON_Delete(cJSON_DetachItemViaPointer(o, c));
            c = next;
        }
    };
    if (!cJSON_IsArray(obj)) {
        prune(obj);
        return;
    }
    cJSON* el = nullptr;
    cJSON_ArrayForEach(el, obj) if (cJSON_IsObject(el)) prune(el);
}

// What `include` asks of one top-level attribute: all of it (`whole`), some
// sub-attributes, or (neither) nothing.
struct Wanted {
    bool whole = false;
    std::vector<std::string> subs;
};

Wanted wanted(const cJSON* item, const std::string& key, const std::vector<AttrPath>& include)
{
    Wanted w;
    w.whole = always_kept(key);
    const bool extension = key.rfind("urn:", 0) == 0;
    for (const auto& p : include) {
        if (extension) {
            if (p.schema == key && p.attr.empty()) w.whole = true;
            if ((p.schema == key || p.schema.empty()) && !p.attr.empty() &&
                cJSON_GetObjectItem(item, p.attr.c_str()))
                w.subs.push_back(p.attr);
            continue;
        }
        if (p.attr != key ||
            (!p.schema.empty() && p.schema.rfind("urn:ietf:params:scim:schemas:core:", 0) != 0))
            continue;
        if (p.sub.empty())
            w.whole = true;
        else
            w.subs.push_back(p.sub);
    }
    return w;
}

void keep_included(cJSON* resource, const std::vector<AttrPath>& include)
{
    for (cJSON* item = resource->child; item;) {
        cJSON* next = item->next;
        Wanted w = wanted(item, lower_key(item), include);
        if (!w.whole && lower_key(item).rfind("urn:", 0) == 0 && has_marker(item))
            w.subs.push_back(kAlwaysInExtension);
        if (w.whole) {
        } else if (!w.subs.empty() && (cJSON_IsObject(item) || cJSON_IsArray(item))) {
            keep_children(item, w.subs);
        } else {
            cJSON_Delete(cJSON_DetachItemViaPointer(resource, item));
        }
        item = next;
    }
}

void drop_excluded(cJSON* resource, const AttrPath& p)
{
    for (cJSON* item = resource->child; item;) {
        cJSON* next = item->next;
        const std::string key = lower_key(item);
        if (always_kept(key)) {
        } else if (key.rfind("urn:", 0) == 0) {
            if (p.schema == key && p.attr.empty() && has_marker(item))
                keep_children(item, {kAlwaysInExtension});
            else if (p.schema == key && p.attr.empty())
                cJSON_Delete(cJSON_DetachItemViaPointer(resource, item));
            else if ((p.schema == key || p.schema.empty()) && !p.attr.empty() &&
                     p.attr != kAlwaysInExtension)
                cJSON_DeleteItemFromObject(item, p.attr.c_str());
        } else if (p.attr == key) {
            if (p.sub.empty()) {
                cJSON_Delete(cJSON_DetachItemViaPointer(resource, item));
            } else if (cJSON_IsObject(item)) {
                cJSON_DeleteItemFromObject(item, p.sub.c_str());
            } else if (cJSON_IsArray(item)) {
                cJSON* el = nullptr;
                cJSON_ArrayForEach(el, item) cJSON_DeleteItemFromObject(el, p.sub.c_str());
            }
        }
        item = next;
    }
}

}  // namespace

void project(cJSON* resource, const std::vector<AttrPath>& include,
             const std::vector<AttrPath>& exclude)
{
    if (!include.empty()) keep_included(resource, include);
    for (const auto& p : exclude) drop_excluded(resource, p);
}

Projection projection(const HttpRequest& r, const ServiceOptions& o, const std::string& ext)
{
    Projection p;
    p.extension = o.extension_by_default;
    if (const auto* a = query(r, "attributes"))
        for (const auto& s : split_csv(*a)) {
            p.include.push_back(parse_attribute_name(s));
            if (p.include.back().schema == to_lower(ext)) p.extension = true;
        }
    if (const auto* a = query(r, "excludedAttributes"))
        for (const auto& s : split_csv(*a)) p.exclude.push_back(parse_attribute_name(s));
    return p;
}

}  // namespace allot::scimd
