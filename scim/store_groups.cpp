// store_groups.cpp - the groups and members tables (see store_tables.hpp).
#include "allot/json.hpp"
#include "store_tables.hpp"

namespace allot::scimd {

namespace {

// The [[id, userName], ...] pairs json_group_array built for a group's members.
std::vector<scim::Member> members_from_json(const std::string& text)
{
    std::vector<scim::Member> out;
    JsonPtr members = json_parse(text);
    const cJSON* m = nullptr;
    cJSON_ArrayForEach(m, members.get())
    {
        const cJSON* id = cJSON_GetArrayItem(m, 0);
        const cJSON* name = cJSON_GetArrayItem(m, 1);
        if (cJSON_IsString(id) && cJSON_IsString(name))
            out.push_back({id->valuestring, "User", name->valuestring});
    }
    return out;
}

scim::Group group_from_row(const Stmt& st)
{
    scim::Group g;
    g.id = st.col_text(0);
    g.display_name = st.col_text(1);
    g.external_id = st.col_text(2);
    g.gid = st.col_int(3);
    g.created = st.col_int(4);
    g.modified = st.col_int(5);
    g.version = st.col_int(6);
    g.members = members_from_json(st.col_text(7));
    return g;
}

Status add_member(Conn& c, const std::string& group_id, const std::string& user_id)
{
    auto ins = c.prepare(
        "INSERT OR IGNORE INTO members(group_rowid, user_rowid) SELECT g.rowid, u.rowid "
        "FROM grp g, users u WHERE g.id = ? AND u.id = ?");
    ins.bind(1, group_id).bind(2, user_id);
    if (ins.step() != SQLITE_DONE) return store_internal(c.errmsg());
    // Nothing inserted: a repeated member (fine) or an unknown user (refused).
    if (sqlite3_changes(c.db()) == 0 && !row_exists(c, "SELECT 1 FROM users WHERE id = ?", user_id))
        return make_error(Errc::InvalidValue, "member '" + user_id + "' is not a user");
    return Unit{};
}

// Replaces the member set; returns it as stored (sorted by userName, with names).
Result<std::vector<scim::Member>> set_members(Conn& c, const std::string& group_id,
                                              const std::vector<scim::Member>& members)
{
    auto del =
        c.prepare("DELETE FROM members WHERE group_rowid = (SELECT rowid FROM grp WHERE id = ?)");
    del.bind(1, group_id);
    if (del.step() != SQLITE_DONE) return store_internal(c.errmsg());
    for (const auto& m : members)
        if (auto ok = add_member(c, group_id, m.value); !ok) return ok.error();
    auto names = c.prepare(
        "SELECT u.id, u.user_name FROM members m JOIN users u ON u.rowid = m.user_rowid "
        "WHERE m.group_rowid = (SELECT rowid FROM grp WHERE id = ?) ORDER BY u.user_name");
    names.bind(1, group_id);
    std::vector<scim::Member> out;
    while (names.step() == SQLITE_ROW)
        out.push_back({names.col_text(0), "User", names.col_text(1)});
    return out;
}

}  // namespace

Result<std::vector<scim::Group>> GroupTable::load(Conn& c, const std::string& where,
                                                  const std::vector<SqlValue>& binds,
                                                  const std::string& order, size_t limit,
                                                  size_t offset)
{
    static const std::string select =
        "SELECT g.id, g.display_name, g.external_id, g.gid, g.created, g.modified, g.version, "
        "(SELECT json_group_array(json_array(mm.id, mm.user_name)) FROM (SELECT u2.id, "
        "u2.user_name FROM members m2 JOIN users u2 ON u2.rowid = m2.user_rowid WHERE "
        "m2.group_rowid = g.rowid ORDER BY u2.user_name) mm) FROM grp g";
    return load_rows(c, select, where, binds, order, limit, offset, group_from_row);
}

Result<std::vector<scim::Group>> GroupView::load(Conn& c, const std::string& where,
                                                 const std::vector<SqlValue>& binds,
                                                 const std::string& order, size_t limit,
                                                 size_t offset)
{
    // Members: a real group's rows in members, or a private group's one user.
    static const std::string select =
        std::string(
            "SELECT g.id, g.display_name, g.external_id, g.gid, g.created, g.modified, "
            "g.version, (SELECT json_group_array(json_array(mm.id, mm.user_name)) FROM "
            "(SELECT u2.id, u2.user_name FROM (SELECT m2.user_rowid AS r FROM members m2 "
            "WHERE m2.group_rowid = g.grp_rowid UNION ALL SELECT g.user_rowid) x JOIN "
            "users u2 ON u2.rowid = x.r ORDER BY u2.user_name) mm), g.user_rowid IS NOT NULL "
            "FROM ") +
        kFrom;
    return load_rows(c, select, where, binds, order, limit, offset, [](const Stmt& st) {
        scim::Group g = group_from_row(st);
        g.user_private = st.col_int(8) != 0;
        return g;
    });
}

Status GroupTable::insert(Conn& c, const IdAllocator& ids, scim::Group& g)
{
    auto gid = ids.allocate(c, "gid", g.gid, "group:" + g.display_name, g.created);
    if (!gid) return gid.error();
    g.gid = gid.value();
    auto ins = c.prepare(
        "INSERT INTO grp(id,display_name,external_id,gid,created,modified,version) "
        "VALUES(?,?,?,?,?,?,?)");
    if (!ins) return store_internal(c.errmsg());
    ins.bind(1, g.id).bind(2, g.display_name).bind(3, g.external_id).bind(4, *g.gid);
    ins.bind(5, g.created).bind(6, g.modified).bind(7, g.version);
    if (ins.step() != SQLITE_DONE) return store_internal(c.errmsg());
    auto members = set_members(c, g.id, g.members);
    if (!members) return members.error();
    g.members = std::move(members.value());
    return Unit{};
}

Status GroupTable::keep_immutable(const scim::Group& old, scim::Group& next)
{
    if (next.gid && next.gid != old.gid)
        return make_error(Errc::Mutability, "gidNumber is immutable");
    next.gid = old.gid;
    return Unit{};
}

Status GroupTable::update(Conn& c, scim::Group& n)
{
    auto up =
        c.prepare("UPDATE grp SET display_name=?, external_id=?, modified=?, version=? WHERE id=?");
    if (!up) return store_internal(c.errmsg());
    up.bind(1, n.display_name).bind(2, n.external_id).bind(3, n.modified).bind(4, n.version);
    up.bind(5, n.id);
    if (up.step() != SQLITE_DONE) return store_internal(c.errmsg());
    auto members = set_members(c, n.id, n.members);
    if (!members) return members.error();
    n.members = std::move(members.value());
    return Unit{};
}

}  // namespace allot::scimd
