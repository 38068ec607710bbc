// file_checks.cpp - see file_checks.hpp.
#include "file_checks.hpp"

#include <algorithm>

namespace allot::doctor {

namespace {

std::string octal(uint32_t mode)
{
    char buf[8];
    snprintf(buf, sizeof buf, "%04o", mode & 07777);
    return buf;
}

// How long ago, for people: "3 h 12 min", "45 s".
std::string age_text(int64_t s)
{
    if (s < 120) return std::to_string(s) + " s";
    if (s < 7200) return std::to_string(s / 60) + " min";
    return std::to_string(s / 3600) + " h " + std::to_string(s / 60 % 60) + " min";
}

const char* kRunSyncd = "`allot-syncd --once` (and `systemctl enable --now allot-syncd`)";

// Findings on one cache file or directory; none when it is in order.
void cache_problems(const FileFacts& f, bool secret, uint32_t owner_uid, Findings& out)
{
    std::string id = "identity.cache_mode." + f.path.substr(f.path.rfind('/') + 1);
    if (!f.exists) return;
    if (f.uid != 0 && f.uid != owner_uid) {
        out.push_back(problem(Severity::Fail, id,
                              f.path + " is owned by uid " + std::to_string(f.uid) +
                                  ", not root or identity.cache_owner",
                              "its owner can rewrite who exists on this node and with which "
                              "UID and keys.",
                              "`chown root " + f.path + "`"));
        return;
    }
    if (f.mode & 022) {
        out.push_back(
            problem(Severity::Fail, id,
                    f.path + " is writable by group or others (mode " + octal(f.mode) + ")",
                    "anyone who can write it can become any directory user on this "
                    "node.",
                    "`chmod go-w " + f.path + "`"));
        return;
    }
    if (secret && (f.mode & 004)) {
        out.push_back(problem(Severity::Warn, id,
                              f.path + " is readable by everyone (mode " + octal(f.mode) + ")",
                              "who may log in with which key is nobody else's business.",
                              "`chmod o-r " + f.path + "`"));
        return;
    }
    out.push_back(ok(id, f.path + " has safe owner and mode " + octal(f.mode)));
}

}  // namespace

Finding check_token_file(const FileFacts& token)
{
    const char* id = "identity.token_file";
    if (!token.exists)
        return problem(Severity::Fail, id, "the SCIM token file " + token.path + " does not exist",
                       "allot-syncd and allot-keys cannot authenticate to the SCIM source.",
                       "write the token to " + token.path + " and `chmod 0400 " + token.path + "`");
    if (token.mode & 027)
        return problem(Severity::Fail, id,
                       token.path + " is readable or writable beyond its owner and group (mode " +
                           octal(token.mode) + ")",
                       "whoever reads the token can read the whole directory from the SCIM "
                       "source, and whoever writes it can point allot at another identity.",
                       "`chmod g-w,o-rwx " + token.path + "`");
    return ok(id, token.path + " is private (mode " + octal(token.mode) + ")");
}

Findings check_cache_files(const FileFacts& dir, const std::vector<FileFacts>& caches,
                           uint32_t cache_owner_uid)
{
    Findings out;
    cache_problems(dir, false, cache_owner_uid, out);
    for (const FileFacts& f : caches)
        cache_problems(f, f.path.size() >= 10 && f.path.substr(f.path.size() - 10) == "keys.cache",
                       cache_owner_uid, out);
    return out;
}

Finding check_cache_fresh(const FileFacts& passwd_cache, const IdentityConfig& identity)
{
    const char* id = "identity.cache_fresh";
    if (!passwd_cache.exists)
        return problem(Severity::Fail, id, passwd_cache.path + " does not exist",
                       "no directory user resolves on this node, so their jobs and logins fail.",
                       kRunSyncd);
    int64_t limit = 3 * int64_t(identity.poll_seconds);
    if (passwd_cache.age_seconds <= limit)
        return ok(
            id, passwd_cache.path + " was written " + age_text(passwd_cache.age_seconds) + " ago");
    return problem(
        Severity::Warn, id,
        passwd_cache.path + " was written " + age_text(passwd_cache.age_seconds) +
            " ago (more than 3 poll intervals of " + std::to_string(identity.poll_seconds) + " s)",
        "users added, removed or deactivated since then are not seen on this node.", kRunSyncd);
}

Finding check_syncd_last_run(const FileFacts& state, const IdentityConfig& identity)
{
    const char* id = "identity.syncd_last_run";
    if (!state.exists)
        return problem(Severity::Fail, id,
                       "allot-syncd has never completed a cycle here (no " + state.path + ")",
                       "accounts, QOS and associations are not kept in line with the directory.",
                       kRunSyncd);
    int64_t limit = 3 * int64_t(identity.poll_seconds);
    if (state.age_seconds <= limit)
        return ok(id, "allot-syncd's last successful cycle ended " + age_text(state.age_seconds) +
                          " ago");
    return problem(Severity::Warn, id,
                   "allot-syncd's last successful cycle ended " + age_text(state.age_seconds) +
                       " ago (more than 3 poll intervals)",
                   "team changes and new users have not reached Slurm since then.",
                   std::string(kRunSyncd) + ", then read its log (`journalctl -u allot-syncd`)");
}

namespace {

Finding range_finding(const char* what, const std::vector<LocalId>& ids, uint32_t lo, uint32_t hi,
                      const std::string& key, const std::string& config_path)
{
    std::string id = std::string("identity.") + what + "_range";
    std::vector<const LocalId*> inside;
    uint32_t highest = 0;
    for (const LocalId& l : ids) {
        // libnss_allot refuses 65534 itself, so nobody/nogroup cannot collide.
        if (l.id < lo || l.id > hi || l.id == 65534) continue;
        inside.push_back(&l);
        highest = std::max(highest, l.id);
    }
    std::string range = std::to_string(lo) + "-" + std::to_string(hi);
    if (inside.empty()) return ok(id, std::string("no local ") + what + " inside " + range);
    std::string names;
    for (size_t i = 0; i < inside.size() && i < 5; ++i)
        names += (i ? ", " : "") + inside[i]->name + " (" + std::to_string(inside[i]->id) + ")";
    if (inside.size() > 5) names += ", and " + std::to_string(inside.size() - 5) + " more";
    return problem(
        Severity::Warn, id,
        std::string("local ") + what + " inside the directory's range " + range + ": " + names,
        "a directory entry given one of these ids is refused on this node, or shares "
        "the local one's files.",
        "set `" + key + ": " + std::to_string(highest + 1) + "` in " + config_path +
            " (or renumber the local entries)");
}

}  // namespace

Findings check_id_ranges(const std::vector<LocalId>& users, const std::vector<LocalId>& groups,
                         const IdentityConfig& identity, const std::string& config_path)
{
    return {range_finding("users", users, identity.uid_min, identity.uid_max, "identity.uid_min",
                          config_path),
            range_finding("groups", groups, identity.gid_min, identity.gid_max, "identity.gid_min",
                          config_path)};
}

}  // namespace allot::doctor
