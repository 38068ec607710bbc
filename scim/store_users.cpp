// store_users.cpp - the users table (see store_tables.hpp).
#include "allot/json.hpp"
#include "store_tables.hpp"

namespace allot::scimd {

namespace {

std::string emails_json(const std::vector<scim::Email>& emails)
{
    JsonPtr arr(cJSON_CreateArray());
    for (const auto& e : emails) {
        cJSON* o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "value", e.value.c_str());
        if (!e.type.empty()) cJSON_AddStringToObject(o, "type", e.type.c_str());
        cJSON_AddBoolToObject(o, "primary", e.primary);
        cJSON_AddItemToArray(arr.get(), o);
    }
    return json_print(arr.get());
}

std::vector<scim::Email> emails_from_json(const std::string& text)
{
    std::vector<scim::Email> out;
    JsonPtr emails = json_parse(text);
    const cJSON* e = nullptr;
    cJSON_ArrayForEach(e, emails.get())
    {
        out.push_back({json_string(e, "value").value_or(""), json_string(e, "type").value_or(""),
                       json_bool(e, "primary").value_or(false)});
    }
    return out;
}

std::string strings_json(const std::vector<std::string>& values)
{
    JsonPtr arr(cJSON_CreateArray());
    for (const auto& v : values) cJSON_AddItemToArray(arr.get(), cJSON_CreateString(v.c_str()));
    return json_print(arr.get());
}

std::vector<std::string> strings_from_json(const std::string& text)
{
    std::vector<std::string> out;
    JsonPtr arr = json_parse(text);
    const cJSON* item = nullptr;
    cJSON_ArrayForEach(item, arr.get()) if (cJSON_IsString(item))
        out.emplace_back(item->valuestring);
    return out;
}

// The [[id, name], ...] pairs json_group_array built for a user's groups.
std::vector<scim::GroupRef> group_refs(const std::string& text)
{
    std::vector<scim::GroupRef> out;
    JsonPtr groups = json_parse(text);
    const cJSON* g = nullptr;
    cJSON_ArrayForEach(g, groups.get())
    {
        const cJSON* id = cJSON_GetArrayItem(g, 0);
        const cJSON* name = cJSON_GetArrayItem(g, 1);
        if (cJSON_IsString(id) && cJSON_IsString(name))
            out.push_back({id->valuestring, name->valuestring});
    }
    return out;
}

scim::User user_from_row(const Stmt& st)
{
    scim::User u;
    u.id = st.col_text(0);
    u.user_name = st.col_text(1);
    u.external_id = st.col_text(2);
    u.display_name = st.col_text(3);
    u.active = st.col_int(4) != 0;
    u.emails = emails_from_json(st.col_text(5));
    u.uid = st.col_int(6);
    u.gid = st.col_int(7);
    u.home = st.col_text(8);
    u.shell = st.col_text(9);
    u.ssh_keys = strings_from_json(st.col_text(10));
    u.created = st.col_int(11);
    u.modified = st.col_int(12);
    u.version = st.col_int(13);
    u.groups = group_refs(st.col_text(14));
    return u;
}

}  // namespace

Result<std::vector<scim::User>> UserTable::load(Conn& c, const std::string& where,
                                                const std::vector<SqlValue>& binds,
                                                const std::string& order, size_t limit,
                                                size_t offset)
{
    static const std::string select =
        "SELECT u.id, u.user_name, u.external_id, u.display_name, u.active, u.emails, u.uid, "
        "u.gid, u.home, u.shell, u.ssh_keys, u.created, u.modified, u.version, "
        "(SELECT json_group_array(json_array(gg.id, gg.display_name)) FROM (SELECT g2.id, "
        "g2.display_name FROM members m2 JOIN grp g2 ON g2.rowid = m2.group_rowid WHERE "
        "m2.user_rowid = u.rowid ORDER BY g2.display_name) gg) FROM users u";
    return load_rows(c, select, where, binds, order, limit, offset, user_from_row);
}

Status UserTable::insert(Conn& c, const IdAllocator& ids, scim::User& u)
{
    auto uid = ids.allocate(c, "uid", u.uid, "user:" + u.user_name, u.created);
    if (!uid) return uid.error();
    u.uid = uid.value();
    // A gid naming an existing group is that group; any other is the user's own.
    if (!u.gid || !row_exists(c, "SELECT 1 FROM grp WHERE gid = ?", *u.gid)) {
        auto gid = ids.allocate(c, "gid", u.gid, "user:" + u.user_name, u.created);
        if (!gid) return gid.error();
        u.gid = gid.value();
    }
    auto ins = c.prepare(
        "INSERT INTO users(id,user_name,external_id,display_name,active,emails,uid,gid,home,"
        "shell,ssh_keys,created,modified,version) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    if (!ins) return store_internal(c.errmsg());
    ins.bind(1, u.id).bind(2, u.user_name).bind(3, u.external_id).bind(4, u.display_name);
    ins.bind(5, int64_t{u.active}).bind(6, emails_json(u.emails)).bind(7, *u.uid);
    ins.bind(8, *u.gid).bind(9, u.home).bind(10, u.shell);
    ins.bind(11, strings_json(u.ssh_keys)).bind(12, u.created).bind(13, u.modified);
    ins.bind(14, u.version);
    if (ins.step() != SQLITE_DONE) return store_internal(c.errmsg());
    u.groups.clear();
    return Unit{};
}

Status UserTable::keep_immutable(const scim::User& old, scim::User& next)
{
    if (next.uid && next.uid != old.uid)
        return make_error(Errc::Mutability, "uidNumber is immutable");
    if (next.gid && next.gid != old.gid)
        return make_error(Errc::Mutability, "gidNumber is immutable");
    next.uid = old.uid;
    next.gid = old.gid;
    next.groups = old.groups;
    return Unit{};
}

Status UserTable::update(Conn& c, scim::User& n)
{
    auto up = c.prepare(
        "UPDATE users SET user_name=?, external_id=?, display_name=?, active=?, emails=?, "
        "home=?, shell=?, ssh_keys=?, modified=?, version=? WHERE id=?");
    if (!up) return store_internal(c.errmsg());
    up.bind(1, n.user_name).bind(2, n.external_id).bind(3, n.display_name);
    up.bind(4, int64_t{n.active}).bind(5, emails_json(n.emails)).bind(6, n.home);
    up.bind(7, n.shell).bind(8, strings_json(n.ssh_keys)).bind(9, n.modified);
    up.bind(10, n.version).bind(11, n.id);
    if (up.step() != SQLITE_DONE) return store_internal(c.errmsg());
    return Unit{};
}

}  // namespace allot::scimd
