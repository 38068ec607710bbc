// gpu_request.hpp - how many GPUs a job will hold, however it asked.
//
// Slurm keeps the GPU options of sbatch/srun/salloc as TRES strings in four
// fields (--gpus → tres_per_job, --gres=gpu / --gpus-per-node → tres_per_node,
// --gpus-per-task → tres_per_task, --gpus-per-socket → tres_per_socket), in
// the forms "gres:gpu:4", "gres/gpu:h100:2", "gpu:2" or lists of several gres.
// GPUs can also be implied without any of them: --ntasks-per-gpu with a task
// count, and --exclusive on a node that has GPUs (the job holds them all).
// count_gpus() is the one place that turns all of it, with the job's node,
// task and socket counts and the shape of the partition's nodes, into the GPUs
// the job will hold, counted the way slurmctld counts them (see
// docs/policy.md, "How GPUs are counted"; checked against slurmctld by
// plugins/job_submit/tests/lab-differential.sh).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "allot/result.hpp"

namespace allot {

// Upper bound on any GPU count we accept; larger numbers are malformed input.
inline constexpr uint64_t kMaxGpuCount = 1000000;

// GPUs named in one TRES string, counted as slurmctld does: a repeated entry
// of the same GPU type counts its largest count ("gpu:9,gpu:2" is 9),
// different types add up ("gpu:a100:1,gpu:h100:2" is 3), and typed and
// untyped entries name the same GPUs once (the larger of the two). 0 when it
// names no GPU. Errors on malformed or absurd input.
Result<uint64_t> gpus_in_tres(std::string_view tres);

// What a node of the governed partition offers: the largest GPU node (for
// --exclusive and node counts implied by tasks) and the smallest per-GPU share
// (for per-GPU defaults). Zeros when slurmctld's node table was not read.
struct NodeShape {
    uint32_t gpus = 0;            // GPUs of the largest GPU node
    uint32_t cpus = 0;            // CPUs of the largest node
    uint32_t cpus_per_gpu = 0;    // smallest CPUs/GPUs over GPU nodes
    uint64_t mem_per_gpu_mb = 0;  // smallest RealMemory/GPUs over GPU nodes
};

struct GpuFields {
    std::string per_job, per_node, per_task, per_socket;  // empty: not given
    std::optional<uint32_t> nodes;                        // min nodes
    std::optional<uint32_t> max_nodes;                    // -N min-max: counted at max
    std::optional<uint32_t> tasks;                        // total tasks
    std::optional<uint32_t> tasks_per_node;
    std::optional<uint32_t> sockets_per_node;
    std::optional<uint32_t> tasks_per_socket;
    std::optional<uint32_t> cpus_per_task;
    std::optional<uint32_t> tasks_per_gpu;  // --ntasks-per-gpu (ntasks_per_tres)
    bool exclusive = false;                 // --exclusive (whole nodes)
    NodeShape node;
};

struct GpuCount {
    uint64_t total = 0;  // GPUs the job will hold in all
    uint64_t nodes = 1;  // nodes the count assumes
    std::string type;    // "h100" when a type was named, else empty
};

Result<GpuCount> count_gpus(const GpuFields& fields);
// The same with the node shape given apart (the policy's, read once per decision).
Result<GpuCount> count_gpus(const GpuFields& fields, const NodeShape& node);

}  // namespace allot
