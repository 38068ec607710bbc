// login_checks.hpp - checks of how sshd admits users on a node (pure): the
// effective sshd configuration as `sshd -T` prints it, and the PAM account
// stack of sshd with its includes already expanded (see node_reader.hpp).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "allot/result.hpp"
#include "finding.hpp"

namespace allot::doctor {

// `sshd -T`: one "keyword value" per line; KEYWORD in lower case matches any case.
std::optional<std::string> sshd_value(std::string_view sshd_t, std::string_view keyword);

// allot-keys answers sshd's AuthorizedKeysCommand with the user's name (%u).
Finding check_sshd_keys_command(const Result<std::string>& sshd_t);
// On compute nodes pam_allot runs only when sshd uses PAM.
Finding check_sshd_use_pam(const Result<std::string>& sshd_t);
// OpenSSH 9.8+ penalises a source address for refused logins; on a compute node the
// sources are the login nodes, shared by every user (warn when nothing is exempt).
Finding check_sshd_penalties(const Result<std::string>& sshd_t);

// The account lines of a PAM stack, following `@include NAME` and
// `account include|substack NAME` through `read(NAME)` (bounded depth).
std::string expand_pam_account(std::string_view stack,
                               const std::function<std::string(const std::string&)>& read);
// pam_allot gates only as `required`/`requisite`, before any `sufficient` line.
Finding check_pam_account(std::string_view account_lines, const std::string& stack_path);

}  // namespace allot::doctor
