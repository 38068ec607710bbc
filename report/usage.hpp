// usage.hpp - the report: GPU-seconds used per period against capacity, by team, tier and
// user, spot time lost to preemption and the GPUs-in-use series, from run records and
// capacity history. Pure: the same inputs always give the same report.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "allot/config.hpp"
#include "capacity.hpp"
#include "periods.hpp"
#include "records.hpp"

namespace allot::report {

inline constexpr const char* kNoTeam = "(no team)";

// Account → team and QOS → tier, from allot.yaml.
class Classifier {
public:
    explicit Classifier(const Config& config) : config_(config) {}
    // The team's SCIM group for a team account, else kNoTeam.
    std::string team_of(const std::string& account) const;
    // "project" (a team's QOS), "general", "spot", else "other".
    std::string tier_of(const std::string& qos) const;

private:
    const Config& config_;
};

struct ReportRequest {
    int64_t until = 0;            // end of the window (usually now)
    int64_t now = 0;              // running jobs count up to here
    int64_t length = kWeek;       // period length
    int periods = 12;             // number of periods
    int64_t series_step = kHour;  // GPUs-in-use series resolution
    bool by_user = false;
};

struct PeriodUsage {
    Period period;
    uint64_t used = 0;       // GPU-seconds of every run inside the period
    uint64_t capacity = 0;   // GPU-seconds the cluster had
    uint64_t down = 0;       // GPU-seconds of nodes down or drained
    uint64_t spot_lost = 0;  // GPU-seconds of spot runs that ended preempted or requeued
    std::map<std::string, uint64_t> by_team, by_tier, by_user;
    uint64_t available() const { return capacity > down ? capacity - down : 0; }
};

struct SeriesPoint {
    int64_t start = 0;
    int64_t seconds = 0;  // the point's length (the last one may be shorter)
    uint64_t gpu_seconds = 0;
    double gpus() const { return seconds ? double(gpu_seconds) / double(seconds) : 0.0; }
};

struct Report {
    std::string cluster;
    int64_t from = 0, until = 0, length = kWeek;
    bool by_user = false;
    std::vector<PeriodUsage> periods;
    std::vector<SeriesPoint> series;
    std::vector<std::string> teams, tiers, users;  // every key seen, sorted
    uint64_t runs = 0;                             // run records with GPU time in the window
    uint64_t total_used() const;
    uint64_t total_capacity() const;
    uint64_t total_available() const;
    uint64_t total_spot_lost() const;
    // GPU-seconds used from the window's start until t (t on a series step boundary).
    uint64_t used_until(int64_t t) const;
};

struct Inputs {
    std::vector<RunRecord> runs;
    std::vector<ClusterTres> capacity;
    std::vector<NodeOutage> outages;
};

Report build_report(const Inputs& inputs, const Classifier& classify, const ReportRequest& req);

}  // namespace allot::report
