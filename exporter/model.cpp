// model.cpp - snapshot + allot.yaml -> metric families, and their rendering (see model.hpp).
#include "model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <tuple>

#include "allot/gpu_request.hpp"
#include "allot/pending_reason.hpp"

namespace allot::exporter {

namespace {

const char* const kTiers[] = {"project", "general", "spot"};

bool is_running(const JobSample& j)
{
    return j.state == "RUNNING";
}

// States a job holds after it ran: its end_time closes the GPU-seconds interval.
bool is_finished(const JobSample& j)
{
    static const std::set<std::string> kFinished = {
        "COMPLETED", "FAILED",    "CANCELLED",     "TIMEOUT",  "PREEMPTED",
        "NODE_FAIL", "BOOT_FAIL", "OUT_OF_MEMORY", "DEADLINE",
    };
    return kFinished.count(j.state) > 0;
}

// The partitions the policy governs: the configured one, else every one seen.
std::set<std::string> governed_partitions(const Snapshot& snap, const Config& config)
{
    std::set<std::string> out;
    if (!config.cluster.partition.empty()) {
        out.insert(config.cluster.partition);
        return out;
    }
    for (const auto& n : snap.nodes) out.insert(n.partitions.begin(), n.partitions.end());
    return out;
}

using Labels = std::vector<std::pair<std::string, std::string>>;

Family gauge(std::string name, std::string help)
{
    return Family{std::move(name), std::move(help), Kind::Gauge, {}};
}

Family counter(std::string name, std::string help)
{
    return Family{std::move(name), std::move(help), Kind::Counter, {}};
}

// Every team x tier present, so a query for an idle team answers 0, not nothing.
std::map<std::pair<std::string, std::string>, double> zero_team_tiers(const Config& config)
{
    std::map<std::pair<std::string, std::string>, double> out;
    for (const auto& t : config.teams)
        for (const char* tier : kTiers) out[{t.account, tier}] = 0;
    return out;
}

void add_team_tier(Family& f, const std::map<std::pair<std::string, std::string>, double>& m)
{
    for (const auto& [key, v] : m)
        f.samples.push_back({{{"team", key.first}, {"tier", key.second}}, v});
}

Family allocated_family(const Snapshot& snap, const Config& config)
{
    auto by = zero_team_tiers(config);
    for (const auto& j : snap.jobs)
        if (is_running(j) && j.gpus)
            by[{team_label(config, j.account), tier_label(config, j.qos)}] +=
                static_cast<double>(j.gpus);
    Family f = gauge("allot_gpus_allocated", "GPUs allocated to running jobs, by team and tier.");
    add_team_tier(f, by);
    return f;
}

std::vector<Family> cap_families(const Snapshot& snap, const Config& config)
{
    Family project = gauge("allot_team_project_cap_gpus",
                           "Each team's project-tier cap (allot.yaml teams[].gpus).");
    Family general = gauge("allot_team_general_cap_gpus",
                           "Each team's cap in the shared general pool (per_team_gpus).");
    for (const auto& t : config.teams) {
        project.samples.push_back({{{"team", t.account}}, static_cast<double>(t.gpus)});
        general.samples.push_back(
            {{{"team", t.account}}, static_cast<double>(config.tiers.general.per_team_gpus)});
    }
    double pool_used = 0;
    for (const auto& j : snap.jobs)
        if (is_running(j) && tier_label(config, j.qos) == "general")
            pool_used += static_cast<double>(j.gpus);
    Family pool = gauge("allot_general_pool_gpus", "Size of the shared general pool in GPUs.");
    pool.samples.push_back({{}, static_cast<double>(config.tiers.general.pool_gpus)});
    Family used = gauge("allot_general_pool_allocated_gpus",
                        "GPUs of the general pool allocated to running jobs (all teams).");
    used.samples.push_back({{}, pool_used});
    return {project, general, pool, used};
}

std::vector<Family> partition_families(const Snapshot& snap, const Config& config)
{
    struct Counts {
        double total = 0, allocated = 0, idle = 0, down = 0;
    };
    std::map<std::string, Counts> by;
    for (const auto& p : governed_partitions(snap, config)) by[p];
    for (const auto& n : snap.nodes)
        for (const auto& p : n.partitions) {
            auto it = by.find(p);
            if (it == by.end()) continue;
            // A down node's free GPUs cannot be used: they count as down, not idle.
            it->second.total += static_cast<double>(n.gpus);
            if (n.down)
                it->second.down += static_cast<double>(n.gpus - std::min(n.gpus_allocated, n.gpus));
        }
    // Allocated from the running jobs of the partition: slurmctld's node table does not
    // always carry the per-node allocation to clients (GresUsed empty on some releases).
    for (const auto& j : snap.jobs) {
        auto it = by.find(j.partition);
        if (is_running(j) && it != by.end()) it->second.allocated += static_cast<double>(j.gpus);
    }
    for (auto& [p, c] : by) c.idle = std::max(0.0, c.total - c.allocated - c.down);
    Family total = gauge("allot_partition_gpus", "GPUs configured on the partition's nodes.");
    Family alloc = gauge("allot_partition_gpus_allocated", "GPUs of the partition in use.");
    Family idle = gauge("allot_partition_gpus_idle", "GPUs of the partition free on usable nodes.");
    Family down = gauge("allot_partition_gpus_down",
                        "Free GPUs of the partition on nodes that are down, drained or failed.");
    for (const auto& [p, c] : by) {
        total.samples.push_back({{{"partition", p}}, c.total});
        alloc.samples.push_back({{{"partition", p}}, c.allocated});
        idle.samples.push_back({{{"partition", p}}, c.idle});
        down.samples.push_back({{{"partition", p}}, c.down});
    }
    return {total, alloc, idle, down};
}

std::vector<Family> pending_families(const Snapshot& snap, const Config& config)
{
    std::map<std::tuple<std::string, std::string, std::string>, std::pair<double, double>> by;
    for (const auto& j : snap.jobs) {
        if (j.state != "PENDING") continue;
        const std::string tier = tier_label(config, j.qos);
        const Tier t = tier == "project"   ? Tier::Project
                       : tier == "general" ? Tier::General
                       : tier == "spot"    ? Tier::Spot
                                           : Tier::None;
        auto& v = by[{team_label(config, j.account), tier, reason_label(j, t)}];
        v.first += 1;
        v.second += static_cast<double>(j.gpus);
    }
    Family jobs = gauge("allot_jobs_pending", "Pending jobs by team, tier and reason.");
    Family gpus =
        gauge("allot_gpus_pending", "GPUs asked by pending jobs, by team, tier and reason.");
    for (const auto& [k, v] : by) {
        Labels l = {{"team", std::get<0>(k)}, {"tier", std::get<1>(k)}, {"reason", std::get<2>(k)}};
        jobs.samples.push_back({l, v.first});
        gpus.samples.push_back({l, v.second});
    }
    return {jobs, gpus};
}

std::vector<Family> counter_families(const Config& config, const Accumulator& acc)
{
    Family secs = counter("allot_gpu_seconds_total",
                          "GPU-seconds used by running jobs since the exporter started.");
    auto by = zero_team_tiers(config);
    for (const auto& [k, v] : acc.gpu_seconds()) by[k] = v;
    add_team_tier(secs, by);
    Family pre = counter("allot_spot_preemptions_total",
                         "Spot jobs preempted since the exporter started, by team.");
    std::map<std::string, uint64_t> p;
    for (const auto& t : config.teams) p[t.account] = 0;
    for (const auto& [team, n] : acc.spot_preemptions()) p[team] = n;
    for (const auto& [team, n] : p)
        pre.samples.push_back({{{"team", team}}, static_cast<double>(n)});
    return {secs, pre};
}

std::vector<Family> self_families(const ExporterState& st)
{
    Family up = gauge("allot_slurmctld_up",
                      "1 when the last snapshot from slurmctld succeeded, 0 when it failed.");
    up.samples.push_back({{}, st.slurmctld_up ? 1.0 : 0.0});
    Family age = gauge("allot_snapshot_age_seconds",
                       "Seconds since the snapshot the other metrics come from was taken.");
    age.samples.push_back({{}, st.snapshot_age});
    Family dur = gauge("allot_snapshot_duration_seconds",
                       "Seconds the last successful snapshot from slurmctld took.");
    dur.samples.push_back({{}, st.snapshot_duration});
    Family fail = counter("allot_snapshot_failures_total",
                          "Snapshots that failed (slurmctld did not answer) since start.");
    fail.samples.push_back({{}, static_cast<double>(st.snapshot_failures)});
    return {up, age, dur, fail};
}

std::string escape_label(const std::string& v)
{
    std::string out;
    for (char c : v) {
        if (c == '\\')
            out += "\\\\";
        else if (c == '"')
            out += "\\\"";
        else if (c == '\n')
            out += "\\n";
        else
            out += c;
    }
    return out;
}

std::string format_value(double v)
{
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
    char buf[64];
    if (v == std::floor(v) && std::fabs(v) < 1e15)
        std::snprintf(buf, sizeof buf, "%.0f", v);
    else
        std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}

}  // namespace

uint64_t gpus_in_gres(const std::string& gres)
{
    // Drop the "(IDX:...)" / "(S:...)" annotations: gpus_in_tres reads the rest.
    std::string plain;
    int depth = 0;
    for (char c : gres) {
        if (c == '(')
            ++depth;
        else if (c == ')')
            depth = depth ? depth - 1 : 0;
        else if (!depth)
            plain += c;
    }
    auto n = gpus_in_tres(plain);
    return n.ok() ? n.value() : 0;
}

std::string tier_label(const Config& config, const std::string& qos)
{
    if (qos.empty()) return "none";
    if (same_qos(qos, config.tiers.general.qos)) return "general";
    if (same_qos(qos, config.tiers.spot.qos)) return "spot";
    if (config.team_by_qos(qos)) return "project";
    return "none";
}

std::string team_label(const Config& config, const std::string& account)
{
    const TeamConfig* t = config.team_by_account(account);
    return t ? t->account : "none";
}

std::string reason_label(const JobSample& job, Tier tier)
{
    return pending_label(pending_cause(job.reason), tier, job.restarts > 0);
}

// GPU-seconds of the run a job shows now, clipped to the interval (last_, now].
void Accumulator::count_current_run(const JobSample& j, const TeamTier& key, int64_t now)
{
    if (!j.gpus || j.start_time <= 0 || !(is_running(j) || is_finished(j))) return;
    const int64_t lo = std::max(j.start_time, last_);
    const int64_t hi = is_running(j) ? now : std::min(j.end_time, now);
    if (hi > lo) gpu_seconds_[key] += static_cast<double>(j.gpus) * static_cast<double>(hi - lo);
}

// A job that ran at the last snapshot and no longer shows that run was requeued in
// between (preempted, node failure, scontrol requeue): Slurm made it pending again and
// its start time now belongs to the next run, so count_current_run cannot see the run
// that ended. Count it up to its end, the first of these that is known:
//  - an end_time inside the interval (releases that keep the requeue's time there);
//  - the submit time: when a requeue completes, slurmctld clears start and end time and
//    resets the submit time to that moment, just after the run ended;
//  - the next run's start, which bounds it.
// While none is known yet (the requeue still completing), the run is carried over to
// the next snapshot instead of being dropped.
void Accumulator::close_ended_run(const JobSample& j, int64_t now, std::map<uint32_t, Run>& runs)
{
    auto it = runs_.find(j.job_id);
    if (it == runs_.end()) return;
    const Run& run = it->second;
    if (j.start_time == run.start_time && (is_running(j) || is_finished(j))) return;
    int64_t end = 0;
    if (j.end_time > run.counted_to && j.end_time <= now)
        end = j.end_time;
    else if (j.submit_time > run.start_time && j.submit_time <= now)
        end = j.submit_time;
    else if (j.start_time > run.start_time)
        end = std::min(j.start_time, now);
    if (!end) {
        if (j.state == "PENDING") runs[j.job_id] = run;
        return;
    }
    const int64_t lo = std::max(run.start_time, run.counted_to);
    if (end > lo)
        gpu_seconds_[run.key] += static_cast<double>(run.gpus) * static_cast<double>(end - lo);
}

void Accumulator::add(const Snapshot& snap, const Config& config)
{
    const bool first = !started_;
    const int64_t now = snap.taken_at;
    if (!first && now <= last_) return;
    std::map<uint32_t, Seen> seen;
    std::map<uint32_t, Run> runs;
    for (const auto& j : snap.jobs) {
        const std::string team = team_label(config, j.account);
        const std::string tier = tier_label(config, j.qos);
        if (!first) {
            close_ended_run(j, now, runs);
            count_current_run(j, {team, tier}, now);
        }
        if (is_running(j) && j.gpus && j.start_time > 0)
            runs[j.job_id] = Run{j.start_time, j.gpus, {team, tier}, now};
        if (tier != "spot") continue;
        const Seen now_seen{j.restarts, j.state == "PREEMPTED"};
        seen[j.job_id] = now_seen;
        if (first) continue;
        // A job new since the last snapshot was submitted after the exporter started.
        auto it = seen_.find(j.job_id);
        const Seen before = it == seen_.end() ? Seen{} : it->second;
        if (now_seen.restarts > before.restarts)
            preemptions_[team] += now_seen.restarts - before.restarts;
        if (now_seen.preempted && !before.preempted) ++preemptions_[team];
    }
    seen_ = std::move(seen);
    runs_ = std::move(runs);
    started_ = true;
    last_ = now;
}

std::vector<Family> families(const Snapshot& snap, const Config& config, const Accumulator& acc,
                             const ExporterState& state)
{
    std::vector<Family> out;
    if (state.have_snapshot) {
        out.push_back(allocated_family(snap, config));
        for (auto& f : cap_families(snap, config)) out.push_back(std::move(f));
        for (auto& f : partition_families(snap, config)) out.push_back(std::move(f));
        for (auto& f : pending_families(snap, config)) out.push_back(std::move(f));
        for (auto& f : counter_families(config, acc)) out.push_back(std::move(f));
    }
    for (auto& f : self_families(state)) out.push_back(std::move(f));
    return out;
}

Format negotiate(const std::string& accept)
{
    return accept.find("application/openmetrics-text") != std::string::npos ? Format::OpenMetrics
                                                                            : Format::Text004;
}

const char* content_type(Format format)
{
    return format == Format::OpenMetrics
               ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
               : "text/plain; version=0.0.4; charset=utf-8";
}

std::string render(const std::vector<Family>& families, Format format)
{
    std::string out;
    for (const auto& f : families) {
        // OpenMetrics names a counter family without its _total suffix.
        std::string family_name = f.name;
        if (format == Format::OpenMetrics && f.kind == Kind::Counter && family_name.size() > 6 &&
            family_name.compare(family_name.size() - 6, 6, "_total") == 0)
            family_name.resize(family_name.size() - 6);
        out += "# HELP " + family_name + " " + f.help + "\n";
        out += "# TYPE " + family_name + (f.kind == Kind::Counter ? " counter\n" : " gauge\n");
        for (const auto& s : f.samples) {
            out += f.name;
            if (!s.labels.empty()) {
                out += '{';
                for (size_t i = 0; i < s.labels.size(); ++i) {
                    if (i) out += ',';
                    out += s.labels[i].first + "=\"" + escape_label(s.labels[i].second) + '"';
                }
                out += '}';
            }
            out += ' ' + format_value(s.value) + '\n';
        }
    }
    if (format == Format::OpenMetrics) out += "# EOF\n";
    return out;
}

}  // namespace allot::exporter
