// scim_codec.hpp - the SCIM 2.0 resource model (User, Group) and its JSON form.
//
// allot-scimd stores and serves these; the wire format is fixed by the
// canonical fixtures in docs/scimd.md (POSIX attributes in one extension per
// resource type). Rendering is total; parsing a client-supplied resource
// returns a Result with a message naming the offending attribute. Read-only
// attributes in input (id, meta, groups) are ignored, as RFC 7643 §2.2 asks.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "allot/json.hpp"
#include "allot/result.hpp"

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

struct Email {
    std::string value;
    std::string type;
    bool primary = false;
};

struct GroupRef {
    std::string id;
    std::string name;
};

struct User {
    std::string id;
    std::string external_id;
    std::string user_name;
    std::string display_name;
    bool active = true;
    std::vector<Email> emails;
    uint32_t uid = 0;  // 0: not set (never a valid allocated id)
    uint32_t gid = 0;
    std::string home;
    std::string shell;
    std::vector<std::string> ssh_keys;
    std::vector<GroupRef> groups;  // read-only, computed from memberships
    int64_t created = 0;           // unix seconds
    int64_t modified = 0;
    int64_t version = 0;
};

struct Member {
    std::string id;    // the user's id
    std::string name;  // the user's userName (display)
};

struct Group {
    std::string id;
    std::string external_id;
    std::string display_name;
    uint32_t gid = 0;
    std::vector<Member> members;
    int64_t created = 0;
    int64_t modified = 0;
    int64_t version = 0;
};

struct RenderOptions {
    std::string base_url;  // ".../scim/v2", used for meta.location and $ref
    std::string user_extension = kDefaultPosixUser;
    bool include_extension = true;
};

JsonPtr user_to_json(const User& user, const RenderOptions& options);
JsonPtr group_to_json(const Group& group, const RenderOptions& options);

// Input side (POST/PUT bodies). `user_extension` is the configured URN.
Result<User> user_from_json(const cJSON* json, const std::string& user_extension);
Result<Group> group_from_json(const cJSON* json);

// A complete SCIM error body (RFC 7644 §3.12); scim_type may be empty.
std::string error_body(int status, std::string_view scim_type, std::string_view detail);

// RFC 3339 UTC with a trailing Z; parse accepts fractional seconds and offsets.
std::string format_time(int64_t unix_seconds);
std::optional<int64_t> parse_time(std::string_view text);

// ETag of a version: W/"<n>".
std::string etag(int64_t version);

}  // namespace allot::scim
