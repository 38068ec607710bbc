// service.cpp - see service.hpp. Routing, SCIM semantics, OIDC endpoints.
#include "service.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <sstream>

#include "allot/json.hpp"
#include "filter.hpp"
#include "patch.hpp"
#include "util.hpp"

namespace allot::scimd {

int64_t SystemClock::now() const
{
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

namespace {

constexpr const char* kTokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange";
constexpr const char* kIdTokenType = "urn:ietf:params:oauth:token-type:id_token";
constexpr const char* kJwtTokenType = "urn:ietf:params:oauth:token-type:jwt";

// The SCIM error response for `e`: status and scimType from the code's row.
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

HttpResponse json_response(int status, const cJSON* json,
                           const char* type = "application/scim+json")
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

// attributes / excludedAttributes (RFC 7644 §3.9). `id` and `schemas` always stay.
void project(cJSON* resource, const std::vector<AttrPath>& include,
             const std::vector<AttrPath>& exclude)
{
    auto lower_key = [](const cJSON* item) { return to_lower(item->string ? item->string : ""); };
    auto keep_children = [&](cJSON* obj, const std::vector<std::string>& subs) {
        if (cJSON_IsArray(obj)) {
            cJSON* el = nullptr;
            cJSON_ArrayForEach(el, obj) if (cJSON_IsObject(el))
            {
                for (cJSON* c = el->child; c;) {
                    cJSON* next = c->next;
                    if (std::find(subs.begin(), subs.end(), lower_key(c)) == subs.end())
                        cJSON_Delete(cJSON_DetachItemViaPointer(el, c));
                    c = next;
                }
            }
            return;
        }
        for (cJSON* c = obj->child; c;) {
            cJSON* next = c->next;
            if (std::find(subs.begin(), subs.end(), lower_key(c)) == subs.end())
                cJSON_Delete(cJSON_DetachItemViaPointer(obj, c));
            c = next;
        }
    };
    if (!include.empty()) {
        for (cJSON* item = resource->child; item;) {
            cJSON* next = item->next;
            const std::string key = lower_key(item);
            bool keep = key == "id" || key == "schemas";
            std::vector<std::string> subs;
            bool whole = keep;
            if (key.rfind("urn:", 0) == 0) {
                for (const auto& p : include) {
                    if (p.schema == key && p.attr.empty()) whole = true;
                    if ((p.schema == key || p.schema.empty()) && !p.attr.empty()) {
                        if (cJSON_GetObjectItem(item, p.attr.c_str())) subs.push_back(p.attr);
                    }
                }
            } else {
                for (const auto& p : include) {
                    if (p.attr != key ||
                        (!p.schema.empty() &&
                         p.schema.rfind("urn:ietf:params:scim:schemas:core:", 0) != 0))
                        continue;
                    if (p.sub.empty())
                        whole = true;
                    else
                        subs.push_back(p.sub);
                }
            }
            if (whole) {
            } else if (!subs.empty() && (cJSON_IsObject(item) || cJSON_IsArray(item))) {
                keep_children(item, subs);
            } else {
                cJSON_Delete(cJSON_DetachItemViaPointer(resource, item));
            }
            item = next;
        }
    }
    for (const auto& p : exclude) {
        for (cJSON* item = resource->child; item;) {
            cJSON* next = item->next;
            const std::string key = lower_key(item);
            if (key == "id" || key == "schemas") {
                item = next;
                continue;
            }
            if (key.rfind("urn:", 0) == 0) {
                if (p.schema == key && p.attr.empty())
                    cJSON_Delete(cJSON_DetachItemViaPointer(resource, item));
                else if ((p.schema == key || p.schema.empty()) && !p.attr.empty())
                    cJSON_DeleteItemFromObject(item, p.attr.c_str());
            } else if (p.attr == key) {
                if (p.sub.empty())
                    cJSON_Delete(cJSON_DetachItemViaPointer(resource, item));
                else if (cJSON_IsObject(item))
                    cJSON_DeleteItemFromObject(item, p.sub.c_str());
                else if (cJSON_IsArray(item)) {
                    cJSON* el = nullptr;
                    cJSON_ArrayForEach(el, item) cJSON_DeleteItemFromObject(el, p.sub.c_str());
                }
            }
            item = next;
        }
    }
}

struct Projection {
    std::vector<AttrPath> include, exclude;
    bool extension = true;
};

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
    out = json_parse(r.body, max);
    if (!out) return scim_error(Errc::InvalidSyntax, "body is not valid JSON");
    return std::nullopt;
}

std::optional<std::map<std::string, std::string>> parse_form(const std::string& body)
{
    std::map<std::string, std::string> out;
    std::stringstream in(body);
    std::string pair;
    while (std::getline(in, pair, '&')) {
        if (pair.empty()) continue;
        const size_t eq = pair.find('=');
        auto k = url_decode(pair.substr(0, eq));
        auto v = url_decode(eq == std::string::npos ? "" : pair.substr(eq + 1));
        if (!k || !v || out.count(*k)) return std::nullopt;  // RFC 6749 §3.2: no repeats
        out[*k] = *v;
    }
    return out;
}

cJSON* string_array(std::initializer_list<const char*> items)
{
    cJSON* a = cJSON_CreateArray();
    for (const char* s : items) cJSON_AddItemToArray(a, cJSON_CreateString(s));
    return a;
}

}  // namespace

Service::Service(ServiceOptions options, DirectoryStore& store, std::unique_ptr<MungeDecoder> munge,
                 const Clock& clock)
    : o_(std::move(options)), store_(store), munge_(std::move(munge)), clock_(clock)
{
    // The issuer's path part prefixes the OIDC endpoints (issuer https://h/oidc →
    // /oidc/.well-known/…).
    const std::string& iss = o_.token.issuer;
    const size_t scheme = iss.find("://");
    const size_t slash =
        scheme == std::string::npos ? std::string::npos : iss.find('/', scheme + 3);
    issuer_path_ = slash == std::string::npos ? "" : iss.substr(slash);
    while (!issuer_path_.empty() && issuer_path_.back() == '/') issuer_path_.pop_back();
}

Result<bool> Service::init()
{
    auto k = load_keys(o_.keys_dir, clock_.now(), o_.key_overlap, true, o_.alg);
    if (!k) return k.error();
    std::lock_guard<std::mutex> lock(keys_mu_);
    keys_ = k.value();
    keys_checked_ = clock_.now();
    return true;
}

Result<bool> Service::reload_keys()
{
    auto k = load_keys(o_.keys_dir, clock_.now(), o_.key_overlap, false, o_.alg);
    if (!k) return k.error();
    std::lock_guard<std::mutex> lock(keys_mu_);
    keys_ = k.value();
    keys_checked_ = clock_.now();
    return true;
}

std::shared_ptr<const KeySet> Service::keys()
{
    std::lock_guard<std::mutex> lock(keys_mu_);
    // Pick up `keys rotate` (run by the admin) within a minute, without a restart.
    if (clock_.now() - keys_checked_ >= 60) {
        keys_checked_ = clock_.now();
        auto k = load_keys(o_.keys_dir, clock_.now(), o_.key_overlap, false, o_.alg);
        if (k) keys_ = k.value();
    }
    return keys_;
}

HttpResponse Service::handle(const HttpRequest& request)
{
    ++requests_;
    HttpResponse r;
    try {
        r = route(request);
    } catch (const std::exception& e) {
        r = scim_error(Errc::Internal, std::string("internal error: ") + e.what());
    } catch (...) {
        r = scim_error(Errc::Internal, "internal error");
    }
    if (r.status >= 500)
        ++errors_5xx_;
    else if (r.status >= 400)
        ++errors_4xx_;
    return r;
}

HttpResponse Service::route(const HttpRequest& r)
{
    const std::string& p = r.path;
    // Paths are matched exactly; anything odd is refused before routing.
    if (p.empty() || p[0] != '/' || p.find("..") != std::string::npos ||
        p.find("//") != std::string::npos || p.find('\\') != std::string::npos ||
        p.find('\0') != std::string::npos || p.size() > 1024)
        return scim_error(Errc::BadRequest, "bad path");
    if (p == "/healthz" && r.method == "GET") {
        HttpResponse ok;
        ok.content_type = "text/plain";
        ok.body = "ok\n";
        return ok;
    }
    if (p == "/metrics" && r.method == "GET") return metrics();
    if (p == issuer_path_ + "/.well-known/openid-configuration") {
        if (r.method != "GET") return scim_error(Errc::MethodNotAllowed, "method not allowed");
        return discovery();
    }
    if (p == issuer_path_ + "/oidc/jwks") {
        if (r.method != "GET") return scim_error(Errc::MethodNotAllowed, "method not allowed");
        HttpResponse j;
        j.content_type = "application/jwk-set+json";
        j.body = keys()->jwks;
        j.headers.push_back({"Cache-Control", "max-age=300"});
        return j;
    }
    if (p == issuer_path_ + "/oidc/token") {
        if (r.method != "POST") return oauth_error(405, "invalid_request", "use POST");
        return token(r);
    }
    const std::string& base = o_.scim_base;
    if (p.compare(0, base.size(), base) == 0 && (p.size() == base.size() || p[base.size()] == '/'))
        return scim(r, p.substr(base.size()));
    return scim_error(Errc::NotFound, "no such endpoint");
}

std::optional<HttpResponse> Service::authorize(const HttpRequest& r, bool write)
{
    auto fail = [&](Errc code, const char* error, const std::string& detail) {
        ++auth_failures_;
        HttpResponse resp = scim_error(code, detail);
        resp.headers.push_back(
            {"WWW-Authenticate",
             std::string("Bearer realm=\"allot-scimd\", error=\"") + error + "\""});
        return resp;
    };
    auto it = r.headers.find("authorization");
    if (it == r.headers.end() || it->second.size() < 8 ||
        to_lower(it->second.substr(0, 7)) != "bearer ")
        return fail(Errc::Unauthorized, "invalid_token", "a bearer token is required");
    const std::string secret = it->second.substr(7);
    if (secret.size() > 512)
        return fail(Errc::Unauthorized, "invalid_token", "token not recognised");
    auto t = store_.find_token(hex(sha256(secret)));
    if (!t) {
        if (!t.error().is(Errc::NotFound)) return scim_error(t.error());
        return fail(Errc::Unauthorized, "invalid_token", "token not recognised");
    }
    if (t.value().revoked) return fail(Errc::Unauthorized, "invalid_token", "token revoked");
    if (t.value().expires && t.value().expires <= clock_.now())
        return fail(Errc::Unauthorized, "invalid_token", "token expired");
    const auto& s = t.value().scopes;
    const bool can_write = std::find(s.begin(), s.end(), "scim:write") != s.end();
    const bool can_read = can_write || std::find(s.begin(), s.end(), "scim:read") != s.end();
    if (write ? !can_write : !can_read)
        return fail(Errc::Forbidden, "insufficient_scope",
                    write ? "needs scope scim:write" : "needs scope scim:read");
    return std::nullopt;
}

HttpResponse Service::scim(const HttpRequest& r, const std::string& rest)
{
    std::string resource = rest, id;
    if (!resource.empty() && resource[0] == '/') resource.erase(0, 1);
    const size_t slash = resource.find('/');
    if (slash != std::string::npos) {
        id = resource.substr(slash + 1);
        resource = resource.substr(0, slash);
        if (id.empty() || id.find('/') != std::string::npos)
            return scim_error(Errc::NotFound, "no such endpoint");
    }
    if (resource == "ServiceProviderConfig" || resource == "Schemas" ||
        resource == "ResourceTypes") {
        if (r.method != "GET") return scim_error(Errc::MethodNotAllowed, "method not allowed");
        return scim_discovery(resource, id);
    }
    if (resource != "Users" && resource != "Groups")
        return scim_error(Errc::NotFound, "no such endpoint");
    const bool write = r.method != "GET" && r.method != "HEAD";
    if (auto denied = authorize(r, write)) return *denied;
    if (!id.empty() && !valid_id(id)) return scim_error(Errc::NotFound, "no such resource");
    return resource == "Users" ? users(r, id) : groups(r, id);
}

namespace {

template <typename T>
Result<ListQuery> list_query(const HttpRequest& r, const char* key_attr)
{
    ListQuery q;
    auto number = [&](const char* name, size_t& out, size_t lo) -> bool {
        const std::string* v = query(r, name);
        if (!v) return true;
        if (v->empty() || v->size() > 9 || !std::all_of(v->begin(), v->end(), ::isdigit)) {
            // RFC 7644: negative/absent startIndex is 1, negative count is 0.
            if (!v->empty() && (*v)[0] == '-' && v->size() < 12 &&
                std::all_of(v->begin() + 1, v->end(), ::isdigit)) {
                out = lo;
                return true;
            }
            return false;
        }
        out = std::max<size_t>(std::strtoul(v->c_str(), nullptr, 10), lo);
        return true;
    };
    if (!number("startIndex", q.start_index, 1) || !number("count", q.count, 0))
        return make_error(Errc::InvalidValue, "startIndex/count must be integers");
    if (const auto* c = query(r, "cursor")) q.cursor = *c;
    if (const auto* s = query(r, "sortBy"); s && to_lower(*s) != key_attr)
        return make_error(Errc::InvalidValue, std::string("sortBy supports only ") + key_attr);
    if (const auto* o = query(r, "sortOrder")) {
        const std::string l = to_lower(*o);
        if (l == "descending")
            q.order = SortOrder::Descending;
        else if (l != "ascending")
            return make_error(Errc::InvalidValue, "sortOrder: ascending|descending");
    }
    return q;
}

template <typename T, typename Render>
HttpResponse list_response(const Page<T>& page, bool cursor_mode, const Projection& proj,
                           Render render)
{
    JsonPtr root(cJSON_CreateObject());
    cJSON* schemas = cJSON_AddArrayToObject(root.get(), "schemas");
    cJSON_AddItemToArray(schemas, cJSON_CreateString(scim::kListResponse));
    cJSON_AddNumberToObject(root.get(), "totalResults", static_cast<double>(page.total));
    if (!cursor_mode)
        cJSON_AddNumberToObject(root.get(), "startIndex", static_cast<double>(page.start_index));
    cJSON_AddNumberToObject(root.get(), "itemsPerPage", static_cast<double>(page.items.size()));
    cJSON* resources = cJSON_AddArrayToObject(root.get(), "Resources");
    for (const auto& item : page.items) {
        JsonPtr json = render(item);
        project(json.get(), proj.include, proj.exclude);
        cJSON_AddItemToArray(resources, json.release());
    }
    if (cursor_mode && !page.next_cursor.empty())
        cJSON_AddStringToObject(root.get(), "nextCursor", page.next_cursor.c_str());
    return json_response(200, root.get());
}

// DELETE of one resource: with If-Match, 412 unless the stored version is the one pinned.
template <typename Get, typename Delete>
HttpResponse delete_checked(int64_t want, Get get, Delete remove)
{
    if (want) {
        auto cur = get();
        if (!cur) return scim_error(cur.error());
        if (cur.value().version != want)
            return scim_error(Errc::VersionMismatch, "version mismatch");
    }
    auto d = remove();
    if (!d) return scim_error(d.error());
    HttpResponse gone;
    gone.status = 204;
    gone.content_type.clear();
    return gone;
}

}  // namespace

HttpResponse Service::users(const HttpRequest& r, const std::string& id)
{
    const Projection proj = projection(r, o_, o_.user_extension);
    scim::RenderOptions ro;
    ro.base_url = o_.public_url + o_.scim_base;
    ro.user_extension = o_.user_extension;
    ro.include_extension = proj.extension;
    auto one = [&](int status, const scim::User& u) {
        JsonPtr json = scim::user_to_json(u, ro);
        project(json.get(), proj.include, proj.exclude);
        HttpResponse resp = json_response(status, json.get());
        resp.headers.push_back({"ETag", scim::etag(u.version)});
        if (status == 201) resp.headers.push_back({"Location", ro.base_url + "/Users/" + u.id});
        return resp;
    };
    if (id.empty()) {
        if (r.method == "GET") {
            auto q = list_query<scim::User>(r, "username");
            if (!q) return scim_error(q.error());
            std::unique_ptr<Filter> filter;
            if (const auto* f = query(r, "filter")) {
                auto parsed = parse_filter(*f);
                if (!parsed)
                    return scim_error(Errc::InvalidFilter, "filter: " + parsed.error().message);
                filter = std::move(parsed.value());
                q.value().filter = filter.get();
            }
            auto page = store_.list_users(q.value());
            if (!page) return scim_error(page.error());
            return list_response(page.value(), q.value().cursor.has_value(), proj,
                                 [&](const scim::User& u) { return scim::user_to_json(u, ro); });
        }
        if (r.method != "POST") return scim_error(Errc::MethodNotAllowed, "method not allowed");
        JsonPtr body;
        if (auto bad = check_body(r, o_.max_body, body)) return *bad;
        auto u = scim::user_from_json(body.get(), o_.user_extension);
        if (!u) return scim_error(Errc::InvalidValue, u.error().message);
        auto ok = normalize_user(u.value(), o_.policy);
        if (!ok) return scim_error(Errc::InvalidValue, ok.error().message);
        auto made = store_.create_user(std::move(u.value()));
        if (!made) return scim_error(made.error());
        return one(201, made.value());
    }
    if (r.method == "GET") {
        auto u = store_.get_user(id);
        if (!u) return scim_error(u.error());
        return one(200, u.value());
    }
    const int64_t want = if_match_version(r);
    if (want < 0) return scim_error(Errc::InvalidValue, "If-Match must be an ETag");
    if (r.method == "DELETE")
        return delete_checked(
            want, [&] { return store_.get_user(id); }, [&] { return store_.delete_user(id); });
    if (r.method != "PUT" && r.method != "PATCH")
        return scim_error(Errc::MethodNotAllowed, "method not allowed");
    JsonPtr body;
    if (auto bad = check_body(r, o_.max_body, body)) return *bad;
    for (int attempt = 0; attempt < 3; ++attempt) {
        auto cur = store_.get_user(id);
        if (!cur) return scim_error(cur.error());
        scim::User next = cur.value();
        if (r.method == "PUT") {
            auto u = scim::user_from_json(body.get(), o_.user_extension);
            if (!u) return scim_error(Errc::InvalidValue, u.error().message);
            next = u.value();
            if (next.home.empty()) next.home = cur.value().home;
            if (next.shell.empty()) next.shell = cur.value().shell;
        } else {
            auto p = apply_user_patch(next, body.get(), o_.user_extension);
            if (!p) return scim_error(p.error());
        }
        auto ok = normalize_user(next, o_.policy);
        if (!ok) return scim_error(Errc::InvalidValue, ok.error().message);
        auto saved = store_.replace_user(id, next, want ? want : cur.value().version);
        if (saved) return one(200, saved.value());
        // Lost a race with another writer and the client did not pin a version: redo.
        if (!saved.error().is(Errc::VersionMismatch) || want) return scim_error(saved.error());
    }
    return scim_error(Errc::Conflict, "resource is being modified concurrently; retry");
}

HttpResponse Service::groups(const HttpRequest& r, const std::string& id)
{
    const Projection proj = projection(r, o_, scim::kPosixGroup);
    scim::RenderOptions ro;
    ro.base_url = o_.public_url + o_.scim_base;
    ro.include_extension = proj.extension;
    auto one = [&](int status, const scim::Group& g) {
        JsonPtr json = scim::group_to_json(g, ro);
        project(json.get(), proj.include, proj.exclude);
        HttpResponse resp = json_response(status, json.get());
        resp.headers.push_back({"ETag", scim::etag(g.version)});
        if (status == 201) resp.headers.push_back({"Location", ro.base_url + "/Groups/" + g.id});
        return resp;
    };
    if (id.empty()) {
        if (r.method == "GET") {
            auto q = list_query<scim::Group>(r, "displayname");
            if (!q) return scim_error(q.error());
            std::unique_ptr<Filter> filter;
            if (const auto* f = query(r, "filter")) {
                auto parsed = parse_filter(*f);
                if (!parsed)
                    return scim_error(Errc::InvalidFilter, "filter: " + parsed.error().message);
                filter = std::move(parsed.value());
                q.value().filter = filter.get();
            }
            auto page = store_.list_groups(q.value());
            if (!page) return scim_error(page.error());
            return list_response(page.value(), q.value().cursor.has_value(), proj,
                                 [&](const scim::Group& g) { return scim::group_to_json(g, ro); });
        }
        if (r.method != "POST") return scim_error(Errc::MethodNotAllowed, "method not allowed");
        JsonPtr body;
        if (auto bad = check_body(r, o_.max_body, body)) return *bad;
        auto g = scim::group_from_json(body.get());
        if (!g) return scim_error(Errc::InvalidValue, g.error().message);
        auto ok = normalize_group(g.value());
        if (!ok) return scim_error(Errc::InvalidValue, ok.error().message);
        auto made = store_.create_group(std::move(g.value()));
        if (!made) return scim_error(made.error());
        return one(201, made.value());
    }
    if (r.method == "GET") {
        auto g = store_.get_group(id);
        if (!g) return scim_error(g.error());
        return one(200, g.value());
    }
    const int64_t want = if_match_version(r);
    if (want < 0) return scim_error(Errc::InvalidValue, "If-Match must be an ETag");
    if (r.method == "DELETE")
        return delete_checked(
            want, [&] { return store_.get_group(id); }, [&] { return store_.delete_group(id); });
    if (r.method != "PUT" && r.method != "PATCH")
        return scim_error(Errc::MethodNotAllowed, "method not allowed");
    JsonPtr body;
    if (auto bad = check_body(r, o_.max_body, body)) return *bad;
    for (int attempt = 0; attempt < 3; ++attempt) {
        auto cur = store_.get_group(id);
        if (!cur) return scim_error(cur.error());
        scim::Group next = cur.value();
        if (r.method == "PUT") {
            auto g = scim::group_from_json(body.get());
            if (!g) return scim_error(Errc::InvalidValue, g.error().message);
            next = g.value();
        } else {
            auto p = apply_group_patch(next, body.get());
            if (!p) return scim_error(p.error());
        }
        auto ok = normalize_group(next);
        if (!ok) return scim_error(Errc::InvalidValue, ok.error().message);
        auto saved = store_.replace_group(id, next, want ? want : cur.value().version);
        if (saved) return one(200, saved.value());
        if (!saved.error().is(Errc::VersionMismatch) || want) return scim_error(saved.error());
    }
    return scim_error(Errc::Conflict, "resource is being modified concurrently; retry");
}

HttpResponse Service::token(const HttpRequest& r)
{
    auto refuse = [&](const std::string& error, const std::string& why) {
        ++tokens_refused_;
        return oauth_error(400, error, why);
    };
    auto ct = r.headers.find("content-type");
    if (ct == r.headers.end() ||
        to_lower(ct->second.substr(0, ct->second.find(';'))) != "application/x-www-form-urlencoded")
        return refuse("invalid_request", "content type must be application/x-www-form-urlencoded");
    if (r.body.size() > 16384) return refuse("invalid_request", "request too large");
    auto form = parse_form(r.body);
    if (!form) return refuse("invalid_request", "malformed form body (or a repeated parameter)");
    auto get = [&](const char* k) -> std::string {
        auto it = form->find(k);
        return it == form->end() ? "" : it->second;
    };
    if (get("grant_type") != kTokenExchange)
        return refuse("unsupported_grant_type", std::string("only ") + kTokenExchange);
    if (get("subject_token_type") != kMungeTokenType)
        return refuse("invalid_request",
                      std::string("subject_token_type must be ") + kMungeTokenType);
    const std::string audience = get("audience").empty() ? o_.token.audience : get("audience");
    if (audience != o_.token.audience) return refuse("invalid_target", "unknown audience");
    const std::string requested = get("requested_token_type");
    if (!requested.empty() && requested != kIdTokenType && requested != kJwtTokenType)
        return refuse("invalid_request", "requested_token_type must be an id_token or jwt");
    const std::string cred = get("subject_token");
    if (cred.empty() || cred.size() > 4096 || cred.rfind("MUNGE:", 0) != 0)
        return refuse("invalid_request", "subject_token must be a MUNGE credential");
    if (!munge_) return refuse("invalid_grant", "munge is not configured on this server");
    MungeError why;
    auto c = munge_->decode(cred, &why);
    if (!c) {
        if (why.replayed) return refuse("invalid_grant", "credential already used");
        if (why.expired) return refuse("invalid_grant", "credential expired");
        return refuse("invalid_grant", "credential rejected: " + c.error().message);
    }
    const int64_t now = clock_.now();
    if (c.value().payload != kMungePayloadPrefix + o_.token.audience)
        return refuse("invalid_grant", "credential was not minted for this token exchange");
    if (c.value().encode_time > now + o_.munge_max_skew)
        return refuse("invalid_grant", "credential is from the future");
    if (now - c.value().encode_time > o_.munge_max_age)
        return refuse("invalid_grant", "credential is stale");
    auto user = store_.get_user_by_uid(c.value().uid);
    if (!user) {
        if (!user.error().is(Errc::NotFound))
            return oauth_error(500, "server_error", user.error().message);
        return refuse("invalid_grant",
                      "uid " + std::to_string(c.value().uid) + " is not in the directory");
    }
    if (!user.value().active) return refuse("invalid_grant", "account is disabled");
    // munged rejects a replay to the same daemon; this also covers a restarted munged.
    // Only a directory uid takes a slot, and only until the credential turns stale.
    const auto seen = replay_.insert(c.value().uid, hex(sha256(cred)),
                                     c.value().encode_time + o_.munge_max_age + 1, now);
    if (seen == ReplayCache::Verdict::Replayed)
        return refuse("invalid_grant", "credential already used");
    if (seen == ReplayCache::Verdict::Full)
        return refuse("invalid_grant", "too many token exchanges for this uid; retry later");
    auto k = keys();
    auto jwt = mint_id_token(k->signer(), o_.token, user.value(), now, o_.token.lifetime);
    if (!jwt) return oauth_error(500, "server_error", jwt.error().message);
    ++tokens_issued_;
    JsonPtr body(cJSON_CreateObject());
    cJSON_AddStringToObject(body.get(), "access_token", jwt.value().c_str());
    cJSON_AddStringToObject(body.get(), "issued_token_type", kIdTokenType);
    cJSON_AddStringToObject(body.get(), "token_type", "N_A");
    cJSON_AddNumberToObject(body.get(), "expires_in", static_cast<double>(o_.token.lifetime));
    HttpResponse resp = json_response(200, body.get(), "application/json");
    resp.headers.push_back({"Cache-Control", "no-store"});
    resp.headers.push_back({"Pragma", "no-cache"});
    return resp;
}

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
    cJSON_AddItemToObject(d.get(), "grant_types_supported", string_array({kTokenExchange}));
    cJSON_AddItemToObject(d.get(), "token_endpoint_auth_methods_supported", string_array({"none"}));
    cJSON_AddItemToObject(d.get(), "scopes_supported", string_array({"openid"}));
    cJSON_AddItemToObject(d.get(), "claims_supported",
                          string_array({"iss", "sub", "aud", "exp", "iat", "nbf",
                                        "preferred_username", "groups", "uid_number"}));
    HttpResponse r = json_response(200, d.get(), "application/json");
    r.headers.push_back({"Cache-Control", "max-age=300"});
    return r;
}

