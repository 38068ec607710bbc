// identity_validate.hpp - the one rule for what a valid user and group are.
//
// Every layer that lets a directory record become a POSIX identity asks these
// functions: allot-scimd before it stores a write, allot-syncd before it
// publishes a record, allot-keys, libnss_allot and pam_allot before they answer
// for a name or id. So the server refuses (400, naming the attribute) exactly
// what the sync would reject, and a record that passed one layer never fails
// the next.
//
// Reserved names and ids: a name that is a local account or group of the node
// (/etc/passwd, /etc/group), or on identity.reserved_names, is refused, and so
// is an id that a local account (uid) or group (gid) holds, 0, 65534 (nobody)
// and any id outside [uid_min, uid_max] / [gid_min, gid_max]. Without that a
// directory user named `root`, or with uid 0, would be the node's root, and a
// group named `sudo` would grant sudo to its members.
//
// Everything here is pure except load_local_identities(), which reads the two
// files; programs call it once and pass the result in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "allot/config.hpp"
#include "allot/identity.hpp"
#include "allot/result.hpp"

namespace allot::identity {

enum class Errc {
    Ok = 0,
    InvalidName,         // not a portable POSIX name
    ReservedName,        // a local account/group of the node, or identity.reserved_names
    MissingId,           // no uidNumber / gidNumber
    IdOutOfRange,        // outside [uid_min, uid_max] / [gid_min, gid_max]
    ReservedId,          // 0, 65534, or an id a local account or group holds
    InvalidHome,         // not a plain absolute path under identity.home_prefix
    InvalidShell,        // not one of identity.shells
    InvalidDisplayName,  // too long, or a control character or ':'
    InvalidSshKey,       // not "<type> <base64> [comment]" (see ssh_key.hpp)
    TooManySshKeys,      // more than kMaxSshKeysPerUser
    TooManyMembers,      // more than kMaxGroupMembers
    WrongType,           // a field of the record had the wrong JSON type
    MissingExtension,    // a user without the POSIX extension
    DuplicateName,       // two records with one name (every holder is refused)
    DuplicateId,         // two records with one uid or gid (every holder is refused)
    UnknownMember,       // a group member that is no known user or group
};

}  // namespace allot::identity

ALLOT_ERROR_AREA(allot::identity, Errc);

namespace allot {

inline constexpr size_t kMaxPosixNameLen = 32;
inline constexpr size_t kMaxHomeLen = 1024;
inline constexpr size_t kMaxDisplayNameLen = 256;
inline constexpr size_t kMaxSshKeysPerUser = 32;
inline constexpr size_t kMaxGroupMembers = 100000;
inline constexpr uint32_t kNobodyId = 65534;

// Names and ids the node's own files already hold.
struct LocalIdentities {
    std::unordered_set<std::string> names;  // user names and group names
    std::unordered_set<uint32_t> uids;
    std::unordered_set<uint32_t> gids;
};

// Reads passwd(5) and group(5) text. Blank, comment and NIS ('+'/'-') lines
// and lines without a numeric id field are skipped: they name nothing local.
LocalIdentities parse_local_identities(std::string_view passwd_text, std::string_view group_text);

// Reads the two files (I/O). A file that cannot be read is an error: running
// without knowing the node's own accounts would let a directory user take one.
Result<LocalIdentities> load_local_identities(const std::string& passwd_path = "/etc/passwd",
                                              const std::string& group_path = "/etc/group");

// The rules one check needs, from allot.yaml plus the node's local identities.
struct IdentityRules {
    uint32_t uid_min = 10000, uid_max = 2000000000;
    uint32_t gid_min = 10000, gid_max = 2000000000;
    std::string home_prefix = "/home";  // without a trailing '/' (except "/")
    std::vector<std::string> shells;
    std::unordered_set<std::string> reserved_names;  // identity.reserved_names
    LocalIdentities local;
};
IdentityRules identity_rules(const IdentityConfig& config, LocalIdentities local = {});

// Syntax only: [A-Za-z0-9._-], 1-32 bytes, first character not '-' or '.',
// not all digits (a name that reads as an id would be ambiguous to chown/id).
bool valid_posix_name(std::string_view name);

// The field checks. `what` names the attribute in the error ("userName",
// "displayName", "uidNumber", "gidNumber"...), so a SCIM server can answer it.
Status check_name(std::string_view name, const IdentityRules& rules, const char* what);
Status check_uid(int64_t uid, const IdentityRules& rules, const char* what = "uidNumber");
Status check_gid(int64_t gid, const IdentityRules& rules, const char* what = "gidNumber");
Status check_home(std::string_view home, const IdentityRules& rules);
Status check_shell(std::string_view shell, const IdentityRules& rules);
Status check_display_name(std::string_view text);
Status check_ssh_key(std::string_view line);
Status check_ssh_key_count(size_t count);

// Whole records, every field in the order above; the first problem is returned.
Status validate_user(const PosixUser& user, const IdentityRules& rules);
// gid 0 means "no POSIX gid" only when allow_no_gid (syncd publishes such a
// group to nobody but uses it for team membership).
Status validate_group(const PosixGroup& group, const IdentityRules& rules,
                      bool allow_no_gid = false);

// A printable, length-limited form of untrusted text for log lines and errors.
std::string log_safe(std::string_view text);

// The default of identity.reserved_names: the system accounts and groups that
// Debian/Ubuntu and RHEL-family systems create, plus common admin and service
// names (sudo, wheel, adm, docker, slurm, munge...).
const std::vector<std::string>& default_reserved_names();

}  // namespace allot
