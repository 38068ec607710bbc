// accounting_checks.cpp - see accounting_checks.hpp.
#include "accounting_checks.hpp"

#include <algorithm>
#include <cctype>

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

}  // namespace

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

Findings check_accounting(const AccountingInputs& in, const Config& config)
{
    Findings out = check_qos_exist(in, config);
    out.push_back(check_default_account(in, config));
    out.push_back(check_spot_requeue(in, config));
    for (Finding& f : check_preempts_spot(in, config)) out.push_back(std::move(f));
    return out;
}

}  // namespace allot::doctor
