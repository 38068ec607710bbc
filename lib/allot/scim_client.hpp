// scim_client.hpp - the SCIM 2.0 client: parsing (scim_parse.cpp), paging and
// retries with bounds (scim_fetch.cpp), record validation (scim_directory.cpp).
//
// allot-syncd pulls Users and Groups from the identity source with this code;
// allot-keys reuses it for its live lookup. Everything here is pure: the only
// I/O goes through the HttpClient interface (http_client.hpp). The output of
// validate_directory() is the only way a SCIM record becomes an
// allot::PosixUser, so a user without a valid uid, a home outside the prefix,
// a reserved name or an injected SSH key never reaches a cache or Slurm.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "allot/config.hpp"
#include "allot/http_client.hpp"
#include "allot/identity.hpp"
#include "allot/identity_validate.hpp"
#include "allot/result.hpp"
#include "allot/scim_model.hpp"

namespace allot::scim_source {

// Why reading the source failed. Every one is source-wide: the cycle stops and
// leaves caches and accounting as they were. A bad record is never one of
// these (validate_directory rejects it alone).
enum class Errc {
    Ok = 0,
    Transport,         // connection, TLS or timeout
    HttpStatus,        // the server answered with an error status
    Malformed,         // not a SCIM ListResponse (truncated, wrong types)
    ResponseTooLarge,  // one response over max_response_bytes
    CycleTooLarge,     // all responses together over max_cycle_bytes
    DeadlinePassed,    // the cycle's reads took longer than the deadline
    Endless,           // more pages or resources than totalResults announced, or a repeated cursor
    TooManyResources,  // over max_resources
    NoExtension,       // no user has a value at the mapped uid path
    Truncated,         // a page came back empty before totalResults was reached
};

}  // namespace allot::scim_source

ALLOT_ERROR_AREA(allot::scim_source, Errc);

