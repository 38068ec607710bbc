// slurm_snapshot.hpp - one snapshot of slurmctld's job and node tables (libslurm, in-process).
#pragma once

#include "allot/result.hpp"
#include "errors.hpp"
#include "model.hpp"

namespace allot::exporter {

// Three RPCs (slurm_load_jobs, slurm_load_node, slurm_load_partitions), whatever the number of
// scrapers. SlurmctldDown when either gets no answer. Calls slurm_init() once.
Result<Snapshot> take_snapshot();

}  // namespace allot::exporter
