// records.cpp - run records: state names, TRES parsing, de-duplication (see records.hpp).
#include "records.hpp"

#include <algorithm>
#include <charconv>
#include <tuple>

namespace allot::report {

namespace {

struct StateName {
    const char* name;
    RunEnd state;
};
constexpr StateName kStates[] = {
    {"RUNNING", RunEnd::Running},
    {"COMPLETED", RunEnd::Completed},
    {"FAILED", RunEnd::Failed},
    {"CANCELLED", RunEnd::Cancelled},
    {"TIMEOUT", RunEnd::Timeout},
    {"PREEMPTED", RunEnd::Preempted},
    {"REQUEUED", RunEnd::Requeued},
    {"NODE_FAIL", RunEnd::NodeFail},
    {"OUT_OF_MEMORY", RunEnd::OutOfMemory},
    {"OTHER", RunEnd::Other},
};

std::optional<uint64_t> to_number(std::string_view s)
{
    uint64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
    return v;
}

// Calls f(key, value) for each "key=value" of a comma-separated TRES string.
template <typename F>
void for_each_pair(std::string_view tres, F&& f)
{
    while (!tres.empty()) {
        const size_t comma = tres.find(',');
        std::string_view item = tres.substr(0, comma);
        tres = comma == std::string_view::npos ? std::string_view() : tres.substr(comma + 1);
        const size_t eq = item.find('=');
        if (eq == std::string_view::npos) continue;
        f(item.substr(0, eq), item.substr(eq + 1));
    }
}

}  // namespace

RunEnd run_end_from_name(std::string_view name)
{
    const std::string_view word = name.substr(0, name.find(' '));  // "CANCELLED by 0"
    for (const auto& s : kStates)
        if (word == s.name) return s.state;
    return RunEnd::Other;
}

const char* run_end_name(RunEnd state)
{
    for (const auto& s : kStates)
        if (s.state == state) return s.name;
    return "OTHER";
}

bool lost_to_preemption(RunEnd state)
{
    return state == RunEnd::Preempted || state == RunEnd::Requeued;
}

void TresTable::add(uint32_t id, std::string type, std::string name)
{
    names_[id] = name.empty() ? type : type + "/" + name;
}

std::optional<uint32_t> TresTable::gpu_id() const
{
    for (const auto& [id, name] : names_)
        if (name == "gres/gpu") return id;
    return std::nullopt;
}

std::string TresTable::name_of(uint32_t id) const
{
    auto it = names_.find(id);
    return it == names_.end() ? std::to_string(id) : it->second;
}

uint64_t untyped_gpus(std::string_view tres_ids, uint32_t gpu_id)
{
    uint64_t gpus = 0;
    for_each_pair(tres_ids, [&](std::string_view key, std::string_view value) {
        if (to_number(key) == gpu_id) gpus = to_number(value).value_or(0);
    });
    return gpus;
}

uint64_t untyped_gpus_named(std::string_view tres_names)
{
    uint64_t gpus = 0;
    for_each_pair(tres_names, [&](std::string_view key, std::string_view value) {
        if (key == "gres/gpu") gpus = to_number(value).value_or(0);
    });
    return gpus;
}

std::vector<RunRecord> distinct_runs(std::vector<RunRecord> runs)
{
    auto key = [](const RunRecord& r) { return std::make_tuple(r.job_id, r.start); };
    std::stable_sort(runs.begin(), runs.end(),
                     [&](const RunRecord& a, const RunRecord& b) { return key(a) < key(b); });
    runs.erase(std::unique(runs.begin(), runs.end(),
                           [&](const RunRecord& a, const RunRecord& b) {
                               return a.start != 0 && key(a) == key(b);
                           }),
               runs.end());
    return runs;
}

}  // namespace allot::report
