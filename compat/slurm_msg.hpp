// compat/slurm_msg.hpp - owners for the messages libslurm's load calls hand
// back (jobs, nodes, partitions, assoc_mgr, the running configuration), shared
// by every program that reads slurmctld (mylimits, allot-exporter,
// allot-doctor): one deleter per message type, freed with Slurm's own destructor.
#pragma once

#include <memory>

#include "compat/slurm.hpp"

namespace allot::slurm_compat {

struct JobMsgDeleter {
    void operator()(job_info_msg_t* m) const { slurm_free_job_info_msg(m); }
};
using JobMsgPtr = std::unique_ptr<job_info_msg_t, JobMsgDeleter>;

struct NodeMsgDeleter {
    void operator()(node_info_msg_t* m) const { slurm_free_node_info_msg(m); }
};
using NodeMsgPtr = std::unique_ptr<node_info_msg_t, NodeMsgDeleter>;

struct PartitionMsgDeleter {
    void operator()(partition_info_msg_t* m) const { slurm_free_partition_info_msg(m); }
};
using PartitionMsgPtr = std::unique_ptr<partition_info_msg_t, PartitionMsgDeleter>;

struct AssocMgrMsgDeleter {
    void operator()(assoc_mgr_info_msg_t* m) const { slurm_free_assoc_mgr_info_msg(m); }
};
using AssocMgrMsgPtr = std::unique_ptr<assoc_mgr_info_msg_t, AssocMgrMsgDeleter>;

struct CtlConfDeleter {
#ifdef HAVE_SLURM_FREE_CONF
    void operator()(slurm_conf_t* c) const { slurm_free_conf(c); }  // 26.05's name
#else
    void operator()(slurm_conf_t* c) const { slurm_free_ctl_conf(c); }
#endif
};
using CtlConfPtr = std::unique_ptr<slurm_conf_t, CtlConfDeleter>;

}  // namespace allot::slurm_compat
