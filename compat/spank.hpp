// compat/spank.hpp - the SPANK host API (slurmstepd, slurmd, srun) as spank_allot uses it,
// on every Slurm release allot builds against (docs/slurm-versions.md).
//
// spank.h declares its prototypes outside any extern "C" of its own, so it is included
// inside one here. The items spank_allot reads (S_JOB_ID, S_JOB_UID) and the callbacks it
// defines are the same from 22.05 to 26.05; configure fails if a release lacks them
// (m4/allot_slurm.m4). No SPANK item carries the job's QOS in any of these releases, so
// the prolog asks slurmctld with slurm_load_job, looked up at run time.
#pragma once

#include "compat/slurm.hpp"

extern "C" {
#include <slurm/spank.h>
}
