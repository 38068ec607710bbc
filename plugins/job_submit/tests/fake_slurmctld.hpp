// fake_slurmctld.hpp - the slurmctld side of the plugin ABI, for unit tests.
//
// The test binary defines the internal symbols slurmctld exports to plugins
// (assoc_mgr lookups, acct_db_conn, copy_job_record_to_job_desc, ...) with an
// in-memory QOS/user table, links the real libslurm for the allocator, and is
// linked -rdynamic so a dlopen'ed job_submit_allot.so resolves against it
// exactly as it does inside slurmctld. The real thing is tested in tests/lab.
#pragma once

#include <map>
#include <string>

extern "C" {
#include <slurm/slurm.h>
}

namespace fake_slurmctld {

struct Qos {
    std::string grp_tres;     // e.g. "1001=8"
    std::string max_tres_pa;  // e.g. "1001=4"
    uint32_t max_wall = NO_VAL;
};

inline constexpr uint32_t kGpuTresId = 1001;

void reset();
void add_qos(const std::string& name, Qos qos);
void set_default_account(uint32_t uid, const std::string& account);
void set_operator(uint32_t uid);
// The job that copy_job_record_to_job_desc() returns next (deep-copied with xmalloc).
void set_current_job(const job_desc_msg_t& desc);
// Bumps slurm_conf.last_update as `scontrol reconfigure` does.
void reconfigure();
int lock_depth();  // assoc_mgr locks currently held (must be 0 between calls)

}  // namespace fake_slurmctld
