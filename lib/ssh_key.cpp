// ssh_key.cpp - OpenSSH public key validation (see allot/ssh_key.hpp).
#include "allot/ssh_key.hpp"

#include <array>
#include <cstdint>

namespace allot {
namespace {

constexpr std::array<std::string_view, 8> kKnownTypes = {
    "ssh-ed25519",
    "ssh-rsa",
    "ecdsa-sha2-nistp256",
    "ecdsa-sha2-nistp384",
    "ecdsa-sha2-nistp521",
    "sk-ssh-ed25519@openssh.com",
    "sk-ecdsa-sha2-nistp256@openssh.com",
    "ssh-dss",  // listed so the error says "not allowed" rather than "unknown"
};

int b64_value(char c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

// Reads an SSH wire-format string (uint32 length + bytes) at `pos`.
bool read_wire_string(const std::string& blob, size_t& pos, std::string_view& out)
{
    if (blob.size() - pos < 4 || pos > blob.size()) return false;
    const auto* p = reinterpret_cast<const unsigned char*>(blob.data() + pos);
    const uint32_t len =
        (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | uint32_t(p[3]);
    pos += 4;
    if (len > blob.size() - pos) return false;
    out = std::string_view(blob.data() + pos, len);
    pos += len;
    return true;
}

}  // namespace

std::string SshKey::line() const
{
    std::string out = type + " " + base64;
    if (!comment.empty()) out += " " + comment;
    return out;
}

bool known_ssh_key_type(std::string_view type)
{
    if (type == "ssh-dss") return false;  // DSA: removed from OpenSSH defaults
    for (auto known : kKnownTypes)
        if (known == type) return true;
    return false;
}

bool base64_decode(std::string_view text, std::string& out)
{
    out.clear();
    if (text.empty() || text.size() % 4 != 0) return false;
    out.reserve(text.size() / 4 * 3);
    for (size_t i = 0; i < text.size(); i += 4) {
        int v[4];
        int pad = 0;
        for (int k = 0; k < 4; ++k) {
            const char c = text[i + k];
            if (c == '=') {
                // Padding only in the last quantum, only in its last two places.
                if (i + 4 != text.size() || k < 2) return false;
                ++pad;
                v[k] = 0;
            } else {
                if (pad) return false;  // data after '='
                v[k] = b64_value(c);
                if (v[k] < 0) return false;
            }
        }
        const uint32_t n = (uint32_t(v[0]) << 18) | (uint32_t(v[1]) << 12) | (uint32_t(v[2]) << 6) |
                           uint32_t(v[3]);
        out.push_back(char((n >> 16) & 0xff));
        if (pad < 2) out.push_back(char((n >> 8) & 0xff));
        if (pad < 1) out.push_back(char(n & 0xff));
        // Non-canonical encodings (stray bits under the padding) are refused so
        // a key has exactly one textual form.
        if ((pad == 1 && (v[2] & 0x3)) || (pad == 2 && (v[1] & 0xf))) return false;
    }
    return true;
}

Result<SshKey> parse_ssh_public_key(std::string_view line)
{
    if (line.size() > kMaxSshKeyLine) return make_error("key longer than 16 KiB");
    for (char c : line) {
        const auto u = static_cast<unsigned char>(c);
        if (c == '\n' || c == '\r') return make_error("key contains a line break");
        if (u < 0x20 || u == 0x7f) return make_error("key contains a control character");
        if (u >= 0x80) return make_error("key contains non-ASCII bytes");
    }
    // Trim surrounding blanks only; inner runs of blanks separate fields.
    size_t b = line.find_first_not_of(" \t");
    if (b == std::string_view::npos) return make_error("empty key");
    size_t e = line.find_last_not_of(" \t");
    line = line.substr(b, e - b + 1);

    const size_t sp = line.find_first_of(" \t");
    if (sp == std::string_view::npos) return make_error("key has no base64 part");
    const std::string_view type = line.substr(0, sp);
    if (!known_ssh_key_type(type)) {
        // An options prefix (command="…", from=…, no-pty …) lands here.
        if (type.find('=') != std::string_view::npos || type.find(',') != std::string_view::npos ||
            type.find('"') != std::string_view::npos)
            return make_error("key carries authorized_keys options, which are not allowed");
        if (type == "ssh-dss") return make_error("DSA keys are not allowed");
        return make_error("unknown key type");
    }
    std::string_view rest = line.substr(sp);
    rest.remove_prefix(rest.find_first_not_of(" \t"));
    const size_t sp2 = rest.find_first_of(" \t");
    const std::string_view b64 = rest.substr(0, sp2);
    std::string_view comment;
    if (sp2 != std::string_view::npos) {
        comment = rest.substr(sp2);
        comment.remove_prefix(comment.find_first_not_of(" \t"));
    }

    std::string blob;
    if (!base64_decode(b64, blob)) return make_error("key data is not valid base64");
    size_t pos = 0;
    std::string_view embedded;
    if (!read_wire_string(blob, pos, embedded)) return make_error("key data is truncated");
    if (embedded != type) return make_error("key type does not match the type inside the key data");
    // Every known type carries at least one more field (the key material).
    std::string_view material;
    if (!read_wire_string(blob, pos, material) || material.empty())
        return make_error("key data is truncated");
    if (type == "ssh-ed25519") {
        std::string_view pk = material;
        if (pk.size() != 32) return make_error("ed25519 key has the wrong length");
    }
    if (type == "ssh-rsa") {
        std::string_view modulus;
        if (!read_wire_string(blob, pos, modulus)) return make_error("RSA key is truncated");
        if (modulus.size() < 2048 / 8)
            return make_error("RSA keys below 2048 bits are not allowed");
    }

    SshKey key;
    key.type = std::string(type);
    key.base64 = std::string(b64);
    key.comment = std::string(comment);
    return key;
}

}  // namespace allot
