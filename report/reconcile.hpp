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

// "reconciliation: allot-report 12.00 GPU-h; sacct -D -T -X 12.00 GPU-h; difference 0.00 GPU-h"
// plus why they may differ; sacct_seconds none when sacct could not run.
std::string reconciliation_line(uint64_t report_seconds, std::optional<uint64_t> sacct_seconds,
                                const std::string& sacct_problem);

}  // namespace allot::report
