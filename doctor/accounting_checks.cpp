// accounting_checks.cpp - see accounting_checks.hpp.
#include "accounting_checks.hpp"

#include <algorithm>
#include <cctype>
#include <ctime>

#include "slurm_checks.hpp"

namespace allot::doctor {

namespace {

std::vector<std::string> split(std::string_view text, char sep)
{
    std::vector<std::string> parts;
    size_t start = 0;
    while (true) {
        size_t at = text.find(sep, start);
        parts.emplace_back(text.substr(start, at == std::string_view::npos ? at : at - start));
        if (at == std::string_view::npos) return parts;
        start = at + 1;
    }
}

std::vector<std::string_view> lines_of(std::string_view text)
{
    std::vector<std::string_view> lines;
    size_t start = 0;
    while (start < text.size()) {
        size_t nl = text.find('\n', start);
        if (nl == std::string_view::npos) nl = text.size();
        if (nl > start) lines.push_back(text.substr(start, nl - start));
        start = nl + 1;
    }
    return lines;
}

std::string lower(std::string s)
{
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

const QosRow* find_qos(const AccountingInputs& in, const std::string& name)
{
    auto it =
        std::find_if(in.qos.begin(), in.qos.end(), [&](const QosRow& q) { return q.name == name; });
    return it == in.qos.end() ? nullptr : &*it;
}

std::string team_qos(const TeamConfig& team)
{
    return team.qos.empty() ? team.account : team.qos;
}

// The QOS allot-syncd keeps: every team's project QOS, then general and spot.
std::vector<std::string> governed_qos(const Config& config)
{
    std::vector<std::string> names;
    for (const TeamConfig& t : config.teams) names.push_back(team_qos(t));
    names.push_back(config.tiers.general.qos);
    names.push_back(config.tiers.spot.qos);
    return names;
}

const char* kSyncdFix = " (or run `allot-syncd --once`, which writes it)";

std::optional<uint64_t> parse_number(std::string_view text)
{
    if (text.empty() || text.size() > 18 ||
        !std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); }))
        return std::nullopt;
    return std::stoull(std::string(text));
}

// "64G" → 65536 (MB); a bare number is MB.
std::optional<uint64_t> parse_mem_mb(std::string_view text)
{
    if (text.empty()) return std::nullopt;
    uint64_t scale_kb = 1024;
    switch (std::toupper(static_cast<unsigned char>(text.back()))) {
        case 'K': scale_kb = 1; break;
        case 'M': scale_kb = 1024; break;
        case 'G': scale_kb = 1024 * 1024; break;
        case 'T': scale_kb = 1024ull * 1024 * 1024; break;
        default: return parse_number(text);
    }
    std::optional<uint64_t> n = parse_number(text.substr(0, text.size() - 1));
    if (!n) return std::nullopt;
    return *n * scale_kb / 1024;
}

}  // namespace

Tres parse_tres(std::string_view text)
{
    Tres out;
    for (const std::string& item : split(text, ',')) {
        size_t eq = item.find('=');
        if (eq == std::string::npos) continue;
        std::string key = item.substr(0, eq);
        std::string_view value = std::string_view(item).substr(eq + 1);
        std::optional<uint64_t> n = key == "mem" ? parse_mem_mb(value) : parse_number(value);
        if (n) out[key] = *n;
    }
    return out;
}

