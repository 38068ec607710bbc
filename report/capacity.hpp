// capacity.hpp - GPUs the cluster had, from slurmdbd's own history.
//
// slurmdbd records the cluster's TRES whenever they change (cluster events: one record per
// stretch of time with the same TRES) and every node down or drain (node events, each with
// the node's TRES). Capacity of a period is the GPU-seconds of the cluster events inside
// it; unavailable is the GPU-seconds of nodes down or drained inside it; available is the
// difference. Today's sinfo is never consulted: a node added mid-week counts from then on.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace allot::report {

// The cluster had `gpus` GPUs from start until end (none: still).
struct ClusterTres {
    int64_t start = 0;
    std::optional<int64_t> end;
    uint64_t gpus = 0;
};

// A node was down or drained (its `gpus` unavailable) from start until end (none: still).
struct NodeOutage {
    std::string node;
    int64_t start = 0;
    std::optional<int64_t> end;
    uint64_t gpus = 0;
};

// GPU-seconds of capacity inside [from, to): each stretch lasts until its end or the next
// stretch's start, whichever comes first, so overlapping records never count twice.
uint64_t capacity_gpu_seconds(const std::vector<ClusterTres>& history, int64_t from, int64_t to);

// GPU-seconds of nodes down or drained inside [from, to); a node's overlapping records
// (down, then drained while still down) count once.
uint64_t outage_gpu_seconds(const std::vector<NodeOutage>& outages, int64_t from, int64_t to);

}  // namespace allot::report
