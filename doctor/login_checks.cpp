// login_checks.cpp - see login_checks.hpp.
#include "login_checks.hpp"

#include "allot/policy.hpp"

#include <sstream>
#include <vector>

namespace allot::doctor {

namespace {

std::vector<std::string> words_of(std::string_view line)
{
    std::istringstream in{std::string(line)};
    std::vector<std::string> words;
    for (std::string w; in >> w;) words.push_back(w);
    return words;
}

std::string basename_of(const std::string& path)
{
    return path.substr(path.rfind('/') + 1);
}

const char* kSshdFix =
    "add `AuthorizedKeysCommand /usr/libexec/allot/allot-keys %u` and "
    "`AuthorizedKeysCommandUser allot-keys` to /etc/ssh/sshd_config, then "
    "`systemctl reload ssh`";

Finding sshd_unreadable(const char* id, const Error& e)
{
    return problem(Severity::Fail, id, "the effective sshd configuration is unknown: " + e.message,
                   "what sshd really does with logins cannot be checked.",
                   "correct sshd's configuration until `sshd -T` prints it");
}

// One PAM line: optional "-" before the type; control may be a [bracket list].
struct PamLine {
    std::string type, control, module;
};

std::optional<PamLine> parse_pam_line(const std::string& raw)
{
    std::string line = raw.substr(0, raw.find('#'));
    std::vector<std::string> w = words_of(line);
    if (w.size() < 3) return std::nullopt;
    PamLine p;
    p.type = w[0][0] == '-' ? w[0].substr(1) : w[0];
    size_t i = 1;
    p.control = w[i];
    if (p.control[0] == '[')
        while (p.control.back() != ']' && i + 1 < w.size()) p.control += " " + w[++i];
    if (i + 1 >= w.size()) return std::nullopt;
    p.module = w[i + 1];
    return p;
}

void expand_into(std::string_view stack, const std::function<std::string(const std::string&)>& read,
                 int depth, std::string& out)
{
    std::istringstream in{std::string(stack)};
    std::string raw;
    while (std::getline(in, raw)) {
        std::vector<std::string> w = words_of(raw.substr(0, raw.find('#')));
        if (w.empty()) continue;
        if (w[0] == "@include" && w.size() > 1) {
            if (depth < 8) expand_into(read(w[1]), read, depth + 1, out);
            continue;
        }
        std::optional<PamLine> p = parse_pam_line(raw);
        if (!p || p->type != "account") continue;
        if (p->control == "include" || p->control == "substack") {
            if (depth < 8) expand_into(read(p->module), read, depth + 1, out);
            continue;
        }
        out += raw.substr(0, raw.find('#')) + "\n";
    }
}

}  // namespace

std::optional<std::string> sshd_value(std::string_view sshd_t, std::string_view keyword)
{
    std::istringstream in{std::string(sshd_t)};
    std::string line;
    while (std::getline(in, line)) {
        size_t sp = line.find(' ');
        // OpenSSH 10 prints keywords in their documented case ("UsePAM"), older releases in
        // lower case: compare as sshd itself parses them, case-insensitively.
        if (sp == std::string::npos || allot::lower(std::string_view(line).substr(0, sp)) != keyword)
            continue;
        return line.substr(sp + 1);
    }
    return std::nullopt;
}

Finding check_sshd_keys_command(const Result<std::string>& sshd_t)
{
    const char* id = "node.sshd_keys_command";
    if (!sshd_t) return sshd_unreadable(id, sshd_t.error());
    std::string cmd = sshd_value(sshd_t.value(), "authorizedkeyscommand").value_or("none");
    std::vector<std::string> w = words_of(cmd);
    bool allot = !w.empty() && basename_of(w[0]) == "allot-keys";
    bool with_user = allot && w.size() > 1 && w[1] == "%u";
    if (with_user) return ok(id, "sshd asks allot-keys for keys (" + cmd + ")");
    return problem(Severity::Fail, id,
                   "sshd's AuthorizedKeysCommand is \"" + cmd + "\", not allot-keys with %u",
                   "directory users' SSH keys are not looked up, so they cannot log in with "
                   "the keys they registered (and removed keys are not refused).",
                   kSshdFix);
}

Finding check_sshd_use_pam(const Result<std::string>& sshd_t)
{
    const char* id = "node.sshd_use_pam";
    if (!sshd_t) return sshd_unreadable(id, sshd_t.error());
    std::string v = sshd_value(sshd_t.value(), "usepam").value_or("no");
    if (v == "yes") return ok(id, "sshd uses PAM");
    return problem(Severity::Fail, id, "sshd does not use PAM (UsePAM " + v + ")",
                   "pam_allot never runs, so any directory user with a key logs in to a "
                   "compute node where they have no job.",
                   "set `UsePAM yes` in /etc/ssh/sshd_config, then `systemctl reload ssh`");
}

Finding check_sshd_penalties(const Result<std::string>& sshd_t)
{
    const char* id = "node.sshd_penalties";
    if (!sshd_t) return sshd_unreadable(id, sshd_t.error());
    auto penalties = sshd_value(sshd_t.value(), "persourcepenalties");
    if (!penalties) return ok(id, "this sshd has no per-source penalties (OpenSSH before 9.8)");
    if (*penalties == "no") return ok(id, "sshd's per-source penalties are off");
    std::string exempt = sshd_value(sshd_t.value(), "persourcepenaltyexemptlist").value_or("none");
    if (exempt != "none") return ok(id, "sshd exempts " + exempt + " from its penalties");
    return problem(Severity::Warn, id,
                   "sshd penalises source addresses for refused logins "
                   "(PerSourcePenalties) and exempts none",
                   "pam_allot refuses users with no job here, and each refusal counts against "
                   "the login node they came from: after a few, sshd drops every connection "
                   "from that login node, users with jobs included (up to 10 minutes by "
                   "default).",
                   "add `PerSourcePenaltyExemptList <the login nodes' addresses or subnet>` to "
                   "/etc/ssh/sshd_config, then `systemctl reload ssh`");
}

std::string expand_pam_account(std::string_view stack,
                               const std::function<std::string(const std::string&)>& read)
{
    std::string out;
    expand_into(stack, read, 0, out);
    return out;
}

Finding check_pam_account(std::string_view account_lines, const std::string& stack_path)
{
    const char* id = "node.pam_account";
    std::istringstream in{std::string(account_lines)};
    std::string raw;
    std::string skipping;  // an earlier line that can end the stack with success
    while (std::getline(in, raw)) {
        std::optional<PamLine> p = parse_pam_line(raw);
        if (!p) continue;
        bool gates = p->control == "required" || p->control == "requisite";
        if (basename_of(p->module) == "pam_allot.so") {
            if (gates && skipping.empty())
                return ok(id, "sshd's PAM account stack requires pam_allot");
            std::string why = !gates ? "pam_allot is \"" + p->control + "\", which decides nothing"
                                     : "\"" + skipping + "\" before it can admit on its own";
            return problem(
                Severity::Fail, id, "sshd's PAM account stack: " + why,
                "users without a job on this node are not refused at login.",
                "make `account  required  pam_allot.so` the first account line of " + stack_path);
        }
        if (p->control == "sufficient" || p->control.find("success=done") != std::string::npos)
            skipping = p->control + " " + basename_of(p->module);
    }
    return problem(
        Severity::Fail, id, "sshd's PAM account stack does not include pam_allot",
        "users without a job on this node are not refused at login.",
        "make `account  required  pam_allot.so` the first account line of " + stack_path);
}

}  // namespace allot::doctor
