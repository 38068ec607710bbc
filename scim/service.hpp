// service.hpp - allot-scimd's request handling, independent of the HTTP server.
//
// Service::handle() takes a parsed request and returns a response: SCIM 2.0
// (/scim/v2/Users, /Groups, discovery), OIDC (discovery, JWKS, token
// exchange), /healthz and /metrics. The HTTP front end (server.cpp) only moves
// bytes; unit tests drive handle() directly with a fake clock and a fake
// munge decoder, integration tests go through the real server.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "munge.hpp"
#include "oidc.hpp"
#include "store.hpp"
#include "token_cache.hpp"
#include "user_snapshot.hpp"
#include "validate.hpp"

namespace allot::scimd {

struct HttpRequest {
    std::string method;
    std::string path;                                        // decoded, without the query
    std::vector<std::pair<std::string, std::string>> query;  // decoded
    std::map<std::string, std::string> headers;              // lower-case names
    std::string body;
    std::string remote;
    // Set by the server's event loop: answer only from what is in memory (a
    // cached token, the pre-rendered users), else decline with kNotAtHand and
    // a worker thread serves the request. The loop must never wait on the store.
    bool at_hand_only = false;
    // The store's generation when the caller read it (-1: not read). An event
    // loop reads it again only after a commit (server.hpp).
    int64_t generation = -1;
};

// HttpResponse::status of a request declined under HttpRequest::at_hand_only.
constexpr int kNotAtHand = 0;

struct HttpResponse {
    int status = 200;
    std::string content_type = "application/scim+json";
    std::string body;
    std::vector<std::pair<std::string, std::string>> headers;
};

class Clock {
public:
    virtual ~Clock() = default;
    virtual int64_t now() const = 0;
};
class SystemClock final : public Clock {
public:
    int64_t now() const override;
};

struct ServiceOptions {
    std::string public_url;  // scheme://host[:port], for meta.location
    std::string scim_base = "/scim/v2";
    std::string user_extension = scim::kDefaultPosixUser;
    bool extension_by_default = true;
    DirectoryPolicy policy;
    size_t max_body = 1 << 20;
    // OIDC
    TokenPolicy token;
    std::string keys_dir;
    JwsAlg alg = JwsAlg::ES256;
    int64_t key_overlap = 86400;
    int64_t jwks_max_age = 300;  // Cache-Control max-age of the JWKS
    int64_t munge_max_age = 60;  // seconds a credential may be old
    int64_t munge_max_skew = 5;  // seconds it may be from the future
};

class Service {
public:
    Service(ServiceOptions options, DirectoryStore& store, std::unique_ptr<MungeDecoder> munge,
            const Clock& clock);
    // Loads (creating the first) OIDC keys; false with a message on failure.
    Result<bool> init();
    HttpResponse handle(const HttpRequest& request);
    // More lines for /metrics (the front end's counters); set before serving.
    void add_metrics(std::function<std::string()> source) { more_metrics_ = std::move(source); }
    // The store's generation (store.hpp), for HttpRequest::generation.
    Result<int64_t> store_generation() { return store_.generation(); }
    std::shared_ptr<const KeySet> keys();
    // Re-reads oidc.keys_dir now (SIGHUP after `keys rotate`); keeps the old set on error.
    Result<bool> reload_keys();

private:
    HttpResponse route(const HttpRequest& r);
    HttpResponse scim(const HttpRequest& r, const std::string& rest);
    // /Users and /Groups (service_resources.cpp).
    // hide_inactive: the token may not see deactivated users (see authorize()).
    // generation: the store's, read once for the request (the read caches' key).
    HttpResponse resources(const HttpRequest& r, const std::string& resource, const std::string& id,
                           bool hide_inactive, int64_t generation);
    HttpResponse token(const HttpRequest& r);
    HttpResponse discovery();
    HttpResponse metrics();
    HttpResponse scim_discovery(const std::string& what, const std::string& id);
    // The refusal to answer, or nothing; sets hide_inactive unless the token
    // may see deactivated users (scim:write or scim:read-inactive).
    std::optional<HttpResponse> authorize(const HttpRequest& r, bool write, bool& hide_inactive,
                                          int64_t generation);

    ServiceOptions o_;
    DirectoryStore& store_;
    std::unique_ptr<MungeDecoder> munge_;
    const Clock& clock_;
    std::string issuer_path_;
    Result<std::shared_ptr<const KeySet>> read_keys(bool create_if_empty);

    std::mutex keys_mu_;
    std::shared_ptr<const KeySet> keys_;
    int64_t keys_checked_ = 0;
    ReplayCache replay_;
    UserSnapshot rendered_users_;  // the common Users reads, pre-rendered
    TokenCache tokens_;
    std::function<std::string()> more_metrics_;
    std::atomic<uint64_t> requests_{0}, errors_4xx_{0}, errors_5xx_{0}, tokens_issued_{0},
        tokens_refused_{0}, auth_failures_{0};
};

}  // namespace allot::scimd
