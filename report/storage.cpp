// storage.cpp - the storage history's lines and its view (see storage.hpp).
#include "storage.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include "allot/units.hpp"
#include "periods.hpp"

namespace allot::report {
namespace {

constexpr size_t kFields = 8;
constexpr size_t kMaxLine = 4096;

std::string opt_text(const std::optional<uint64_t>& v)
{
    return v ? std::to_string(*v) : "";
}

// Source names are quota.conf names and filesystems come from mountinfo or a site
// command: a comma or newline would break the line, so they are replaced.
std::string field(std::string s)
{
    std::replace_if(
        s.begin(), s.end(), [](char c) { return c == ',' || c == '\n' || c == '\r'; }, '_');
    return s;
}

std::vector<std::string_view> split_commas(std::string_view line)
{
    std::vector<std::string_view> out;
    size_t pos = 0;
    for (;;) {
        const size_t c = line.find(',', pos);
        out.push_back(line.substr(pos, c == std::string_view::npos ? c : c - pos));
        if (c == std::string_view::npos) return out;
        pos = c + 1;
    }
}

bool parse_optional(std::string_view text, std::optional<uint64_t>& out)
{
    if (text.empty()) return true;
    out = parse_count(text);
    return out.has_value();
}

std::optional<StorageSample> parse_line(std::string_view line)
{
    if (line.empty() || line.size() > kMaxLine) return std::nullopt;
    auto f = split_commas(line);
    if (f.size() != kFields || f[1].empty()) return std::nullopt;
    StorageSample s;
    auto time = parse_count(f[0], INT64_MAX / 2);
    auto uid = parse_count(f[2], UINT32_MAX);
    auto used = parse_count(f[4]);
    if (!time || !uid || !used) return std::nullopt;
    s.time = static_cast<int64_t>(*time);
    s.source = std::string(f[1]);
    s.uid = static_cast<uint32_t>(*uid);
    s.filesystem = std::string(f[3]);
    s.bytes_used = *used;
    std::optional<uint64_t> grace;
    if (!parse_optional(f[5], s.bytes_soft) || !parse_optional(f[6], s.bytes_hard) ||
        !parse_optional(f[7], grace))
        return std::nullopt;
    if (grace) s.grace_expires = static_cast<int64_t>(*grace);
    return s;
}

}  // namespace

std::vector<StorageSample> samples_of(int64_t time, const std::string& source, uint32_t uid,
                                      const quota::Reading& reading)
{
    std::vector<StorageSample> out;
    for (const auto& u : reading.usage) {
        StorageSample s;
        s.time = time;
        s.source = source;
        s.uid = uid;
        s.filesystem = u.filesystem;
        s.bytes_used = u.bytes_used;
        s.bytes_soft = u.bytes_soft;
        s.bytes_hard = u.bytes_hard;
        s.grace_expires = u.block_grace_expires;
        // A table's relative grace is turned into a time, so the history means the same
        // whenever it is read.
        if (!s.grace_expires && u.block_grace_left && *u.block_grace_left > 0)
            s.grace_expires = time + *u.block_grace_left;
        out.push_back(std::move(s));
    }
    return out;
}

std::string format_sample(const StorageSample& s)
{
    return std::to_string(s.time) + "," + field(s.source) + "," + std::to_string(s.uid) + "," +
           field(s.filesystem) + "," + std::to_string(s.bytes_used) + "," + opt_text(s.bytes_soft) +
           "," + opt_text(s.bytes_hard) + "," +
           (s.grace_expires ? std::to_string(*s.grace_expires) : "") + "\n";
}

StoreContent parse_store(std::string_view text)
{
    StoreContent out;
    size_t pos = 0;
    while (pos < text.size()) {
        size_t end = text.find('\n', pos);
        // A last line without its newline was cut short by a crash: not a sample.
        if (end == std::string_view::npos) {
            ++out.bad_lines;
            break;
        }
        const std::string_view line = text.substr(pos, end - pos);
        pos = end + 1;
        if (line.empty()) continue;
        if (auto s = parse_line(line))
            out.samples.push_back(std::move(*s));
        else
            ++out.bad_lines;
    }
    return out;
}

std::string_view store_tail(std::string_view text, size_t keep_bytes)
{
    if (text.size() <= keep_bytes) return text;
    const size_t start = text.size() - keep_bytes;
    const size_t nl = text.find('\n', start == 0 ? 0 : start - 1);
    if (nl == std::string_view::npos) return {};
    return text.substr(nl + 1);
}

Table storage_table(const std::vector<StorageSample>& samples, const StorageNames& names,
                    int64_t from, int64_t until)
{
    Table t;
    t.header = {"time",       "scope",      "name",       "team",       "source",
                "filesystem", "bytes_used", "bytes_soft", "bytes_hard", "grace_expires"};
    std::vector<const StorageSample*> in;
    for (const auto& s : samples)
        if (s.time >= from && s.time <= until) in.push_back(&s);
    std::stable_sort(in.begin(), in.end(), [](const StorageSample* a, const StorageSample* b) {
        return std::tie(a->time, a->uid, a->source) < std::tie(b->time, b->uid, b->source);
    });
    // (time, team, source) -> bytes, in order.
    std::map<std::tuple<int64_t, std::string, std::string>, uint64_t> teams;
    for (const StorageSample* s : in) {
        const std::string team = names.team(s->uid);
        t.rows.push_back({utc_time(s->time), "user", names.user(s->uid), team, s->source,
                          s->filesystem, std::to_string(s->bytes_used), opt_text(s->bytes_soft),
                          opt_text(s->bytes_hard),
                          s->grace_expires ? utc_time(*s->grace_expires) : ""});
        teams[{s->time, team, s->source}] += s->bytes_used;
    }
    for (const auto& [key, bytes] : teams) {
        const auto& [time, team, source] = key;
        t.rows.push_back(
            {utc_time(time), "team", team, team, source, "", std::to_string(bytes), "", "", ""});
    }
    return t;
}

}  // namespace allot::report
