// reconcile.cpp - sacct's totals for the reconciliation line (see reconcile.hpp).
#include "reconcile.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>

#include "periods.hpp"
#include "records.hpp"

namespace allot::report {

namespace {

std::vector<std::string_view> fields(std::string_view line)
{
    std::vector<std::string_view> out;
    while (true) {
        const size_t bar = line.find('|');
        out.push_back(line.substr(0, bar));
        if (bar == std::string_view::npos) break;
        line.remove_prefix(bar + 1);
    }
    return out;
}

std::optional<int64_t> sacct_time(std::string_view text)
{
    if (text.empty() || text == "Unknown" || text == "None") return std::nullopt;
    auto t = parse_utc_time(std::string(text) + "Z");
    if (!t) return std::nullopt;
    return t.value();
}

std::string hours(uint64_t seconds)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", double(seconds) / 3600.0);
    return buf;
}

}  // namespace

std::vector<std::string> sacct_command(const std::string& cluster, int64_t from, int64_t until)
{
    auto local = [](int64_t t) {
        std::string s = utc_time(t);
        s.pop_back();  // sacct reads local time: run with TZ=UTC, without the Z
        return s;
    };
    return {"sacct",      "--duplicates", "--truncate", "-X",       "--allusers",
            "--noheader", "--parsable2",  "--clusters", cluster,    "--starttime",
            local(from),  "--endtime",    local(until), "--format", "JobIDRaw,Start,End,AllocTRES"};
}

uint64_t sacct_gpu_seconds(std::string_view text, int64_t from, int64_t until, int64_t now)
{
    uint64_t total = 0;
    while (!text.empty()) {
        const size_t nl = text.find('\n');
        const std::string_view line = text.substr(0, nl);
        text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
        const auto f = fields(line);
        if (f.size() < 4) continue;
        const auto start = sacct_time(f[1]);
        if (!start) continue;
        const int64_t end = sacct_time(f[2]).value_or(now);
        const int64_t s = std::max(*start, from), e = std::min(end, until);
        if (e > s) total += untyped_gpus_named(f[3]) * uint64_t(e - s);
    }
    return total;
}

std::vector<std::string> sreport_command(const std::string& cluster, int64_t from, int64_t until)
{
    auto local = [](int64_t t) {
        std::string s = utc_time(t);
        s.pop_back();  // run with TZ=UTC, like sacct
        return s;
    };
    return {"sreport",
            "--parsable2",
            "--tres=gres/gpu",
            "-t",
            "seconds",
            "cluster",
            "utilization",
            "clusters=" + cluster,
            "start=" + local(from),
            "end=" + local(until)};
}

std::optional<uint64_t> sreport_allocated_seconds(std::string_view text)
{
    std::optional<size_t> allocated, tres;
    while (!text.empty()) {
        const size_t nl = text.find('\n');
        const std::string_view line = text.substr(0, nl);
        text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
        const auto f = fields(line);
        if (!allocated) {
            for (size_t i = 0; i < f.size(); ++i) {
                if (f[i] == "Allocated") allocated = i;
                if (f[i] == "TRES Name") tres = i;
            }
            continue;
        }
        if (tres && *tres < f.size() && f[*tres] != "gres/gpu") continue;
        if (*allocated >= f.size()) continue;
        uint64_t v = 0;
        const std::string_view a = f[*allocated];
        auto [p, ec] = std::from_chars(a.data(), a.data() + a.size(), v);
        if (ec == std::errc() && p == a.data() + a.size()) return v;
    }
    return std::nullopt;
}

std::optional<int64_t> rollup_end(int64_t from, int64_t until, int64_t now)
{
    if (from % kHour != 0) return std::nullopt;
    const int64_t end = std::min(until, now) / kHour * kHour;
    if (end <= from) return std::nullopt;
    return end;
}

std::string sreport_clause(uint64_t report_seconds, std::optional<uint64_t> sreport_seconds,
                           const std::string& why_not)
{
    if (!sreport_seconds) return "; sreport not compared (" + why_not + ")";
    const int64_t diff = int64_t(report_seconds) - int64_t(*sreport_seconds);
    return "; sreport cluster utilization " + hours(*sreport_seconds) +
           " GPU-h allocated against allot-report's " + hours(report_seconds) +
           " GPU-h over the same whole hours, difference " + std::to_string(diff) + " GPU-s" +
           (diff ? " (sreport counts GPUs of reservations as allocated and works from hourly "
                   "rollups, which lag behind the job records)"
                 : "");
}

std::string reconciliation_line(uint64_t report_seconds, std::optional<uint64_t> sacct_seconds,
                                const std::string& sacct_problem)
{
    std::string line = "reconciliation: allot-report " + hours(report_seconds) + " GPU-h";
    if (!sacct_seconds) return line + "; sacct -D -T -X not available (" + sacct_problem + ")";
    line += "; sacct -D -T -X " + hours(*sacct_seconds) + " GPU-h";
    const int64_t diff = int64_t(report_seconds) - int64_t(*sacct_seconds);
    if (diff == 0) return line + "; difference 0 GPU-s";
    return line + "; difference " + std::to_string(diff) +
           " GPU-s (jobs still running are counted up to each tool's own now; records "
           "slurmdbd changed between the two reads)";
}

}  // namespace allot::report
