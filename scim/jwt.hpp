// jwt.hpp - JSON Web Signatures and JWT checks on OpenSSL EVP (ES256, RS256).
//
// SigningKey is a move-only owner of an EVP_PKEY with its JOSE algorithm and
// key id (the RFC 7638 thumbprint, so the kid follows the key material, not
// a counter). jwt_verify() is strict: a fixed algorithm allow-list ("none" and
// HMAC are never accepted), the kid must name a known key, exp is required,
// iss and aud must match. The OIDC provider uses it for self-tests and the
// unit tests use it against the RFC 7515/7519 vectors.
#pragma once

#include <openssl/evp.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "allot/json.hpp"
#include "allot/result.hpp"

namespace allot::scimd {

enum class JwsAlg { ES256, RS256 };
const char* alg_name(JwsAlg alg);
std::optional<JwsAlg> alg_from_name(std::string_view name);

struct PkeyDeleter {
    void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyDeleter>;

class SigningKey {
public:
    static Result<SigningKey> generate(JwsAlg alg);
    static Result<SigningKey> from_pem(std::string_view pem);  // alg from the key type
    // A JWK object (EC P-256 or RSA); private members optional.
    static Result<SigningKey> from_jwk(const cJSON* jwk);

    JwsAlg alg() const { return alg_; }
    const std::string& kid() const { return kid_; }
    bool has_private() const { return has_private_; }
    std::string private_pem() const;
    JsonPtr public_jwk() const;  // with kid, alg, use=sig

    // JWS signature over `input` (raw bytes: R||S for ES256, PKCS#1 v1.5 for RS256).
    Result<std::string> sign(std::string_view input) const;
    bool verify(std::string_view input, std::string_view signature) const;

private:
    SigningKey(PkeyPtr key, JwsAlg alg, bool priv);
    PkeyPtr key_;
    JwsAlg alg_;
    bool has_private_;
    std::string kid_;
};

// Compact JWS of `claims` with header {alg, typ: JWT, kid}.
Result<std::string> jwt_sign(const SigningKey& key, const cJSON* claims);

struct VerifyOptions {
    std::string issuer;
    std::string audience;
    int64_t now = 0;
    int64_t leeway = 30;
    std::vector<JwsAlg> algorithms = {JwsAlg::ES256, JwsAlg::RS256};
};

// The verified claims, or why the token is rejected.
Result<JsonPtr> jwt_verify(std::string_view token, const std::vector<const SigningKey*>& keys,
                           const VerifyOptions& options);

}  // namespace allot::scimd
