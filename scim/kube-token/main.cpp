// main.cpp - allot-kube-token: a client-go exec credential plugin.
//
// kubectl runs it (kubeconfig `users[].user.exec`); it proves the caller's
// UID with a MUNGE credential (payload binds it to this audience), exchanges
// it at allot-scimd's token endpoint (RFC 8693) for a short-lived ID token and
// prints an ExecCredential. The token is cached per user (0600, in a 0700
// dir made with its parents) until 60 s before it expires, so kubectl does
// not mint one per call. A token is cached only once the issuer's JWKS
// publishes its signing key, so a token minted across a key rotation is never
// reused; --drop-cache forgets the cached token (after the API server refused it).
//
// Exit codes: 0 printed a credential, 1 could not get one (reason on stderr),
// 2 usage error.
//
// A login-node client: it links liballot, libcurl and libmunge, never the
// server's code, SQLite or httplib (scim/tests/kube_token_deps.sh checks).
#include <curl/curl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <utility>

#include "allot/config.hpp"
#include "allot/file_io.hpp"
#include "allot/json.hpp"
#include "allot/scim_model.hpp"
#include "allot/token_exchange.hpp"
#include "compat/curl.hpp"
#include "munge_client.hpp"

using namespace allot;
using namespace allot::kubetoken;

namespace {

const char* kUsage =
    "usage: allot-kube-token [-c CONFIG] [--issuer URL] [--audience AUD] [--cacert FILE]\n"
    "                        [--munge-socket PATH] [--cache-dir DIR] [--no-cache] [--drop-cache]\n"
    "                        [--api-version client.authentication.k8s.io/v1|v1beta1]\n";

size_t collect(char* data, size_t size, size_t n, void* out)
{
    auto* s = static_cast<std::string*>(out);
    if (s->size() + size * n > (1u << 20)) return 0;  // a token response is small
    s->append(data, size * n);
    return size * n;
}

std::string form_escape(CURL* c, const std::string& s)
{
    char* e = curl_easy_escape(c, s.c_str(), static_cast<int>(s.size()));
    std::string out = e ? e : "";
    curl_free(e);
    return out;
}

std::string cache_dir_default()
{
    if (const char* x = std::getenv("XDG_CACHE_HOME"); x && x[0] == '/')
        return std::string(x) + "/allot";
    const char* home = std::getenv("HOME");
    if (!home || home[0] != '/') {
        const passwd* pw = getpwuid(getuid());
        home = pw ? pw->pw_dir : "/tmp";
    }
    return std::string(home) + "/.cache/allot";
}

// A cache file we trust: ours, a regular file, not readable by others.
bool cache_file_ok(const std::string& path)
{
    struct stat st {};
    return lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == getuid() &&
           (st.st_mode & 077) == 0;
}

void print_credential(const std::string& api_version, const std::string& token, int64_t expiry)
{
    JsonPtr out(cJSON_CreateObject());
    cJSON_AddStringToObject(out.get(), "apiVersion", api_version.c_str());
    cJSON_AddStringToObject(out.get(), "kind", "ExecCredential");
    cJSON* status = cJSON_AddObjectToObject(out.get(), "status");
    cJSON_AddStringToObject(status, "token", token.c_str());
    cJSON_AddStringToObject(status, "expirationTimestamp", scim::format_time(expiry).c_str());
    std::cout << json_print(out.get()) << "\n";
}

// The cache file's name for one issuer and audience: FNV-1a, 64 bits, hex.
// A name, not a secret: the file is trusted for being ours and 0600.
std::string cache_key(const std::string& text)
{
    uint64_t h = 1469598103934665603ULL;
    for (unsigned char c : text) h = (h ^ c) * 1099511628211ULL;
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
    return buf;
}

int fail(const std::string& why)
{
    std::cerr << "allot-kube-token: " << why << "\n";
    return 1;
}

struct Options {
    std::string config_path = kDefaultConfigPath;
    std::string issuer, audience, cacert, socket, cache_dir;
    std::string api_version = "client.authentication.k8s.io/v1";
    bool use_cache = true;
    bool drop_cache = false;
};

// false on a usage error.
bool parse_args(int argc, char** argv, Options& o)
{
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&](std::string& out) {
            if (i + 1 >= argc) return false;
            out = argv[++i];
            return true;
        };
        bool ok = true;
        if (a == "-c" || a == "--config")
            ok = value(o.config_path);
        else if (a == "--issuer")
            ok = value(o.issuer);
        else if (a == "--audience")
            ok = value(o.audience);
        else if (a == "--cacert")
            ok = value(o.cacert);
        else if (a == "--munge-socket")
            ok = value(o.socket);
        else if (a == "--cache-dir")
            ok = value(o.cache_dir);
        else if (a == "--no-cache")
            o.use_cache = false;
        else if (a == "--api-version")
            ok = value(o.api_version);
        else if (a == "--drop-cache")
            o.drop_cache = true;
        else
            ok = false;
        if (!ok) return false;
    }
    return true;
}

