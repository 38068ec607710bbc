// codec.hpp - allot-scimd's JSON form of the SCIM model (allot/scim_model.hpp).
//
// allot-scimd stores and serves Users and Groups; the wire format is fixed by the
// canonical fixtures in docs/scimd.md (POSIX attributes in one extension per
// resource type). Rendering is total; parsing a client-supplied resource
// returns a Result with a message naming the offending attribute. Read-only
// attributes in input (id, meta, groups) are ignored, as RFC 7643 §2.2 asks.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "allot/json.hpp"
#include "allot/result.hpp"
#include "allot/scim_model.hpp"

namespace allot::scim {

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

// ETag of a version: W/"<n>".
std::string etag(int64_t version);

}  // namespace allot::scim
