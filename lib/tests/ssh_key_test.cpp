// ssh_key_test.cpp - OpenSSH public key validation, including hostile lines.
#include <gtest/gtest.h>

#include "allot/ssh_key.hpp"
#include "scim_fakes.hpp"

using namespace allot;

namespace {

// Builds base64 of an SSH wire blob: string(type) + string(material).
std::string wire_b64(const std::string& type, const std::string& material)
{
    std::string blob;
    auto put = [&](const std::string& s) {
        uint32_t n = s.size();
        blob.push_back(char(n >> 24));
        blob.push_back(char(n >> 16));
        blob.push_back(char(n >> 8));
        blob.push_back(char(n));
        blob += s;
    };
    put(type);
    put(material);
    static const char* tbl = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    size_t i = 0;
    for (; i + 2 < blob.size(); i += 3) {
        uint32_t n = (uint8_t(blob[i]) << 16) | (uint8_t(blob[i + 1]) << 8) | uint8_t(blob[i + 2]);
        out += {tbl[n >> 18], tbl[(n >> 12) & 63], tbl[(n >> 6) & 63], tbl[n & 63]};
    }
    if (blob.size() - i == 1) {
        uint32_t n = uint8_t(blob[i]) << 16;
        out += {tbl[n >> 18], tbl[(n >> 12) & 63], '=', '='};
    } else if (blob.size() - i == 2) {
        uint32_t n = (uint8_t(blob[i]) << 16) | (uint8_t(blob[i + 1]) << 8);
        out += {tbl[n >> 18], tbl[(n >> 12) & 63], tbl[(n >> 6) & 63], '='};
    }
    return out;
}

}  // namespace

TEST(SshKey, AcceptsEd25519WithComment)
{
    auto k = parse_ssh_public_key(scimtest::kEd25519);
    ASSERT_TRUE(k.ok()) << k.error().message;
    EXPECT_EQ(k.value().type, "ssh-ed25519");
    EXPECT_EQ(k.value().comment, "alice@laptop");
    EXPECT_EQ(k.value().line(), scimtest::kEd25519);
}

TEST(SshKey, AcceptsEcdsaAndBigRsa)
{
    EXPECT_TRUE(
        parse_ssh_public_key("ecdsa-sha2-nistp256 " + wire_b64("ecdsa-sha2-nistp256", "nistp256"))
            .ok());
    std::string rsa_blob;  // string type, mpint e, mpint n (257 bytes)
    auto b64 = wire_b64("ssh-rsa", std::string("\x01\x00\x01", 3));
    (void)b64;
    std::string type = "ssh-rsa", e("\x01\x00\x01", 3), n(257, '\x7f');
    auto put = [&](const std::string& s) {
        uint32_t len = s.size();
        rsa_blob += {char(len >> 24), char(len >> 16), char(len >> 8), char(len)};
        rsa_blob += s;
    };
    put(type);
    put(e);
    put(n);
    std::string enc;
    ASSERT_FALSE(base64_decode("abc", enc));
    // Encode with the helper by splitting: reuse wire_b64's table via a round trip.
    static const char* tbl = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    size_t i = 0;
    for (; i + 2 < rsa_blob.size(); i += 3) {
        uint32_t v = (uint8_t(rsa_blob[i]) << 16) | (uint8_t(rsa_blob[i + 1]) << 8) |
                     uint8_t(rsa_blob[i + 2]);
        out += {tbl[v >> 18], tbl[(v >> 12) & 63], tbl[(v >> 6) & 63], tbl[v & 63]};
    }
    ASSERT_EQ(rsa_blob.size() % 3, 0u) << "test blob must be a multiple of 3 bytes";
    EXPECT_TRUE(parse_ssh_public_key("ssh-rsa " + out + " me").ok());
}

TEST(SshKey, RejectsHostileLines)
{
    const std::string b64 = wire_b64("ssh-ed25519", std::string(32, 'x'));
    EXPECT_TRUE(parse_ssh_public_key("ssh-ed25519 " + b64).ok());
    for (const std::string& bad : std::vector<std::string>{
             "command=\"/bin/sh\" ssh-ed25519 " + b64,
             "no-pty,from=\"*\" ssh-ed25519 " + b64,
             "ssh-ed25519 " + b64 + " a\nssh-ed25519 " + b64,
             "ssh-ed25519 " + b64 + "\r",
             "ssh-ed25519 " + b64.substr(0, b64.size() - 4),              // truncated blob
             "ssh-ed25519 " + b64 + "!",                                  // bad base64
             "ssh-ed25519 " + wire_b64("ssh-rsa", std::string(32, 'x')),  // type mismatch
             "ssh-ed25519 " + wire_b64("ssh-ed25519", std::string(31, 'x')),
             "ssh-dss " + wire_b64("ssh-dss", "x"),
             "ssh-foo " + wire_b64("ssh-foo", "x"),
             std::string("ssh-ed25519 ") + b64 + " \x01",
             "ssh-ed25519",
             "",
             "   ",
             std::string(20000, 'A'),
             "ssh-ed25519 " + b64 + " caf\xc3\xa9",
         }) {
        EXPECT_FALSE(parse_ssh_public_key(bad).ok()) << bad;
    }
}

TEST(SshKey, OptionsErrorSaysOptions)
{
    auto k = parse_ssh_public_key("command=\"x\" ssh-ed25519 AAAA");
    ASSERT_FALSE(k.ok());
    EXPECT_NE(k.error().message.find("options"), std::string::npos);
}

TEST(Base64, StrictDecoding)
{
    std::string out;
    EXPECT_TRUE(base64_decode("aGVsbG8=", out));
    EXPECT_EQ(out, "hello");
    EXPECT_TRUE(base64_decode("aGk=", out) && out == "hi");
    EXPECT_FALSE(base64_decode("aGVsbG8", out));    // length
    EXPECT_FALSE(base64_decode("aG=sbG8=", out));   // pad in the middle
    EXPECT_FALSE(base64_decode("aGVsbG9=", out));   // non-canonical trailing bits
    EXPECT_FALSE(base64_decode("aGVs bG8=", out));  // whitespace
    EXPECT_FALSE(base64_decode("", out));
}