// Issuer, audience and CA from allot.yaml where the command line left them out.
Status complete_from_config(Options& o)
{
    if (!o.issuer.empty() && !o.audience.empty()) return Unit{};
    auto load = load_config(o.config_path);
    if (!load.ok())
        return make_error(Errc::Invalid,
                          "cannot read " + o.config_path + ":\n" + load.errors.joined());
    if (o.issuer.empty()) o.issuer = load.config->oidc.issuer;
    if (o.audience.empty()) o.audience = load.config->oidc.audience;
    if (o.cacert.empty()) o.cacert = load.config->identity.ca_file;
    return Unit{};
}

// kubectl tells us which ExecCredential version it speaks; an old kubectl
// that does not set KUBERNETES_EXEC_INFO gets --api-version (default v1).
std::string exec_api_version(const Options& o)
{
    std::string api_version = o.api_version;
    if (const char* info = std::getenv("KUBERNETES_EXEC_INFO")) {
        JsonPtr j = json_parse(info, 65536);
        if (auto v = json_string(j.get(), "apiVersion")) api_version = *v;
    }
    return api_version;
}

struct Token {
    std::string value;
    int64_t expiry = 0;
};

// A cached token still valid for a minute, if the cache file is ours.
std::optional<Token> cached_token(const std::string& cache_file, int64_t now)
{
    if (!cache_file_ok(cache_file)) return std::nullopt;
    std::ifstream in(cache_file);
    std::stringstream text;
    text << in.rdbuf();
    JsonPtr j = json_parse(text.str(), 65536);
    auto token = json_string(j.get(), "token");
    auto exp = json_integer(j.get(), "expiry");
    if (!token || !exp || *exp - 60 <= now) return std::nullopt;
    return Token{*token, *exp};
}

// Creates dir and its missing parents, each 0700 (a first login has no
// ~/.cache yet); an existing directory is left as it is.
Status make_private_dirs(const std::string& dir)
{
    for (size_t slash = dir.find('/', 1);; slash = dir.find('/', slash + 1)) {
        const std::string part = dir.substr(0, slash);
        if (!part.empty() && mkdir(part.c_str(), 0700) != 0 && errno != EEXIST)
            return make_error(Errc::Unavailable,
                              "cannot create " + part + ": " + std::strerror(errno));
        if (slash == std::string::npos) break;
    }
    struct stat st {};
    if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
        return make_error(Errc::Unavailable, dir + " is not a directory");
    return Unit{};
}

// Replaced at once (a private temporary, then renamed): never a half-written cache.
void save_token(const std::string& cache_dir, const std::string& cache_file, const Token& t)
{
    if (auto made = make_private_dirs(cache_dir); !made) {
        std::cerr << "allot-kube-token: not caching: " << made.error().message << "\n";
        return;
    }
    JsonPtr c(cJSON_CreateObject());
    cJSON_AddStringToObject(c.get(), "token", t.value.c_str());
    cJSON_AddNumberToObject(c.get(), "expiry", static_cast<double>(t.expiry));
    AtomicWrite how;
    how.mode = 0600;
    how.fsync = false;  // a lost cache costs one token exchange
    if (auto saved = write_file_atomically(cache_file, json_print(c.get()), how); !saved)
        std::cerr << "allot-kube-token: not caching: " << saved.error().message << "\n";
}

