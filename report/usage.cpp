// usage.cpp - run records and capacity into the report (see usage.hpp).
#include "usage.hpp"

#include <algorithm>
#include <set>

namespace allot::report {

std::string Classifier::team_of(const std::string& account) const
{
    const TeamConfig* team = config_.team_by_account(account);
    return team ? team->group : kNoTeam;
}

std::string Classifier::tier_of(const std::string& qos) const
{
    if (qos == config_.tiers.spot.qos) return "spot";
    if (qos == config_.tiers.general.qos) return "general";
    if (config_.team_by_qos(qos)) return "project";
    return "other";
}

namespace {

template <typename F>
uint64_t sum(const std::vector<PeriodUsage>& ps, F&& f)
{
    uint64_t total = 0;
    for (const auto& p : ps) total += f(p);
    return total;
}

std::vector<SeriesPoint> make_series(int64_t from, int64_t until, int64_t step)
{
    std::vector<SeriesPoint> series;
    for (int64_t t = from; t < until; t += step)
        series.push_back({t, std::min(step, until - t), 0});
    return series;
}

void add_to_series(std::vector<SeriesPoint>& series, int64_t from, int64_t step, int64_t s,
                   int64_t e, uint64_t gpus)
{
    if (series.empty() || e <= s) return;
    size_t i = static_cast<size_t>((s - from) / step);
    for (; i < series.size(); ++i) {
        const int64_t a = std::max(s, series[i].start);
        const int64_t b = std::min(e, series[i].start + series[i].seconds);
        if (a >= e) break;
        if (b > a) series[i].gpu_seconds += gpus * static_cast<uint64_t>(b - a);
    }
}

// The run's GPU time as [start, end) inside the window, or an empty interval.
std::pair<int64_t, int64_t> run_interval(const RunRecord& r, int64_t from, int64_t until,
                                         int64_t now)
{
    if (r.start <= 0 || r.gpus == 0) return {0, 0};
    int64_t end = r.end && *r.end > 0 ? *r.end : now;
    return {std::max(r.start, from), std::min(end, until)};
}

}  // namespace

uint64_t Report::total_used() const
{
    return sum(periods, [](const PeriodUsage& p) { return p.used; });
}
uint64_t Report::total_capacity() const
{
    return sum(periods, [](const PeriodUsage& p) { return p.capacity; });
}
uint64_t Report::total_available() const
{
    return sum(periods, [](const PeriodUsage& p) { return p.available(); });
}
uint64_t Report::total_spot_lost() const
{
    return sum(periods, [](const PeriodUsage& p) { return p.spot_lost; });
}

uint64_t Report::used_until(int64_t t) const
{
    uint64_t total = 0;
    for (const auto& s : series)
        if (s.start + s.seconds <= t) total += s.gpu_seconds;
    return total;
}

Report build_report(const Inputs& inputs, const Classifier& classify, const ReportRequest& req)
{
    Report rep;
    rep.length = req.length;
    rep.by_user = req.by_user;
    rep.until = req.until;
    std::vector<Period> periods = make_periods(req.until, req.length, req.periods);
    rep.from = periods.empty() ? req.until : periods.front().start;
    for (auto& p : periods) {
        PeriodUsage u;
        u.capacity = capacity_gpu_seconds(inputs.capacity, p.start, p.end);
        u.down = std::min(u.capacity, outage_gpu_seconds(inputs.outages, p.start, p.end));
        u.period = std::move(p);
        rep.periods.push_back(std::move(u));
    }
    const int64_t step = std::min(req.series_step, req.length);
    rep.series = make_series(rep.from, rep.until, step);

    std::vector<Period> grid;
    for (const auto& u : rep.periods) grid.push_back(u.period);
    std::set<std::string> teams, tiers, users;
    for (const RunRecord& r : distinct_runs(inputs.runs)) {
        const auto [s, e] = run_interval(r, rep.from, rep.until, req.now);
        if (e <= s) continue;
        ++rep.runs;
        const std::string team = classify.team_of(r.account);
        const std::string tier = classify.tier_of(r.qos);
        teams.insert(team);
        tiers.insert(tier);
        if (req.by_user) users.insert(r.user);
        const bool lost = tier == "spot" && lost_to_preemption(r.state);
        split_interval(grid, s, e, [&](size_t i, int64_t seconds) {
            const uint64_t gs = uint64_t(r.gpus) * uint64_t(seconds);
            PeriodUsage& u = rep.periods[i];
            u.used += gs;
            u.by_team[team] += gs;
            u.by_tier[tier] += gs;
            if (req.by_user) u.by_user[r.user] += gs;
            if (lost) u.spot_lost += gs;
        });
        add_to_series(rep.series, rep.from, step, s, e, r.gpus);
    }
    rep.teams.assign(teams.begin(), teams.end());
    rep.tiers.assign(tiers.begin(), tiers.end());
    rep.users.assign(users.begin(), users.end());
    return rep;
}

}  // namespace allot::report
