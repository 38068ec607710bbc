// service_token.cpp - the OIDC token exchange (RFC 8693): a MUNGE credential
// in, a short-lived ID token for the credential's directory user out.
#include <map>
#include <sstream>

#include "allot/token_exchange.hpp"
#include "service.hpp"
#include "service_http.hpp"
#include "util.hpp"

namespace allot::scimd {

namespace {

constexpr const char* kJwtTokenType = "urn:ietf:params:oauth:token-type:jwt";

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

}  // namespace

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
    if (get("grant_type") != kTokenExchangeGrant)
        return refuse("unsupported_grant_type", std::string("only ") + kTokenExchangeGrant);
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
    auto c = munge_->decode(cred);
    if (!c) {
        if (c.error().is(cred::Errc::Replayed))
            return refuse("invalid_grant", "credential already used");
        if (c.error().is(cred::Errc::Expired)) return refuse("invalid_grant", "credential expired");
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
    auto jwt = mint_id_token(k->signer(now), o_.token, user.value(), now, o_.token.lifetime);
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

}  // namespace allot::scimd
