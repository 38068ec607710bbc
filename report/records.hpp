// records.hpp - one run of a job as slurmdbd keeps it, and the GPU count it allocated.
//
// slurmdbd keeps one record per run: a requeued job has one per start, each array task
// and each het component its own. The reader (slurmdb_reader.*) turns libslurm's records
// into RunRecords; everything after that is pure and unit-tested.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace allot::report {

inline constexpr uint32_t kNoIndex = 0xfffffffe;  // Slurm's NO_VAL: not an array task / het part

// How a run ended (Running while it has no end yet). Preempted and Requeued are the runs
// whose GPU time a spot job lost.
enum class RunEnd {
    Running,
    Completed,
    Failed,
    Cancelled,
    Timeout,
    Preempted,
    Requeued,
    NodeFail,
    OutOfMemory,
    Other
};

struct RunRecord {
    uint32_t job_id = 0;
    uint32_t array_job_id = 0;  // 0: not an array task
    uint32_t array_task_id = kNoIndex;
    uint32_t het_job_id = 0;  // 0: not a het component
    uint32_t het_offset = kNoIndex;
    std::string account;
    std::string qos;
    std::string user;
    int64_t start = 0;           // 0: never started (no GPU time)
    std::optional<int64_t> end;  // none: still running
    uint32_t gpus = 0;           // allocated untyped gres/gpu
    RunEnd state = RunEnd::Other;
};

// Slurm's state names (sacct's words: "PREEMPTED", "REQUEUED", "CANCELLED by 0"...).
RunEnd run_end_from_name(std::string_view name);
const char* run_end_name(RunEnd state);
bool lost_to_preemption(RunEnd state);

// slurmdbd's TRES ids (slurmdb_tres_get): 1=cpu, 1001=gres/gpu, 1002=gres/gpu:a100 ...
class TresTable {
public:
    void add(uint32_t id, std::string type, std::string name);
    // The id of untyped "gres/gpu"; none when the cluster does not account GPUs.
    std::optional<uint32_t> gpu_id() const;
    std::string name_of(uint32_t id) const;

private:
    std::map<uint32_t, std::string> names_;  // "gres/gpu", "gres/gpu:a100", "cpu"
};

// The untyped GPU count of a TRES string of ids ("1=4,4=1,1001=2,1002=2" gives 2 when
// 1001 is gres/gpu): typed entries describe the same GPUs and are never added on top.
uint64_t untyped_gpus(std::string_view tres_ids, uint32_t gpu_id);
// The same for a TRES string of names, as sacct prints AllocTRES
// ("cpu=4,gres/gpu:a100=2,gres/gpu=2,mem=8G").
uint64_t untyped_gpus_named(std::string_view tres_names);

// Each run once: a record fetched twice (the same job id and start) counts once.
std::vector<RunRecord> distinct_runs(std::vector<RunRecord> runs);

}  // namespace allot::report
