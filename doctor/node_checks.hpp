// node_checks.hpp - checks of the node's own files (pure: the texts are read by
// main.cpp; a file that cannot be read is passed as empty).
#pragma once

#include <string>
#include <string_view>

#include "allot/config.hpp"
#include "finding.hpp"

namespace allot::doctor {

struct NodeInputs {
    std::string nsswitch;   // /etc/nsswitch.conf
    std::string plugstack;  // plugstack.conf beside slurm.conf
};

Finding check_node_role(const Config& config);
Findings check_nsswitch(std::string_view nsswitch);
Finding check_plugstack(std::string_view plugstack);

Findings check_node(const NodeInputs& in, const Config& config);

}  // namespace allot::doctor
