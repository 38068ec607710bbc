// scim_model.hpp - the one SCIM 2.0 User/Group model of the tree.
//
// allot-scimd stores and serves these (its JSON codec is scim/codec.*);
// allot-syncd and allot-keys parse a source's ListResponse into them
// (allot/scim_client.hpp). Ids are optional because a resource may omit them
// and because a source may send any number: validation, not the type, decides
// what a valid uid is.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace allot::scim {

inline constexpr const char* kUserSchema = "urn:ietf:params:scim:schemas:core:2.0:User";
inline constexpr const char* kGroupSchema = "urn:ietf:params:scim:schemas:core:2.0:Group";
inline constexpr const char* kListResponse = "urn:ietf:params:scim:api:messages:2.0:ListResponse";
inline constexpr const char* kErrorSchema = "urn:ietf:params:scim:api:messages:2.0:Error";
inline constexpr const char* kPatchOp = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
inline constexpr const char* kDefaultPosixUser =
    "urn:ietf:params:scim:schemas:extension:allot:2.0:PosixUser";
inline constexpr const char* kPosixGroup =
    "urn:ietf:params:scim:schemas:extension:allot:2.0:PosixGroup";

// SCIM's date-time (RFC 3339, UTC with a trailing Z); parse also accepts
// fractional seconds and offsets. allot-kube-token writes its expiry this way.
std::string format_time(int64_t unix_seconds);
std::optional<int64_t> parse_time(std::string_view text);

struct Email {
    std::string value;
    std::string type;
    bool primary = false;
};

// A group the user belongs to (read-only, computed from memberships).
struct GroupRef {
    std::string id;
    std::string name;
};

// A member of a group, with SCIM's attribute names.
struct Member {
    std::string value;    // id of the member resource
    std::string type;     // "User", "Group" or empty
    std::string display;  // the member's userName / displayName
};

struct User {
    std::string id;
    std::string external_id;
    std::string user_name;
    std::string display_name;
    bool active = true;
    std::vector<Email> emails;
    std::optional<int64_t> uid;  // uidNumber of the POSIX extension
    std::optional<int64_t> gid;
    std::string home;
    std::string shell;
    std::vector<std::string> ssh_keys;
    std::vector<GroupRef> groups;
    int64_t created = 0;  // unix seconds
    int64_t modified = 0;
    int64_t version = 0;
    // Source side only: the POSIX extension object was present, and the first
    // attribute of a wrong JSON type (non-empty: the record is rejected).
    bool has_extension = false;
    std::string type_error;
};

struct Group {
    std::string id;
    std::string external_id;
    std::string display_name;
    std::optional<int64_t> gid;  // gidNumber, top level or in an extension
    std::vector<Member> members;
    int64_t created = 0;
    int64_t modified = 0;
    int64_t version = 0;
    // A user's private group that the server synthesised for /Groups (the
    // PosixGroup extension's userPrivateGroup, allot-scimd's private groups),
    // not a group of the directory.
    bool user_private = false;
    std::string type_error;  // source side, as User::type_error
};

}  // namespace allot::scim
