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

// Remembers exchanged MUNGE credentials until they could no longer be accepted
// anyway (encode time + the accepted age), so a captured credential cannot be
// traded twice even across a munged restart. The caller has already found the
// credential's uid in the directory, and slots are bounded per uid: a uid's
// flood only ever refuses that same uid's credentials, and outsiders (uids the
// directory does not know) never reach the cache.
class ReplayCache {
public:
    enum class Verdict { Fresh, Replayed, Full };
    explicit ReplayCache(size_t slots_per_uid = 256) : per_uid_(slots_per_uid) {}
    // Fresh: remembered until `expires`. Replayed: `key` is live already.
    // Full: this uid holds slots_per_uid live entries.
    Verdict insert(uint32_t uid, const std::string& key, int64_t expires, int64_t now);
    size_t size() const;  // live or not yet swept entries, all uids

private:
    using Slots = std::map<std::string, int64_t>;
    void sweep(int64_t now);

    mutable std::mutex mu_;
    size_t per_uid_;
    uint64_t inserts_ = 0;
    std::map<uint32_t, Slots> by_uid_;
};

}  // namespace allot::scimd
