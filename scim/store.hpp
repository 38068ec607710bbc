// store.hpp - the directory store behind allot-scimd.
//
// One interface, so another backend can be added later; SqliteStore
// (store_sqlite.cpp) is the default. The store owns the two invariants that
// matter for quotas and file ownership: a uidNumber/gidNumber is allocated
// once from the configured range and never reused after deletion, and an
// update never changes it. Errors are codes of the scimd area (errors.hpp), which
// the service layer turns into the status and scimType it answers with.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "codec.hpp"
#include "errors.hpp"
#include "filter.hpp"

namespace allot::scimd {

struct IdRange {
    uint32_t uid_min = 10000, uid_max = 2000000000;
    uint32_t gid_min = 10000, gid_max = 2000000000;
};

enum class SortOrder { Ascending, Descending };

// A page holds at most this many resources, whatever count asks.
inline constexpr size_t kMaxPage = 1000;

struct ListQuery {
    const Filter* filter = nullptr;
    size_t start_index = 1;  // 1-based; ignored when cursor is set
    size_t count = 100;
    std::optional<std::string> cursor;  // "" for the first cursor page
    SortOrder order = SortOrder::Ascending;
    // Groups: leave out the private groups of deactivated users (see
    // open_sqlite_store), as a read token's listing leaves out the users.
    bool hide_inactive = false;
};

template <typename T>
struct Page {
    size_t total = 0;
    size_t start_index = 1;
    std::vector<T> items;
    std::string next_cursor;  // empty when there are no more pages (cursor mode)
};

struct ApiToken {
    std::string id;
    std::string name;
    std::vector<std::string> scopes;  // "scim:read", "scim:write"
    int64_t created = 0;
    int64_t expires = 0;  // 0: never
    bool revoked = false;
};

class DirectoryStore {
public:
    virtual ~DirectoryStore() = default;

    // Users. create fills id, uid/gid (allocating what is 0), timestamps, version.
    virtual Result<scim::User> create_user(scim::User draft) = 0;
    virtual Result<scim::User> get_user(const std::string& id) = 0;
    virtual Result<scim::User> get_user_by_name(const std::string& name) = 0;
    virtual Result<scim::User> get_user_by_uid(uint32_t uid) = 0;
    // Replaces mutable attributes; uid/gid must be unchanged or 0 (keep).
    // expected_version: 0 means unconditional, else 412 on mismatch.
    virtual Result<scim::User> replace_user(const std::string& id, scim::User next,
                                            int64_t expected_version) = 0;
    virtual Result<Unit> delete_user(const std::string& id) = 0;
    virtual Result<Page<scim::User>> list_users(const ListQuery& query) = 0;

    // Groups. members carry ids; names are filled in from the users.
    virtual Result<scim::Group> create_group(scim::Group draft) = 0;
    virtual Result<scim::Group> get_group(const std::string& id) = 0;
    virtual Result<scim::Group> get_group_by_name(const std::string& name) = 0;
    virtual Result<scim::Group> replace_group(const std::string& id, scim::Group next,
                                              int64_t expected_version) = 0;
    virtual Result<Unit> delete_group(const std::string& id) = 0;
    virtual Result<Page<scim::Group>> list_groups(const ListQuery& query) = 0;

    // A number that changes whenever a user, group, membership or API token
    // does, by any writer of the store (another process too): what the read
    // caches check.
    virtual Result<int64_t> generation() = 0;

    // API tokens: only the SHA-256 of the secret is stored.
    virtual Result<ApiToken> create_token(const std::string& name,
                                          const std::vector<std::string>& scopes, int64_t expires,
                                          const std::string& secret_hash) = 0;
    virtual Result<ApiToken> find_token(const std::string& secret_hash) = 0;
    virtual Result<Unit> revoke_token(const std::string& name_or_id) = 0;
    virtual Result<std::vector<ApiToken>> list_tokens() = 0;

    // OIDC signing keys' activation times by key file name (oidc.hpp). A key file with
    // no entry signs from its creation (the first key, keys made before scheduling).
    virtual Result<std::map<std::string, int64_t>> key_activations() = 0;
    virtual Status set_key_activation(const std::string& key_file, int64_t activates) = 0;
    virtual Status forget_key_activation(const std::string& key_file) = 0;
};

// The id of the private group of the user whose id is `user_id`: the same
// UUID with version 8 instead of 4, so it is stable, computable in SQL and never
// the id of a real group (new_uuid makes version 4 ids only).
std::string private_group_id(const std::string& user_id);
bool is_private_group_id(const std::string& id);

// `user_extension` is identity.extension_schema (filters may name it).
// `private_groups` (serve --private-groups): Groups also lists, read-only, one
// group per user whose primary gid and userName no real group has, named
// after the user, with that gid and the user as its only member; get_group
// finds it by private_group_id() and replace/delete refuse it (Mutability).
std::unique_ptr<DirectoryStore> open_sqlite_store(const std::string& path, IdRange range,
                                                  const std::string& user_extension,
                                                  std::string* error, bool private_groups = false);

}  // namespace allot::scimd
