// jwt_test.cpp - JWS/JWT signing and verification: RFC 7515 A.2/A.3 and RFC 7638
// vectors, and every rejection the token checks must make.
#include <gtest/gtest.h>

#include "jwt.hpp"
#include "util.hpp"

using namespace allot;
using namespace allot::scimd;

namespace {

// RFC 7515 Appendix A.2.1 (RSA key) and A.3.1 (EC P-256 key).
const char* kRfcRsaJwk = R"({"kty":"RSA",
 "n":"ofgWCuLjybRlzo0tZWJjNiuSfb4p4fAkd_wWJcyQoTbji9k0l8W26mPddxHmfHQp-Vaw-4qPCJrcS2mJPMEzP1Pt0Bm4d4QlL-yRT-SFd2lZS-pCgNMsD1W_YpRPEwOWvG6b32690r2jZ47soMZo9wGzjb_7OMg0LOL-bSf63kpaSHSXndS5z5rexMdbBYUsLA9e-KXBdQOS-UTo7WTBEMa2R2CapHg665xsmtdVMTBQY4uDZlxvb3qCo5ZwKh9kG4LT6_I5IhlJH7aGhyxXFvUK-DWNmoudF8NAco9_h9iaGNj8q2ethFkMLs91kzk2PAcDTW9gb54h4FRWyuXpoQ",
 "e":"AQAB",
 "d":"Eq5xpGnNCivDflJsRQBXHx1hdR1k6Ulwe2JZD50LpXyWPEAeP88vLNO97IjlA7_GQ5sLKMgvfTeXZx9SE-7YwVol2NXOoAJe46sui395IW_GO-pWJ1O0BkTGoVEn2bKVRUCgu-GjBVaYLU6f3l9kJfFNS3E0QbVdxzubSu3Mkqzjkn439X0M_V51gfpRLI9JYanrC4D4qAdGcopV_0ZHHzQlBjudU2QvXt4ehNYTCBr6XCLQUShb1juUO1ZdiYoFaFQT5Tw8bGUl_x_jTj3ccPDVZFD9pIuhLhBOneufuBiB4cS98l2SR_RQyGWSeWjnczT0QU91p1DhOVRuOopznQ",
 "p":"4BzEEOtIpmVdVEZNCqS7baC4crd0pqnRH_5IB3jw3bcxGn6QLvnEtfdUdiYrqBdss1l58BQ3KhooKeQTa9AB0Hw_Py5PJdTJNPY8cQn7ouZ2KKDcmnPGBY5t7yLc1QlQ5xHdwW1VhvKn-nXqhJTBgIPgtldC-KDV5z-y2XDwGUc",
 "q":"uQPEfgmVtjL0Uyyx88GZFF1fOunH3-7cepKmtH4pxhtCoHqpWmT8YAmZxaewHgHAjLYsp1ZSe7zFYHj7C6ul7TjeLQeZD_YwD66t62wDmpe_HlB-TnBA-njbglfIsRLtXlnDzQkv5dTltRJ11BKBBypeeF6689rjcJIDEz9RWdc",
 "dp":"BwKfV3Akq5_MFZDFZCnW-wzl-CCo83WoZvnLQwCTeDv8uzluRSnm71I3QCLdhrqE2e9YkxvuxdBfpT_PI7Yz-FOKnu1R6HsJeDCjn12Sk3vmAktV2zb34MCdy7cpdTh_YVr7tss2u6vneTwrA86rZtu5Mbr1C1XsmvkxHQAdYo0",
 "dq":"h_96-mK1R_7glhsum81dZxjTnYynPbZpHziZjeeHcXYsXaaMwkOlODsWa7I9xXDoRwbKgB719rrmI2oKr6N3Do9U0ajaHF-NKJnwgjMd2w9cjz3_-kyNlxAr2v4IKhGNpmM5iIgOS1VZnOZ68m6_pbLBSp3nssTdlqvd0tIiTHU",
 "qi":"IYd7DHOhrWvxkwPQsRM2tOgrjbcrfvtQJipd-DlcxyVuuM9sQLdgjVk2oy26F0EmpScGLq2MowX7fhd_QJQ3ydy5cY7YIBi87w93IKLEdfnbJtoOPLUW0ITrJReOgo1cq9SbsxYawBgfp_gh6A5603k2-ZQwVK0JKSHuLFkuQ3U"})";
const char* kRfcSigningInput =
    "eyJhbGciOiJSUzI1NiJ9."
    "eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlf"
    "Q";
const char* kRfcRsaSignature =
    "cC4hiUPoj9Eetdgtv3hF80EGrhuB__dzERat0XF9g2VtQgr9PJbu3XOiZj5RZmh7AAuHIm4Bh-0Qc_lF5YKt_O8W2Fp5"
    "jujGbds9uJdbF9CUAr7t1dnZcAcQjbKBYNX4BAynRFdiuB--f_nZLgrnbyTyWzO75vRK5h6xBArLIARNPvkSjtQBMHlb"
    "1L07Qe7K0GarZRmB_eSN9383LcOLn6_dO--xi12jzDwusC-eOkHWEsqtFZESc6BfI7noOPqvhJ1phCnvWh6IeYI2w9QO"
    "YEUipUTI8np6LbgGY9Fs98rqVt5AXLIhWkWywlVmtVrBp0igcN_IoypGlUPQGe77Rw";