// POSTs the token exchange request; the HTTP status and body, or a transport error.
Result<std::pair<long, std::string>> post_exchange(const Options& o, const std::string& cred)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    curl_compat::EasyPtr curl(curl_easy_init());
    if (!curl) return make_error(Errc::Internal, "curl_easy_init failed");
    const std::string url = o.issuer + "/oidc/token";
    const std::string body = "grant_type=" + form_escape(curl.get(), kTokenExchangeGrant) +
                             "&subject_token_type=" + form_escape(curl.get(), kMungeTokenType) +
                             "&requested_token_type=" + form_escape(curl.get(), kIdTokenType) +
                             "&audience=" + form_escape(curl.get(), o.audience) +
                             "&subject_token=" + form_escape(curl.get(), cred);
    std::string response;
    const bool set_ok =
        curl_easy_setopt(curl.get(), CURLOPT_URL, url.c_str()) == CURLE_OK &&
        curl_easy_setopt(curl.get(), CURLOPT_PROTOCOLS_STR, "https") == CURLE_OK &&
        curl_easy_setopt(curl.get(), CURLOPT_POSTFIELDS, body.c_str()) == CURLE_OK &&
        curl_easy_setopt(curl.get(), CURLOPT_CONNECTTIMEOUT, 5L) == CURLE_OK &&
        curl_easy_setopt(curl.get(), CURLOPT_TIMEOUT, 20L) == CURLE_OK &&
        curl_easy_setopt(curl.get(), CURLOPT_WRITEFUNCTION, collect) == CURLE_OK &&
        curl_easy_setopt(curl.get(), CURLOPT_WRITEDATA, &response) == CURLE_OK &&
        (o.cacert.empty() ||
         curl_easy_setopt(curl.get(), CURLOPT_CAINFO, o.cacert.c_str()) == CURLE_OK);
    if (!set_ok) return make_error(Errc::Internal, "curl option rejected");
    const CURLcode rc = curl_easy_perform(curl.get());
    if (rc != CURLE_OK) return make_error(Errc::Unavailable, url + ": " + curl_easy_strerror(rc));
    long status = 0;
    curl_easy_getinfo(curl.get(), CURLINFO_RESPONSE_CODE, &status);
    return std::make_pair(status, std::move(response));
}

// GETs the issuer's JWKS (allot-scimd serves it at ISSUER/oidc/jwks).
Result<std::string> get_jwks(const Options& o)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    curl_compat::EasyPtr curl(curl_easy_init());
    if (!curl) return make_error(Errc::Internal, "curl_easy_init failed");
    const std::string url = o.issuer + "/oidc/jwks";
    std::string response;
    const bool set_ok = curl_easy_setopt(curl.get(), CURLOPT_URL, url.c_str()) == CURLE_OK &&
                        curl_easy_setopt(curl.get(), CURLOPT_PROTOCOLS_STR, "https") == CURLE_OK &&
                        curl_easy_setopt(curl.get(), CURLOPT_CONNECTTIMEOUT, 5L) == CURLE_OK &&
                        curl_easy_setopt(curl.get(), CURLOPT_TIMEOUT, 20L) == CURLE_OK &&
                        curl_easy_setopt(curl.get(), CURLOPT_WRITEFUNCTION, collect) == CURLE_OK &&
                        curl_easy_setopt(curl.get(), CURLOPT_WRITEDATA, &response) == CURLE_OK &&
                        (o.cacert.empty() || curl_easy_setopt(curl.get(), CURLOPT_CAINFO,
                                                              o.cacert.c_str()) == CURLE_OK);
    if (!set_ok) return make_error(Errc::Internal, "curl option rejected");
    const CURLcode rc = curl_easy_perform(curl.get());
    if (rc != CURLE_OK) return make_error(Errc::Unavailable, url + ": " + curl_easy_strerror(rc));
    long status = 0;
    curl_easy_getinfo(curl.get(), CURLINFO_RESPONSE_CODE, &status);
    if (status != 200)
        return make_error(Errc::Unavailable, url + ": HTTP " + std::to_string(status));
    return response;
}

