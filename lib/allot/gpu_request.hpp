// gpu_request.hpp - how many GPUs a job asks for, however it asked.
//
// Slurm keeps the GPU options of sbatch/srun as TRES strings in four fields
// (--gpus → tres_per_job, --gres=gpu / --gpus-per-node → tres_per_node,
// --gpus-per-task → tres_per_task, --gpus-per-socket → tres_per_socket), in
// the forms "gres:gpu:4", "gres/gpu:h100:2", "gpu:2" or lists of several
// gres. This turns them, with the job's node/task/socket counts, into the
// smallest total GPU count the job can run with.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "allot/result.hpp"

namespace allot {

// Upper bound on any GPU count we accept; larger numbers are malformed input.
inline constexpr uint64_t kMaxGpuCount = 1000000;

// GPUs named in one TRES string (sum over its gpu entries, any type);
// 0 when it names no GPU. Errors on malformed or absurd input.
Result<uint64_t> gpus_in_tres(std::string_view tres);

struct GpuFields {
    std::string per_job, per_node, per_task, per_socket;  // empty: not given
    std::optional<uint32_t> nodes;                        // min nodes
    std::optional<uint32_t> tasks;                        // total tasks
    std::optional<uint32_t> tasks_per_node;
    std::optional<uint32_t> sockets_per_node;
};

struct GpuCount {
    uint64_t total = 0;  // minimum GPUs the job needs in all
    std::string type;    // "h100" when a type was named, else empty
};

Result<GpuCount> count_gpus(const GpuFields& fields);

}  // namespace allot
