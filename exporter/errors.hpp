// errors.hpp - the exporter error area: why a snapshot or the daemon's start failed.
#pragma once

#include "allot/result.hpp"

namespace allot::exporter {

enum class Errc {
    Ok = 0,
    Usage,          // bad command line
    Config,         // allot.yaml missing or invalid
    SlurmctldDown,  // slurm_load_jobs/slurm_load_node got no answer
    Listen,         // the HTTP port could not be bound
};

}  // namespace allot::exporter

ALLOT_ERROR_AREA(allot::exporter, Errc);
