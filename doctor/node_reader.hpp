// node_reader.hpp - gathers the inputs of the node and identity checks from the
// machine: the effective sshd configuration (`sshd -T`, as sshd would run),
// sshd's PAM account stack with its includes, the facts of the token, cache
// and state files, the local accounts of /etc/passwd and /etc/group, and the
// paths an ordinary user must not be able to replace. Decides nothing; tested
// by tests/doctor-node.sh (a mount namespace with a real sshd) and doctor-lab.sh.
#pragma once

#include <string>
#include <vector>

#include "allot/config.hpp"
#include "allot/result.hpp"
#include "file_checks.hpp"

namespace allot::doctor {

Result<std::string> read_sshd_effective();
// /etc/pam.d/sshd's account lines, includes expanded.
std::string read_pam_account();
inline constexpr const char* kPamSshd = "/etc/pam.d/sshd";

FileFacts file_facts(const std::string& path);
std::vector<LocalId> read_local_ids(const std::string& path);  // /etc/passwd or /etc/group
uint32_t uid_of(const std::string& user);                      // 0 when unknown

std::string read_text(const std::string& path);
// plugstack.conf and slurm.conf as SLURM_CONF names them.
std::string slurm_conf_path();
std::string plugstack_path();

// Files whose replacement by an ordinary user would undo the policy: allot.yaml,
// slurm.conf, plugstack.conf, nsswitch.conf, sshd's config and PAM stack, the
// allot binaries beside this one, the allot-keys of sshd -T, and the installed
// allot plugins and modules found under `plugin_dirs`.
std::vector<std::string> protected_paths(const Config& config, const std::string& sshd_t,
                                         const std::vector<std::string>& plugin_dirs);

}  // namespace allot::doctor
