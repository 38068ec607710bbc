// software_walk.cpp - the pure half of software_walk.hpp: the child's report
// parsed, and the findings made from it.
#include "software_walk.hpp"

#include <sstream>

namespace allot::doctor {

void PathList::add(const std::string& path, size_t max_listed)
{
    if (first.size() < max_listed) first.push_back(path);
    ++count;
}

std::vector<WalkResult> parse_walk_report(const std::string& text, size_t max_listed)
{
    std::vector<WalkResult> out;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        if (line.size() < 2 || line[1] != '\t') continue;
        std::string arg = line.substr(2);
        if (line[0] == 'S') {
            out.emplace_back();
            out.back().root = arg;
            continue;
        }
        if (out.empty()) continue;
        WalkResult& r = out.back();
        switch (line[0]) {
            case 'E': r.error = arg; break;
            case 'N': r.entries = std::stoul(arg); break;
            case 'T': r.truncated = true; break;
            case 'U': r.untraversable.add(arg, max_listed); break;
            case 'R': r.unreadable.add(arg, max_listed); break;
            case 'W': r.writable.add(arg, max_listed); break;
            case 'O': r.user_owned.add(arg, max_listed); break;
        }
    }
    return out;
}

namespace {

std::string joined(const std::vector<std::string>& paths)
{
    std::string s;
    for (const std::string& p : paths) s += (s.empty() ? "" : " ") + p;
    return s;
}

std::string listed(const PathList& l)
{
    std::string s = joined(l.first);
    if (l.count > l.first.size())
        s += " (and " + std::to_string(l.count - l.first.size()) + " more)";
    return s;
}

// chown for what the user owns, then chmod o-w,g-w for the rest.
std::string writable_fix(const PathList& writable, const PathList& owned)
{
    std::string fix;
    if (owned.count) fix = "`chown root " + joined(owned.first) + "`, then ";
    return fix + "`chmod go-w " + joined(writable.first) + "`";
}

Finding one_root(const WalkResult& r, const std::string& user)
{
    std::string id = "software." + r.root;
    if (!r.error.empty())
        return problem(Severity::Warn, id,
                       r.root + " cannot be reached as " + user + ": " + r.error,
                       "software installed there cannot be run by ordinary users.",
                       "`chmod o+x` each directory above " + r.root + " (`namei -m " + r.root +
                           "` shows which)");
    if (r.writable.count)
        return problem(Severity::Fail, id, user + " can write " + listed(r.writable),
                       "any user can replace software others run, and so act as them.",
                       writable_fix(r.writable, r.user_owned));
    if (r.untraversable.count)
        return problem(Severity::Warn, id,
                       user + " cannot list or enter " + listed(r.untraversable),
                       "software below them fails for ordinary users while root's checks pass.",
                       "`chmod o+rx " + joined(r.untraversable.first) + "`" +
                           (r.untraversable.count > r.untraversable.first.size()
                                ? " (all: `chmod -R o+rX " + r.root + "`)"
                                : ""));
    if (r.unreadable.count)
        return problem(Severity::Warn, id, user + " cannot read " + listed(r.unreadable),
                       "software that works for root fails for ordinary users.",
                       "`chmod o+r " + joined(r.unreadable.first) + "`" +
                           (r.unreadable.count > r.unreadable.first.size()
                                ? " (all: `chmod -R o+rX " + r.root + "`)"
                                : ""));
    if (r.truncated)
        return problem(Severity::Warn, id,
                       "walk stopped after " + std::to_string(r.entries) + " entries, all fine",
                       "the rest of the tree was not checked.",
                       "raise `doctor.software_limit` in allot.yaml (or run allot-doctor with a "
                       "larger --software-limit), or list subtrees in `doctor.software_roots`");
    return ok(id, std::to_string(r.entries) + " entries readable by " + user);
}

}  // namespace

Findings software_findings(const std::vector<WalkResult>& results, const std::string& user)
{
    Findings out;
    for (const WalkResult& r : results) out.push_back(one_root(r, user));
    return out;
}

Finding tamper_finding(const WalkResult& protect, const std::string& user)
{
    const char* id = "node.tamper";
    if (!protect.writable.count)
        return ok(id, "allot's binaries, plugins and configs are not writable by " + user);
    return problem(Severity::Fail, id, user + " can write " + listed(protect.writable),
                   "an ordinary user can replace a plugin, binary or configuration that runs "
                   "as root or decides who may log in.",
                   writable_fix(protect.writable, protect.user_owned));
}

}  // namespace allot::doctor
