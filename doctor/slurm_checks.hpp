// slurm_checks.hpp - checks of slurmctld's running configuration against what
// the allot policy needs (pure: the inputs come from slurm_reader.hpp).
#pragma once

#include <map>
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

struct SlurmInputs {
    SlurmConf conf;
    std::vector<Partition> partitions;
    // Slurm 23.02 and later take the preemption user signal in PreemptParameters;
    // older releases only in SlurmctldParameters (the fix line names the right one).
    bool signal_in_preempt_parameters = true;
};

// The items of a comma-separated list, trimmed, lower-cased.
std::vector<std::string> split_list(std::string_view text);
bool list_has(std::string_view text, std::string_view item);

Finding check_accounting_tres(const SlurmConf& conf);
Finding check_accounting_enforce(const SlurmConf& conf);
Finding check_preempt_type(const SlurmConf& conf);
Finding check_preempt_mode(const SlurmConf& conf);
Finding check_preempt_signal(const SlurmConf& conf, bool signal_in_preempt_parameters);
Finding check_job_submit(const SlurmConf& conf);
Finding check_partition(const std::vector<Partition>& partitions, const Config& config);

// Every Slurm check, in the order of allot-doctor(8).
Findings check_slurm(const SlurmInputs& in, const Config& config);

}  // namespace allot::doctor
