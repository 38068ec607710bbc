// model.hpp - the pure part of allot-exporter: a snapshot of slurmctld's jobs and
// nodes, plus allot.yaml, turned into Prometheus metric families.
//
// The Slurm side (slurm_snapshot.cpp) fills a Snapshot once per interval;
// Accumulator keeps what must survive between snapshots (the GPU-seconds and
// preemption counters); families() builds every metric; render() writes them
// in the Prometheus text format 0.0.4 or OpenMetrics 1.0. Labels are bounded:
// team (allot.yaml teams, or "none"), tier, partition and reason (a fixed set
// of words) - never a user or a job id. Nothing here touches Slurm, sockets or
// the clock, so every number is unit-tested (tests/model_test.cpp).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "allot/config.hpp"
#include "allot/policy.hpp"

namespace allot::exporter {

// One job as slurmctld's job table has it.
struct JobSample {
    uint32_t job_id = 0;  // kept in the Accumulator between snapshots, never a label
    std::string state;    // base state name: PENDING, RUNNING, SUSPENDED, COMPLETED, PREEMPTED...
    std::string reason;   // Slurm's reason name (QOSGrpGRES, Priority, ... "None")
    std::string account;
    std::string qos;
    std::string partition;
    uint64_t gpus = 0;  // allocated when running, requested when pending
    uint32_t restarts = 0;
    int64_t start_time = 0;   // unix seconds (0: not started)
    int64_t end_time = 0;     // unix seconds (0: not ended)
    int64_t submit_time = 0;  // unix seconds; Slurm resets it when a requeue completes
};

// One node as slurmctld's node table has it.
struct NodeSample {
    std::string name;
    std::vector<std::string> partitions;
    uint64_t gpus = 0;            // configured (Gres=gpu:N)
    uint64_t gpus_allocated = 0;  // GresUsed
    bool down = false;            // DOWN, DRAIN(ED/ING), FAIL, NOT_RESPONDING
};

struct Snapshot {
    int64_t taken_at = 0;  // unix seconds
    std::vector<JobSample> jobs;
    std::vector<NodeSample> nodes;
};

// A job's tier label under this config ("project", "general", "spot", "none").
std::string tier_label(const Config& config, const std::string& qos);
// A job's team label: the allot.yaml team of its account, else "none".
std::string team_label(const Config& config, const std::string& account);
// The pending reason as a bounded label, in the words mylimits uses for it
// ("project cap", "general pool", "team burst cap", "priority", ...).
std::string reason_label(const JobSample& job, Tier tier);

// GPUs in a node's Gres or GresUsed string ("gpu:8", "gpu:a100:2(IDX:0-1)",
// "gpu:a100:4(S:0),gpu:h100:4(S:1)"); 0 when it names none or is malformed.
uint64_t gpus_in_gres(const std::string& gres);

struct Sample {
    std::vector<std::pair<std::string, std::string>> labels;
    double value = 0;
};

enum class Kind { Gauge, Counter };

struct Family {
    std::string name;  // counters end in _total
    std::string help;
    Kind kind = Kind::Gauge;
    std::vector<Sample> samples;
};

// Counters integrated from snapshot to snapshot. add() takes each new snapshot
// in order; the first one only sets the starting point. A run that a requeue ended
// between two snapshots is counted up to the requeue. A spot job counts as
// preempted each time its restart count grows (preempted and requeued) and once
// when it shows state PREEMPTED (preempted and cancelled).
class Accumulator {
public:
    void add(const Snapshot& snap, const Config& config);
    // GPU-seconds by (team, tier), since the exporter started.
    const std::map<std::pair<std::string, std::string>, double>& gpu_seconds() const
    {
        return gpu_seconds_;
    }
    // Spot jobs preempted, by team, since the exporter started.
    const std::map<std::string, uint64_t>& spot_preemptions() const { return preemptions_; }

private:
    using TeamTier = std::pair<std::string, std::string>;  // (team, tier)
    struct Run {
        int64_t start_time = 0;
        uint64_t gpus = 0;
        TeamTier key;
        int64_t counted_to = 0;  // GPU-seconds counted up to here
    };
    void count_current_run(const JobSample& j, const TeamTier& key, int64_t now);
    void close_ended_run(const JobSample& j, int64_t now, std::map<uint32_t, Run>& runs);

    bool started_ = false;
    int64_t last_ = 0;
    std::map<std::pair<std::string, std::string>, double> gpu_seconds_;
    std::map<std::string, uint64_t> preemptions_;
    struct Seen {
        uint32_t restarts = 0;
        bool preempted = false;
    };
    std::map<uint32_t, Seen> seen_;  // spot jobs of the last snapshot
    std::map<uint32_t, Run>
        runs_;  // GPU jobs running at the last snapshot, or whose run's end is not known yet
};

// The exporter's own health at scrape time.
struct ExporterState {
    bool slurmctld_up = false;       // the last snapshot attempt succeeded
    bool have_snapshot = false;      // one snapshot has ever succeeded
    double snapshot_duration = 0;    // seconds the last successful snapshot took
    double snapshot_age = 0;         // seconds since the last successful snapshot
    uint64_t snapshot_failures = 0;  // failed attempts since start
};

std::vector<Family> families(const Snapshot& snap, const Config& config, const Accumulator& acc,
                             const ExporterState& state);

enum class Format { Text004, OpenMetrics };
// The format an Accept header asks for (OpenMetrics only when it says so).
Format negotiate(const std::string& accept);
const char* content_type(Format format);
std::string render(const std::vector<Family>& families, Format format);

}  // namespace allot::exporter
