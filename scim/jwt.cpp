// jwt.cpp - see jwt.hpp.
#include "jwt.hpp"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include "util.hpp"

namespace allot::scimd {
namespace {

struct BnDeleter {
    void operator()(BIGNUM* b) const { BN_free(b); }
};
using BnPtr = std::unique_ptr<BIGNUM, BnDeleter>;
struct BioDeleter {
    void operator()(BIO* b) const { BIO_free_all(b); }
};
using BioPtr = std::unique_ptr<BIO, BioDeleter>;
struct MdCtxDeleter {
    void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};
using MdCtxPtr = std::unique_ptr<EVP_MD_CTX, MdCtxDeleter>;
struct SigDeleter {
    void operator()(ECDSA_SIG* s) const { ECDSA_SIG_free(s); }
};
using SigPtr = std::unique_ptr<ECDSA_SIG, SigDeleter>;
struct ParamBldDeleter {
    void operator()(OSSL_PARAM_BLD* b) const { OSSL_PARAM_BLD_free(b); }
};
struct ParamDeleter {
    void operator()(OSSL_PARAM* p) const { OSSL_PARAM_free(p); }
};
struct PkeyCtxDeleter {
    void operator()(EVP_PKEY_CTX* c) const { EVP_PKEY_CTX_free(c); }
};

std::string bn_bytes(const BIGNUM* bn, int width = 0)
{
    const int n = width ? width : BN_num_bytes(bn);
    std::string out(static_cast<size_t>(n), '\0');
    if (BN_bn2binpad(bn, reinterpret_cast<unsigned char*>(out.data()), n) != n) return {};
    return out;
}

std::string bn_param(const EVP_PKEY* key, const char* name, int width = 0)
{
    BIGNUM* raw = nullptr;
    if (EVP_PKEY_get_bn_param(key, name, &raw) != 1) return {};
    BnPtr bn(raw);
    return bn_bytes(bn.get(), width);
}

BnPtr bn_from_b64(const cJSON* jwk, const char* member)
{
    auto text = json_string(jwk, member);
    if (!text) return nullptr;
    auto raw = base64url_decode(*text);
    if (!raw || raw->empty()) return nullptr;
    return BnPtr(BN_bin2bn(reinterpret_cast<const unsigned char*>(raw->data()),
                           static_cast<int>(raw->size()), nullptr));
}

// RFC 7638: SHA-256 over the required members in lexicographic order.
std::string thumbprint(const EVP_PKEY* key, JwsAlg alg)
{
    std::string canon;
    if (alg == JwsAlg::ES256) {
        canon = R"({"crv":"P-256","kty":"EC","x":")" +
                base64url_encode(bn_param(key, OSSL_PKEY_PARAM_EC_PUB_X, 32)) + R"(","y":")" +
                base64url_encode(bn_param(key, OSSL_PKEY_PARAM_EC_PUB_Y, 32)) + "\"}";
    } else {
        canon = R"({"e":")" + base64url_encode(bn_param(key, OSSL_PKEY_PARAM_RSA_E)) +
                R"(","kty":"RSA","n":")" + base64url_encode(bn_param(key, OSSL_PKEY_PARAM_RSA_N)) +
                "\"}";
    }
    return base64url_encode(sha256(canon));
}

Result<JwsAlg> alg_of(const EVP_PKEY* key)
{
    if (EVP_PKEY_is_a(key, "EC")) {
        char group[64] = {0};
        size_t len = 0;
        if (EVP_PKEY_get_utf8_string_param(key, OSSL_PKEY_PARAM_GROUP_NAME, group, sizeof group,
                                           &len) != 1 ||
            (std::string_view(group) != "prime256v1" && std::string_view(group) != "P-256"))
            return make_error("EC key is not on P-256");
        return JwsAlg::ES256;
    }
    if (EVP_PKEY_is_a(key, "RSA")) {
        if (EVP_PKEY_get_bits(key) < 2048) return make_error("RSA key shorter than 2048 bits");
        return JwsAlg::RS256;
    }
    return make_error("unsupported key type (need EC P-256 or RSA)");
}

}  // namespace

const char* alg_name(JwsAlg alg)
{
    return alg == JwsAlg::ES256 ? "ES256" : "RS256";
}

std::optional<JwsAlg> alg_from_name(std::string_view name)
{
    if (name == "ES256") return JwsAlg::ES256;
    if (name == "RS256") return JwsAlg::RS256;
    return std::nullopt;
}

