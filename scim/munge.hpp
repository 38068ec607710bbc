// munge.hpp - MUNGE credentials for the token exchange, behind an interface.
//
// The token endpoint never trusts a uid it is told: it decodes the subject
// token with the local munged (same realm key as the cluster's login nodes),
// which authenticates the uid and the encode time. The fake in the tests
// returns canned credentials.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "allot/result.hpp"
#include "allot/token_exchange.hpp"

namespace allot::scimd::cred {

// Why a credential was refused: the token endpoint answers differently for a
// replayed or expired one (the client should mint a new credential).
enum class Errc {
    Ok = 0,
    Invalid,      // malformed, wrong key or realm: munged refused it
    Replayed,     // munged has seen it before
    Expired,      // older than its TTL, or from before munged's clock rewound
    Unavailable,  // munged did not answer
};

}  // namespace allot::scimd::cred

ALLOT_ERROR_AREA(allot::scimd::cred, Errc);

namespace allot::scimd {

struct MungeCredential {
    uint32_t uid = 0;
    uint32_t gid = 0;
    int64_t encode_time = 0;
    int64_t ttl = 0;
    std::string payload;
};

class MungeDecoder {
public:
    virtual ~MungeDecoder() = default;
    // Errors carry a cred::Errc code and munged's own text.
    virtual Result<MungeCredential> decode(const std::string& credential) = 0;
};

// socket_path empty: libmunge's default socket.
std::unique_ptr<MungeDecoder> make_libmunge_decoder(const std::string& socket_path);

}  // namespace allot::scimd
