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

namespace allot::scimd {


struct MungeCredential {
    uint32_t uid = 0;
    uint32_t gid = 0;
    int64_t encode_time = 0;
    int64_t ttl = 0;
    std::string payload;
};

struct MungeError {
    bool replayed = false;
    bool expired = false;
    std::string message;
};

class MungeDecoder {
public:
    virtual ~MungeDecoder() = default;
    virtual Result<MungeCredential> decode(const std::string& credential, MungeError* why) = 0;
};

// socket_path empty: libmunge's default socket.
std::unique_ptr<MungeDecoder> make_libmunge_decoder(const std::string& socket_path);

}  // namespace allot::scimd