SigningKey::SigningKey(PkeyPtr key, JwsAlg alg, bool priv)
    : key_(std::move(key)), alg_(alg), has_private_(priv)
{
    kid_ = thumbprint(key_.get(), alg_);
}

Result<SigningKey> SigningKey::generate(JwsAlg alg)
{
    EVP_PKEY* raw = alg == JwsAlg::ES256 ? EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256")
                                         : EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", size_t{2048});
    if (!raw) return make_error("key generation failed");
    return SigningKey(PkeyPtr(raw), alg, true);
}

Result<SigningKey> SigningKey::from_pem(std::string_view pem)
{
    BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
    if (!bio) return make_error("out of memory");
    PkeyPtr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
    if (!key) return make_error("not a PEM private key");
    auto alg = alg_of(key.get());
    if (!alg) return alg.error();
    return SigningKey(std::move(key), alg.value(), true);
}

Result<SigningKey> SigningKey::from_jwk(const cJSON* jwk)
{
    const auto kty = json_string(jwk, "kty").value_or("");
    const bool priv = cJSON_GetObjectItemCaseSensitive(jwk, "d") != nullptr;
    std::unique_ptr<OSSL_PARAM_BLD, ParamBldDeleter> bld(OSSL_PARAM_BLD_new());
    const char* type = nullptr;
    std::vector<BnPtr> keep;
    std::string pub_point;
    if (kty == "EC") {
        if (json_string(jwk, "crv").value_or("") != "P-256") return make_error("crv must be P-256");
        auto x = base64url_decode(json_string(jwk, "x").value_or(""));
        auto y = base64url_decode(json_string(jwk, "y").value_or(""));
        if (!x || !y || x->size() != 32 || y->size() != 32) return make_error("bad EC x/y");
        pub_point = "\x04" + *x + *y;
        OSSL_PARAM_BLD_push_utf8_string(bld.get(), OSSL_PKEY_PARAM_GROUP_NAME, "P-256", 0);
        OSSL_PARAM_BLD_push_octet_string(bld.get(), OSSL_PKEY_PARAM_PUB_KEY, pub_point.data(),
                                         pub_point.size());
        if (priv) {
            keep.push_back(bn_from_b64(jwk, "d"));
            if (!keep.back()) return make_error("bad EC d");
            OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_PRIV_KEY, keep.back().get());
        }
        type = "EC";
    } else if (kty == "RSA") {
        const std::pair<const char*, const char*> members[] = {
            {"n", OSSL_PKEY_PARAM_RSA_N},          {"e", OSSL_PKEY_PARAM_RSA_E},
            {"d", OSSL_PKEY_PARAM_RSA_D},          {"p", OSSL_PKEY_PARAM_RSA_FACTOR1},
            {"q", OSSL_PKEY_PARAM_RSA_FACTOR2},    {"dp", OSSL_PKEY_PARAM_RSA_EXPONENT1},
            {"dq", OSSL_PKEY_PARAM_RSA_EXPONENT2}, {"qi", OSSL_PKEY_PARAM_RSA_COEFFICIENT1}};
        for (const auto& [member, param] : members) {
            const bool required =
                std::string_view(member) == "n" || std::string_view(member) == "e";
            if (!cJSON_GetObjectItemCaseSensitive(jwk, member)) {
                if (required) return make_error(std::string("RSA JWK lacks ") + member);
                continue;
            }
            keep.push_back(bn_from_b64(jwk, member));
            if (!keep.back()) return make_error(std::string("bad RSA ") + member);
            OSSL_PARAM_BLD_push_BN(bld.get(), param, keep.back().get());
        }
        type = "RSA";
    } else {
        return make_error("kty must be EC or RSA");
    }
    std::unique_ptr<OSSL_PARAM, ParamDeleter> params(OSSL_PARAM_BLD_to_param(bld.get()));
    std::unique_ptr<EVP_PKEY_CTX, PkeyCtxDeleter> ctx(
        EVP_PKEY_CTX_new_from_name(nullptr, type, nullptr));
    EVP_PKEY* raw = nullptr;
    if (!params || !ctx || EVP_PKEY_fromdata_init(ctx.get()) != 1 ||
        EVP_PKEY_fromdata(ctx.get(), &raw, priv ? EVP_PKEY_KEYPAIR : EVP_PKEY_PUBLIC_KEY,
                          params.get()) != 1)
        return make_error("JWK does not describe a valid key");
    PkeyPtr key(raw);
    auto alg = alg_of(key.get());
    if (!alg) return alg.error();
    return SigningKey(std::move(key), alg.value(), priv);
}

