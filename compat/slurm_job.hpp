// compat/slurm_job.hpp - a job record as slurm_load_jobs hands it back,
// translated to the core's GPU request fields: one translation for every
// program that counts a queued job's GPUs (mylimits, allot-exporter).
#pragma once

#include "allot/gpu_request.hpp"
#include "compat/slurm.hpp"

namespace allot::slurm_compat {

inline GpuFields gpu_fields_of(const slurm_job_info_t& j)
{
    auto str = [](const char* s) { return std::string(s ? s : ""); };
    GpuFields g;
    g.per_job = str(j.tres_per_job);
    g.per_node = str(j.tres_per_node);
    g.per_task = str(j.tres_per_task);
    g.per_socket = str(j.tres_per_socket);
    if (j.num_nodes && j.num_nodes != NO_VAL) g.nodes = j.num_nodes;
    if (j.num_tasks && j.num_tasks != NO_VAL) g.tasks = j.num_tasks;
    return g;
}

}  // namespace allot::slurm_compat
