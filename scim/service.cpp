// service.cpp - see service.hpp. Construction, key handling, routing,
// authentication and metrics; the endpoints live in service_resources.cpp
// (Users, Groups), service_token.cpp (token exchange) and
// service_discovery.cpp (discovery documents).
#include "service.hpp"

#include <algorithm>
#include <chrono>

#include "service_http.hpp"
#include "util.hpp"

namespace allot::scimd {

int64_t SystemClock::now() const
{
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

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

Result<std::shared_ptr<const KeySet>> Service::read_keys(bool create_if_empty)
{
    // Scheduled activations (`keys rotate`) live in the store, the keys in keys_dir.
    auto activations = store_.key_activations();
    if (!activations) return activations.error();
    return load_keys(o_.keys_dir, clock_.now(), o_.key_overlap, create_if_empty, o_.alg,
                     activations.value());
}

Result<bool> Service::init()
{
    auto k = read_keys(true);
    if (!k) return k.error();
    std::lock_guard<std::mutex> lock(keys_mu_);
    keys_ = k.value();
    keys_checked_ = clock_.now();
    return true;
}

Result<bool> Service::reload_keys()
{
    auto k = read_keys(false);
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
        auto k = read_keys(false);
        if (k) keys_ = k.value();
    }
    return keys_;
}

HttpResponse Service::handle(const HttpRequest& request)
{
    HttpResponse r;
    try {
        r = route(request);
    } catch (const std::exception& e) {
        r = scim_error(Errc::Internal, std::string("internal error: ") + e.what());
    } catch (...) {
        r = scim_error(Errc::Internal, "internal error");
    }
    if (r.status == kNotAtHand) return r;  // counted when a worker serves it
    ++requests_;
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
    const std::string& base = o_.scim_base;
    const bool scim_path =
        p.compare(0, base.size(), base) == 0 && (p.size() == base.size() || p[base.size()] == '/');
    if (r.at_hand_only && !scim_path) return not_at_hand();
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
        // Relying parties keep the JWKS this long; `keys rotate` waits it out before
        // a new key signs.
        j.headers.push_back({"Cache-Control", "max-age=" + std::to_string(o_.jwks_max_age)});
        return j;
    }
    if (p == issuer_path_ + "/oidc/token") {
        if (r.method != "POST") return oauth_error(405, "invalid_request", "use POST");
        return token(r);
    }
    if (scim_path) return scim(r, p.substr(base.size()));
    return scim_error(Errc::NotFound, "no such endpoint");
}

std::optional<HttpResponse> Service::authorize(const HttpRequest& r, bool write,
                                               bool& hide_inactive, int64_t generation)
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
    const std::string hash = hex(sha256(secret));
    std::optional<ApiToken> t = tokens_.cached(hash, generation);
    if (!t) {
        // Unknown secrets are never cached: a worker reads (and refuses) them.
        if (r.at_hand_only) return not_at_hand();
        auto read = tokens_.read(store_, hash, generation);
        if (!read) {
            if (!read.error().is(Errc::NotFound)) return scim_error(read.error());
            return fail(Errc::Unauthorized, "invalid_token", "token not recognised");
        }
        t = std::move(read.value());
    }
    if (t->revoked) return fail(Errc::Unauthorized, "invalid_token", "token revoked");
    if (t->expires && t->expires <= clock_.now())
        return fail(Errc::Unauthorized, "invalid_token", "token expired");
    const auto& s = t->scopes;
    auto has = [&](const char* scope) { return std::find(s.begin(), s.end(), scope) != s.end(); };
    const bool can_write = has("scim:write");
    const bool sees_inactive = can_write || has("scim:read-inactive");
    const bool can_read = sees_inactive || has("scim:read");
    if (write ? !can_write : !can_read)
        return fail(Errc::Forbidden, "insufficient_scope",
                    write ? "needs scope scim:write" : "needs scope scim:read");
    // Consumers such as nsscache ignore `active`: a plain read token never
    // sees a deactivated user, so their keys cannot reach a cluster.
    hide_inactive = !sees_inactive;
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
    // On the event loop only the Users list, which the pre-rendered users answer.
    if (r.at_hand_only && (r.method != "GET" || resource != "Users" || !id.empty()))
        return not_at_hand();
    if (resource == "ServiceProviderConfig" || resource == "Schemas" ||
        resource == "ResourceTypes") {
        if (r.method != "GET") return scim_error(Errc::MethodNotAllowed, "method not allowed");
        return scim_discovery(resource, id);
    }
    if (resource != "Users" && resource != "Groups")
        return scim_error(Errc::NotFound, "no such endpoint");
    const bool write = r.method != "GET" && r.method != "HEAD";
    int64_t generation = r.generation;
    if (generation < 0) {
        auto read = store_.generation();
        if (!read) return scim_error(read.error());
        generation = read.value();
    }
    bool hide_inactive = true;
    if (auto denied = authorize(r, write, hide_inactive, generation)) return *denied;
    if (!id.empty() && !valid_id(id)) return scim_error(Errc::NotFound, "no such resource");
    return resources(r, resource, id, hide_inactive, generation);
}

HttpResponse Service::metrics()
{
    std::string m;
    auto counter = [&m](const char* name, const char* help, uint64_t v) {
        append_counter(m, name, help, {{"", v}});
    };
    counter("allot_scimd_requests_total", "HTTP requests handled", requests_);
    counter("allot_scimd_client_errors_total", "responses with status 4xx", errors_4xx_);
    counter("allot_scimd_server_errors_total", "responses with status 5xx", errors_5xx_);
    counter("allot_scimd_auth_failures_total", "SCIM requests refused for their token",
            auth_failures_);
    counter("allot_scimd_tokens_issued_total", "ID tokens issued by token exchange",
            tokens_issued_);
    counter("allot_scimd_tokens_refused_total", "token exchange requests refused", tokens_refused_);
    counter("allot_scimd_user_reads_prerendered_total",
            "Users reads answered from the pre-rendered users", rendered_users_.served());
    counter("allot_scimd_user_renders_total", "times every user was rendered anew after a write",
            rendered_users_.rebuilt());
    HttpResponse r;
    r.content_type = "text/plain; version=0.0.4";
    r.body = std::move(m);
    if (more_metrics_) r.body += more_metrics_();
    return r;
}

}  // namespace allot::scimd
