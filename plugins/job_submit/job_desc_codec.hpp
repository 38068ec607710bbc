// job_desc_codec.hpp - translation between Slurm's job_desc_msg_t and the core's types.
//
// to_request() reads the fields the policy needs; apply_changes() writes a
// decision back, replacing strings with Slurm's allocator because slurmctld
// frees them with xfree(). Both are total: any field content is accepted
// (garbage becomes a GPU request the policy rejects), nothing is dereferenced
// without a null check.
#pragma once

#include "allot/policy.hpp"
#include "compat/slurmctld.hpp"

namespace allot::job_submit {

// `account` is the effective account (job_desc->account or the user's default).
JobRequest to_request(const job_desc_msg_t& desc, const std::string& account);

void apply_changes(const JobChanges& changes, job_desc_msg_t& desc);

// Slurm error code that best names a rejection, for the "…failed: <strerror>" line.
int rejection_code(const Decision& decision);

}  // namespace allot::job_submit
