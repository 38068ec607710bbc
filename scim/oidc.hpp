// oidc.hpp - the OIDC provider's keys and ID tokens.
//
// Keys live in oidc.keys_dir as "<created-unix>-<ALG>.pem", mode 0600 (a key
// with group/other bits is refused, as sshd refuses a loose private key). The
// newest key signs; an older key stays published in the JWKS until its
// successor is `overlap` seconds old, so tokens it signed (and relying parties
// that cached the old JWKS) keep validating across a rotation; after that
// `keys rotate` deletes it. mint_id_token() is the one place that decides what
// a token says: iss, sub (the SCIM id), aud, iat/nbf/exp, preferred_username,
// uid_number and `groups` restricted to the cluster's team groups.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "codec.hpp"
#include "jwt.hpp"

namespace allot::scimd {

struct KeySet {
    std::vector<SigningKey> keys;  // published keys, newest (the signer) first
    std::vector<int64_t> created;
    std::string jwks;  // the JWKS document
    const SigningKey& signer() const { return keys.front(); }
};

// Loads the published keys; with create_if_empty, makes the first key.
Result<std::shared_ptr<const KeySet>> load_keys(const std::string& dir, int64_t now,
                                                int64_t overlap, bool create_if_empty, JwsAlg alg);
// Adds a new signing key and deletes keys retired longer than `overlap`. Returns its kid.
Result<std::string> rotate_keys(const std::string& dir, JwsAlg alg, int64_t now, int64_t overlap);

struct TokenPolicy {
    std::string issuer;
    std::string audience;
    int64_t lifetime = 900;
    size_t max_groups = 64;
    std::set<std::string> cluster_groups;  // empty: no groups claim entries
};

// The group names a token carries: the user's groups that the cluster knows, sorted, capped.
std::vector<std::string> token_groups(const scim::User& user, const TokenPolicy& policy);
Result<std::string> mint_id_token(const SigningKey& key, const TokenPolicy& policy,
                                  const scim::User& user, int64_t now, int64_t lifetime);

// Remembers credentials already exchanged until they expire (bounded).
class ReplayCache {
public:
    explicit ReplayCache(size_t capacity = 100000) : capacity_(capacity) {}
    // false if `key` was seen and has not expired, or the cache is full of live entries.
    bool insert(const std::string& key, int64_t expires, int64_t now);

private:
    std::mutex mu_;
    size_t capacity_;
    std::map<std::string, int64_t> seen_;
};

}  // namespace allot::scimd
