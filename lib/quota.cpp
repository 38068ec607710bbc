// quota.cpp - quota source list, quota tables and recorder snapshots (see allot/quota.hpp).
#include "allot/quota.hpp"

#include <cctype>
#include <limits>
#include <sstream>

#include "allot/json.hpp"
#include "allot/units.hpp"

namespace allot::quota {
namespace {

constexpr const char* kTexts[] = {
    "success",
    "quota.conf is invalid",
    "no filesystem mounted there",
    "quotas are not enabled",
    "quotas not supported",
    "not a local block device with quotas",
    "not allowed to read quotas",
    "quotactl failed",
    "quota command failed",
    "quota command timed out",
    "quota data cannot be parsed",
};

constexpr size_t kMaxSources = 32;
constexpr size_t kMaxTableBytes = 1 << 20;
constexpr size_t kMaxRows = 256;
constexpr size_t kMaxSnapshotBytes = 64u << 20;

Error bad_conf(std::string detail)
{
    return make_error(Errc::QuotaConfInvalid, std::move(detail));
}

Error bad_data(std::string detail)
{
    return make_error(Errc::BadQuotaData, std::move(detail));
}

std::vector<std::string_view> split_ws(std::string_view line)
{
    std::vector<std::string_view> out;
    size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
        size_t j = i;
        while (j < line.size() && !std::isspace(static_cast<unsigned char>(line[j]))) ++j;
        if (j > i) out.push_back(line.substr(i, j - i));
        i = j;
    }
    return out;
}

std::string_view trim(std::string_view s)
{
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
}

bool valid_name(std::string_view name)
{
    if (name.empty() || name.size() > 32) return false;
    for (char c : name)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.')
            return false;
    return true;
}

// A limit or usage column: digits, optionally followed by '*' (over quota).
std::optional<uint64_t> parse_number_column(std::string_view text)
{
    if (!text.empty() && text.back() == '*') text.remove_suffix(1);
    // Multiplying KiB by 1024 must not overflow.
    return parse_count(text, UINT64_MAX / 1024);
}

std::optional<uint64_t> limit_or_none(uint64_t v)
{
    if (v == 0) return std::nullopt;
    return v;
}

}  // namespace

const std::error_category& category() noexcept
{
    static const ErrorArea area("quota", kTexts);
    return area;
}

const char* source_kind_name(SourceKind kind)
{
    switch (kind) {
        case SourceKind::Quotactl: return "quotactl";
        case SourceKind::Command: return "command";
        case SourceKind::Snapshot: return "snapshot";
    }
    return "?";
}

Result<std::vector<SourceSpec>> parse_sources(std::string_view text)
{
    if (text.size() > (64u << 10)) return bad_conf("quota.conf: larger than 64 KiB");
    std::vector<SourceSpec> out;
    std::string errors;
    size_t line_no = 0;
    size_t pos = 0;
    while (pos <= text.size()) {
        size_t end = text.find('\n', pos);
        if (end == std::string_view::npos) end = text.size();
        std::string_view line = text.substr(pos, end - pos);
        pos = end + 1;
        ++line_no;
        if (size_t hash = line.find('#'); hash != std::string_view::npos)
            line = line.substr(0, hash);
        line = trim(line);
        if (line.empty()) continue;
        auto words = split_ws(line);
        auto fail = [&](const std::string& why) {
            if (!errors.empty()) errors += "; ";
            errors += "quota.conf line " + std::to_string(line_no) + ": " + why;
        };
        if (words.size() < 3) {
            fail("expected `<name> <quotactl|command|snapshot> <argument>`");
            continue;
        }
        SourceSpec spec;
        if (!valid_name(words[0])) {
            fail("name must be 1-32 letters, digits, '-', '_' or '.'");
            continue;
        }
        spec.name = std::string(words[0]);
        if (words[1] == "quotactl") {
            spec.kind = SourceKind::Quotactl;
        } else if (words[1] == "command") {
            spec.kind = SourceKind::Command;
        } else if (words[1] == "snapshot") {
            spec.kind = SourceKind::Snapshot;
        } else {
            fail("unknown source kind '" + std::string(words[1]) +
                 "' (quotactl, command or snapshot)");
            continue;
        }
        // The argument is the rest of the line after the kind, whitespace kept.
        const size_t kind_at = static_cast<size_t>(words[1].data() - line.data());
        spec.argument = std::string(trim(line.substr(kind_at + words[1].size())));
        if (spec.kind != SourceKind::Command &&
            spec.argument.find_first_of(" \t") != std::string::npos) {
            fail("path must be a single word");
            continue;
        }
        if (spec.kind != SourceKind::Command && spec.argument.front() != '/') {
            fail("path must be absolute");
            continue;
        }
        if (out.size() >= kMaxSources) {
            fail("more than 32 sources");
            break;
        }
        out.push_back(std::move(spec));
        if (end == text.size()) break;
    }
    if (!errors.empty()) return bad_conf(errors);
    return out;
}

