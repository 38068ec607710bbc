// store_tokens.cpp - the API token and signing key tables (see store_tables.hpp).
#include "store_tables.hpp"

namespace allot::scimd {

namespace {

std::vector<std::string> split_scopes(const std::string& scopes)
{
    std::vector<std::string> out;
    size_t start = 0;
    while (start < scopes.size()) {
        size_t sp = scopes.find(' ', start);
        if (sp == std::string::npos) sp = scopes.size();
        if (sp > start) out.push_back(scopes.substr(start, sp - start));
        start = sp + 1;
    }
    return out;
}

Result<std::vector<ApiToken>> load_tokens(Conn& c, const std::string& tail, const std::string& bind)
{
    auto st =
        c.prepare("SELECT id, name, scopes, created, expires, revoked FROM api_tokens " + tail);
    if (!st) return store_internal(c.errmsg());
    if (!bind.empty()) st.bind(1, bind);
    std::vector<ApiToken> out;
    int rc;
    while ((rc = st.step()) == SQLITE_ROW) {
        ApiToken t;
        t.id = st.col_text(0);
        t.name = st.col_text(1);
        t.scopes = split_scopes(st.col_text(2));
        t.created = st.col_int(3);
        t.expires = st.col_int(4);
        t.revoked = st.col_int(5) != 0;
        out.push_back(std::move(t));
    }
    if (rc != SQLITE_DONE) return store_internal(c.errmsg());
    return out;
}

}  // namespace

Result<ApiToken> TokenTable::create(Conn& c, const std::string& name,
                                    const std::vector<std::string>& scopes, int64_t expires,
                                    const std::string& hash)
{
    if (row_exists(c, "SELECT 1 FROM api_tokens WHERE name = ?", name))
        return make_error(Errc::Uniqueness, "token '" + name + "' exists");
    ApiToken t{new_uuid(), name, scopes, unix_now(), expires, false};
    std::string joined;
    for (const auto& s : scopes) joined += (joined.empty() ? "" : " ") + s;
    auto ins = c.prepare(
        "INSERT INTO api_tokens(id,name,hash,scopes,created,expires) VALUES(?,?,?,?,?,?)");
    if (!ins) return store_internal(c.errmsg());
    ins.bind(1, t.id).bind(2, name).bind(3, hash).bind(4, joined).bind(5, t.created);
    ins.bind(6, expires);
    if (ins.step() != SQLITE_DONE) return store_internal(c.errmsg());
    return t;
}

Result<ApiToken> TokenTable::find(Conn& c, const std::string& hash)
{
    auto tokens = load_tokens(c, "WHERE hash = ?", hash);
    if (!tokens) return tokens.error();
    if (tokens.value().empty()) return store_not_found("token");
    return tokens.value()[0];
}

Status TokenTable::revoke(Conn& c, const std::string& name_or_id)
{
    auto up = c.prepare("UPDATE api_tokens SET revoked = 1 WHERE name = ? OR id = ?");
    up.bind(1, name_or_id).bind(2, name_or_id);
    if (up.step() != SQLITE_DONE) return store_internal(c.errmsg());
    if (sqlite3_changes(c.db()) == 0) return store_not_found("token " + name_or_id);
    return Unit{};
}

Result<std::vector<ApiToken>> TokenTable::all(Conn& c)
{
    return load_tokens(c, "ORDER BY name", "");
}

Result<std::map<std::string, int64_t>> SigningKeyTable::all(Conn& c)
{
    auto st = c.prepare("SELECT file, activates FROM signing_keys");
    if (!st) return store_internal(c.errmsg());
    std::map<std::string, int64_t> out;
    int rc;
    while ((rc = st.step()) == SQLITE_ROW) out[st.col_text(0)] = st.col_int(1);
    if (rc != SQLITE_DONE) return store_internal(c.errmsg());
    return out;
}

Status SigningKeyTable::set(Conn& c, const std::string& file, int64_t activates)
{
    auto up = c.prepare(
        "INSERT INTO signing_keys(file, activates) VALUES(?, ?) "
        "ON CONFLICT(file) DO UPDATE SET activates = excluded.activates");
    if (!up) return store_internal(c.errmsg());
    up.bind(1, file).bind(2, activates);
    if (up.step() != SQLITE_DONE) return store_internal(c.errmsg());
    return Unit{};
}

Status SigningKeyTable::forget(Conn& c, const std::string& file)
{
    auto del = c.prepare("DELETE FROM signing_keys WHERE file = ?");
    if (!del) return store_internal(c.errmsg());
    del.bind(1, file);
    if (del.step() != SQLITE_DONE) return store_internal(c.errmsg());
    return Unit{};
}

}  // namespace allot::scimd
