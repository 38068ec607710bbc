// render.cpp - text and JSON renderers of the mylimits report (see render.hpp).
#include "render.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "allot/json.hpp"
#include "allot/units.hpp"

namespace allot::limits {
namespace {

struct Style {
    bool on = false;
    std::string bold(const std::string& s) const { return on ? "\033[1m" + s + "\033[0m" : s; }
    std::string red(const std::string& s) const { return on ? "\033[31m" + s + "\033[0m" : s; }
    std::string yellow(const std::string& s) const { return on ? "\033[33m" + s + "\033[0m" : s; }
};

// Control characters from Slurm strings (job names, reasons) would move the
// cursor or recolour the terminal; they become '?'.
std::string clean(std::string s)
{
    for (auto& c : s)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
    return s;
}

// Fixed-width cell: padded, or cut with a '+' marking the cut so columns never shift.
std::string cell(const std::string& s, size_t width)
{
    if (s.size() > width) return s.substr(0, width - 1) + "+";
    return s + std::string(width - s.size(), ' ');
}

std::string rcell(const std::string& s, size_t width)
{
    if (s.size() > width) return s.substr(0, width - 1) + "+";
    return std::string(width - s.size(), ' ') + s;
}

// Cuts a finished line to the width; a safety net for long names in free text.
std::string fit(std::string line, size_t width)
{
    line = clean(std::move(line));
    while (!line.empty() && line.back() == ' ') line.pop_back();
    if (line.size() > width) line = line.substr(0, width - 1) + "+";
    return line + "\n";
}

// A line whose first part is bold: fitted on the plain text, then coloured.
std::string bold_fit(const Style& st, const std::string& bold_part, const std::string& rest,
                     size_t width)
{
    std::string plain = fit(bold_part + rest, width);
    if (!st.on) return plain;
    plain.pop_back();
    const size_t b = std::min(bold_part.size(), plain.size());
    return st.bold(plain.substr(0, b)) + plain.substr(b) + "\n";
}

std::string opt_num(const std::optional<uint64_t>& n)
{
    return n ? std::to_string(*n) : "-";
}

const char* tier_label(Tier t)
{
    switch (t) {
        case Tier::Project: return "project";
        case Tier::General: return "general";
        case Tier::Spot: return "spot";
        case Tier::None: return "other";
    }
    return "other";
}

std::string plural(uint64_t n, const char* word)
{
    return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

std::string grace_text(const quota::Usage& u, int64_t now)
{
    if (!u.over_soft()) return "-";
    if (u.block_grace_expires) {
        const int64_t left = *u.block_grace_expires - now;
        if (left <= 0) return "expired";
        return format_minutes(static_cast<uint32_t>((left + 59) / 60)) + " left";
    }
    if (u.block_grace_left) {
        if (*u.block_grace_left <= 0) return "expired";
        return format_minutes(static_cast<uint32_t>((*u.block_grace_left + 59) / 60)) + " left";
    }
    return "over soft";
}

// cJSON helpers: integers above 2^53 cannot be exact in JSON numbers; our values never are.
void add_int(cJSON* o, const char* k, int64_t v)
{
    cJSON_AddItemToObject(o, k, cJSON_CreateNumber(static_cast<double>(v)));
}
void add_opt(cJSON* o, const char* k, const std::optional<uint64_t>& v)
{
    if (v)
        add_int(o, k, static_cast<int64_t>(*v));
    else
        cJSON_AddItemToObject(o, k, cJSON_CreateNull());
}
// A new object at the end of `array`.
cJSON* append_object(cJSON* array)
{
    cJSON* o = cJSON_CreateObject();
    cJSON_AddItemToArray(array, o);
    return o;
}
void add_opt_i(cJSON* o, const char* k, const std::optional<int64_t>& v)
{
    if (v)
        add_int(o, k, *v);
    else
        cJSON_AddItemToObject(o, k, cJSON_CreateNull());
}
void add_str(cJSON* o, const char* k, const std::string& v)
{
    cJSON_AddItemToObject(o, k, cJSON_CreateString(v.c_str()));
}
void add_bool(cJSON* o, const char* k, bool v)
{
    cJSON_AddItemToObject(o, k, cJSON_CreateBool(v));
}

}  // namespace

std::string format_bytes(uint64_t bytes)
{
    static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (bytes < 1024) return std::to_string(bytes) + " B";
    double v = static_cast<double>(bytes);
    int u = 0;
    while (v >= 1024.0 && u < 6) {
        v /= 1024.0;
        ++u;
    }
    char buf[32];
    if (v < 10.0)
        std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
    else
        std::snprintf(buf, sizeof buf, "%.0f %s", v, units[u]);
    return buf;
}

std::string wrap(const std::string& text, size_t indent, size_t width)
{
    const size_t avail = width > indent + 10 ? width - indent : 10;
    std::string out, line;
    std::istringstream words(clean(text));
    std::string w;
    auto flush = [&] {
        if (!line.empty()) out += std::string(indent, ' ') + line + "\n";
        line.clear();
    };
    while (words >> w) {
        while (w.size() > avail) {  // a word longer than a line: hard cut
            flush();
            out += std::string(indent, ' ') + w.substr(0, avail) + "\n";
            w = w.substr(avail);
        }
        if (!line.empty() && line.size() + 1 + w.size() > avail) flush();
        if (!line.empty()) line += ' ';
        line += w;
    }
    flush();
    return out;
}

std::string render_text(const Report& report, const TextOptions& options)
{
    const Style st{options.color};
    const size_t W = options.width < 60 ? 60 : options.width;
    std::string out;

    out += bold_fit(st, "mylimits",
                    " for " + report.user.name + " (uid " + std::to_string(report.user.uid) +
                        ") on cluster " + report.cluster,
                    W);
    if (!report.user.known_to_slurm) {
        out += "\n";
        out +=
            wrap("You have no Slurm account yet, so you cannot submit jobs. " + report.join_hint +
                     "." + (report.support.empty() ? "" : " Questions: " + report.support + "."),
                 2, W);
    }

    // ------------------------------------------------------------ accounts
    if (!report.accounts.empty()) {
        std::string list;
        for (const auto& a : report.accounts) {
            if (!list.empty()) list += ", ";
            list += a.account + (a.is_default ? " (default)" : "");
        }
        out += wrap("Accounts: " + list, 0, W);
    }
    if (report.only_default_account) {
        out += "\n";
        out += st.yellow("You are in no team yet.") + "\n";
        out += wrap(
            "Your only account gives 0 GPUs: GPU jobs cannot run, CPU jobs can. To get "
            "GPUs: " +
                report.join_hint + "." +
                (report.support.empty() ? "" : " Questions: " + report.support + "."),
            2, W);
    }

    for (const auto& a : report.accounts) {
        out += "\n";
        std::string head = "Account " + a.account;
        if (a.is_default) head += " (default)";
        if (!a.description.empty()) head += " - " + a.description;
        out += bold_fit(st, head, "", W);
        if (a.zero_gpu) {
            out += wrap(
                "no GPUs: the landing account for users in no team. CPU-only jobs run; GPU "
                "jobs cannot.",
                2, W);
            continue;
        }
        //              2 + 8 + 11 + 6 + 6 + 8 + 5 + 12 + 11 = 69 columns
        out += fit("  " + cell("TIER", 8) + cell("QOS", 11) + rcell("CAP", 5) + " " +
                       rcell("TEAM", 5) + " " + rcell("POOL", 7) + " " + rcell("YOU", 4) + "  " +
                       cell("MAX TIME", 12) + "PREEMPTIBLE",
                   W);
        std::vector<std::string> denied;
        for (const auto& t : a.tiers) {
            std::string cap, team, pool;
            switch (t.tier) {
                case Tier::Project:
                    cap = opt_num(t.cap_gpus);
                    team = opt_num(t.team_in_use);
                    pool = "-";
                    break;
                case Tier::General:
                    cap = opt_num(t.team_cap_gpus ? t.team_cap_gpus : t.cap_gpus);
                    team = opt_num(t.team_in_use);
                    pool = t.cap_gpus ? opt_num(t.pool_in_use) + "/" + std::to_string(*t.cap_gpus)
                                      : opt_num(t.pool_in_use);
                    break;
                default:
                    cap = t.cap_gpus ? std::to_string(*t.cap_gpus) : "none";
                    team = opt_num(t.team_in_use);
                    pool = opt_num(t.pool_in_use);
                    break;
            }
            std::string wall = !t.max_wall_minutes || *t.max_wall_minutes == kUnlimitedMinutes
                                   ? "unlimited"
                                   : format_minutes(*t.max_wall_minutes);
            std::string preempt = t.preemptible ? "yes, requeued" : "no";
            std::string qos = t.qos + (t.allowed ? "" : "*");
            out +=
                fit("  " + cell(tier_label(t.tier), 8) + cell(qos, 11) + rcell(cap, 5) + " " +
                        rcell(team, 5) + " " + rcell(pool, 7) + " " +
                        rcell(std::to_string(t.user_in_use), 4) + "  " + cell(wall, 12) + preempt,
                    W);
            if (!t.allowed) denied.push_back(t.qos + (t.qos_exists ? "" : " (no such QOS)"));
        }
        if (a.tiers.empty()) out += "  no allot tiers configured for this account\n";
        if (!denied.empty()) {
            std::string d;
            for (const auto& s : denied) d += (d.empty() ? "" : ", ") + s;
            out += wrap("* not in your QOS list for " + a.account + ", so --qos=" + denied.front() +
                            " is refused: " + d,
                        2, W);
        }
    }
    bool any_tiers = false;
    for (const auto& a : report.accounts)
        any_tiers = any_tiers || (!a.zero_gpu && !a.tiers.empty());
    if (any_tiers)
        out += "\n" + wrap(
                          "CAP: GPUs your team may run at once in the tier (general: per team). "
                          "TEAM, YOU: GPUs running now. POOL: general pool in use/size.",
                          0, W);

    // ------------------------------------------------------------ jobs
    uint32_t running = 0, pending = 0;
    uint64_t rgpus = 0, pgpus = 0;
    for (const auto& j : report.jobs) {
        if (j.running) ++running, rgpus += j.job.gpus;
        if (j.pending) ++pending, pgpus += j.job.gpus;
    }
    out += "\n";
    out += bold_fit(st, "Jobs",
                    ": " + std::to_string(running) + " running (" + plural(rgpus, "GPU") + "), " +
                        std::to_string(pending) + " pending (" + plural(pgpus, "GPU") + ")",
                    W);
    for (const auto& a : report.accounts)
        for (const auto& t : a.tiers)
            if (t.running_jobs || t.pending_jobs)
                out +=
                    fit("  " + cell(a.account + "/" + tier_label(t.tier), 24) +
                            std::to_string(t.running_jobs) + " running (" +
                            plural(t.running_gpus, "GPU") + "), " + std::to_string(t.pending_jobs) +
                            " pending (" + plural(t.pending_gpus, "GPU") + ")",
                        W);
    if (!report.jobs.empty()) {
        out += fit("  " + cell("JOBID", 12) + cell("TIER", 8) + cell("ACCOUNT", 11) +
                       rcell("GPUS", 4) + "  " + cell("STATE", 10) + "REASON",
                   W);
        size_t shown = 0;
        for (const auto& j : report.jobs) {
            if (options.max_jobs && shown >= options.max_jobs) break;
            ++shown;
            std::string reason = j.pending ? j.job.reason : "";
            if (j.requeued_after_preemption)
                reason += (reason.empty() ? "" : " ") +
                          std::string("(requeued " + std::to_string(j.job.restarts) + "x)");
            std::string state = j.job.state;
            std::string line = "  " + cell(j.job.display_id, 12) + cell(tier_label(j.tier), 8) +
                               cell(j.job.account, 11) + rcell(std::to_string(j.job.gpus), 4) +
                               "  " + cell(state, 10);
            const bool never = j.explanation.find("never start") != std::string::npos;
            // Fit on the plain text, then colour, so escapes never count as columns.
            std::string plain = fit(line + reason, W);
            if (st.on && !reason.empty() && plain.size() > line.size() + 1) {
                std::string tail = plain.substr(line.size(), plain.size() - line.size() - 1);
                out += line + (never ? st.red(tail) : st.yellow(tail)) + "\n";
            } else {
                out += plain;
            }
            if (!j.explanation.empty()) out += wrap(j.explanation, 4, W);
        }
        if (shown < report.jobs.size())
            out += "  ... " + std::to_string(report.jobs.size() - shown) +
                   " more jobs (mylimits --all lists every job)\n";
    }

    // ------------------------------------------------------------ storage
    out += "\n" + bold_fit(st, "Storage", "", W);
    if (report.storage_skipped)
        out += "  not checked (--no-quota)\n";
    else if (report.storage.empty())
        out += "  no quota source configured (see mylimits(1), quota.conf)\n";
    bool header = false;
    for (const auto& s : report.storage) {
        if (!s.reading.ok()) {
            out += wrap(s.name + ": not available: " + s.reading.error().describe(), 2, W);
            continue;
        }
        const quota::Reading& reading = s.reading.value();
        if (reading.usage.empty()) {
            out += wrap(s.name + ": no quota set for you (" + s.where + ")", 2, W);
            continue;
        }
        if (!header) {
            out += fit("  " + cell("NAME", 9) + cell("FILESYSTEM", 18) + rcell("USED", 9) +
                           rcell("SOFT", 10) + rcell("HARD", 10) + "  GRACE",
                       W);
            header = true;
        }
        for (const auto& u : reading.usage) {
            std::string used = format_bytes(u.bytes_used);
            std::string soft = u.bytes_soft ? format_bytes(*u.bytes_soft) : "none";
            std::string hard = u.bytes_hard ? format_bytes(*u.bytes_hard) : "none";
            std::string grace = grace_text(u, report.generated_at);
            std::string line = "  " + cell(s.name, 9) + cell(u.filesystem, 18) + rcell(used, 9) +
                               rcell(soft, 10) + rcell(hard, 10) + "  " + grace;
            std::string plain = fit(line, W);
            if (st.on && (u.over_hard() || u.over_soft())) {
                plain.pop_back();
                out += (u.over_hard() ? st.red(plain) : st.yellow(plain)) + "\n";
            } else {
                out += plain;
            }
            if (u.files_soft || u.files_hard)
                out += fit("  " + cell("", 9) + cell("files", 18) +
                               rcell(std::to_string(u.files_used), 9) +
                               rcell(opt_num(u.files_soft), 10) + rcell(opt_num(u.files_hard), 10),
                           W);
        }
        const auto& taken = reading.snapshot_time;
        if (taken && report.generated_at > *taken + 2 * 3600)
            out += wrap(s.name + ": figures are from a snapshot " +
                            std::to_string((report.generated_at - *taken) / 3600) + " hours old",
                        2, W);
    }

    if (!report.notes.empty()) {
        out += "\n";
        for (const auto& n : report.notes) out += wrap("note: " + n, 0, W);
    }
    return out;
}

std::string render_json(const Report& report)
{
    JsonPtr root(cJSON_CreateObject());
    cJSON* r = root.get();
    add_str(r, "schema", kJsonSchemaId);
    add_int(r, "version", kJsonSchemaVersion);
    add_int(r, "generated_at", report.generated_at);
    add_str(r, "cluster", report.cluster);

    cJSON* user = cJSON_AddObjectToObject(r, "user");
    add_str(user, "name", report.user.name);
    add_int(user, "uid", report.user.uid);
    if (report.user.default_account.empty())
        cJSON_AddItemToObject(user, "default_account", cJSON_CreateNull());
    else
        add_str(user, "default_account", report.user.default_account);
    add_bool(user, "known_to_slurm", report.user.known_to_slurm);
    add_bool(r, "only_default_account", report.only_default_account);
    add_str(r, "join_hint", report.join_hint);

    cJSON* accounts = cJSON_AddArrayToObject(r, "accounts");
    for (const auto& a : report.accounts) {
        cJSON* o = append_object(accounts);
        add_str(o, "name", a.account);
        add_bool(o, "default", a.is_default);
        add_bool(o, "team", a.is_team);
        add_bool(o, "zero_gpu", a.zero_gpu);
        add_str(o, "description", a.description);
        add_opt(o, "gpu_limit", a.grp_gpus);
        add_opt(o, "gpus_in_use", a.account_gpus_in_use);
        cJSON* tiers = cJSON_AddArrayToObject(o, "tiers");
        for (const auto& t : a.tiers) {
            cJSON* to = append_object(tiers);
            add_str(to, "tier", tier_label(t.tier));
            add_str(to, "qos", t.qos);
            add_bool(to, "allowed", t.allowed);
            add_bool(to, "qos_exists", t.qos_exists);
            add_opt(to, "gpu_cap", t.cap_gpus);
            add_opt(to, "team_gpu_cap", t.team_cap_gpus);
            add_opt(to, "user_gpu_cap", t.user_cap_gpus);
            if (t.max_wall_minutes && *t.max_wall_minutes != kUnlimitedMinutes)
                add_int(to, "max_wall_minutes", *t.max_wall_minutes);
            else
                cJSON_AddItemToObject(to, "max_wall_minutes", cJSON_CreateNull());
            add_bool(to, "preemptible", t.preemptible);
            add_opt(to, "pool_gpus_in_use", t.pool_in_use);
            add_opt(to, "team_gpus_in_use", t.team_in_use);
            add_int(to, "user_gpus_in_use", static_cast<int64_t>(t.user_in_use));
            add_int(to, "running_jobs", t.running_jobs);
            add_int(to, "pending_jobs", t.pending_jobs);
            add_int(to, "running_gpus", static_cast<int64_t>(t.running_gpus));
            add_int(to, "pending_gpus", static_cast<int64_t>(t.pending_gpus));
        }
    }

    cJSON* jobs = cJSON_AddArrayToObject(r, "jobs");
    for (const auto& j : report.jobs) {
        cJSON* o = append_object(jobs);
        add_int(o, "job_id", j.job.job_id);
        add_str(o, "id", j.job.display_id);
        add_str(o, "name", j.job.name);
        add_str(o, "state", j.job.state);
        add_str(o, "reason", j.job.reason);
        if (j.explanation.empty())
            cJSON_AddItemToObject(o, "explanation", cJSON_CreateNull());
        else
            add_str(o, "explanation", j.explanation);
        add_str(o, "account", j.job.account);
        add_str(o, "qos", j.job.qos);
        if (j.tier == Tier::None)
            cJSON_AddItemToObject(o, "tier", cJSON_CreateNull());
        else
            add_str(o, "tier", tier_label(j.tier));
        add_str(o, "partition", j.job.partition);
        add_int(o, "gpus", static_cast<int64_t>(j.job.gpus));
        add_int(o, "restarts", j.job.restarts);
        add_bool(o, "requeued_after_preemption", j.requeued_after_preemption);
        add_opt_i(o, "submit_time",
                  j.job.submit_time ? std::optional<int64_t>(j.job.submit_time) : std::nullopt);
        add_opt_i(o, "start_time",
                  j.job.start_time ? std::optional<int64_t>(j.job.start_time) : std::nullopt);
        if (j.job.time_limit_minutes && j.job.time_limit_minutes != kUnlimitedMinutes)
            add_int(o, "time_limit_minutes", j.job.time_limit_minutes);
        else
            cJSON_AddItemToObject(o, "time_limit_minutes", cJSON_CreateNull());
    }

    cJSON* storage = cJSON_AddArrayToObject(r, "storage");
    for (const auto& s : report.storage) {
        cJSON* o = append_object(storage);
        add_str(o, "name", s.name);
        add_str(o, "source", quota::source_kind_name(s.kind));
        add_str(o, "where", s.where);
        add_bool(o, "ok", s.reading.ok());
        if (!s.reading.ok()) {
            add_str(o, "error", s.reading.error().describe());
            add_opt_i(o, "snapshot_time", std::nullopt);
            cJSON_AddArrayToObject(o, "usage");
            continue;
        }
        cJSON_AddItemToObject(o, "error", cJSON_CreateNull());
        const quota::Reading& reading = s.reading.value();
        add_opt_i(o, "snapshot_time", reading.snapshot_time);
        cJSON* usage = cJSON_AddArrayToObject(o, "usage");
        for (const auto& u : reading.usage) {
            cJSON* uo = append_object(usage);
            add_str(uo, "filesystem", u.filesystem);
            add_int(uo, "bytes_used", static_cast<int64_t>(u.bytes_used));
            add_opt(uo, "bytes_soft", u.bytes_soft);
            add_opt(uo, "bytes_hard", u.bytes_hard);
            add_int(uo, "files_used", static_cast<int64_t>(u.files_used));
            add_opt(uo, "files_soft", u.files_soft);
            add_opt(uo, "files_hard", u.files_hard);
            add_opt_i(uo, "grace_expires", u.block_grace_expires);
            add_opt_i(uo, "grace_seconds_left", u.block_grace_left);
        }
    }

    cJSON* notes = cJSON_AddArrayToObject(r, "notes");
    for (const auto& n : report.notes) cJSON_AddItemToArray(notes, cJSON_CreateString(n.c_str()));

    char* text = cJSON_Print(r);
    if (!text) return "{}\n";
    std::string out(text);
    cJSON_free(text);
    return out + "\n";
}

}  // namespace allot::limits
