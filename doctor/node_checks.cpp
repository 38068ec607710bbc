// node_checks.cpp - see node_checks.hpp.
#include "node_checks.hpp"

#include <sstream>
#include <vector>

namespace allot::doctor {

namespace {

// The words of the first uncommented line starting with `key:` (sources of an
// nsswitch database), or none.
std::vector<std::string> nss_sources(std::string_view text, const std::string& key)
{
    std::istringstream in{std::string(text)};
    std::string line;
    while (std::getline(in, line)) {
        line = line.substr(0, line.find('#'));
        std::istringstream words(line);
        std::string first;
        if (!(words >> first) || first != key + ":") continue;
        std::vector<std::string> sources;
        for (std::string w; words >> w;) sources.push_back(w);
        return sources;
    }
    return {};
}

bool has_word(const std::vector<std::string>& words, const std::string& w)
{
    for (const std::string& x : words)
        if (x == w) return true;
    return false;
}

}  // namespace

Finding check_node_role(const Config& config)
{
    const char* id = "node.role";
    if (config.node.role != NodeRole::Unset)
        return ok(id, std::string("node.role is ") +
                          (config.node.role == NodeRole::Login ? "login" : "compute"));
    return problem(Severity::Fail, id, "node.role is not set in " + config.source,
                   "pam_allot and allot-keys refuse to decide who may log in while the role "
                   "is unknown.",
                   "add `node:\\n  role: compute` (or `login`) to " + config.source);
}

Findings check_nsswitch(std::string_view nsswitch)
{
    Findings out;
    for (const char* db : {"passwd", "group"}) {
        std::string id = std::string("node.nsswitch.") + db;
        std::vector<std::string> sources = nss_sources(nsswitch, db);
        if (has_word(sources, "allot")) {
            out.push_back(ok(id, std::string("nsswitch.conf ") + db + " uses allot"));
            continue;
        }
        std::string line = std::string(db) + ":";
        for (const std::string& s : sources) line += " " + s;
        if (sources.empty()) line += " files";
        line += " allot";
        out.push_back(problem(Severity::Fail, id,
                              std::string("nsswitch.conf does not use allot for ") + db,
                              "directory users and groups have no UID or GID on this node, so "
                              "their jobs and logins fail.",
                              "set `" + line + "` in /etc/nsswitch.conf"));
    }
    return out;
}

Finding check_plugstack(std::string_view plugstack)
{
    const char* id = "node.plugstack";
    std::istringstream in{std::string(plugstack)};
    std::string line;
    while (std::getline(in, line)) {
        line = line.substr(0, line.find('#'));
        if (line.find("spank_allot") != std::string::npos)
            return ok(id, "plugstack.conf loads spank_allot");
    }
    return problem(Severity::Fail, id, "plugstack.conf does not load spank_allot",
                   "the node's job registry stays empty, so pam_allot refuses SSH to users whose "
                   "jobs run here, and jobs lack the tier variables.",
                   "add `required spank_allot.so` to plugstack.conf");
}

Findings check_node(const NodeInputs& in, const Config& config)
{
    Findings out{check_node_role(config)};
    for (Finding& f : check_nsswitch(in.nsswitch)) out.push_back(std::move(f));
    // Only compute nodes run jobs, so only they need the job registry.
    if (config.node.role == NodeRole::Compute) out.push_back(check_plugstack(in.plugstack));
    return out;
}

}  // namespace allot::doctor