// Unpadded base64url (RFC 4648 §5); stops at the first character outside it.
// Only the token's header is decoded, to read its kid: the server's own
// codec is not linked into this client.
std::string base64url_bytes(const std::string& text)
{
    std::string out;
    uint32_t acc = 0;
    int bits = 0;
    for (char c : text) {
        int v = c >= 'A' && c <= 'Z'   ? c - 'A'
                : c >= 'a' && c <= 'z' ? c - 'a' + 26
                : c >= '0' && c <= '9' ? c - '0' + 52
                : c == '-'             ? 62
                : c == '_'             ? 63
                                       : -1;
        if (v < 0) break;
        acc = (acc << 6) | static_cast<uint32_t>(v);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out += static_cast<char>((acc >> bits) & 0xff);
        }
    }
    return out;
}

// The `kid` in a compact JWS's protected header, or "".
std::string token_kid(const std::string& jwt)
{
    const size_t dot = jwt.find('.');
    if (dot == std::string::npos) return "";
    JsonPtr j = json_parse(base64url_bytes(jwt.substr(0, dot)), 65536);
    return json_string(j.get(), "kid").value_or("");
}

// True when the issuer's JWKS lists the key that signed the token. An API
// server verifies against the JWKS it fetched; a key not even published yet
// cannot be in its copy, so such a token is used once and not cached.
bool key_published(const Options& o, const std::string& jwt)
{
    const std::string kid = token_kid(jwt);
    if (kid.empty()) return false;
    auto jwks = get_jwks(o);
    if (!jwks) return false;
    JsonPtr j = json_parse(jwks.value(), 1u << 20);
    const cJSON* key = nullptr;
    cJSON_ArrayForEach(key, cJSON_GetObjectItem(j.get(), "keys"))
    {
        if (json_string(key, "kid").value_or("") == kid) return true;
    }
    return false;
}

// A fresh token from allot-scimd for a MUNGE credential of the caller.
Result<Token> exchange(const Options& o, int64_t now)
{
    auto cred = munge_encode(o.socket, kMungePayloadPrefix + o.audience);
    if (!cred) return make_error(Errc::Unavailable, cred.error().message + " (is munged running?)");
    auto answer = post_exchange(o, cred.value());
    if (!answer) return answer.error();
    const auto& [status, response] = answer.value();
    JsonPtr j = json_parse(response, 1u << 20);
    if (status != 200)
        return make_error(
            Errc::Refused,
            "token exchange refused (" + std::to_string(status) +
                "): " + json_string(j.get(), "error").value_or("?") + ": " +
                json_string(j.get(), "error_description").value_or(response.substr(0, 200)));
    auto token = json_string(j.get(), "access_token");
    auto expires_in = json_integer(j.get(), "expires_in", 1, 86400);
    if (!token || !expires_in) return make_error(Errc::Invalid, "malformed token response");
    return Token{*token, now + *expires_in};
}

}  // namespace

int main(int argc, char** argv)
{
    Options o;
    if (!parse_args(argc, argv, o)) {
        std::cerr << kUsage;
        return 2;
    }
    if (auto ok = complete_from_config(o); !ok) return fail(ok.error().message);
    if (o.issuer.rfind("https://", 0) != 0) return fail("issuer must be an https:// URL");
    if (o.audience.empty()) return fail("no audience (oidc.audience or --audience)");
    const std::string api_version = exec_api_version(o);
    const int64_t now = static_cast<int64_t>(std::time(nullptr));
    if (o.cache_dir.empty()) o.cache_dir = cache_dir_default();
    const std::string cache_file =
        o.cache_dir + "/kube-token-" + cache_key(o.issuer + "\n" + o.audience) + ".json";
    // kubectl re-runs the plugin after a 401; a user whose cached token the
    // API server refuses runs it once with --drop-cache.
    if (o.drop_cache) unlink(cache_file.c_str());
    if (o.use_cache) {
        if (auto t = cached_token(cache_file, now)) {
            print_credential(api_version, t->value, t->expiry);
            return 0;
        }
    }
    auto token = exchange(o, now);
    if (!token) return fail(token.error().message);
    if (o.use_cache && key_published(o, token.value().value))
        save_token(o.cache_dir, cache_file, token.value());
    print_credential(api_version, token.value().value, token.value().expiry);
    return 0;
}
