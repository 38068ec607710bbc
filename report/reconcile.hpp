// reconcile.hpp - the report's totals next to sacct's over the same window.
//
// `sacct --duplicates --truncate -X` prints every run record cut to the window; summing
// its untyped gres/gpu times elapsed must give the report's total. The difference and
// its usual reasons (reservations are not jobs; running jobs counted to different
// instants) are printed on one line.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace allot::report {

// The sacct command line for the window [from, until) of `cluster` (run with TZ=UTC).
std::vector<std::string> sacct_command(const std::string& cluster, int64_t from, int64_t until);

// GPU-seconds of `sacct -P -n --format=JobIDRaw,Start,End,AllocTRES` output, truncated to
// [from, until); a run without an end ("Unknown") counts to `now`.
uint64_t sacct_gpu_seconds(std::string_view text, int64_t from, int64_t until, int64_t now);

// The sreport command line for cluster utilization of GPUs over [from, until), in seconds.
std::vector<std::string> sreport_command(const std::string& cluster, int64_t from, int64_t until);

// The Allocated GPU-seconds of `sreport -P cluster utilization -t seconds --tres=gres/gpu`
// output (found by its header's column name); none when there is no gres/gpu row.
std::optional<uint64_t> sreport_allocated_seconds(std::string_view text);

// The end of the whole hours slurmdbd has rolled up inside [from, until) by `now` (rollups
// are hourly, for hours that are over); none when from is not on an hour or no whole hour
// is over yet.
std::optional<int64_t> rollup_end(int64_t from, int64_t until, int64_t now);

// "; sreport cluster utilization 10.00 GPU-h allocated against allot-report's 10.00 GPU-h
// over the same whole hours ..." for the reconciliation line.
std::string sreport_clause(uint64_t report_seconds, std::optional<uint64_t> sreport_seconds,
                           const std::string& why_not);

// "reconciliation: allot-report 12.00 GPU-h; sacct -D -T -X 12.00 GPU-h; difference 0.00 GPU-h"
// plus why they may differ; sacct_seconds none when sacct could not run.
std::string reconciliation_line(uint64_t report_seconds, std::optional<uint64_t> sacct_seconds,
                                const std::string& sacct_problem);

}  // namespace allot::report
