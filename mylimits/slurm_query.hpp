// slurm_query.hpp - what mylimits asks Slurm, behind an interface.
//
// LibSlurmQuery is the real thing: slurmctld's association manager
// (slurm_load_assoc_mgr_info: the user record, associations, QOS limits and
// live usage, the cache slurmctld enforces from) and the user's own jobs
// (slurm_load_job_user); slurmdbd (slurmdb_connection_get + slurmdb_*_get) only
// when slurmctld does not know the user, or when MYLIMITS_SOURCE=slurmdbd asks
// for a cross-check. Every call fetches only what concerns one user, so the cost
// does not grow with the queue, and each is one the user may make under
// PrivateData. Unit tests use a fake (tests/fakes.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "allot/result.hpp"
#include "errors.hpp"
#include "limits.hpp"

namespace allot::mylimits {

struct SlurmFacts {
    limits::UserFacts user;
    std::vector<limits::AssocFacts> assocs;
    std::vector<limits::QosFacts> qos;
    std::vector<limits::JobFacts> jobs;
    std::vector<std::string> notes;
};

class SlurmQuery {
public:
    virtual ~SlurmQuery() = default;
    // Slurm administrator level of `user` ≥ Operator (sacctmgr AdminLevel);
    // SlurmctldDown when slurmctld does not answer.
    virtual Result<bool> is_operator(const std::string& user) = 0;
    // Everything about `user` (uid for the job query) in `cluster`: every QOS,
    // since association QOS lists and Preempt= name QOS by id. Fails only when
    // a daemon is unreachable (SlurmctldDown, SlurmdbdDown).
    virtual Result<SlurmFacts> fetch(const std::string& user, uint32_t uid,
                                     const std::string& cluster) = 0;
};

// The libslurm implementation (slurm_query.cpp). Calls slurm_init() once.
std::unique_ptr<SlurmQuery> make_libslurm_query();

}  // namespace allot::mylimits