std::vector<std::string> command_argv(const std::string& command, const std::string& user,
                                      uint32_t uid)
{
    std::vector<std::string> argv;
    for (auto word : split_ws(command)) {
        std::string w(word);
        for (const auto& [key, value] : {std::pair<std::string, std::string>{"{user}", user},
                                         {"{uid}", std::to_string(uid)}}) {
            size_t at = 0;
            while ((at = w.find(key, at)) != std::string::npos) {
                w.replace(at, key.size(), value);
                at += value.size();
            }
        }
        argv.push_back(std::move(w));
    }
    return argv;
}

std::optional<Grace> parse_grace(std::string_view text)
{
    text = trim(text);
    if (text.empty()) return std::nullopt;
    if (text == "-" || text == "none" || text == "0") return Grace{};
    // A plain number: quota -p prints the absolute expiry in seconds since the epoch.
    if (auto n = parse_count(text, static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))) {
        Grace g;
        if (*n > 1000000000ULL)
            g.expires = static_cast<int64_t>(*n);
        else
            g.left = static_cast<int64_t>(*n);
        return g;
    }
    // hh:mm (quota without -p prints this for less than a day)
    if (auto colon = text.find(':'); colon != std::string_view::npos) {
        auto h = parse_count(text.substr(0, colon), 1000000);
        auto m = parse_count(text.substr(colon + 1), 59);
        if (!h || !m) return std::nullopt;
        Grace g;
        g.left = static_cast<int64_t>(*h * 3600 + *m * 60);
        return g;
    }
    // Units: w d h m s, e.g. "6d23h59m59s", "7days", "1w2d". "expired"/"none" handled above.
    if (text == "expired") {
        Grace g;
        g.left = 0;
        return g;
    }
    int64_t total = 0;
    size_t i = 0;
    bool any = false;
    while (i < text.size()) {
        size_t j = i;
        while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
        if (j == i || j - i > 9) return std::nullopt;
        auto n = parse_count(text.substr(i, j - i));
        if (!n) return std::nullopt;
        size_t k = j;
        while (k < text.size() && std::isalpha(static_cast<unsigned char>(text[k]))) ++k;
        std::string_view unit = text.substr(j, k - j);
        int64_t mult;
        if (unit == "w" || unit == "week" || unit == "weeks")
            mult = 7 * 86400;
        else if (unit == "d" || unit == "day" || unit == "days")
            mult = 86400;
        else if (unit == "h" || unit == "hour" || unit == "hours")
            mult = 3600;
        else if (unit == "m" || unit == "min" || unit == "mins" || unit == "minutes")
            mult = 60;
        else if (unit == "s" || unit == "sec" || unit == "secs" || unit == "seconds")
            mult = 1;
        else
            return std::nullopt;
        total += static_cast<int64_t>(*n) * mult;
        any = true;
        i = k;
    }
    if (!any) return std::nullopt;
    Grace g;
    g.left = total;
    return g;
}

Result<std::vector<Usage>> parse_quota_table(std::string_view text)
{
    if (text.size() > kMaxTableBytes) return bad_data("quota output larger than 1 MiB");
    std::vector<Usage> rows;
    std::string pending_fs;  // a filesystem name printed alone, continued on the next line
    size_t pos = 0;
    bool saw_header = false;
    while (pos < text.size()) {
        size_t end = text.find('\n', pos);
        if (end == std::string_view::npos) end = text.size();
        std::string_view line = text.substr(pos, end - pos);
        pos = end + 1;
        auto words = split_ws(line);
        if (words.empty()) continue;
        if (words[0] == "Filesystem") {
            saw_header = true;
            continue;
        }
        if (words[0] == "Disk" || words[0] == "Total" || words[0] == "uid" || words[0] == "gid" ||
            words[0] == "Some")
            continue;
        if (!saw_header) continue;
        if (words.size() == 1) {
            pending_fs = std::string(words[0]);
            continue;
        }
        // With a carried-over filesystem the row has 8 columns, otherwise 9. lfs
        // leaves the grace column empty when not in grace, giving 7 or 8.
        std::string fs;
        size_t first = 0;
        if (!pending_fs.empty() && std::isdigit(static_cast<unsigned char>(words[0][0]))) {
            fs = pending_fs;
        } else {
            fs = std::string(words[0]);
            first = 1;
        }
        pending_fs.clear();
        std::vector<std::string_view> cols(words.begin() + static_cast<long>(first), words.end());
        // Columns: used soft hard [grace] files soft hard [grace]
        Usage u;
        u.filesystem = fs;
        auto num = [&](size_t i) -> std::optional<uint64_t> {
            return i < cols.size() ? parse_number_column(cols[i]) : std::nullopt;
        };
        std::optional<uint64_t> used, soft, hard, fused, fsoft, fhard;
        std::optional<Grace> bgrace, fgrace;
        if (cols.size() == 8) {
            used = num(0), soft = num(1), hard = num(2);
            bgrace = parse_grace(cols[3]);
            fused = num(4), fsoft = num(5), fhard = num(6);
            fgrace = parse_grace(cols[7]);
        } else if (cols.size() == 7) {
            // One grace column missing: decide which by whether cols[3] is a number
            // that fits the file columns.
            used = num(0), soft = num(1), hard = num(2);
            if (parse_number_column(cols[3]) && parse_number_column(cols[4]) &&
                parse_number_column(cols[5]) && !parse_number_column(cols[6])) {
                fused = num(3), fsoft = num(4), fhard = num(5);
                bgrace = Grace{};
                fgrace = parse_grace(cols[6]);
            } else {
                bgrace = parse_grace(cols[3]);
                fused = num(4), fsoft = num(5), fhard = num(6);
                fgrace = Grace{};
            }
        } else if (cols.size() == 6) {
            used = num(0), soft = num(1), hard = num(2);
            fused = num(3), fsoft = num(4), fhard = num(5);
            bgrace = Grace{}, fgrace = Grace{};
        } else {
            return bad_data("quota output: row for '" + fs.substr(0, 64) + "' has " +
                            std::to_string(cols.size()) + " columns, expected 6 to 8");
        }
        if (!used || !soft || !hard || !fused || !fsoft || !fhard || !bgrace || !fgrace)
            return bad_data("quota output: unreadable numbers in the row for '" + fs.substr(0, 64) +
                            "'");
        u.bytes_used = *used * 1024;
        if (*soft) u.bytes_soft = *soft * 1024;
        if (*hard) u.bytes_hard = *hard * 1024;
        u.files_used = *fused;
        u.files_soft = limit_or_none(*fsoft);
        u.files_hard = limit_or_none(*fhard);
        u.block_grace_expires = bgrace->expires;
        u.block_grace_left = bgrace->left;
        u.file_grace_expires = fgrace->expires;
        u.file_grace_left = fgrace->left;
        if (rows.size() >= kMaxRows) return bad_data("quota output: more than 256 rows");
        rows.push_back(std::move(u));
    }
    if (!saw_header) return bad_data("quota output: no 'Filesystem' header line");
    return rows;
}

