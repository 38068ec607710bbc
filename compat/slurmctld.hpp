// slurm_compat.hpp - Slurm's C headers and the slurmctld internals the plugin uses.
//
// The only file of the job_submit plugin that knows about Slurm releases.
// Public headers are included inside extern "C" (spank.h declares its
// prototypes outside its own block). The internal symbols below are not in any
// installed header; they are exported by libslurmfull.so and the slurmctld
// binary and resolve when slurmctld loads the plugin. Their declarations
// follow src/common/assoc_mgr.h and src/slurmctld/*.h of the releases listed
// in docs/slurm-versions.md; configure decides the few that differ.
#pragma once

#include "config.h"

#include <sys/types.h>
#include <cstdint>

extern "C" {
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <slurm/slurmdb.h>
#include <slurm/spank.h>  // slurm_info/slurm_error prototypes

// slurmctld's job record is opaque to us: we only pass the pointer back.
struct job_record;
typedef struct job_record job_record_t;

// src/common/xmalloc.h, xstring.h: what slurmctld frees must come from here.
void slurm_xfree(void** ptr);
char* slurm_xstrdup(const char* str);

// src/common/assoc_mgr.h
typedef enum { ALLOT_NO_LOCK, ALLOT_READ_LOCK, ALLOT_WRITE_LOCK } allot_lock_level_t;
typedef struct {
    allot_lock_level_t assoc, file, qos, res, tres, user, wckey;
} allot_assoc_mgr_lock_t;
void assoc_mgr_lock(allot_assoc_mgr_lock_t* locks);
void assoc_mgr_unlock(allot_assoc_mgr_lock_t* locks);
int assoc_mgr_fill_in_user(void* db_conn, slurmdb_user_rec_t* user, int enforce,
                           slurmdb_user_rec_t** user_pptr, bool locked);
int assoc_mgr_fill_in_qos(void* db_conn, slurmdb_qos_rec_t* qos, int enforce,
                          slurmdb_qos_rec_t** qos_pptr, bool locked);
int assoc_mgr_find_tres_pos(slurmdb_tres_rec_t* tres_rec, bool locked);
extern slurmdb_tres_rec_t** assoc_mgr_tres_array;

// src/common/read_config.h: last_update changes on every `scontrol reconfigure`.
extern slurm_conf_t slurm_conf;

// slurmctld (exported with -rdynamic)
extern void* acct_db_conn;
extern uint16_t accounting_enforce;
job_desc_msg_t* copy_job_record_to_job_desc(job_record_t* job_ptr);
bool validate_operator(uid_t uid);
void slurm_free_job_desc_msg(job_desc_msg_t* msg);
}

// Owner of what copy_job_record_to_job_desc() returns. Its environment is one
// xmalloc'ed block of strings plus the pointer array (see get_job_env()), so it
// is released the way slurmctld's own fed_mgr.c does before the generic free;
// slurm_free_job_desc_msg() alone would free every string: a double free.
struct CopiedJobDescDeleter {
    void operator()(job_desc_msg_t* desc) const
    {
        if (!desc) return;
        if (desc->environment) {
            slurm_xfree(reinterpret_cast<void**>(&desc->environment[0]));
            slurm_xfree(reinterpret_cast<void**>(&desc->environment));
            desc->env_size = 0;
        }
        slurm_free_job_desc_msg(desc);
    }
};

// The TRES prefix Slurm uses in job_desc GPU fields ("gres:gpu:4" in 22.05,
// "gres/gpu:4" from 23.02 on); we read both and write the native one.
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 2, 0)
#define ALLOT_GPU_TRES_PREFIX "gres/gpu:"
#else
#define ALLOT_GPU_TRES_PREFIX "gres:gpu:"
#endif
