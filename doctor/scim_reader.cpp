// scim_reader.cpp - see scim_reader.hpp.
#include "scim_reader.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "allot/scim_client.hpp"
#include "compat/curl.hpp"

namespace allot::doctor {

namespace {

size_t on_body(char* data, size_t size, size_t n, void* out)
{
    auto* body = static_cast<std::string*>(out);
    if (body->size() + size * n > kScimMaxBody) return 0;
    body->append(data, size * n);
    return size * n;
}

Result<HttpResponse> get(const IdentityConfig& identity, const std::string& url,
                         const std::string& token)
{
    curl_compat::EasyPtr c(curl_easy_init());
    if (!c) return make_error("curl_easy_init failed");
    curl_compat::SlistPtr headers(
        curl_slist_append(nullptr, ("Authorization: Bearer " + token).c_str()));
    headers.reset(curl_slist_append(headers.release(), "Accept: application/scim+json"));
    HttpResponse r;
    // The doctor is a quick look: at most 5 s per request whatever syncd may wait.
    long timeout_ms = 1000L * std::min<uint32_t>(identity.timeout_seconds, 5);
    curl_easy_setopt(c.get(), CURLOPT_URL, url.c_str());
    curl_easy_setopt(c.get(), CURLOPT_HTTPHEADER, headers.get());
    curl_easy_setopt(c.get(), CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c.get(), CURLOPT_WRITEDATA, &r.body);
    curl_easy_setopt(c.get(), CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(c.get(), CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c.get(), CURLOPT_FOLLOWLOCATION, 0L);
    if (!identity.ca_file.empty())
        curl_easy_setopt(c.get(), CURLOPT_CAINFO, identity.ca_file.c_str());
    CURLcode rc = curl_easy_perform(c.get());
    if (rc != CURLE_OK) return make_error(curl_easy_strerror(rc));
    curl_easy_getinfo(c.get(), CURLINFO_RESPONSE_CODE, &r.status);
    return r;
}

std::string trimmed(std::string s)
{
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
    return s;
}

}  // namespace

ScimAnswers read_scim(const IdentityConfig& identity)
{
    ScimAnswers out;
    if (identity.scim_url.empty()) return out;
    std::ifstream in(identity.token_file);
    if (!in) {
        out.token_error = "cannot open " + identity.token_file;
        return out;
    }
    std::ostringstream token;
    token << in.rdbuf();
    ScimAttributeMap map = scim_attribute_map(identity);
    out.users_url = identity.scim_url + "/Users?startIndex=1&count=1&attributes=" +
                    url_encode(user_attribute_request(map));
    out.users = get(identity, out.users_url, trimmed(token.str()));
    if (out.users)
        out.schemas = get(identity, identity.scim_url + "/Schemas", trimmed(token.str()));
    return out;
}

}  // namespace allot::doctor
