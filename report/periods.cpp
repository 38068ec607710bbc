// periods.cpp - the report's time grid (see periods.hpp).
#include "periods.hpp"

#include <charconv>
#include <cstdio>
#include <ctime>
#include <optional>

#include "errors.hpp"

namespace allot::report {

namespace {

struct tm utc(int64_t t)
{
    const time_t tt = static_cast<time_t>(t);
    struct tm parts {};
    gmtime_r(&tt, &parts);
    return parts;
}

std::optional<int64_t> digits(std::string_view s)
{
    int64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
    return v;
}

}  // namespace

int64_t period_floor(int64_t t, int64_t length)
{
    int64_t offset = (t - kGridOrigin) % length;
    if (offset < 0) offset += length;
    return t - offset;
}

std::string iso_week(int64_t t)
{
    // The ISO year is the year of the Thursday of t's week.
    const int64_t monday = period_floor(t, kWeek);
    const struct tm thursday = utc(monday + 3 * kDay);
    const int week = thursday.tm_yday / 7 + 1;
    char buf[32];
    std::snprintf(buf, sizeof buf, "%04d-W%02d", thursday.tm_year + 1900, week);
    return buf;
}

std::string utc_time(int64_t t)
{
    const struct tm p = utc(t);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &p);
    return buf;
}

Result<int64_t> parse_utc_time(std::string_view text)
{
    if (!text.empty() && text[0] == '@') text.remove_prefix(1);
    if (auto v = digits(text)) return *v;
    struct tm p {};
    const std::string s(text);
    const char* rest = strptime(s.c_str(), "%Y-%m-%dT%H:%M:%S", &p);
    if (!rest) rest = strptime(s.c_str(), "%Y-%m-%d", &p);
    if (!rest || (*rest && std::string_view(rest) != "Z"))
        return make_error(Errc::Usage, "'" + s + "' is not a UTC time (2026-12-03T21:40:00Z)");
    return static_cast<int64_t>(timegm(&p));
}

std::string period_label(int64_t start, int64_t length)
{
    return length == kWeek ? iso_week(start) : utc_time(start);
}

Result<int64_t> parse_period_length(std::string_view text)
{
    int64_t length = 0;
    if (text == "week") {
        length = kWeek;
    } else if (text == "day") {
        length = kDay;
    } else if (text == "hour") {
        length = kHour;
    } else {
        int64_t unit = 1;
        std::string_view number = text;
        if (!text.empty()) {
            switch (text.back()) {
                case 'w': unit = kWeek; break;
                case 'd': unit = kDay; break;
                case 'h': unit = kHour; break;
                case 'm': unit = 60; break;
                case 's': unit = 1; break;
                default: unit = 0;
            }
            if (unit) number.remove_suffix(1);
            if (!unit) unit = 1;
        }
        auto n = digits(number);
        if (!n || *n <= 0)
            return make_error(Errc::Usage, "--period '" + std::string(text) +
                                               "': a length such as week, 1d, 6h, 10m or 60s");
        length = *n * unit;
    }
    if (length > kWeek || kWeek % length != 0)
        return make_error(Errc::Usage, "--period '" + std::string(text) +
                                           "' must divide a week evenly (week, 1d, 6h, 10m...)");
    return length;
}

std::vector<Period> make_periods(int64_t until, int64_t length, int count)
{
    std::vector<Period> out;
    const int64_t last = period_floor(until - 1, length);  // `until` itself is excluded
    for (int i = count - 1; i >= 0; --i) {
        Period p;
        p.start = last - i * length;
        p.end = p.start + length;
        p.label = period_label(p.start, length);
        if (p.end > until) {
            p.end = until;
            p.provisional = true;
        }
        out.push_back(std::move(p));
    }
    return out;
}

}  // namespace allot::report
