// store_tables.hpp - the users, groups and tokens tables of the SQLite store.
//
// UserTable and GroupTable say only what differs between the two resource
// tables (columns, how a row is read and written, which ids are immutable);
// ResourceTable (store_resource.hpp) is the one implementation of get, create,
// replace, delete and list that both share. The id ledger (IdAllocator) makes
// "a uid/gid is allocated once and never reused" hold across deletions and
// restarts: id_alloc rows are never deleted.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "errors.hpp"
#include "sqlite_util.hpp"
#include "store.hpp"

namespace allot::scimd {

Error store_internal(const std::string& what);
Error store_not_found(const std::string& what);
int64_t unix_now();
std::string new_uuid();
// true when `sql` (one parameter) returns a row.
bool row_exists(Conn& c, const char* sql, const SqlValue& value);

// `select` + " WHERE " + where [ORDER BY order] LIMIT limit OFFSET offset, each
// row mapped by from_row(const Stmt&).
template <typename FromRow>
auto load_rows(Conn& c, const std::string& select, const std::string& where,
               const std::vector<SqlValue>& binds, const std::string& order, size_t limit,
               size_t offset, FromRow from_row)
    -> Result<std::vector<decltype(from_row(std::declval<const Stmt&>()))>>
{
    using T = decltype(from_row(std::declval<const Stmt&>()));
    auto st = c.prepare(select + " WHERE " + where + (order.empty() ? "" : " ORDER BY " + order) +
                        " LIMIT ? OFFSET ?");
    if (!st) return store_internal(c.errmsg());
    st.bind_all(binds);
    st.bind(static_cast<int>(binds.size()) + 1, static_cast<int64_t>(limit));
    st.bind(static_cast<int>(binds.size()) + 2, static_cast<int64_t>(offset));
    std::vector<T> out;
    int rc;
    while ((rc = st.step()) == SQLITE_ROW) out.push_back(from_row(st));
    if (rc != SQLITE_DONE) return store_internal(c.errmsg());
    return out;
}

class IdAllocator {
public:
    explicit IdAllocator(IdRange range) : range_(range) {}
    // Hands out `wanted` (if given: in range and never used before) or the
    // next free number of `kind` ("uid" or "gid"), recording it in the ledger.
    Result<int64_t> allocate(Conn& c, const char* kind, std::optional<int64_t> wanted,
                             const std::string& owner, int64_t ts) const;

private:
    IdRange range_;
};

struct UserTable {
    using Resource = scim::User;
    static constexpr const char* kKind = "user";
    static constexpr const char* kKeyAttr = "userName";
    static constexpr const char* kFrom = "users u";
    static constexpr const char* kKeyCol = "u.user_name";
    static constexpr const char* kById = "u.id = ?";
    static constexpr const char* kKeyTaken = "SELECT 1 FROM users WHERE user_name = ?";
    static constexpr const char* kDelete = "DELETE FROM users WHERE id = ?";
    static const std::string& key(const scim::User& u) { return u.user_name; }
    static Result<std::vector<scim::User>> load(Conn& c, const std::string& where,
                                                const std::vector<SqlValue>& binds,
                                                const std::string& order, size_t limit,
                                                size_t offset);
    // Allocates the ids `u` lacks and inserts the row (id and times are set).
    static Status insert(Conn& c, const IdAllocator& ids, scim::User& u);
    // Refuses a change of an immutable attribute and carries the stored ones over.
    static Status keep_immutable(const scim::User& old, scim::User& next);
    static Status update(Conn& c, scim::User& next);
};

struct GroupTable {
    using Resource = scim::Group;
    static constexpr const char* kKind = "group";
    static constexpr const char* kKeyAttr = "displayName";
    static constexpr const char* kFrom = "grp g";
    static constexpr const char* kKeyCol = "g.display_name";
    static constexpr const char* kById = "g.id = ?";
    static constexpr const char* kKeyTaken = "SELECT 1 FROM grp WHERE display_name = ?";
    static constexpr const char* kDelete = "DELETE FROM grp WHERE id = ?";
    static const std::string& key(const scim::Group& g) { return g.display_name; }
    static Result<std::vector<scim::Group>> load(Conn& c, const std::string& where,
                                                 const std::vector<SqlValue>& binds,
                                                 const std::string& order, size_t limit,
                                                 size_t offset);
    static Status insert(Conn& c, const IdAllocator& ids, scim::Group& g);
    static Status keep_immutable(const scim::Group& old, scim::Group& next);
    static Status update(Conn& c, scim::Group& next);
};

// Groups as /Groups lists them with private groups on: a view (kFrom) of the
// real groups and, UNION ALL, each user's private group where no real group
// has the user's primary gid or userName (a real group wins a clash). Its
// columns are grp's plus grp_rowid/user_rowid (where members come from) and
// active (the user's, 1 for a real group). Read only: ResourceTable<GroupView>
// is used for get and list, never to write.
struct GroupView {
    using Resource = scim::Group;
    static constexpr const char* kKind = "group";
    static constexpr const char* kKeyAttr = "displayName";
    static constexpr const char* kFrom =
        "(SELECT r.rowid AS grp_rowid, NULL AS user_rowid, r.id, r.display_name, r.external_id, "
        "r.gid, r.created, r.modified, r.version, 1 AS active FROM grp r UNION ALL "
        "SELECT NULL, p.rowid, substr(p.id, 1, 14) || '8' || substr(p.id, 16), p.user_name, "
        "NULL, p.gid, p.created, p.modified, p.version, p.active FROM users p WHERE NOT EXISTS "
        "(SELECT 1 FROM grp c WHERE c.gid = p.gid OR c.display_name = p.user_name)) g";
    static constexpr const char* kKeyCol = "g.display_name";
    static const std::string& key(const scim::Group& g) { return g.display_name; }
    static Result<std::vector<scim::Group>> load(Conn& c, const std::string& where,
                                                 const std::vector<SqlValue>& binds,
                                                 const std::string& order, size_t limit,
                                                 size_t offset);
};

// API tokens: only the SHA-256 of the secret is stored.
struct TokenTable {
    static Result<ApiToken> create(Conn& c, const std::string& name,
                                   const std::vector<std::string>& scopes, int64_t expires,
                                   const std::string& secret_hash);
    static Result<ApiToken> find(Conn& c, const std::string& secret_hash);
    static Status revoke(Conn& c, const std::string& name_or_id);
    static Result<std::vector<ApiToken>> all(Conn& c);
};

struct SigningKeyTable {
    static Result<std::map<std::string, int64_t>> all(Conn& c);
    static Status set(Conn& c, const std::string& file, int64_t activates);
    static Status forget(Conn& c, const std::string& file);
};

}  // namespace allot::scimd
