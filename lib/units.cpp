// units.cpp - Slurm duration/memory/count parsing and formatting (see units.hpp).
#include "allot/units.hpp"

#include <cstdio>
#include <vector>

namespace allot {

std::optional<uint64_t> parse_count(std::string_view text, uint64_t max)
{
    if (text.empty() || text.size() > 20) return std::nullopt;
    uint64_t value = 0;
    for (char c : text) {
        if (c < '0' || c > '9') return std::nullopt;
        const uint64_t digit = static_cast<uint64_t>(c - '0');
        if (value > (max - digit) / 10) return std::nullopt;
        value = value * 10 + digit;
    }
    return value;
}

namespace {

bool iequals(std::string_view a, std::string_view b)
{
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
        char x = a[i], y = b[i];
        if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
        if (x != y) return false;
    }
    return true;
}

std::vector<std::string_view> split(std::string_view text, char sep)
{
    std::vector<std::string_view> parts;
    size_t start = 0;
    for (;;) {
        const size_t pos = text.find(sep, start);
        parts.push_back(text.substr(start, pos == std::string_view::npos ? pos : pos - start));
        if (pos == std::string_view::npos) return parts;
        start = pos + 1;
    }
}

}  // namespace

Result<uint32_t> parse_duration_minutes(std::string_view text)
{
    const auto bad = [&] {
        return make_error("'" + std::string(text.substr(0, 64)) +
                          "' is not a Slurm time (use minutes, HH:MM:SS or D-HH:MM:SS)");
    };
    if (iequals(text, "unlimited") || iequals(text, "infinite")) return kUnlimitedMinutes;
    if (text.empty() || text.size() > 32) return bad();

    uint64_t days = 0, hours = 0, minutes = 0, seconds = 0;
    std::string_view clock = text;
    const size_t dash = text.find('-');
    const bool has_days = dash != std::string_view::npos;
    if (has_days) {
        auto d = parse_count(text.substr(0, dash), 100000);
        if (!d) return bad();
        days = *d;
        clock = text.substr(dash + 1);
    }
    const auto fields = split(clock, ':');
    std::vector<uint64_t> values;
    for (auto field : fields) {
        auto v = parse_count(field, 10000000);
        if (!v) return bad();
        values.push_back(*v);
    }
    if (has_days) {  // days-hours[:minutes[:seconds]]
        if (values.empty() || values.size() > 3) return bad();
        hours = values[0];
        if (values.size() > 1) minutes = values[1];
        if (values.size() > 2) seconds = values[2];
    } else {  // minutes | minutes:seconds | hours:minutes:seconds
        if (values.size() == 1) {
            minutes = values[0];
        } else if (values.size() == 2) {
            minutes = values[0];
            seconds = values[1];
        } else if (values.size() == 3) {
            hours = values[0];
            minutes = values[1];
            seconds = values[2];
        } else {
            return bad();
        }
    }
    const uint64_t total = ((days * 24 + hours) * 60 + minutes) * 60 + seconds;
    const uint64_t total_minutes = (total + 59) / 60;
    if (total_minutes >= kUnlimitedMinutes) return bad();
    return static_cast<uint32_t>(total_minutes);
}

std::string format_minutes(uint32_t minutes)
{
    if (minutes == kUnlimitedMinutes) return "UNLIMITED";
    const uint32_t days = minutes / (24 * 60);
    const uint32_t hours = (minutes / 60) % 24;
    const uint32_t mins = minutes % 60;
    char buf[48];
    if (days)
        std::snprintf(buf, sizeof buf, "%u-%02u:%02u:00", days, hours, mins);
    else
        std::snprintf(buf, sizeof buf, "%02u:%02u:00", hours, mins);
    return buf;
}

Result<uint64_t> parse_memory_mb(std::string_view text)
{
    const auto bad = [&] {
        return make_error("'" + std::string(text.substr(0, 64)) +
                          "' is not a memory size (use e.g. 16G, 512M or a number of MB)");
    };
    if (text.empty() || text.size() > 24) return bad();
    uint64_t multiplier = 1;
    std::string_view digits = text;
    switch (text.back()) {
        case 'K':
        case 'k': multiplier = 0; break;  // handled below: KB rounds up to 1 MB
        case 'M':
        case 'm': multiplier = 1; break;
        case 'G':
        case 'g': multiplier = 1024; break;
        case 'T':
        case 't': multiplier = 1024 * 1024; break;
        default: digits = text; break;
    }
    if (text.back() < '0' || text.back() > '9') digits = text.substr(0, text.size() - 1);
    auto value = parse_count(digits, UINT64_MAX / (1024 * 1024));
    if (!value) return bad();
    if (multiplier == 0) return (*value + 1023) / 1024;
    return *value * multiplier;
}

std::string format_memory_mb(uint64_t mb)
{
    if (mb && mb % (1024 * 1024) == 0) return std::to_string(mb / (1024 * 1024)) + "T";
    if (mb && mb % 1024 == 0) return std::to_string(mb / 1024) + "G";
    return std::to_string(mb) + "M";
}

}  // namespace allot
