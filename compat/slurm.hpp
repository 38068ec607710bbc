// compat/slurm.hpp - libslurm's client API (slurm.h, slurmdb.h) as allot uses it, on every
// Slurm release allot builds against (docs/slurm-versions.md).
//
// The only place that reads configure's Slurm probes for the client API (config.h, decided
// in m4/allot_slurm.m4 against the headers in use) and the only declarations of functions
// libslurm exports without declaring them in its installed headers. syncd, mylimits and
// the plugins include this instead of <slurm/...> directly.
#pragma once

#include "config.h"

#include <sys/types.h>
#include <cerrno>
#include <cstdint>
#include <string>

extern "C" {
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <slurm/slurmdb.h>

#ifndef HAVE_LIST_T
// Before 23.11 the same handles were called List and ListIterator (pointer typedefs).
typedef struct xlist list_t;
typedef struct listIterator list_itr_t;
#endif

// Exported by libslurm (src/common/bitstring.h, slurm_xlator.h) in every release since
// 20.11, never installed. bit_test returns int in all of them.
int slurm_bit_test(bitstr_t* b, bitoff_t bit);
bitoff_t slurm_bit_size(bitstr_t* b);

// src/common/xmalloc.h, xstring.h: what Slurm frees must come from Slurm's allocator.
void slurm_xfree(void** ptr);
char* slurm_xstrdup(const char* str);

// src/common/slurm_protocol_defs.h: the words squeue prints for a job state.
char* slurm_job_state_string(uint32_t inx);
#ifdef HAVE_SLURM_JOB_STATE_REASON_STRING
// 23.11 and later: src/common/job_state_reason.h.
const char* slurm_job_state_reason_string(enum job_state_reason inx);
#else
char* slurm_job_reason_string(enum job_state_reason inx);
#endif
}

namespace allot::slurm_compat {

// Behaviours that changed without an API change, so no header probe can see them; the one
// place allot reads the release number for them.
// slurm.conf names the user signal on preemption PreemptParameters=send_user_signal from
// 23.02 (SlurmctldParameters=preempt_send_user_signal before).
inline constexpr bool kUserSignalInPreemptParameters =
    SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 2, 0);
// A relative Include in slurm.conf is resolved against slurm.conf's directory from 23.02
// (against the including file's directory before).
inline constexpr bool kIncludeRelativeToSlurmConf =
    SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 2, 0);

// The error of the last failed libslurm call (slurm_get_errno() was removed in 24.05).
inline int last_errno()
{
#ifdef HAVE_SLURM_GET_ERRNO
    return slurm_get_errno();
#else
    return errno;
#endif
}

// The words squeue prints for a pending job's reason ("Priority", "QOSMaxGRESPerUser").
inline const char* job_reason_string(enum job_state_reason reason)
{
#ifdef HAVE_SLURM_JOB_STATE_REASON_STRING
    return slurm_job_state_reason_string(reason);
#else
    return slurm_job_reason_string(reason);
#endif
}

// The job a job_desc_msg_t describes (26.05 replaced its job_id with a slurm_step_id_t).
inline uint32_t job_desc_job_id(const job_desc_msg_t& desc)
{
#ifdef HAVE_JOB_DESC_STEP_ID
    return desc.step_id.job_id;
#else
    return desc.job_id;
#endif
}

// slurm_load_job() as a pointer (the SPANK prolog resolves it at run time), and one job's
// load through it: 26.05 takes a slurm_step_id_t where older releases take the job id.
#ifdef HAVE_SLURM_LOAD_JOB_STEP_ID
using LoadJobFn = int (*)(job_info_msg_t**, slurm_step_id_t, uint16_t);
#else
using LoadJobFn = int (*)(job_info_msg_t**, uint32_t, uint16_t);
#endif

inline int load_job(LoadJobFn fn, job_info_msg_t** resp, uint32_t job_id, uint16_t show_flags)
{
#ifdef HAVE_SLURM_LOAD_JOB_STEP_ID
    slurm_step_id_t id{};  // what SLURM_STEP_ID_INITIALIZER (a C compound literal) sets
    id.job_id = job_id;
    id.step_het_comp = NO_VAL;
    id.step_id = NO_VAL;
    return fn(resp, id, show_flags);
#else
    return fn(resp, job_id, show_flags);
#endif
}

// The TRES allocated on a node, as scontrol shows AllocTRES ("" when none): up to 25.11 in
// the node's opaque select data, from 26.05 a field of node_info_t.
inline std::string node_alloc_tres(const node_info_t& node)
{
#ifdef HAVE_NODE_INFO_ALLOC_TRES
    return node.alloc_tres_fmt_str ? node.alloc_tres_fmt_str : "";
#else
    char* alloc = nullptr;
    if (!node.select_nodeinfo ||
        slurm_get_select_nodeinfo(node.select_nodeinfo, SELECT_NODEDATA_TRES_ALLOC_FMT_STR,
                                  NODE_STATE_ALLOCATED, &alloc) != SLURM_SUCCESS ||
        !alloc)
        return "";
    std::string out(alloc);
    slurm_xfree(reinterpret_cast<void**>(&alloc));
    return out;
#endif
}

}  // namespace allot::slurm_compat
