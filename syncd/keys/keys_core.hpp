// keys_core.hpp - what allot-keys prints for a user, as a testable function.
//
// sshd runs `allot-keys %u` as its AuthorizedKeysCommand. The answer, in order:
//   1. a name that is not a valid POSIX user name → nothing;
//   2. node.role not set in allot.yaml → nothing (no default: fail closed);
//   3. a name that is not a directory user (allot/node_access.hpp: a local
//      account or group, a reserved name, not in allot's trusted passwd.cache,
//      a reserved id, or resolved by the node to another uid) → nothing, so a
//      directory user named `root` never lends its key to the local root;
//   4. on a compute node, the login rule (allot/node_access.hpp) → nothing
//      unless the user is an admin or has a job running here;
//   5. the live answer of the SCIM source (one filtered GET, short timeout):
//      the user's validated keys, or nothing when the source says the user
//      does not exist, is inactive or invalid (a key removed at the source is
//      refused at the next login);
//   6. if the live lookup failed (timeout, transport, HTTP error, bad body),
//      the keys from the local cache (keys.cache, trusted like passwd.cache),
//      exact name match and the same uid as passwd.cache.
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
    // `rules` are the node's (local accounts included), as for every other step.
    ScimLiveKeys(HttpClient& http, ScimFetchOptions options, IdentityRules rules)
        : http_(http), options_(std::move(options)), rules_(std::move(rules))
    {
    }
    Result<std::optional<std::vector<std::string>>> lookup(const std::string& user) override;

private:
    HttpClient& http_;
    ScimFetchOptions options_;
    IdentityRules rules_;
};

// Where the printed keys came from, or why there are none.
enum class KeysSource {
    Live,          // the SCIM source answered
    Cache,         // keys.cache (the source could not be asked or did not answer)
    None,          // no keys: unknown at the source, or no usable cache
    Denied,        // the node's login rule (or a missing node.role) refused
    NotDirectory,  // not a directory user of this node (step 3)
    InvalidName,   // not a valid POSIX user name
};
const char* source_name(KeysSource source);  // for the log line: "live", "cache", ...

struct KeysOutcome {
    std::vector<std::string> lines;
    KeysSource source = KeysSource::None;
    std::error_code code;  // why there are no keys (identity::, node:: or a client's area)
    std::string note;      // the detail, for the log line
};

struct KeysContext {
    const Config* config = nullptr;
    LiveKeys* live = nullptr;  // null: cache only
    const UserDb* users = nullptr;
    NodeIdentity node;  // the node's own accounts and who may own the caches
    int64_t now = 0;
    RegistryOptions registry;
};

KeysOutcome resolve_keys(const KeysContext& ctx, const std::string& user);

// Keys of `user` (whose passwd.cache uid is `uid`) in <cache_dir>/keys.cache,
// validated; an Error (node::Errc::CacheUntrusted, CacheUnavailable or
// NameMismatch) if the cache cannot be used or names another uid.
Result<std::vector<std::string>> cached_keys(const std::string& cache_dir, const std::string& user,
                                             uint32_t uid, const idcache::TrustPolicy& trust);

}  // namespace allot::keys