std::string SigningKey::private_pem() const
{
    BioPtr bio(BIO_new(BIO_s_mem()));
    if (!bio ||
        PEM_write_bio_PrivateKey(bio.get(), key_.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1)
        return {};
    char* data = nullptr;
    const long len = BIO_get_mem_data(bio.get(), &data);
    return std::string(data, static_cast<size_t>(len));
}

JsonPtr SigningKey::public_jwk() const
{
    JsonPtr jwk(cJSON_CreateObject());
    if (alg_ == JwsAlg::ES256) {
        cJSON_AddStringToObject(jwk.get(), "kty", "EC");
        cJSON_AddStringToObject(jwk.get(), "crv", "P-256");
        cJSON_AddStringToObject(
            jwk.get(), "x",
            base64url_encode(bn_param(key_.get(), OSSL_PKEY_PARAM_EC_PUB_X, 32)).c_str());
        cJSON_AddStringToObject(
            jwk.get(), "y",
            base64url_encode(bn_param(key_.get(), OSSL_PKEY_PARAM_EC_PUB_Y, 32)).c_str());
    } else {
        cJSON_AddStringToObject(jwk.get(), "kty", "RSA");
        cJSON_AddStringToObject(
            jwk.get(), "n", base64url_encode(bn_param(key_.get(), OSSL_PKEY_PARAM_RSA_N)).c_str());
        cJSON_AddStringToObject(
            jwk.get(), "e", base64url_encode(bn_param(key_.get(), OSSL_PKEY_PARAM_RSA_E)).c_str());
    }
    cJSON_AddStringToObject(jwk.get(), "kid", kid_.c_str());
    cJSON_AddStringToObject(jwk.get(), "alg", alg_name(alg_));
    cJSON_AddStringToObject(jwk.get(), "use", "sig");
    return jwk;
}

Result<std::string> SigningKey::sign(std::string_view input) const
{
    if (!has_private_) return make_error("public key cannot sign");
    MdCtxPtr ctx(EVP_MD_CTX_new());
    size_t len = 0;
    if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key_.get()) != 1 ||
        EVP_DigestSign(ctx.get(), nullptr, &len,
                       reinterpret_cast<const unsigned char*>(input.data()), input.size()) != 1)
        return make_error("signing failed");
    std::string sig(len, '\0');
    if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(sig.data()), &len,
                       reinterpret_cast<const unsigned char*>(input.data()), input.size()) != 1)
        return make_error("signing failed");
    sig.resize(len);
    if (alg_ == JwsAlg::RS256) return sig;
    // ECDSA: DER SEQUENCE{r,s} → fixed-width R||S (RFC 7518 §3.4).
    const unsigned char* p = reinterpret_cast<const unsigned char*>(sig.data());
    SigPtr der(d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(sig.size())));
    if (!der) return make_error("signing failed (DER)");
    const BIGNUM *r = nullptr, *s = nullptr;
    ECDSA_SIG_get0(der.get(), &r, &s);
    return bn_bytes(r, 32) + bn_bytes(s, 32);
}

bool SigningKey::verify(std::string_view input, std::string_view signature) const
{
    std::string der;
    if (alg_ == JwsAlg::ES256) {
        if (signature.size() != 64) return false;
        SigPtr sig(ECDSA_SIG_new());
        BIGNUM* r =
            BN_bin2bn(reinterpret_cast<const unsigned char*>(signature.data()), 32, nullptr);
        BIGNUM* s =
            BN_bin2bn(reinterpret_cast<const unsigned char*>(signature.data()) + 32, 32, nullptr);
        if (!sig || !r || !s || ECDSA_SIG_set0(sig.get(), r, s) != 1) {
            BN_free(r);
            BN_free(s);
            return false;
        }
        unsigned char* out = nullptr;
        const int len = i2d_ECDSA_SIG(sig.get(), &out);
        if (len <= 0) return false;
        der.assign(reinterpret_cast<char*>(out), static_cast<size_t>(len));
        OPENSSL_free(out);
        signature = der;
    }
    MdCtxPtr ctx(EVP_MD_CTX_new());
    return ctx &&
           EVP_DigestVerifyInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key_.get()) == 1 &&
           EVP_DigestVerify(ctx.get(), reinterpret_cast<const unsigned char*>(signature.data()),
                            signature.size(), reinterpret_cast<const unsigned char*>(input.data()),
                            input.size()) == 1;
}