std::vector<Transaction> parse_transactions(std::string_view text)
{
    std::vector<Transaction> out;
    for (std::string_view line : lines_of(text)) {
        std::vector<std::string> f = split(line, '|');
        if (f.size() < 4) continue;
        struct tm tm = {};
        const char* end = strptime(f[0].c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
        if (!end || *end) continue;
        tm.tm_isdst = -1;
        out.push_back({int64_t(mktime(&tm)), f[1], f[2], f[3]});
    }
    return out;
}

std::optional<uint32_t> parse_duration(std::string_view text)
{
    if (text.empty()) return std::nullopt;
    uint32_t days = 0;
    size_t dash = text.find('-');
    if (dash != std::string_view::npos) {
        for (char c : text.substr(0, dash))
            if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
        days = static_cast<uint32_t>(std::stoul(std::string(text.substr(0, dash))));
        text = text.substr(dash + 1);
    }
    uint32_t total = 0;
    for (const std::string& part : split(text, ':')) {
        if (part.empty() || part.size() > 9 ||
            !std::all_of(part.begin(), part.end(), [](unsigned char c) { return std::isdigit(c); }))
            return std::nullopt;
        total = total * 60 + static_cast<uint32_t>(std::stoul(part));
    }
    return days * 86400 + total;
}

std::vector<QosRow> parse_qos_rows(std::string_view text)
{
    std::vector<QosRow> rows;
    for (std::string_view line : lines_of(text)) {
        std::vector<std::string> f = split(line, '|');
        if (f.size() < 4 || f[0].empty()) continue;
        QosRow row;
        row.name = f[0];
        row.preempt = split_list(f[1]);
        row.preempt_mode = lower(f[2]);
        row.grace_seconds = parse_duration(f[3]);
        if (f.size() >= 8) {
            row.has_limits = true;
            row.grp_tres = parse_tres(f[4]);
            row.max_tres_pa = parse_tres(f[5]);
            row.max_wall_minutes = parse_duration(f[6]).value_or(0) / 60;
            row.priority = static_cast<uint32_t>(parse_number(f[7]).value_or(0));
        }
        rows.push_back(std::move(row));
    }
    return rows;
}

std::vector<std::string> parse_account_rows(std::string_view text)
{
    std::vector<std::string> accounts;
    for (std::string_view line : lines_of(text)) {
        std::string name(line.substr(0, line.find('|')));
        if (!name.empty()) accounts.push_back(name);
    }
    return accounts;
}

Findings check_qos_exist(const AccountingInputs& in, const Config& config)
{
    Findings out;
    for (const std::string& name : governed_qos(config)) {
        std::string id = "accounting.qos." + name;
        if (find_qos(in, name)) {
            out.push_back(ok(id, "QOS \"" + name + "\" exists"));
            continue;
        }
        out.push_back(problem(Severity::Fail, id, "QOS \"" + name + "\" does not exist",
                              "jobs routed to it are rejected, and its GPU limits are not "
                              "enforced.",
                              "`sacctmgr -i add qos " + name + "`" + kSyncdFix));
    }
    return out;
}

Finding check_default_account(const AccountingInputs& in, const Config& config)
{
    const std::string& name = config.cluster.default_account;
    const char* id = "accounting.default_account";
    if (std::find(in.accounts.begin(), in.accounts.end(), name) != in.accounts.end())
        return ok(id, "the default account \"" + name + "\" exists");
    return problem(Severity::Fail, id, "the default account \"" + name + "\" does not exist",
                   "researchers without a team have no account to land in, so their "
                   "zero-GPU jobs are rejected.",
                   "`sacctmgr -i add account " + name + "`" + kSyncdFix);
}

Finding check_spot_requeue(const AccountingInputs& in, const Config& config)
{
    const SpotTierConfig& spot = config.tiers.spot;
    const char* id = "accounting.spot_requeue";
    const QosRow* q = find_qos(in, spot.qos);
    if (!q) return ok(id, "spot QOS absent (reported by accounting.qos." + spot.qos + ")");
    bool requeue = q->preempt_mode == "requeue";
    bool grace = q->grace_seconds && *q->grace_seconds == spot.grace_seconds;
    if (requeue && grace)
        return ok(id, "QOS \"" + spot.qos + "\" has PreemptMode=requeue and GraceTime=" +
                          std::to_string(spot.grace_seconds));
    std::string what =
        "QOS \"" + spot.qos +
        "\" has PreemptMode=" + (q->preempt_mode.empty() ? "(unset)" : q->preempt_mode) +
        " and GraceTime=" + (q->grace_seconds ? std::to_string(*q->grace_seconds) : "(unset)") +
        " (allot.yaml: requeue, " + std::to_string(spot.grace_seconds) + ")";
    return problem(Severity::Fail, id, what,
                   "preempted spot jobs must be requeued after their grace time, not "
                   "cancelled or killed without warning.",
                   "`sacctmgr -i modify qos " + spot.qos + " set PreemptMode=requeue GraceTime=" +
                       std::to_string(spot.grace_seconds) + "`" + kSyncdFix);
}

Findings check_preempts_spot(const AccountingInputs& in, const Config& config)
{
    Findings out;
    const std::string& spot = config.tiers.spot.qos;
    std::vector<std::string> preemptors;
    for (const TeamConfig& t : config.teams) preemptors.push_back(team_qos(t));
    preemptors.push_back(config.tiers.general.qos);
    for (const std::string& name : preemptors) {
        std::string id = "accounting.preempts_spot." + name;
        const QosRow* q = find_qos(in, name);
        if (!q) continue;  // reported by accounting.qos.<name>
        if (std::find(q->preempt.begin(), q->preempt.end(), lower(spot)) != q->preempt.end()) {
            out.push_back(ok(id, "QOS \"" + name + "\" preempts \"" + spot + "\""));
            continue;
        }
        out.push_back(problem(
            Severity::Fail, id, "QOS \"" + name + "\" does not list \"" + spot + "\" in Preempt",
            "its jobs wait behind spot jobs instead of taking the GPUs back.",
            "`sacctmgr -i modify qos " + name + " set Preempt+=" + spot + "`" + kSyncdFix));
    }
    return out;
}

namespace {

// The sacctmgr value that makes `current` equal `desired`: -1 clears a TRES.
std::string tres_assignment(const Tres& current, const Tres& desired)
{
    Tres all = desired;
    std::string out;
    for (const auto& [k, v] : current)
        if (!desired.count(k)) all[k] = UINT64_MAX;
    for (const auto& [k, v] : all)
        out += (out.empty() ? "" : ",") + k + "=" + (v == UINT64_MAX ? "-1" : std::to_string(v));
    return out;
}

std::string tres_text(const Tres& t)
{
    return t.empty() ? "none" : tres_string(t);
}

}  // namespace

Findings check_qos_settings(const AccountingInputs& in, const Config& config)
{
    Findings out;
    for (const QosSpec& want : policy_qos(config)) {
        const QosRow* q = find_qos(in, want.name);
        if (!q || !q->has_limits) continue;  // absent: reported by accounting.qos.<name>
        std::string id = "accounting.qos_settings." + want.name;
        std::string drift, set;
        auto differs = [&](const std::string& what, const std::string& is, const std::string& wants,
                           const std::string& assignment) {
            drift += (drift.empty() ? "" : ", ") + what + " is " + is + " (allot-syncd writes " +
                     wants + ")";
            set += " " + assignment;
        };
        if (q->grp_tres != want.grp_tres)
            differs("GrpTRES", tres_text(q->grp_tres), tres_text(want.grp_tres),
                    "GrpTRES=" + tres_assignment(q->grp_tres, want.grp_tres));
        if (q->max_tres_pa != want.max_tres_pa)
            differs("MaxTRESPerAccount", tres_text(q->max_tres_pa), tres_text(want.max_tres_pa),
                    "MaxTRESPerAccount=" + tres_assignment(q->max_tres_pa, want.max_tres_pa));
        if (q->max_wall_minutes != want.max_wall_minutes)
            differs("MaxWall", minutes_text(q->max_wall_minutes),
                    minutes_text(want.max_wall_minutes),
                    "MaxWall=" + (want.max_wall_minutes ? minutes_text(want.max_wall_minutes)
                                                        : std::string("-1")));
        if (q->priority != want.priority)
            differs("Priority", std::to_string(q->priority), std::to_string(want.priority),
                    "Priority=" + std::to_string(want.priority));
        if (drift.empty()) {
            out.push_back(ok(id, "QOS \"" + want.name + "\" has the limits allot-syncd writes"));
            continue;
        }
        out.push_back(
            problem(Severity::Fail, id, "QOS \"" + want.name + "\": " + drift,
                    "Slurm enforces these limits, not allot.yaml's, until allot-syncd "
                    "writes them again.",
                    "`sacctmgr -i modify qos " + want.name + " set" + set + "`" + kSyncdFix));
    }
    return out;
}

Finding check_other_writer(const AccountingInputs& in)
{
    const char* id = "accounting.other_writer";
    if (!in.syncd_success)
        return ok(id, "not known: allot-syncd has no successful cycle (identity.syncd_last_run)");
    std::vector<const Transaction*> others;
    for (const Transaction& t : in.since_syncd) {
        std::string action = lower(t.action);
        if (t.time <= *in.syncd_success) continue;
        if (action.find("association") != std::string::npos ||
            action.find("user") != std::string::npos)
            others.push_back(&t);
    }
    if (others.empty())
        return ok(id, "no user or association written since allot-syncd's last successful cycle");
    std::string list;
    for (size_t i = 0; i < others.size() && i < 3; ++i)
        list += std::string(i ? "; " : "") + others[i]->action + " " + others[i]->where + " by " +
                others[i]->actor;
    if (others.size() > 3) list += "; and " + std::to_string(others.size() - 3) + " more";
    return problem(
        Severity::Warn, id,
        std::to_string(others.size()) +
            " user/association changes since allot-syncd's last successful cycle: " + list,
        "two writers of associations overwrite each other, so users gain or lose "
        "accounts behind allot's back.",
        "stop the other writer (with SUNK, turn off its own user provisioning), then "
        "`allot-syncd --once` to put allot's associations back");
}

Findings check_accounting(const AccountingInputs& in, const Config& config)
{
    Findings out = check_qos_exist(in, config);
    out.push_back(check_default_account(in, config));
    out.push_back(check_spot_requeue(in, config));
    for (Finding& f : check_preempts_spot(in, config)) out.push_back(std::move(f));
    for (Finding& f : check_qos_settings(in, config)) out.push_back(std::move(f));
    out.push_back(check_other_writer(in));
    return out;
}

}  // namespace allot::doctor
