// service_discovery.cpp - the documents that describe the server: OIDC
// discovery, and SCIM's ServiceProviderConfig, Schemas and ResourceTypes.
#include <set>
#include <tuple>

#include "allot/token_exchange.hpp"
#include "service.hpp"
#include "service_http.hpp"

namespace allot::scimd {

HttpResponse Service::discovery()
{
    const std::string& iss = o_.token.issuer;
    JsonPtr d(cJSON_CreateObject());
    cJSON_AddStringToObject(d.get(), "issuer", iss.c_str());
    cJSON_AddStringToObject(d.get(), "jwks_uri", (iss + "/oidc/jwks").c_str());
    cJSON_AddStringToObject(d.get(), "token_endpoint", (iss + "/oidc/token").c_str());
    cJSON_AddItemToObject(d.get(), "response_types_supported", string_array({"id_token"}));
    cJSON_AddItemToObject(d.get(), "subject_types_supported", string_array({"public"}));
    cJSON* algs = cJSON_AddArrayToObject(d.get(), "id_token_signing_alg_values_supported");
    std::set<std::string> seen;
    for (const auto& k : keys()->keys)
        if (seen.insert(alg_name(k.alg())).second)
            cJSON_AddItemToArray(algs, cJSON_CreateString(alg_name(k.alg())));
    cJSON_AddItemToObject(d.get(), "grant_types_supported", string_array({kTokenExchangeGrant}));
    cJSON_AddItemToObject(d.get(), "token_endpoint_auth_methods_supported", string_array({"none"}));
    cJSON_AddItemToObject(d.get(), "scopes_supported", string_array({"openid"}));
    cJSON_AddItemToObject(d.get(), "claims_supported",
                          string_array({"iss", "sub", "aud", "exp", "iat", "nbf",
                                        "preferred_username", "groups", "uid_number"}));
    HttpResponse r = json_response(200, d.get(), "application/json");
    r.headers.push_back({"Cache-Control", "max-age=300"});
    return r;
}

namespace {

cJSON* attr(const char* name, const char* type, bool multi, bool required, const char* mut,
            bool case_exact = true, const char* uniqueness = "none")
{
    cJSON* a = cJSON_CreateObject();
    cJSON_AddStringToObject(a, "name", name);
    cJSON_AddStringToObject(a, "type", type);
    cJSON_AddBoolToObject(a, "multiValued", multi);
    cJSON_AddBoolToObject(a, "required", required);
    cJSON_AddBoolToObject(a, "caseExact", case_exact);
    cJSON_AddStringToObject(a, "mutability", mut);
    cJSON_AddStringToObject(a, "returned", "default");
    cJSON_AddStringToObject(a, "uniqueness", uniqueness);
    return a;
}

cJSON* returned_always(cJSON* a)
{
    cJSON_ReplaceItemInObject(a, "returned", cJSON_CreateString("always"));
    return a;
}

JsonPtr schema(const std::string& base, const std::string& sid, const char* name,
               std::vector<cJSON*> attrs)
{
    JsonPtr s(cJSON_CreateObject());
    cJSON_AddItemToObject(s.get(), "schemas",
                          string_array({"urn:ietf:params:scim:schemas:core:2.0:Schema"}));
    cJSON_AddStringToObject(s.get(), "id", sid.c_str());
    cJSON_AddStringToObject(s.get(), "name", name);
    cJSON* arr = cJSON_AddArrayToObject(s.get(), "attributes");
    for (cJSON* a : attrs) cJSON_AddItemToArray(arr, a);
    cJSON* meta = cJSON_AddObjectToObject(s.get(), "meta");
    cJSON_AddStringToObject(meta, "resourceType", "Schema");
    cJSON_AddStringToObject(meta, "location", (base + "/Schemas/" + sid).c_str());
    return s;
}

std::vector<JsonPtr> all_schemas(const std::string& base, const std::string& user_extension)
{
    std::vector<JsonPtr> out;
    out.push_back(schema(base, scim::kUserSchema, "User",
                         {attr("userName", "string", false, true, "readWrite", true, "server"),
                          attr("displayName", "string", false, false, "readWrite"),
                          attr("externalId", "string", false, false, "readWrite"),
                          attr("active", "boolean", false, false, "readWrite"),
                          attr("emails", "complex", true, false, "readWrite", false),
                          attr("groups", "complex", true, false, "readOnly")}));
    out.push_back(schema(base, scim::kGroupSchema, "Group",
                         {attr("displayName", "string", false, true, "readWrite", true, "server"),
                          attr("externalId", "string", false, false, "readWrite"),
                          attr("members", "complex", true, false, "readWrite")}));
    out.push_back(schema(base, user_extension, "PosixUser",
                         {attr("uidNumber", "integer", false, false, "immutable", true, "server"),
                          attr("gidNumber", "integer", false, false, "immutable"),
                          attr("homeDirectory", "string", false, false, "readWrite"),
                          attr("loginShell", "string", false, false, "readWrite"),
                          attr("sshPublicKeys", "string", true, false, "readWrite")}));
    out.push_back(
        schema(base, scim::kPosixGroup, "PosixGroup",
               {attr("gidNumber", "integer", false, false, "immutable", true, "server"),
                returned_always(attr("userPrivateGroup", "boolean", false, false, "readOnly"))}));
    return out;
}

std::vector<JsonPtr> resource_types(const std::string& base, const std::string& user_extension)
{
    std::vector<JsonPtr> out;
    for (const auto& [name, endpoint, core, ext] :
         {std::tuple<std::string, std::string, std::string, std::string>{
              "User", "/Users", scim::kUserSchema, user_extension},
          {"Group", "/Groups", scim::kGroupSchema, scim::kPosixGroup}}) {
        JsonPtr t(cJSON_CreateObject());
        cJSON_AddItemToObject(t.get(), "schemas",
                              string_array({"urn:ietf:params:scim:schemas:core:2.0:ResourceType"}));
        cJSON_AddStringToObject(t.get(), "id", name.c_str());
        cJSON_AddStringToObject(t.get(), "name", name.c_str());
        cJSON_AddStringToObject(t.get(), "endpoint", endpoint.c_str());
        cJSON_AddStringToObject(t.get(), "schema", core.c_str());
        cJSON* exts = cJSON_AddArrayToObject(t.get(), "schemaExtensions");
        cJSON* e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "schema", ext.c_str());
        cJSON_AddBoolToObject(e, "required", false);
        cJSON_AddItemToArray(exts, e);
        cJSON* meta = cJSON_AddObjectToObject(t.get(), "meta");
        cJSON_AddStringToObject(meta, "resourceType", "ResourceType");
        cJSON_AddStringToObject(meta, "location", (base + "/ResourceTypes/" + name).c_str());
        out.push_back(std::move(t));
    }
    return out;
}

HttpResponse list_of(std::vector<JsonPtr> items)
{
    JsonPtr root(cJSON_CreateObject());
    cJSON_AddItemToObject(root.get(), "schemas", string_array({scim::kListResponse}));
    cJSON_AddNumberToObject(root.get(), "totalResults", static_cast<double>(items.size()));
    cJSON_AddNumberToObject(root.get(), "itemsPerPage", static_cast<double>(items.size()));
    cJSON_AddNumberToObject(root.get(), "startIndex", 1);
    cJSON* arr = cJSON_AddArrayToObject(root.get(), "Resources");
    for (auto& i : items) cJSON_AddItemToArray(arr, i.release());
    return json_response(200, root.get());
}

HttpResponse pick(std::vector<JsonPtr> items, const std::string& what, const std::string& id)
{
    for (auto& i : items)
        if (json_string(i.get(), "id").value_or("") == id) return json_response(200, i.get());
    return scim_error(Errc::NotFound, "no such " + what);
}

HttpResponse service_provider_config()
{
    JsonPtr c(cJSON_CreateObject());
    cJSON_AddItemToObject(
        c.get(), "schemas",
        string_array({"urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig"}));
    cJSON_AddStringToObject(c.get(), "documentationUri",
                            "https://github.com/allot/allot/blob/main/docs/scimd.md");
    auto feature = [&](const char* name, bool on) {
        cJSON* f = cJSON_AddObjectToObject(c.get(), name);
        cJSON_AddBoolToObject(f, "supported", on);
        return f;
    };
    feature("patch", true);
    cJSON* bulk = feature("bulk", false);
    cJSON_AddNumberToObject(bulk, "maxOperations", 0);
    cJSON_AddNumberToObject(bulk, "maxPayloadSize", 0);
    cJSON* filter = feature("filter", true);
    cJSON_AddNumberToObject(filter, "maxResults", 1000);
    feature("changePassword", false);
    feature("sort", true);
    feature("etag", true);
    cJSON* schemes = cJSON_AddArrayToObject(c.get(), "authenticationSchemes");
    cJSON* s = cJSON_CreateObject();
    cJSON_AddStringToObject(s, "type", "oauthbearertoken");
    cJSON_AddStringToObject(s, "name", "Bearer token");
    cJSON_AddStringToObject(s, "description", "allot-scimd API token (allot-scimd token create)");
    cJSON_AddBoolToObject(s, "primary", true);
    cJSON_AddItemToArray(schemes, s);
    return json_response(200, c.get());
}

}  // namespace

HttpResponse Service::scim_discovery(const std::string& what, const std::string& id)
{
    const std::string base = o_.public_url + o_.scim_base;
    if (what == "Schemas") {
        auto docs = all_schemas(base, o_.user_extension);
        return id.empty() ? list_of(std::move(docs)) : pick(std::move(docs), what, id);
    }
    if (what == "ResourceTypes") {
        auto docs = resource_types(base, o_.user_extension);
        return id.empty() ? list_of(std::move(docs)) : pick(std::move(docs), what, id);
    }
    if (!id.empty()) return scim_error(Errc::NotFound, "no such endpoint");
    return service_provider_config();
}

}  // namespace allot::scimd
