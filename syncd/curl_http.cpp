// curl_http.cpp - libcurl implementation of HttpClient (see curl_http.hpp).
#include "curl_http.hpp"

#include "compat/curl.hpp"

#include <sys/stat.h>

#include <cstring>
#include <fstream>
#include <mutex>

namespace allot {
namespace {

using CurlPtr = curl_compat::EasyPtr;
using curl_compat::SlistPtr;

struct Sink {
    std::string body;
    size_t max = 0;
    bool too_big = false;
    uint32_t retry_after = 0;
};

size_t on_body(char* data, size_t size, size_t n, void* user)
{
    auto* sink = static_cast<Sink*>(user);
    const size_t len = size * n;
    if (sink->body.size() + len > sink->max) {
        sink->too_big = true;
        return 0;  // aborts the transfer with CURLE_WRITE_ERROR
    }
    sink->body.append(data, len);
    return len;
}

size_t on_header(char* data, size_t size, size_t n, void* user)
{
    auto* sink = static_cast<Sink*>(user);
    const size_t len = size * n;
    static const char kName[] = "retry-after:";
    if (len > sizeof kName - 1 && strncasecmp(data, kName, sizeof kName - 1) == 0) {
        unsigned long v = 0;
        size_t i = sizeof kName - 1;
        while (i < len && data[i] == ' ') ++i;
        for (; i < len && data[i] >= '0' && data[i] <= '9' && v < 86400; ++i)
            v = v * 10 + (data[i] - '0');
        sink->retry_after = static_cast<uint32_t>(v);
    }
    return len;
}

// "10 MiB" for whole MiB, else bytes.
std::string size_text(size_t bytes)
{
    if (bytes % (1u << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
    return std::to_string(bytes) + " bytes";
}

void global_init()
{
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

}  // namespace

Result<std::string> read_token_file(const std::string& path)
{
    struct stat st {};
    if (stat(path.c_str(), &st) != 0) return make_error(path + ": " + strerror(errno));
    if (!S_ISREG(st.st_mode)) return make_error(path + ": not a regular file");
    if (st.st_mode & (S_IRWXG | S_IRWXO))
        return make_error(path + ": readable or writable by group/others; chmod 600 it");
    if (st.st_size > 64 * 1024) return make_error(path + ": larger than 64 KiB");
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    const auto b = line.find_first_not_of(" \t\r");
    const auto e = line.find_last_not_of(" \t\r");
    if (b == std::string::npos) return make_error(path + ": empty token");
    line = line.substr(b, e - b + 1);
    for (char c : line)
        if (static_cast<unsigned char>(c) < 0x21 || static_cast<unsigned char>(c) > 0x7e)
            return make_error(path + ": token holds a space or control character");
    return line;
}

bool url_allowed(const std::string& url)
{
    if (url.rfind("https://", 0) == 0) return true;
    if (url.rfind("http://", 0) != 0) return false;
    const std::string rest = url.substr(7);
    auto host_end = rest.find_first_of(":/?#");
    const std::string host = rest.substr(0, host_end);
    if (host.find('@') != std::string::npos) return false;
    if (host == "localhost" || host.rfind("127.", 0) == 0) return true;
    return rest.rfind("[::1]", 0) == 0;
}

struct CurlHttpClient::Impl {
    CurlOptions options;
    CurlPtr curl;  // reused: keeps the TLS connection alive across pages
};

CurlHttpClient::CurlHttpClient(CurlOptions options) : impl_(new Impl{std::move(options), nullptr})
{
    global_init();
}

CurlHttpClient::~CurlHttpClient() = default;

namespace {

SlistPtr request_headers(const CurlOptions& o)
{
    SlistPtr headers(curl_slist_append(nullptr, "Accept: application/scim+json, application/json"));
    if (!o.bearer_token.empty())
        headers.reset(curl_slist_append(headers.release(),
                                        ("Authorization: Bearer " + o.bearer_token).c_str()));
    return headers;
}

// Verification on, redirects off, the body capped: what every request needs.
void set_policy(CURL* c, const CurlOptions& o)
{
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, long(o.timeout_ms));
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, long(o.connect_timeout_ms));
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_USERAGENT, o.user_agent.c_str());
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
    // Redirects could leave HTTPS or the host the token is meant for.
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
#if LIBCURL_VERSION_NUM >= 0x075500
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "https,http");
#else
    curl_easy_setopt(c, CURLOPT_PROTOCOLS, long(CURLPROTO_HTTPS | CURLPROTO_HTTP));
#endif
    curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(o.max_body_bytes));
    if (!o.ca_file.empty()) curl_easy_setopt(c, CURLOPT_CAINFO, o.ca_file.c_str());
}

}  // namespace

Result<HttpResponse> CurlHttpClient::get(const std::string& url)
{
    if (!url_allowed(url))
        return make_error(Errc::Refused, "refusing non-HTTPS URL (plain http only to loopback)");
    if (!impl_->curl) impl_->curl.reset(curl_easy_init());
    CURL* c = impl_->curl.get();
    if (!c) return make_error(scim_source::Errc::Transport, "curl_easy_init failed");
    curl_easy_reset(c);
    const CurlOptions& o = impl_->options;
    Sink sink;
    sink.max = o.max_body_bytes;
    const SlistPtr headers = request_headers(o);
    curl_easy_setopt(c, CURLOPT_URL, url.c_str());
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &sink);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &sink);
    set_policy(c, o);
    const CURLcode rc = curl_easy_perform(c);
    if (sink.too_big || rc == CURLE_FILESIZE_EXCEEDED)
        return make_error(scim_source::Errc::ResponseTooLarge,
                          "response larger than " + size_text(o.max_body_bytes));
    if (rc != CURLE_OK)
        return make_error(scim_source::Errc::Transport,
                          std::string("transport: ") + curl_easy_strerror(rc));
    HttpResponse r;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
    r.body = std::move(sink.body);
    r.retry_after_seconds = sink.retry_after;
    return r;
}

}  // namespace allot
