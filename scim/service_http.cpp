// service_http.cpp - see service_http.hpp.
#include "service_http.hpp"

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "util.hpp"

namespace allot::scimd {

HttpResponse scim_error(const Error& e)
{
    const HttpClass c = http_class(e);
    HttpResponse r;
    r.status = c.status;
    r.body = scim::error_body(c.status, c.scim_type, e.message);
    return r;
}

HttpResponse scim_error(Errc code, const std::string& detail)
{
    return scim_error(make_error(code, detail));
}

HttpResponse json_response(int status, const cJSON* json, const char* type)
{
    HttpResponse r;
    r.status = status;
    r.content_type = type;
    r.body = json_print(json);
    return r;
}

HttpResponse oauth_error(int status, const std::string& error, const std::string& description)
{
    JsonPtr body(cJSON_CreateObject());
    cJSON_AddStringToObject(body.get(), "error", error.c_str());
    cJSON_AddStringToObject(body.get(), "error_description", description.c_str());
    HttpResponse r = json_response(status, body.get(), "application/json");
    r.headers.push_back({"Cache-Control", "no-store"});
    return r;
}

const std::string* query(const HttpRequest& r, const char* name)
{
    for (const auto& [k, v] : r.query)
        if (to_lower(k) == to_lower(name)) return &v;
    return nullptr;
}

std::vector<std::string> split_csv(const std::string& s)
{
    std::vector<std::string> out;
    std::stringstream in(s);
    std::string item;
    while (std::getline(in, item, ',')) {
        while (!item.empty() && item.front() == ' ') item.erase(item.begin());
        while (!item.empty() && item.back() == ' ') item.pop_back();
        if (!item.empty()) out.push_back(item);
    }
    return out;
}

bool valid_id(const std::string& id)
{
    return id.size() == 36 && std::all_of(id.begin(), id.end(), [](char c) {
               return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || c == '-';
           });
}

int64_t if_match_version(const HttpRequest& r)
{
    auto it = r.headers.find("if-match");
    if (it == r.headers.end() || it->second == "*") return 0;
    std::string v = it->second;
    if (v.rfind("W/", 0) == 0) v = v.substr(2);
    if (v.size() < 3 || v.front() != '"' || v.back() != '"') return -1;
    char* end = nullptr;
    const long long n = std::strtoll(v.c_str() + 1, &end, 10);
    if (end != v.c_str() + v.size() - 1 || n <= 0) return -1;
    return n;
}

std::optional<HttpResponse> check_body(const HttpRequest& r, size_t max, JsonPtr& out)
{
    if (r.body.size() > max)
        return scim_error(Errc::TooLarge, "body larger than " + std::to_string(max) + " bytes");
    auto ct = r.headers.find("content-type");
    if (ct != r.headers.end()) {
        const std::string t = to_lower(ct->second.substr(0, ct->second.find(';')));
        if (t != "application/scim+json" && t != "application/json")
            return scim_error(Errc::UnsupportedMedia, "content type must be application/scim+json");
    }
    std::string why;
    out = json_parse(r.body, max, &why);
    if (!out) return scim_error(Errc::InvalidSyntax, "body is not valid JSON: " + why);
    return std::nullopt;
}

cJSON* string_array(std::initializer_list<const char*> items)
{
    cJSON* a = cJSON_CreateArray();
    for (const char* s : items) cJSON_AddItemToArray(a, cJSON_CreateString(s));
    return a;
}

}  // namespace allot::scimd
