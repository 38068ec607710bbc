// oidc.hpp - the OIDC provider's keys and ID tokens.
//
// Keys live in oidc.keys_dir as "<created-unix>-<ALG>.pem", mode 0600 (a key
// with group/other bits is refused, as sshd refuses a loose private key).
// Rotation is publish-then-sign, because relying parties cache the JWKS:
// go-oidc (kube-apiserver's verifier) keeps it for the Cache-Control max-age
// and does not refetch on an unknown kid before then. So `keys rotate` writes a
// key that is published at once but signs only from its activation time (kept
// in the store, `signing_keys`), by default the JWKS max-age plus a margin later;
// a key without a scheduled activation signs from its creation. The signer is
// the newest key whose activation has come. An older key stays published until
// its successor has signed for `overlap` seconds (at least two token lifetimes),
// so tokens it signed keep validating until they expire; after that `keys
// rotate` deletes it. mint_id_token() is the one place that decides what a token
// says: iss, sub (the SCIM id), aud, iat/nbf/exp, preferred_username,
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

// Activation times by key file name (DirectoryStore::key_activations).
using KeyActivations = std::map<std::string, int64_t>;

struct KeySet {
    std::vector<SigningKey> keys;  // published keys, newest first
    std::vector<int64_t> created;
    std::vector<int64_t> activates;  // when each key starts signing
    std::string jwks;                // the JWKS document: every published key
    // The newest key active at `now`. If none is (a pending key is all that is
    // left), the oldest published key, so the server keeps minting tokens that verify.
    size_t signer_index(int64_t now) const;
    const SigningKey& signer(int64_t now) const { return keys[signer_index(now)]; }
};

// The file name a key created at `created` gets ("<created>-<ALG>.pem").
std::string key_file_name(int64_t created, JwsAlg alg);
// The newest key file in `dir` (the one `keys activate` brings forward).
Result<std::string> newest_key_file(const std::string& dir);

// Loads the published keys; with create_if_empty, makes the first key (active at once).
Result<std::shared_ptr<const KeySet>> load_keys(const std::string& dir, int64_t now,
                                                int64_t overlap, bool create_if_empty, JwsAlg alg,
                                                const KeyActivations& activations = {});

struct RotatedKey {
    std::string kid;
    std::string file;                  // key_file_name(now, alg)
    std::vector<std::string> removed;  // key files deleted (retired longer than `overlap`)
};
// Writes a new key as key_file_name(now, alg) and deletes keys whose successor
// has signed for `overlap` seconds. The caller schedules the new key's activation
// in the store *before* calling, so the key never exists without its schedule
// (a key file with none would sign at once).
Result<RotatedKey> rotate_keys(const std::string& dir, JwsAlg alg, int64_t now, int64_t overlap,
                               const KeyActivations& activations = {});

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
