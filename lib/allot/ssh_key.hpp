// ssh_key.hpp - parsing and validation of OpenSSH public key lines.
//
// Keys arrive from SCIM (allot-syncd), are stored by allot-scimd and are
// printed to sshd by allot-keys as authorized_keys lines. A key line that
// carried options (command="…", from=…) or an embedded newline would let
// whoever controls the identity source run commands as the user, so only
// "<type> <base64> [comment]" is accepted, and the type written in the line
// must match the type encoded inside the key blob.
#pragma once

#include <string>
#include <string_view>

#include "allot/result.hpp"

namespace allot {

struct SshKey {
    std::string type;     // e.g. "ssh-ed25519"
    std::string base64;   // the key blob, as given (canonical base64)
    std::string comment;  // may be empty; printable ASCII only
    // "type base64[ comment]": the authorized_keys line allot-keys prints.
    std::string line() const;
};

inline constexpr size_t kMaxSshKeyLine = 16 * 1024;

// True for the key types OpenSSH 8+ accepts for user authentication.
bool known_ssh_key_type(std::string_view type);

// Strict RFC 4648 base64 (padding required, no whitespace). False on any error.
bool base64_decode(std::string_view text, std::string& out);

// Parses one public key line. The error says why, without echoing the key.
Result<SshKey> parse_ssh_public_key(std::string_view line);

}  // namespace allot
