// slurm_reader.hpp - gathers the inputs of the Slurm and accounting checks from
// the live cluster: slurmctld's running configuration and partitions through
// libslurm, slurmdbd's QOS and accounts through `sacctmgr -nP`. Nothing here
// decides anything; tested against the real lab (tests/doctor-lab.sh).
#pragma once

#include "accounting_checks.hpp"
#include "allot/result.hpp"
#include "slurm_checks.hpp"

namespace allot::doctor {

Result<SlurmInputs> read_slurm();
// `syncd_state`: allot-syncd's state file, whose mtime ends its last successful cycle.
Result<AccountingInputs> read_accounting(const std::string& syncd_state);

}  // namespace allot::doctor