HttpResponse Service::metrics()
{
    std::ostringstream m;
    auto counter = [&](const char* name, const char* help, uint64_t v) {
        m << "# HELP " << name << " " << help << "\n# TYPE " << name << " counter\n"
          << name << " " << v << "\n";
    };
    counter("allot_scimd_requests_total", "HTTP requests handled", requests_);
    counter("allot_scimd_client_errors_total", "responses with status 4xx", errors_4xx_);
    counter("allot_scimd_server_errors_total", "responses with status 5xx", errors_5xx_);
    counter("allot_scimd_auth_failures_total", "SCIM requests refused for their token",
            auth_failures_);
    counter("allot_scimd_tokens_issued_total", "ID tokens issued by token exchange",
            tokens_issued_);
    counter("allot_scimd_tokens_refused_total", "token exchange requests refused", tokens_refused_);
    HttpResponse r;
    r.content_type = "text/plain; version=0.0.4";
    r.body = m.str();
    return r;
}

HttpResponse Service::scim_discovery(const std::string& what, const std::string& id)
{
    const std::string base = o_.public_url + o_.scim_base;
    auto attr = [](const char* name, const char* type, bool multi, bool required, const char* mut,
                   bool case_exact = true, const char* uniqueness = "none") {
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
    };
    auto schema = [&](const std::string& sid, const char* name, std::vector<cJSON*> attrs) {
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
    };
    auto all_schemas = [&]() {
        std::vector<JsonPtr> out;
        out.push_back(schema(scim::kUserSchema, "User",
                             {attr("userName", "string", false, true, "readWrite", true, "server"),
                              attr("displayName", "string", false, false, "readWrite"),
                              attr("externalId", "string", false, false, "readWrite"),
                              attr("active", "boolean", false, false, "readWrite"),
                              attr("emails", "complex", true, false, "readWrite", false),
                              attr("groups", "complex", true, false, "readOnly")}));
        out.push_back(
            schema(scim::kGroupSchema, "Group",
                   {attr("displayName", "string", false, true, "readWrite", true, "server"),
                    attr("externalId", "string", false, false, "readWrite"),
                    attr("members", "complex", true, false, "readWrite")}));
        out.push_back(
            schema(o_.user_extension, "PosixUser",
                   {attr("uidNumber", "integer", false, false, "immutable", true, "server"),
                    attr("gidNumber", "integer", false, false, "immutable"),
                    attr("homeDirectory", "string", false, false, "readWrite"),
                    attr("loginShell", "string", false, false, "readWrite"),
                    attr("sshPublicKeys", "string", true, false, "readWrite")}));
        out.push_back(
            schema(scim::kPosixGroup, "PosixGroup",
                   {attr("gidNumber", "integer", false, false, "immutable", true, "server")}));
        return out;
    };
    auto resource_types = [&]() {
        std::vector<JsonPtr> out;
        for (const auto& [name, endpoint, core, ext] :
             {std::tuple<std::string, std::string, std::string, std::string>{
                  "User", "/Users", scim::kUserSchema, o_.user_extension},
              {"Group", "/Groups", scim::kGroupSchema, scim::kPosixGroup}}) {
            JsonPtr t(cJSON_CreateObject());
            cJSON_AddItemToObject(
                t.get(), "schemas",
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
    };
    auto list_of = [&](std::vector<JsonPtr> items) {
        JsonPtr root(cJSON_CreateObject());
        cJSON_AddItemToObject(root.get(), "schemas", string_array({scim::kListResponse}));
        cJSON_AddNumberToObject(root.get(), "totalResults", static_cast<double>(items.size()));
        cJSON_AddNumberToObject(root.get(), "itemsPerPage", static_cast<double>(items.size()));
        cJSON_AddNumberToObject(root.get(), "startIndex", 1);
        cJSON* arr = cJSON_AddArrayToObject(root.get(), "Resources");
        for (auto& i : items) cJSON_AddItemToArray(arr, i.release());
        return json_response(200, root.get());
    };
    auto pick = [&](std::vector<JsonPtr> items) {
        for (auto& i : items)
            if (json_string(i.get(), "id").value_or("") == id) return json_response(200, i.get());
        return scim_error(Errc::NotFound, "no such " + what);
    };
    if (what == "Schemas") return id.empty() ? list_of(all_schemas()) : pick(all_schemas());
    if (what == "ResourceTypes")
        return id.empty() ? list_of(resource_types()) : pick(resource_types());
    if (!id.empty()) return scim_error(Errc::NotFound, "no such endpoint");
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

}  // namespace allot::scimd
