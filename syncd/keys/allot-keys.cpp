// allot-keys.cpp - sshd's AuthorizedKeysCommand: prints a user's SSH keys.
//
//   AuthorizedKeysCommand /usr/libexec/allot/allot-keys %u
//   AuthorizedKeysCommandUser allot-keys
//
// The decision is keys_core.cpp's (directory users only, compute-node gating,
// live SCIM lookup with a short timeout, the local cache on any failure). This file wires the real
// implementations: allot.yaml, libcurl, NSS and syslog. Exit status: 0 when
// an answer was printed (possibly none), 1 for usage or configuration errors
// (sshd then offers no key: fail closed), 2 for an internal error.
#include <getopt.h>
#include <signal.h>
#include <syslog.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <memory>
#include <string>

#include "../curl_http.hpp"
#include "allot/config.hpp"
#include "keys_core.hpp"

namespace {

bool g_verbose = false;

void log(int priority, const std::string& msg)
{
    syslog(priority, "%s", msg.c_str());
    if (g_verbose) std::fprintf(stderr, "allot-keys: %s\n", msg.c_str());
}

int usage(FILE* out)
{
    std::fprintf(out,
                 "usage: allot-keys [-c CONFIG] [--cache-only] [-v] USER\n"
                 "  -c, --config PATH  allot.yaml (default %s, or $ALLOT_CONFIG)\n"
                 "      --cache-only   skip the live SCIM lookup\n"
                 "  -v, --verbose      also log to stderr\n",
                 allot::kDefaultConfigPath);
    return out == stdout ? 0 : 1;
}

int run(int argc, char** argv)
{
    std::string config_path = allot::kDefaultConfigPath;
    if (const char* env = std::getenv("ALLOT_CONFIG"); env && *env) config_path = env;
    bool cache_only = false;
    static const option longopts[] = {{"config", required_argument, nullptr, 'c'},
                                      {"cache-only", no_argument, nullptr, 'C'},
                                      {"verbose", no_argument, nullptr, 'v'},
                                      {"help", no_argument, nullptr, 'h'},
                                      {nullptr, 0, nullptr, 0}};
    for (int c; (c = getopt_long(argc, argv, "c:vh", longopts, nullptr)) != -1;) {
        switch (c) {
            case 'c': config_path = optarg; break;
            case 'C': cache_only = true; break;
            case 'v': g_verbose = true; break;
            case 'h': return usage(stdout);
            default: return usage(stderr);
        }
    }
    if (optind + 1 != argc) return usage(stderr);
    const std::string user = argv[optind];

    auto load = allot::load_config(config_path);
    if (!load.ok()) {
        for (const auto& line : load.errors.lines) log(LOG_ERR, line);
        log(LOG_ERR, "no valid configuration: no keys offered");
        return 1;
    }
    const allot::Config& config = *load.config;
    const auto started = std::chrono::steady_clock::now();
    // Without the node's own accounts nobody is a directory user: no keys.
    auto rules = allot::node_identity_rules(config);
    if (!rules) log(LOG_ERR, rules.error().describe());

    std::unique_ptr<allot::CurlHttpClient> http;
    std::unique_ptr<allot::keys::ScimLiveKeys> live;
    std::string live_note;
    if (rules && !cache_only && !config.identity.scim_url.empty()) {
        allot::CurlOptions co;
        co.ca_file = config.identity.ca_file;
        co.timeout_ms = config.identity.keys_timeout_ms;
        co.connect_timeout_ms = std::min<uint32_t>(config.identity.keys_timeout_ms, 5000);
        co.user_agent = "allot-keys";
        auto token = config.identity.token_file.empty()
                         ? allot::Result<std::string>(std::string())
                         : allot::read_token_file(config.identity.token_file);
        if (!token) {
            live_note = "live lookup disabled: " + token.error().message;
        } else {
            co.bearer_token = token.value();
            http = std::make_unique<allot::CurlHttpClient>(co);
            allot::ScimFetchOptions fo;
            fo.base_url = config.identity.scim_url;
            fo.ext_schema = config.identity.extension_schema;
            fo.attributes = allot::scim_attribute_map(config.identity);  // identity.dialect
            fo.page_size = 2;
            fo.retry.max_attempts = 1;  // the budget is one attempt: then the cache
            live = std::make_unique<allot::keys::ScimLiveKeys>(*http, fo, rules.value());
        }
    }

    allot::NssUserDb users;
    allot::keys::KeysContext ctx;
    ctx.config = &config;
    ctx.live = live.get();
    ctx.users = &users;
    ctx.node.rules = rules ? &rules.value() : nullptr;
    ctx.node.trust = allot::cache_trust(config);
    ctx.now = static_cast<int64_t>(std::time(nullptr));
    const auto out = allot::keys::resolve_keys(ctx, user);
    for (const auto& line : out.lines) std::printf("%s\n", line.c_str());
    std::fflush(stdout);

    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::steady_clock::now() - started)
                        .count();
    using allot::keys::KeysSource;
    std::string msg = "user=" + allot::log_safe(user) +
                      " source=" + allot::keys::source_name(out.source) +
                      " keys=" + std::to_string(out.lines.size()) + " ms=" + std::to_string(ms);
    if (!live_note.empty()) msg += " " + live_note;
    if (!out.note.empty()) msg += " (" + out.note + ")";
    const bool served = out.source == KeysSource::Live || out.source == KeysSource::Cache;
    // An untrusted cache is an attack or a broken install: say so loudest.
    const bool untrusted = out.code == allot::node::Errc::CacheUntrusted;
    log(untrusted ? LOG_WARNING : (served ? LOG_INFO : LOG_NOTICE), msg);
    return 0;
}

}  // namespace

int main(int argc, char** argv)
{
    // sshd may close the pipe once it has found a matching key.
    signal(SIGPIPE, SIG_IGN);
    openlog("allot-keys", LOG_PID, LOG_AUTHPRIV);
    try {
        return run(argc, argv);
    } catch (const std::exception& e) {
        log(LOG_ERR, std::string("internal error: ") + e.what());
    } catch (...) {
        log(LOG_ERR, "internal error");
    }
    return 2;
}
