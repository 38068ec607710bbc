// token_exchange.hpp - the wire contract of allot's OIDC token exchange
// (RFC 8693), shared by allot-scimd (which answers it) and allot-kube-token
// (which asks): the subject token type naming a MUNGE credential, and the
// payload that binds a credential to this purpose and one audience.
#pragma once

namespace allot {

inline constexpr const char* kMungeTokenType = "urn:allot:params:oauth:token-type:munge";
inline constexpr const char* kMungePayloadPrefix = "allot-token-exchange aud=";
inline constexpr const char* kTokenExchangeGrant =
    "urn:ietf:params:oauth:grant-type:token-exchange";
inline constexpr const char* kIdTokenType = "urn:ietf:params:oauth:token-type:id_token";

}  // namespace allot
