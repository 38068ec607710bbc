// identity.hpp - the POSIX identity model shared by every component.
//
// allot-syncd builds these from SCIM (after validation) and publishes them as
// caches; libnss_allot and allot-keys read them back; allot-scimd stores them.
// A PosixUser always has a valid uid: nothing without one is ever constructed
// by the validators (lib/identity_validate.*).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace allot {

struct PosixUser {
    std::string name;  // userName: POSIX portable name
    uint32_t uid = 0;
    uint32_t gid = 0;   // primary group
    std::string gecos;  // displayName
    std::string home;
    std::string shell;
    std::vector<std::string> ssh_keys;  // validated "type base64 [comment]" lines
};

struct PosixGroup {
    std::string name;
    uint32_t gid = 0;
    std::vector<std::string> members;  // user names
};

}  // namespace allot
