// validate.hpp - what allot-scimd accepts into the directory.
//
// Every write (SCIM POST/PUT/PATCH, the admin CLI, `apply`) goes through
// these checks before the store: POSIX-portable names, a login shell from
// identity.shells, a home under identity.home_prefix, well-formed OpenSSH
// public keys. Consumers (NSS caches, sshd) then never see a value that could
// break a passwd line or an authorized_keys file.
#pragma once

#include <string>
#include <vector>

#include "allot/result.hpp"
#include "codec.hpp"

namespace allot::scimd {

struct DirectoryPolicy {
    std::vector<std::string> shells;
    std::string home_prefix = "/home";
    std::string home_template = "/home/{user}";
    std::string default_shell = "/bin/bash";
    size_t max_keys = 32;
};

bool valid_posix_name(const std::string& name);
Result<bool> validate_ssh_key(const std::string& line);

// Fills defaults (home from the template, shell) and checks every field.
Result<bool> normalize_user(scim::User& user, const DirectoryPolicy& policy);
Result<bool> normalize_group(scim::Group& group);

}  // namespace allot::scimd
