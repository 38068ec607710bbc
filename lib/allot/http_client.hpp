// http_client.hpp - the one seam between allot's SCIM client and the network.
//
// The SCIM client (scim_client.hpp) is pure: it reaches a server only through
// this interface. libcurl implements it in syncd/curl_http.*, shared by
// allot-syncd and allot-keys; tests use fakes.
#pragma once

#include <cstdint>
#include <string>

#include "allot/result.hpp"

namespace allot {

struct HttpResponse {
    long status = 0;
    std::string body;
    uint32_t retry_after_seconds = 0;  // parsed Retry-After (0: none)
};

// Transport errors (DNS, TLS, timeout, body too large) are Error; any HTTP
// answer, including 4xx/5xx, is a response.
class HttpClient {
public:
    virtual ~HttpClient() = default;
    virtual Result<HttpResponse> get(const std::string& url) = 0;
};

}  // namespace allot
