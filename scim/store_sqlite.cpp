// store_sqlite.cpp - DirectoryStore on SQLite (WAL, versioned migrations).
//
// One file holds users, groups, memberships, API token hashes and the ledger
// of every uid/gid ever allocated. The parts live by concept: the schema and
// its migrations (store_schema.*), the connection pool (store_pool.*), the
// filter→SQL compiler (filter_sql.*), the cursor codec (cursor.*), the tables
// (store_tables.hpp: users, groups, tokens, the id ledger) and the one
// resource implementation users and groups share (store_resource.hpp). This
// file puts them behind the DirectoryStore interface.
#include "store.hpp"
#include "store_resource.hpp"
#include "store_schema.hpp"
#include "util.hpp"

namespace allot::scimd {
namespace {

class SqliteStore final : public DirectoryStore {
public:
    SqliteStore(std::string path, IdRange range, const std::string& user_extension,
                bool private_groups)
        : pool_(std::move(path)),
          ids_(range),
          users_(pool_, ids_),
          groups_(pool_, ids_),
          group_view_(pool_, ids_),
          user_filters_(to_lower(user_extension)),
          private_groups_(private_groups)
    {
    }

    bool open(std::string* error)
    {
        auto conn = pool_.connect(error);
        if (!conn || !migrate(*conn, pool_.path(), error)) return false;
        pool_.give_back(std::move(conn));
        return true;
    }

    Result<scim::User> create_user(scim::User u) override { return users_.create(std::move(u)); }
    Result<scim::User> get_user(const std::string& id) override
    {
        return users_.get("u.id = ?", id);
    }
    Result<scim::User> get_user_by_name(const std::string& name) override
    {
        return users_.get("u.user_name = ?", name);
    }
    Result<scim::User> get_user_by_uid(uint32_t uid) override
    {
        return users_.get("u.uid = ?", int64_t{uid});
    }
    Result<scim::User> replace_user(const std::string& id, scim::User next,
                                    int64_t expected_version) override
    {
        return users_.replace(id, std::move(next), expected_version);
    }
    Result<Unit> delete_user(const std::string& id) override { return users_.remove(id); }
    Result<Page<scim::User>> list_users(const ListQuery& q) override
    {
        return users_.list(q, user_filter_map(user_filters_));
    }

    Result<scim::Group> create_group(scim::Group g) override
    {
        return groups_.create(std::move(g));
    }
    Result<scim::Group> get_group(const std::string& id) override
    {
        if (private_groups_ && is_private_group_id(id)) return group_view_.get("g.id = ?", id);
        return groups_.get("g.id = ?", id);
    }
    Result<scim::Group> get_group_by_name(const std::string& name) override
    {
        return groups_.get("g.display_name = ?", name);
    }
    Result<scim::Group> replace_group(const std::string& id, scim::Group next,
                                      int64_t expected_version) override
    {
        if (auto refused = refuse_private(id)) return *refused;
        return groups_.replace(id, std::move(next), expected_version);
    }
    Result<Unit> delete_group(const std::string& id) override
    {
        if (auto refused = refuse_private(id)) return *refused;
        return groups_.remove(id);
    }
    Result<Page<scim::Group>> list_groups(const ListQuery& q) override
    {
        if (!private_groups_) return groups_.list(q, group_filter_map());
        return group_view_.list(q, group_view_filter_map(), q.hide_inactive ? "g.active = 1" : "1");
    }

    Result<int64_t> generation() override
    {
        auto c = pool_.borrow();
        if (!c) return store_internal("cannot open database");
        auto st = c->prepare("SELECT n FROM generation");
        if (!st || st.step() != SQLITE_ROW) return store_internal(c->errmsg());
        return st.col_int(0);
    }

    Result<ApiToken> create_token(const std::string& name, const std::vector<std::string>& scopes,
                                  int64_t expires, const std::string& hash) override
    {
        auto c = pool_.borrow();
        if (!c) return store_internal("cannot open database");
        return TokenTable::create(*c, name, scopes, expires, hash);
    }
    Result<ApiToken> find_token(const std::string& hash) override
    {
        auto c = pool_.borrow();
        if (!c) return store_internal("cannot open database");
        return TokenTable::find(*c, hash);
    }
    Result<Unit> revoke_token(const std::string& name_or_id) override
    {
        auto c = pool_.borrow();
        if (!c) return store_internal("cannot open database");
        return TokenTable::revoke(*c, name_or_id);
    }
    Result<std::vector<ApiToken>> list_tokens() override
    {
        auto c = pool_.borrow();
        if (!c) return store_internal("cannot open database");
        return TokenTable::all(*c);
    }

    Result<std::map<std::string, int64_t>> key_activations() override
    {
        auto c = pool_.borrow();
        if (!c) return store_internal("cannot open database");
        return SigningKeyTable::all(*c);
    }
    Status set_key_activation(const std::string& file, int64_t activates) override
    {
        auto c = pool_.borrow();
        if (!c) return store_internal("cannot open database");
        return SigningKeyTable::set(*c, file, activates);
    }
    Status forget_key_activation(const std::string& file) override
    {
        auto c = pool_.borrow();
        if (!c) return store_internal("cannot open database");
        return SigningKeyTable::forget(*c, file);
    }

private:
    // A write to a listed private group is refused, saying whose it is; an
    // unlisted id falls through to the groups table (and its 404).
    std::optional<Error> refuse_private(const std::string& id)
    {
        if (!private_groups_ || !is_private_group_id(id)) return std::nullopt;
        auto g = group_view_.get("g.id = ?", id);
        if (!g) return std::nullopt;
        return make_error(Errc::Mutability,
                          "group '" + g.value().display_name + "' is the private group of user '" +
                              g.value().display_name +
                              "' and is read-only; it follows the user (create a real group to "
                              "manage it)");
    }

    ConnPool pool_;
    IdAllocator ids_;
    ResourceTable<UserTable> users_;
    ResourceTable<GroupTable> groups_;
    ResourceTable<GroupView> group_view_;  // read only: get and list
    std::string user_filters_;             // the extension URN, lower-cased, as filters name it
    bool private_groups_;
};

}  // namespace

std::unique_ptr<DirectoryStore> open_sqlite_store(const std::string& path, IdRange range,
                                                  const std::string& user_extension,
                                                  std::string* error, bool private_groups)
{
    auto store = std::make_unique<SqliteStore>(path, range, user_extension, private_groups);
    if (!store->open(error)) return nullptr;
    return store;
}

}  // namespace allot::scimd
