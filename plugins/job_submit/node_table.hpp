// node_table.hpp - the shape of the governed partition's nodes, from slurm.conf.
//
// slurmctld builds its node table from the NodeName and PartitionName lines of
// slurm.conf; the records themselves are private to slurmctld, so the plugin
// reads the same lines at init and at every `scontrol reconfigure` (never on
// the submit path) and keeps what the policy needs: the largest GPU node (for
// --exclusive and for node counts implied by tasks) and the smallest per-GPU
// share of memory and CPUs (so per-GPU defaults always fit on a node).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "allot/gpu_request.hpp"

namespace allot::job_submit {

// Expands a Slurm hostlist expression ("n[1-4],gpu7") to node names.
using HostlistExpander = std::function<std::vector<std::string>(const std::string&)>;

// The nodes of `partition` (every node when it is empty or not found) as
// described by the slurm.conf text `conf`.
NodeShape node_shape_from_conf(std::string_view conf, const std::string& partition,
                               const HostlistExpander& expand);

// Slurm's hostlist forms "n[01-04,7]x,gpu9" expanded to names.
std::vector<std::string> expand_hostlist(const std::string& expression);

// Reads `path` (slurmctld's slurm.conf); {} when unreadable.
NodeShape read_node_shape(const std::string& path, const std::string& partition);

}  // namespace allot::job_submit
