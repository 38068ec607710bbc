// periods.hpp - the report's time grid: ISO weeks in UTC, or shorter periods for tests.
//
// Every period starts at Monday 00:00 UTC of an ISO week plus a whole number of period
// lengths, so a day or an hour grid nests inside the week grid. UTC has no DST: a week is
// always 604,800 s, wherever the site is.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "allot/result.hpp"

namespace allot::report {

inline constexpr int64_t kHour = 3600;
inline constexpr int64_t kDay = 24 * kHour;
inline constexpr int64_t kWeek = 7 * kDay;
// Monday 1969-12-29 00:00 UTC: the first ISO week boundary at or before the epoch.
inline constexpr int64_t kGridOrigin = -3 * kDay;

// Start of the period of `length` seconds containing t.
int64_t period_floor(int64_t t, int64_t length);

// "2026-W49" (ISO 8601 week-numbering year and week) of the instant t.
std::string iso_week(int64_t t);
// "2026-12-03T21:40:00Z"
std::string utc_time(int64_t t);
// Unix seconds of "2026-12-03T21:40:00Z", "2026-12-03" or "@1796334000" (or plain digits).
Result<int64_t> parse_utc_time(std::string_view text);
// The period's name: its ISO week for week periods, else its start time.
std::string period_label(int64_t start, int64_t length);

// "week", "1w", "2d", "6h", "10m", "90s" or plain seconds; must divide a week evenly, so
// periods never straddle a week boundary.
Result<int64_t> parse_period_length(std::string_view text);

struct Period {
    int64_t start = 0;
    int64_t end = 0;  // exclusive; clipped to the window's end
    std::string label;
    bool provisional = false;  // the window ends before the period does (usually: now)
};

// `count` periods of `length` ending with the one containing `until` (clipped at until).
std::vector<Period> make_periods(int64_t until, int64_t length, int count);

// Calls f(index, seconds) for each period of `periods` that [start, end) overlaps, with
// the seconds inside it: the whole interval, split exactly at the boundaries.
template <typename F>
void split_interval(const std::vector<Period>& periods, int64_t start, int64_t end, F&& f)
{
    for (size_t i = 0; i < periods.size(); ++i) {
        const int64_t a = start > periods[i].start ? start : periods[i].start;
        const int64_t b = end < periods[i].end ? end : periods[i].end;
        if (b > a) f(i, b - a);
    }
}

}  // namespace allot::report
