// capacity.cpp - capacity and outages as GPU-seconds of a window (see capacity.hpp).
#include "capacity.hpp"

#include <algorithm>
#include <limits>
#include <map>

namespace allot::report {

namespace {

constexpr int64_t kOpen = std::numeric_limits<int64_t>::max();

uint64_t overlap(int64_t a, int64_t b, int64_t from, int64_t to)
{
    const int64_t s = std::max(a, from), e = std::min(b, to);
    return e > s ? static_cast<uint64_t>(e - s) : 0;
}

}  // namespace

uint64_t capacity_gpu_seconds(const std::vector<ClusterTres>& history, int64_t from, int64_t to)
{
    std::vector<ClusterTres> sorted = history;
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const ClusterTres& a, const ClusterTres& b) { return a.start < b.start; });
    uint64_t total = 0;
    for (size_t i = 0; i < sorted.size(); ++i) {
        int64_t end = sorted[i].end.value_or(kOpen);
        if (i + 1 < sorted.size()) end = std::min(end, sorted[i + 1].start);
        total += sorted[i].gpus * overlap(sorted[i].start, end, from, to);
    }
    return total;
}

uint64_t outage_gpu_seconds(const std::vector<NodeOutage>& outages, int64_t from, int64_t to)
{
    std::map<std::string, std::vector<const NodeOutage*>> by_node;
    for (const auto& o : outages) by_node[o.node].push_back(&o);
    uint64_t total = 0;
    for (auto& [node, list] : by_node) {
        std::sort(list.begin(), list.end(),
                  [](const NodeOutage* a, const NodeOutage* b) { return a->start < b->start; });
        // Merge overlapping records of one node; a merged stretch counts the most GPUs
        // any of its records names.
        int64_t s = 0, e = 0;
        uint64_t gpus = 0;
        bool open = false;
        for (const NodeOutage* o : list) {
            const int64_t oe = o->end.value_or(kOpen);
            if (open && o->start <= e) {
                e = std::max(e, oe);
                gpus = std::max(gpus, o->gpus);
                continue;
            }
            if (open) total += gpus * overlap(s, e, from, to);
            s = o->start, e = oe, gpus = o->gpus, open = true;
        }
        if (open) total += gpus * overlap(s, e, from, to);
    }
    return total;
}

}  // namespace allot::report
