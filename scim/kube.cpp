// kube.cpp - see kube.hpp.
#include "kube.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace allot::scimd {
namespace {

// Values here are validated names and numbers, but quote them anyway: YAML
// would read "no", "1e3" or "on" as something else.
std::string q(const std::string& s)
{
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}

}  // namespace

std::string render_team_yaml(const TeamConfig& team, const Config& config)
{
    const KubernetesQuota& k = *team.kubernetes;
    const std::string ns = k.namespace_name.empty() ? team.account : k.namespace_name;
    std::ostringstream y;
    y << "# Rendered by allot-scimd render-kube from "
      << (config.source.empty() ? "allot.yaml" : config.source) << " (team " << team.group
      << "). Do not edit: change the config and re-render.\n";
    y << "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: " << q(ns) << "\n  labels:\n"
      << "    app.kubernetes.io/managed-by: \"allot\"\n    allot.io/team: " << q(team.group)
      << "\n";
    y << "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n"
      << "  name: \"allot-team-edit\"\n  namespace: " << q(ns) << "\n  labels:\n"
      << "    app.kubernetes.io/managed-by: \"allot\"\nroleRef:\n"
      << "  apiGroup: \"rbac.authorization.k8s.io\"\n  kind: \"ClusterRole\"\n  name: \"edit\"\n"
      << "subjects:\n  - apiGroup: \"rbac.authorization.k8s.io\"\n    kind: \"Group\"\n    name: "
      << q(config.oidc.group_prefix + team.group) << "\n";
    y << "---\napiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: \"allot-team-quota\"\n"
      << "  namespace: " << q(ns) << "\n  labels:\n    app.kubernetes.io/managed-by: \"allot\"\n"
      << "spec:\n  hard:\n"
      << "    requests.nvidia.com/gpu: " << q(std::to_string(k.gpus)) << "\n";
    if (k.cpus) {
        y << "    requests.cpu: " << q(std::to_string(k.cpus)) << "\n";
        y << "    limits.cpu: " << q(std::to_string(k.cpus)) << "\n";
    }
    if (k.memory_mb) {
        y << "    requests.memory: " << q(std::to_string(k.memory_mb) + "Mi") << "\n";
        y << "    limits.memory: " << q(std::to_string(k.memory_mb) + "Mi") << "\n";
    }
    return y.str();
}

Result<std::vector<std::string>> render_kube_files(const Config& config, const std::string& out_dir)
{
    if (mkdir(out_dir.c_str(), 0755) != 0 && errno != EEXIST)
        return make_error(out_dir + ": " + std::strerror(errno));
    std::vector<std::string> written;
    for (const auto& team : config.teams) {
        if (!team.kubernetes) continue;
        const std::string ns = team.kubernetes->namespace_name.empty()
                                   ? team.account
                                   : team.kubernetes->namespace_name;
        const std::string path = out_dir + "/" + ns + ".yaml";
        {
            std::ofstream out(path + ".tmp", std::ios::trunc);
            out << render_team_yaml(team, config);
            if (!out) return make_error(path + ": cannot write");
        }
        if (std::rename((path + ".tmp").c_str(), path.c_str()) != 0)
            return make_error(path + ": " + std::strerror(errno));
        written.push_back(path);
    }
    return written;
}

}  // namespace allot::scimd
