// curl_http.hpp - the real HttpClient: libcurl, HTTPS with verification.
//
// Used by allot-syncd (SCIM pulls) and allot-keys (live lookups; link
// libsyncd_scim.la). Plain http:// is refused except to a loopback address,
// which the integration tests' fixture server needs. A response body over
// max_body_bytes aborts the transfer and is an error, never a truncated page.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "allot/result.hpp"
#include "allot/scim_client.hpp"

namespace allot {

struct CurlOptions {
    std::string ca_file;          // empty: the system bundle
    std::string bearer_token;     // sent as Authorization: Bearer …
    uint32_t timeout_ms = 20000;  // whole transfer
    uint32_t connect_timeout_ms = 5000;
    size_t max_body_bytes = kScimMaxBody;
    std::string user_agent = "allot-syncd";
};

// Reads a token file: first line, surrounding blanks removed. Refuses files
// that are group/world readable or writable (the token grants the directory).
Result<std::string> read_token_file(const std::string& path);

// True when the URL is https://, or http:// to 127.0.0.0/8, [::1] or localhost.
bool url_allowed(const std::string& url);

class CurlHttpClient : public HttpClient {
public:
    explicit CurlHttpClient(CurlOptions options);
    ~CurlHttpClient() override;
    CurlHttpClient(const CurlHttpClient&) = delete;
    CurlHttpClient& operator=(const CurlHttpClient&) = delete;
    Result<HttpResponse> get(const std::string& url) override;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace allot