const char* kRfcEcJwk = R"({"kty":"EC","crv":"P-256",
 "x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
 "y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0",
 "d":"jpsQnnGQmL-YBIffH1136cspYG6-0iY7X1fCE9-E9LI"})";
const char* kRfcEcToken =
    "eyJhbGciOiJFUzI1NiJ9."
    "eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ"
    "."
    "DtEhU3ljbEg8L38VWAfUAqOyKAM6-Xx-F4GawxaepmXFCgfTjDxw5djxLa8ISlSApmWQxfKTUJqPP3-Kg6NU1Q";

SigningKey key_from(const char* jwk_text)
{
    JsonPtr jwk = json_parse(jwk_text);
    auto key = SigningKey::from_jwk(jwk.get());
    if (!key) throw std::runtime_error(key.error().message);
    return std::move(key.value());
}

JsonPtr claims(int64_t exp, const char* aud = "kube", const char* iss = "https://id.test")
{
    JsonPtr c(cJSON_CreateObject());
    cJSON_AddStringToObject(c.get(), "iss", iss);
    cJSON_AddStringToObject(c.get(), "sub", "alice");
    cJSON_AddStringToObject(c.get(), "aud", aud);
    cJSON_AddNumberToObject(c.get(), "iat", 1000);
    cJSON_AddNumberToObject(c.get(), "exp", static_cast<double>(exp));
    return c;
}

VerifyOptions opts(int64_t now = 1100)
{
    VerifyOptions o;
    o.issuer = "https://id.test";
    o.audience = "kube";
    o.now = now;
    return o;
}

}  // namespace

TEST(Jwt, Rfc7515RsaVectorSignsExactly)
{
    SigningKey key = key_from(kRfcRsaJwk);
    EXPECT_EQ(key.alg(), JwsAlg::RS256);
    auto sig = key.sign(kRfcSigningInput);
    ASSERT_TRUE(sig);
    // RSASSA-PKCS1-v1_5 is deterministic: the signature must equal the RFC's byte for byte.
    EXPECT_EQ(base64url_encode(sig.value()), kRfcRsaSignature);
    EXPECT_TRUE(key.verify(kRfcSigningInput, *base64url_decode(kRfcRsaSignature)));
}

TEST(Jwt, Rfc7515EcVectorVerifies)
{
    SigningKey key = key_from(kRfcEcJwk);
    const std::string token = kRfcEcToken;
    const size_t dot = token.rfind('.');
    EXPECT_TRUE(key.verify(token.substr(0, dot), *base64url_decode(token.substr(dot + 1))));
    // ECDSA is randomised: our own signature over the same input verifies too.
    auto sig = key.sign(token.substr(0, dot));
    ASSERT_TRUE(sig);
    EXPECT_EQ(sig.value().size(), 64u);
    EXPECT_TRUE(key.verify(token.substr(0, dot), sig.value()));
    std::string bad = *base64url_decode(token.substr(dot + 1));
    bad[10] ^= 1;
    EXPECT_FALSE(key.verify(token.substr(0, dot), bad));
}

TEST(Jwt, Rfc7638Thumbprint)
{
    // RFC 7638 §3.1 example key and its thumbprint.
    SigningKey key = key_from(
        R"({"kty":"RSA","e":"AQAB","n":"0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw"})");
    EXPECT_EQ(key.kid(), "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs");
    EXPECT_FALSE(key.has_private());
    EXPECT_FALSE(key.sign("x"));
}

TEST(Jwt, SignVerifyRoundTripBothAlgorithms)
{
    for (JwsAlg alg : {JwsAlg::ES256, JwsAlg::RS256}) {
        auto key = SigningKey::generate(alg);
        ASSERT_TRUE(key);
        auto token = jwt_sign(key.value(), claims(2000).get());
        ASSERT_TRUE(token);
        auto ok = jwt_verify(token.value(), {&key.value()}, opts());
        ASSERT_TRUE(ok) << ok.error().message;
        EXPECT_EQ(json_string(ok.value().get(), "sub").value(), "alice");
        // PEM round trip keeps the kid.
        auto again = SigningKey::from_pem(key.value().private_pem());
        ASSERT_TRUE(again);
        EXPECT_EQ(again.value().kid(), key.value().kid());
        // Public JWK → key verifies the same token.
        JsonPtr jwk = key.value().public_jwk();
        auto pub = SigningKey::from_jwk(jwk.get());
        ASSERT_TRUE(pub);
        EXPECT_TRUE(jwt_verify(token.value(), {&pub.value()}, opts()));
    }
}

