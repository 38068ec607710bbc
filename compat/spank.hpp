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

#include <dlfcn.h>

namespace allot::slurm_compat {

// From 24.05 a libslurm RPC needs the auth, hash and (24.11) TLS plugins loaded, which
// slurm_init() does. slurmstepd's spank prolog process loads none of them: there the first
// RPC is fatal on 24.11 ("No hash plugins loaded", from auth.c) and a segfault on 26.05,
// the prolog fails and slurmd drains the node. slurm_init() would also start plugins a
// prolog must not (accounting storage), so only auth_g_init(), hash_g_init() and
// tls_g_init() are called: libslurmfull's, undeclared, idempotent, resolved at run time
// like slurm_load_job (22.05 needs none; where a name is missing it is skipped).
// False when one exists and failed.
inline bool load_rpc_plugins()
{
    using InitFn = int (*)();
    for (const char* name : {"auth_g_init", "hash_g_init", "tls_g_init", "conn_g_init"}) {
        auto init = reinterpret_cast<InitFn>(dlsym(RTLD_DEFAULT, name));
        if (init && init() != SLURM_SUCCESS) return false;
    }
    return true;
}

}  // namespace allot::slurm_compat