namespace allot {

inline constexpr size_t kScimMaxBody = 10u << 20;  // one page larger than this is an error

// Where each POSIX field is read from. A path is a core attribute
// ("userName") or "<extension URN>:<attribute>" (the URN is everything before
// the last ':'). Presets (identity.dialect): allot (allot-scimd's PosixUser
// extension, the default) and coreweave (CoreWeave's user extension, which
// ACTIVATE serves too); identity.attributes.* override one field each.
struct ScimAttributeMap {
    std::string user_name = "userName";
    std::string uid, gid, home, shell, ssh_keys;
    std::string group_name = "displayName";
    std::string group_gid = "gidNumber";  // core, else the same name in any extension
    bool members_by_display = false;      // members name users by `display`, not `value`
};

inline constexpr const char* kCoreWeaveUserExtension =
    "urn:coreweave:params:scim:schemas:extension:coreweave:2.0:CoreWeaveUser";

// The allot preset over the extension URN `ext_schema`.
ScimAttributeMap allot_attribute_map(const std::string& ext_schema);
// identity.dialect with identity.attributes.* applied (the config loader has
// checked both).
ScimAttributeMap scim_attribute_map(const IdentityConfig& identity);
// The attribute names of identity.attributes and identity.dialect's presets.
const std::vector<std::string>& scim_attribute_keys();
bool is_scim_dialect(std::string_view name);
// The `attributes=` list for Users: every core attribute and extension URN
// the map reads, so a source returning only what was asked sends them all.
std::string user_attribute_request(const ScimAttributeMap& map);

template <typename T>
struct ScimPage {
    std::vector<T> resources;
    int64_t total_results = 0;
    int64_t start_index = 1;
    int64_t items_per_page = 0;
    std::string next_cursor;  // cursor paging (draft-ietf-scim-cursor-pagination)
};

// Parses a ListResponse of Users / Groups. Fails on malformed JSON, a body
// over kScimMaxBody, a SCIM error body, or a list without "Resources" when
// totalResults says there are some.
Result<ScimPage<scim::User>> parse_user_page(std::string_view body, const std::string& ext_schema);
Result<ScimPage<scim::Group>> parse_group_page(std::string_view body,
                                               const std::string& ext_schema);
// The same through an attribute map (the ext_schema forms use allot's).
Result<ScimPage<scim::User>> parse_user_page(std::string_view body, const ScimAttributeMap& map);
Result<ScimPage<scim::Group>> parse_group_page(std::string_view body, const ScimAttributeMap& map);

// ---- paging and retries --------------------------------------------------

// What to do after attempt `attempt` (1-based) failed. Pure, so the policy is
// tested without sleeping: exponential backoff base*2^(n-1) capped at max,
// plus deterministic jitter from `jitter_seed` (0..999 per mille of the delay,
// up to +25 %), honouring Retry-After when the server sent one.
struct RetryPolicy {
    uint32_t max_attempts = 4;
    uint32_t base_delay_ms = 500;
    uint32_t max_delay_ms = 30000;
};
struct RetryDecision {
    bool retry = false;
    uint32_t delay_ms = 0;
};
// status: HTTP status, or 0 for a transport error.
RetryDecision retry_decision(const RetryPolicy& policy, uint32_t attempt, long status,
                             uint32_t retry_after_seconds, uint32_t jitter_seed);

struct ScimFetchOptions {
    std::string base_url;  // https://host/scim/v2 (no trailing slash needed)
    std::string ext_schema;
    // Where the POSIX fields are; unset: allot_attribute_map(ext_schema).
    std::optional<ScimAttributeMap> attributes;
    uint32_t page_size = 500;
    uint32_t max_pages = 100000;  // guards against servers that never end
    uint32_t max_resources = 1000000;
    // Bounds on one fetch (identity.source_*): a listing may run extra_pages
    // past what its first page's totalResults announced; bytes count every
    // response body; the deadline is on now_ms's clock (0 or no clock: none).
    uint32_t extra_pages = 2;
    uint64_t max_response_bytes = kScimMaxBody;
    uint64_t max_cycle_bytes = 256u << 20;
    uint64_t deadline_ms = 0;
    std::function<uint64_t()> now_ms;
    RetryPolicy retry;
    std::function<void(uint32_t ms)> sleep;  // empty: no sleeping (tests)
    std::function<uint32_t()> jitter;        // empty: 0
};

struct ScimDirectory {
    std::vector<scim::User> users;
    std::vector<scim::Group> groups;
    uint32_t requests = 0;
    uint32_t retries = 0;
};

// Percent-encodes a query value (RFC 3986 unreserved kept).
std::string url_encode(std::string_view value);

// Pulls every User (asking for the extension by name in `attributes`) and
// every Group. Fails when the source answers users without the extension
// at all: that is a misconfigured source, not a set of bad records.
Result<ScimDirectory> fetch_directory(HttpClient& http, const ScimFetchOptions& options);

// One user by userName (filter=userName eq "x"), for allot-keys.
Result<std::optional<scim::User>> fetch_user(HttpClient& http, const ScimFetchOptions& options,
                                             const std::string& user_name);

// ---- validation -----------------------------------------------------------

struct Rejection {
    std::string kind;    // "user", "group", "ssh-key", "member"
    std::string object;  // userName / displayName / id, sanitised for logs
    std::string reason;
    std::error_code code;  // an identity::Errc: what metrics and tests decide on
};

struct ValidatedDirectory {
    std::vector<PosixUser> users;    // sorted by name
    std::vector<PosixGroup> groups;  // sorted by name; gid 0 = no POSIX gid (not published)
    std::vector<Rejection> rejections;
    uint32_t inactive = 0;  // active=false users, skipped (not a rejection)
};

// Validates every record with the one identity validator (identity_validate.hpp:
// names, ids, homes, shells, keys, reserved names and ids). Bad records are
// rejected one by one with a reason; the rest are kept. A user's bad SSH key
// is dropped alone (the user is kept); too many keys reject the user. Nested
// groups are FLATTENED: a group's members include the users of the groups it
// contains (transitively, cycles cut), so a team defined as a parent group works.
ValidatedDirectory validate_directory(const ScimDirectory& source, const IdentityRules& rules);
// The same with the rules of `identity` alone (no local accounts of the node).
ValidatedDirectory validate_directory(const ScimDirectory& source, const IdentityConfig& identity);

}  // namespace allot