TEST(Jwt, Rejections)
{
    auto key = SigningKey::generate(JwsAlg::ES256);
    auto other = SigningKey::generate(JwsAlg::ES256);
    ASSERT_TRUE(key && other);
    const std::vector<const SigningKey*> keys{&key.value()};
    auto good = jwt_sign(key.value(), claims(2000).get()).value();
    ASSERT_TRUE(jwt_verify(good, keys, opts()));

    auto why = [&](const std::string& token, VerifyOptions o = opts()) {
        auto r = jwt_verify(token, keys, o);
        return r ? std::string("ACCEPTED") : r.error().message;
    };
    EXPECT_EQ(why(good, opts(2100)), "token expired");
    EXPECT_EQ(why(jwt_sign(key.value(), claims(2000, "other").get()).value()), "wrong audience");
    EXPECT_EQ(why(jwt_sign(key.value(), claims(2000, "kube", "https://evil").get()).value()),
              "wrong issuer");
    // Signed by a key we do not publish (its kid is unknown; without kid the signature fails).
    EXPECT_EQ(why(jwt_sign(other.value(), claims(2000).get()).value()), "no key matches kid/alg");
    {
        const std::string input = base64url_encode(R"({"alg":"ES256"})") + "." +
                                  base64url_encode(json_print(claims(2000).get()));
        auto sig = other.value().sign(input);
        EXPECT_EQ(why(input + "." + base64url_encode(sig.value())), "signature does not verify");
    }
    // alg none, and HS256 with the public key as secret (classic confusion).
    for (const char* alg : {"none", "HS256", "NONE", "RS512", "ES384"}) {
        const std::string h = base64url_encode(std::string(R"({"alg":")") + alg + R"(","kid":")" +
                                               key.value().kid() + "\"}");
        const std::string t =
            h + "." + good.substr(good.find('.') + 1, good.rfind('.') - good.find('.') - 1) + ".";
        EXPECT_NE(why(t).find("not accepted"), std::string::npos) << alg;
    }
    // Tampered payload: claims changed after signing.
    {
        const size_t d1 = good.find('.'), d2 = good.rfind('.');
        JsonPtr c = claims(2000);
        cJSON_ReplaceItemInObject(c.get(), "sub", cJSON_CreateString("root"));
        const std::string t =
            good.substr(0, d1) + "." + base64url_encode(json_print(c.get())) + good.substr(d2);
        EXPECT_EQ(why(t), "signature does not verify");
        std::string flipped = good;
        flipped[d2 + 5] = flipped[d2 + 5] == 'A' ? 'B' : 'A';
        EXPECT_NE(why(flipped), "ACCEPTED");
    }
    // Structure.
    for (const char* bad : {"", "a.b", "a.b.c.d", "!!!.e30.x", "e30.e30.", "....", "e30.e30.e30"})
        EXPECT_NE(why(bad), "ACCEPTED") << bad;
    EXPECT_EQ(why(std::string(20000, 'a')), "token too long");
    // Missing exp is a rejection, not "never expires".
    {
        JsonPtr c = claims(2000);
        cJSON_DeleteItemFromObject(c.get(), "exp");
        EXPECT_EQ(why(jwt_sign(key.value(), c.get()).value()), "exp missing");
    }
    // Audience as an array containing ours is accepted.
    {
        JsonPtr c = claims(2000);
        cJSON_ReplaceItemInObject(c.get(), "aud", cJSON_Parse(R"(["x","kube"])"));
        EXPECT_EQ(why(jwt_sign(key.value(), c.get()).value()), "ACCEPTED");
    }
}

TEST(Jwt, RejectsWeakOrForeignKeys)
{
    JsonPtr small = json_parse(R"({"kty":"RSA","n":"AQAB","e":"AQAB"})");
    EXPECT_FALSE(SigningKey::from_jwk(small.get()));
    JsonPtr oct = json_parse(R"({"kty":"oct","k":"AAAA"})");
    EXPECT_FALSE(SigningKey::from_jwk(oct.get()));
    JsonPtr p384 = json_parse(R"({"kty":"EC","crv":"P-384","x":"AA","y":"AA"})");
    EXPECT_FALSE(SigningKey::from_jwk(p384.get()));
    JsonPtr offcurve = json_parse(
        R"({"kty":"EC","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU"})");
    EXPECT_FALSE(SigningKey::from_jwk(offcurve.get()));
    EXPECT_FALSE(
        SigningKey::from_pem("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"));
}

TEST(Util, Base64Url)
{
    EXPECT_EQ(base64url_encode("\xfb\xff"), "-_8");
    EXPECT_EQ(*base64url_decode("-_8"), "\xfb\xff");
    EXPECT_FALSE(base64url_decode("-_9"));  // non-canonical trailing bits
    EXPECT_FALSE(base64url_decode("ab+/"));
    EXPECT_FALSE(base64url_decode("abc="));
    EXPECT_FALSE(base64url_decode("a"));
    EXPECT_EQ(base64_encode("ab"), "YWI=");
}
