// compat/slurmdb.hpp - slurmdbd's accounting records through libslurm's slurmdb API, as
// allot-report reads them: one owned connection, and the few libslurm globals the
// installed headers leave undeclared.
#pragma once

#include <cstdint>

#include "compat/slurm.hpp"

extern "C" {
// src/common/read_config.c: the parsed slurm.conf after slurm_init(), exported by libslurm
// in every release since 20.11 and never declared in the installed headers. Read-only here
// (the cluster name allot-report asks slurmdbd about).
extern slurm_conf_t slurm_conf;
}

namespace allot::slurm_compat {

// One persistent slurmdbd connection, closed once.
class DbConnection {
public:
    DbConnection()
    {
        uint16_t flags = 0;
        conn_ = slurmdb_connection_get(&flags);
    }
    ~DbConnection()
    {
        if (conn_) slurmdb_connection_close(&conn_);
    }
    DbConnection(const DbConnection&) = delete;
    DbConnection& operator=(const DbConnection&) = delete;
    void* get() const { return conn_; }

private:
    void* conn_ = nullptr;
};

// The cluster this host's slurm.conf names (ClusterName); empty before slurm_init().
inline const char* local_cluster_name()
{
    return slurm_conf.cluster_name ? slurm_conf.cluster_name : "";
}

// Ask slurmdbd for deleted QOS too (old runs name QOS removed since).
inline void include_deleted(slurmdb_qos_cond_t& cond)
{
#ifdef HAVE_QOS_COND_FLAGS
    cond.flags |= QOS_COND_FLAG_WITH_DELETED;
#else
    cond.with_deleted = 1;
#endif
}

// Job query flags: every run record of a requeued job (JOBCOND_FLAG_DUP), without steps
// (a job's allocation is counted once, never again per step), times as slurmdbd stored
// them (the report cuts them to its window itself).
inline constexpr uint32_t kEveryRunNoSteps =
    JOBCOND_FLAG_DUP | JOBCOND_FLAG_NO_STEP | JOBCOND_FLAG_NO_TRUNC;

}  // namespace allot::slurm_compat
