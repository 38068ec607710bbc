// compat/slurmctld.hpp - the slurmctld host API of job_submit/allot: the job_submit plugin
// entry points and the slurmctld internals the plugin uses, on every Slurm release allot
// builds against (docs/slurm-versions.md).
//
// The only file of the job_submit plugin that knows about Slurm releases: it reads
// configure's probes (config.h, from m4/allot_slurm.m4). The internal symbols below are in
// no installed header; they are exported by libslurmfull.so and the slurmctld binary and
// resolve when slurmctld loads the plugin. Their declarations follow src/common/assoc_mgr.h,
// src/slurmctld/slurmctld.h and src/interfaces/job_submit.c, identical from 22.05 to 26.05
// except where a probe decides.
#pragma once

#include <string>

#include "compat/slurm.hpp"

extern "C" {
#include <slurm/spank.h>  // slurm_info/slurm_error prototypes

// slurmctld's job record is opaque to us: we only pass the pointer back.
struct job_record;
typedef struct job_record job_record_t;

// src/common/assoc_mgr.h (the lock struct and lock levels are the same in 22.05-26.05)
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
extern struct xlist* assoc_mgr_assoc_list;  // of slurmdb_assoc_rec_t (assoc lock)

// src/common/read_config.h: last_update changes on every `scontrol reconfigure`.
extern slurm_conf_t slurm_conf;

// slurmctld (exported with -rdynamic)
extern void* acct_db_conn;
extern uint16_t accounting_enforce;
job_desc_msg_t* copy_job_record_to_job_desc(job_record_t* job_ptr);
bool validate_operator(uid_t uid);
void slurm_free_job_desc_msg(job_desc_msg_t* msg);
}

// job_modify(), as slurmctld calls it (src/interfaces/job_submit.c). From 23.02 it takes
// `char **err_msg`, which slurmctld returns to `scontrol update`; before, a refusal could
// only be logged. The plugin defines it with ALLOT_JOB_MODIFY_PARAMS and passes
// ALLOT_JOB_MODIFY_ERR_MSG (nullptr where the release has none) to its implementation.
#ifdef HAVE_JOB_MODIFY_ERR_MSG
#define ALLOT_JOB_MODIFY_PARAMS \
    job_desc_msg_t *desc, job_record_t *job_ptr, uint32_t submit_uid, char **err_msg
#define ALLOT_JOB_MODIFY_ERR_MSG err_msg
#else
#define ALLOT_JOB_MODIFY_PARAMS job_desc_msg_t *desc, job_record_t *job_ptr, uint32_t submit_uid
#define ALLOT_JOB_MODIFY_ERR_MSG nullptr
#endif

namespace allot::slurm_compat {

// A job_desc tres_per_* field as the gres list the core reads ("gres/gpu:1,cpu:2").
// slurmctld and its clients write each entry as name:count (22.05, and every field but
// tres_per_task later) or, in tres_per_task from 24.05 on, in TRES form name=count
// ("gres/gpu=1,cpu=2", see slurm_option_update_tres_per_task()); both name the same count.
inline std::string gres_list(const char* tres)
{
    std::string out = tres ? tres : "";
    for (char& c : out)
        if (c == '=') c = ':';
    return out;
}

// The node maximum a job asks for (NO_VAL: none). From 26.05 slurmctld gives a job
// submitted without -N an implicit maximum of one node per task (flagged
// JOB_IMPLICIT_MAX_NODES, after job_submit) and schedules it on its minimum, as earlier
// releases do; a record read back for job_modify is counted as the job was submitted.
inline uint32_t requested_max_nodes(const job_desc_msg_t& desc)
{
#ifdef HAVE_JOB_IMPLICIT_MAX_NODES
    if (desc.bitflags & JOB_IMPLICIT_MAX_NODES) return NO_VAL;
#endif
    return desc.max_nodes;
}

constexpr bool kJobModifyHasErrMsg =
#ifdef HAVE_JOB_MODIFY_ERR_MSG
    true;
#else
    false;
#endif

// What a loader (the tests) needs to call job_modify() through dlsym on any release.
#ifdef HAVE_JOB_MODIFY_ERR_MSG
using JobModifyFn = int (*)(job_desc_msg_t*, job_record_t*, uint32_t, char**);
inline int call_job_modify(JobModifyFn fn, job_desc_msg_t* desc, job_record_t* job, uint32_t uid,
                           char** err_msg)
{
    return fn(desc, job, uid, err_msg);
}
#else
using JobModifyFn = int (*)(job_desc_msg_t*, job_record_t*, uint32_t);
inline int call_job_modify(JobModifyFn fn, job_desc_msg_t* desc, job_record_t* job, uint32_t uid,
                           char** /*err_msg: none before 23.02*/)
{
    return fn(desc, job, uid);
}
#endif

}  // namespace allot::slurm_compat

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

// ALLOT_GPU_TRES_PREFIX (config.h): the TRES prefix slurmctld uses in job_desc GPU fields
// ("gres:gpu:4" in 22.05, "gres/gpu:4" from 23.02 on); the codec reads both, writes this.
