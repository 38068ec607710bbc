// munge_client.hpp - the one MUNGE call allot-kube-token makes: a credential
// for the caller's uid whose payload binds it to the token exchange and one
// audience (allot/token_exchange.hpp). Only libmunge; nothing of the server.
#pragma once

#include <string>

#include "allot/result.hpp"

namespace allot::kubetoken {

// socket_path empty: libmunge's default socket.
Result<std::string> munge_encode(const std::string& socket_path, const std::string& payload);

}  // namespace allot::kubetoken
