// slurm_checks.hpp - checks of slurmctld's running configuration against what
// the allot policy needs (pure: the inputs come from slurm_reader.hpp).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "allot/config.hpp"
#include "finding.hpp"

namespace allot::doctor {

// slurmctld's configuration as `scontrol show config` names it: key -> value.
using SlurmConf = std::map<std::string, std::string>;

struct Partition {
    std::string name;
    bool is_default = false;
};

// A node as slurmctld has it: what a per-GPU default must fit into.
struct NodeShape {
    std::string name;
    uint32_t cpus = 0;
    uint64_t real_memory_mb = 0;
    uint32_t gpus = 0;
};

struct SlurmInputs {
    SlurmConf conf;
    std::vector<Partition> partitions;
    std::vector<NodeShape> nodes;
    // Slurm 23.02 and later take the preemption user signal in PreemptParameters;
    // older releases only in SlurmctldParameters (the fix line names the right one).
    bool signal_in_preempt_parameters = true;
    // The spot QOS's PreemptMode as slurmdbd has it (lower-case, "cluster" when the
    // QOS defers to slurm.conf); unset when slurmdbd was not read or has no spot QOS.
    std::optional<std::string> spot_preempt_mode;
};

// The items of a comma-separated list, trimmed, lower-cased.
std::vector<std::string> split_list(std::string_view text);
bool list_has(std::string_view text, std::string_view item);

Finding check_accounting_tres(const SlurmConf& conf);
Finding check_accounting_enforce(const SlurmConf& conf);
Finding check_preempt_type(const SlurmConf& conf);
// Spot jobs are requeued on preemption: the mode that applies to the spot QOS
// (its own PreemptMode under preempt/qos, else slurm.conf's) is REQUEUE, and the jobs
// are requeueable (job_submit/allot marks every spot job so; otherwise JobRequeue=1).
Finding check_preempt_mode(const SlurmConf& conf, const std::optional<std::string>& spot_mode,
                           const Config& config);
Finding check_preempt_signal(const SlurmConf& conf, bool signal_in_preempt_parameters);
Finding check_job_submit(const SlurmConf& conf);
Finding check_partition(const std::vector<Partition>& partitions, const Config& config);
// Slurm's own memory and CPU defaults and limits against allot's per-GPU defaults.
Finding check_mem_defaults(const SlurmConf& conf, const Config& config);
// A whole node's GPUs with allot's per-GPU defaults fit the node's memory and CPUs.
Finding check_gpu_defaults_fit(const std::vector<NodeShape>& nodes, const Config& config);
// The GPUs of a node's Gres string ("gpu:8", "gpu:a100:4(S:0-1),gpu:h100:2").
uint32_t gpus_in_gres(std::string_view gres);

// Every Slurm check, in the order of allot-doctor(8).
Findings check_slurm(const SlurmInputs& in, const Config& config);

}  // namespace allot::doctor
