// node_table.hpp - the shape of the governed partition's nodes, from slurm.conf.
//
// slurmctld builds its node table from the NodeName and PartitionName lines of
// slurm.conf and the files it Includes; the records themselves are private to
// slurmctld, so the plugin reads the same lines at init and at every `scontrol
// reconfigure` (never on the submit path) and keeps what the policy needs: the
// largest GPU node (for --exclusive and for node counts implied by tasks) and the
// smallest per-GPU share of memory and CPUs (so per-GPU defaults always fit on a
// node). Nodes created at run time (`scontrol create node`, dynamic slurmd) are in
// no file and so not seen.
#pragma once

#include <functional>
#include <optional>
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

// The text of a file; nullopt when it cannot be read.
using FileReader = std::function<std::optional<std::string>(const std::string& path)>;

// Where slurmctld looks for a relative `Include` name: up to 22.05 in the directory of
// the file holding the line; from 23.02 in slurm.conf's directory, at any depth.
enum class IncludeBase { IncludingFile, SlurmConfDir };

// slurm.conf at `conf_path` as slurmctld parses it: comments removed ("\#" is a '#'),
// backslash-continued lines joined, and each `Include NAME` line (the keyword in any case)
// replaced by NAME's lines, recursively. NAME's "%c" is the lower-cased ClusterName set
// above it; a NAME with '*' is skipped (Slurm expands no globs); an unreadable file is
// skipped (slurmctld itself refuses to start without it). Nesting stops at 16 levels.
std::string conf_text_with_includes(const std::string& conf_path, IncludeBase base,
                                    const FileReader& read);

// Reads `path` (slurmctld's slurm.conf, with its Includes); {} when unreadable.
NodeShape read_node_shape(const std::string& path, const std::string& partition, IncludeBase base);

}  // namespace allot::job_submit
