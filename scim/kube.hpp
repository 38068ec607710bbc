// kube.hpp - Kubernetes objects per team, as YAML for a GitOps tool.
//
// For each team with a `kubernetes:` block: a Namespace, a RoleBinding that
// grants ClusterRole "edit" to the team's group (named as the API server will
// see it: oidc.group_prefix + group, since tokens carry bare names), and a
// ResourceQuota for requests.nvidia.com/gpu, cpu and memory. Output is stable
// (fixed key order, no timestamps) so re-rendering an unchanged config is a
// no-op diff. One file per team: <namespace>.yaml.
#pragma once

#include <string>
#include <vector>

#include "allot/config.hpp"

namespace allot::scimd {

std::string render_team_yaml(const TeamConfig& team, const Config& config);
Result<std::vector<std::string>> render_kube_files(const Config& config,
                                                   const std::string& out_dir);

}  // namespace allot::scimd
