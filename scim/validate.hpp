// validate.hpp - what allot-scimd accepts into the directory.
//
// Every write (SCIM POST/PUT/PATCH, the admin CLI, `apply`) goes through
// these checks before the store. The checks are lib's one identity validator
// (allot/identity_validate.hpp), with the rules allot-syncd applies, so the
// server refuses (400, naming the attribute) exactly what the sync would
// reject: names that are not portable or are reserved, ids 0, 65534 or
// outside [uid_min, uid_max] / [gid_min, gid_max], homes that are not a
// clean ASCII path under identity.home_prefix, shells not in
// identity.shells, malformed SSH keys. Not checked here: the local accounts
// of the host allot-scimd runs on (it need not be a cluster node); every
// node refuses its own accounts when it reads the directory.
#pragma once

#include <string>

#include "allot/identity_validate.hpp"
#include "allot/result.hpp"
#include "codec.hpp"

namespace allot::scimd {

// Rules for a policy nobody configured: the default reserved names, ids 0 and
// 65534 refused, any other id allowed, homes under /home, no shell allowed.
IdentityRules open_identity_rules();

struct DirectoryPolicy {
    IdentityRules rules = open_identity_rules();
    std::string home_template = "/home/{user}";
    std::string default_shell = "/bin/bash";
};

// Fills defaults (home from the template, shell), then checks every field.
Result<bool> normalize_user(scim::User& user, const DirectoryPolicy& policy);
Result<bool> normalize_group(scim::Group& group, const DirectoryPolicy& policy = DirectoryPolicy{});

}  // namespace allot::scimd
