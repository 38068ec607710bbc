// keys_core.hpp - what allot-keys prints for a user, as a testable function.
//
// sshd runs `allot-keys %u` as its AuthorizedKeysCommand. The answer, in order:
//   1. a name that is not a valid POSIX user name → nothing;
//   2. on a compute node, the login rule (allot/node_access.hpp) → nothing
//      unless the user is root, an admin, or has a job running here;
//   3. the live answer of the SCIM source (one filtered GET, short timeout):
//      the user's validated keys, or nothing when the source says the user
//      does not exist, is inactive or invalid (a key removed at the source is
//      refused at the next login);
//   4. if the live lookup failed (timeout, transport, HTTP error, bad body),
//      the keys from the local cache (keys.cache), exact name match.
// Every key printed is re-validated (parse_ssh_public_key) and printed in the
// canonical "type base64 [comment]" form: never options, never a newline.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "allot/config.hpp"
#include "allot/node_access.hpp"
#include "allot/result.hpp"
#include "allot/scim_client.hpp"

namespace allot::keys {

// The live source. Ok(nullopt): the source answered and knows no such (valid,
// active) user. Ok(keys): the user's keys. Error: no usable answer.
class LiveKeys {
public:
    virtual ~LiveKeys() = default;
    virtual Result<std::optional<std::vector<std::string>>> lookup(const std::string& user) = 0;
};

// LiveKeys over the SCIM client (fetch_user + validate_directory).
class ScimLiveKeys : public LiveKeys {
public:
    ScimLiveKeys(HttpClient& http, ScimFetchOptions options, IdentityConfig identity)
        : http_(http), options_(std::move(options)), identity_(std::move(identity))
    {
    }
    Result<std::optional<std::vector<std::string>>> lookup(const std::string& user) override;

private:
    HttpClient& http_;
    ScimFetchOptions options_;
    IdentityConfig identity_;
};

struct KeysOutcome {
    std::vector<std::string> lines;
    std::string source;  // "live", "cache", "none", "denied", "invalid-name"
    std::string note;    // why (for the log line)
};

struct KeysContext {
    const Config* config = nullptr;
    LiveKeys* live = nullptr;  // null: cache only
    const UserDb* users = nullptr;
    int64_t now = 0;
    RegistryOptions registry;
};

KeysOutcome resolve_keys(const KeysContext& ctx, const std::string& user);

// Keys of `user` in <cache_dir>/keys.cache, validated; Error if the cache is
// missing or invalid.
Result<std::vector<std::string>> cached_keys(const std::string& cache_dir, const std::string& user);

}  // namespace allot::keys