Result<std::string> jwt_sign(const SigningKey& key, const cJSON* claims)
{
    JsonPtr header(cJSON_CreateObject());
    cJSON_AddStringToObject(header.get(), "alg", alg_name(key.alg()));
    cJSON_AddStringToObject(header.get(), "typ", "JWT");
    cJSON_AddStringToObject(header.get(), "kid", key.kid().c_str());
    const std::string input =
        base64url_encode(json_print(header.get())) + "." + base64url_encode(json_print(claims));
    auto sig = key.sign(input);
    if (!sig) return sig.error();
    return input + "." + base64url_encode(sig.value());
}

Result<JsonPtr> jwt_verify(std::string_view token, const std::vector<const SigningKey*>& keys,
                           const VerifyOptions& o)
{
    if (token.size() > 16384) return make_error("token too long");
    const size_t d1 = token.find('.');
    const size_t d2 = d1 == std::string_view::npos ? d1 : token.find('.', d1 + 1);
    if (d2 == std::string_view::npos || token.find('.', d2 + 1) != std::string_view::npos)
        return make_error("not a compact JWS");
    auto header_raw = base64url_decode(token.substr(0, d1));
    auto payload_raw = base64url_decode(token.substr(d1 + 1, d2 - d1 - 1));
    auto sig = base64url_decode(token.substr(d2 + 1));
    if (!header_raw || !payload_raw || !sig) return make_error("bad base64url");
    JsonPtr header = json_parse(*header_raw);
    if (!cJSON_IsObject(header.get())) return make_error("header is not a JSON object");
    const auto alg_text = json_string(header.get(), "alg");
    if (!alg_text) return make_error("header lacks alg");
    const auto alg = alg_from_name(*alg_text);
    bool allowed = false;
    for (auto a : o.algorithms) allowed |= alg && a == *alg;
    if (!allowed) return make_error("algorithm '" + *alg_text + "' not accepted");
    if (cJSON_GetObjectItemCaseSensitive(header.get(), "crit"))
        return make_error("unsupported crit header");
    const auto kid = json_string(header.get(), "kid");
    const SigningKey* key = nullptr;
    for (const SigningKey* k : keys)
        if (k->alg() == *alg && (!kid || k->kid() == *kid)) {
            key = k;
            if (kid) break;
        }
    if (!key) return make_error("no key matches kid/alg");
    const std::string_view input = token.substr(0, d2);
    bool verified = false;
    if (kid) {
        verified = key->verify(input, *sig);
    } else {
        for (const SigningKey* k : keys)
            if (k->alg() == *alg && k->verify(input, *sig)) verified = true;
    }
    if (!verified) return make_error("signature does not verify");
    JsonPtr claims = json_parse(*payload_raw);
    if (!cJSON_IsObject(claims.get())) return make_error("claims are not a JSON object");
    const auto exp = json_integer(claims.get(), "exp");
    if (!exp) return make_error("exp missing");
    if (*exp + o.leeway <= o.now) return make_error("token expired");
    if (auto nbf = json_integer(claims.get(), "nbf"); nbf && *nbf - o.leeway > o.now)
        return make_error("token not yet valid");
    if (auto iat = json_integer(claims.get(), "iat"); iat && *iat - o.leeway > o.now)
        return make_error("token issued in the future");
    if (!o.issuer.empty() && json_string(claims.get(), "iss").value_or("") != o.issuer)
        return make_error("wrong issuer");
    if (!o.audience.empty()) {
        const cJSON* aud = cJSON_GetObjectItemCaseSensitive(claims.get(), "aud");
        bool match = cJSON_IsString(aud) && o.audience == aud->valuestring;
        const cJSON* a = nullptr;
        if (cJSON_IsArray(aud))
            cJSON_ArrayForEach(a, aud) match |= cJSON_IsString(a) && o.audience == a->valuestring;
        if (!match) return make_error("wrong audience");
    }
    return claims;
}

}  // namespace allot::scimd