Result<Snapshot> parse_snapshot(std::string_view json, const std::string& user, uint32_t uid)
{
    if (json.size() > kMaxSnapshotBytes) return bad_data("snapshot larger than 64 MiB");
    JsonPtr root = json_parse(json, kMaxSnapshotBytes);
    if (!root || !cJSON_IsObject(root.get())) return bad_data("snapshot is not a JSON object");
    auto schema = json_string(root.get(), "schema");
    if (!schema || *schema != "allot.quota-snapshot/1")
        return bad_data("snapshot: schema must be \"allot.quota-snapshot/1\"");
    auto generated = json_integer(root.get(), "generated_at", 0, INT64_MAX / 2);
    if (!generated) return bad_data("snapshot: generated_at must be a unix time");
    std::string fs = json_string(root.get(), "filesystem").value_or("");
    const cJSON* entries = cJSON_GetObjectItemCaseSensitive(root.get(), "entries");
    if (!cJSON_IsArray(entries)) return bad_data("snapshot: entries must be an array");
    Snapshot snap;
    snap.generated_at = *generated;
    const int64_t kMax = INT64_MAX / 2;
    const cJSON* e = nullptr;
    cJSON_ArrayForEach(e, entries)
    {
        if (!cJSON_IsObject(e)) return bad_data("snapshot: an entry is not an object");
        auto kind = json_string(e, "kind").value_or("user");
        if (kind != "user") continue;
        auto name = json_string(e, "name");
        auto id = json_integer(e, "id", 0, UINT32_MAX);
        const bool mine = (name && *name == user) || (!name && id && *id == uid);
        if (!mine) continue;
        if (id && *id != uid)
            return bad_data("snapshot: entry for " + user + " has uid " + std::to_string(*id) +
                            ", expected " + std::to_string(uid));
        Usage u;
        u.filesystem = json_string(e, "filesystem").value_or(fs);
        auto used = json_integer(e, "bytes_used", 0, kMax);
        if (!used) return bad_data("snapshot: bytes_used missing or invalid for " + user);
        u.bytes_used = static_cast<uint64_t>(*used);
        auto opt = [&](const char* key, std::optional<uint64_t>& out) -> bool {
            const cJSON* item = cJSON_GetObjectItemCaseSensitive(e, key);
            if (!item || cJSON_IsNull(item)) return true;
            auto v = json_integer(e, key, 0, kMax);
            if (!v) return false;
            if (*v > 0) out = static_cast<uint64_t>(*v);
            return true;
        };
        std::optional<uint64_t> files_used, grace;
        if (!opt("bytes_soft", u.bytes_soft) || !opt("bytes_hard", u.bytes_hard) ||
            !opt("files_used", files_used) || !opt("files_soft", u.files_soft) ||
            !opt("files_hard", u.files_hard) || !opt("grace_expires", grace))
            return bad_data("snapshot: a limit of " + user + " is not a whole number ≥ 0");
        u.files_used = files_used.value_or(0);
        if (grace) u.block_grace_expires = static_cast<int64_t>(*grace);
        snap.usage.push_back(std::move(u));
        if (snap.usage.size() > kMaxRows) return bad_data("snapshot: too many entries for user");
    }
    return snap;
}

}  // namespace allot::quota
