// store_sqlite.cpp - DirectoryStore on SQLite (WAL, versioned migrations).
//
// One file holds users, groups, memberships, API token hashes and the ledger
// of every uid/gid ever allocated (id_alloc, never deleted: that is what makes
// "never reused" hold across deletions and restarts). Each thread borrows its
// own connection from a small pool so reads run in parallel under WAL; writes
// are serialised by BEGIN IMMEDIATE. Filters are compiled to SQL here with all
// values bound as parameters.
#include <openssl/rand.h>

#include <cmath>
#include <cstring>
#include <ctime>
#include <mutex>

#include "allot/json.hpp"
#include "sqlite_util.hpp"
#include "store.hpp"
#include "util.hpp"

namespace allot::scimd {
namespace {

// Each entry moves the schema from version i to i+1; never edit a shipped one.
const char* const kMigrations[] = {
    R"SQL(
CREATE TABLE users(
  rowid INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  user_name TEXT NOT NULL UNIQUE,
  external_id TEXT,
  display_name TEXT,
  active INTEGER NOT NULL DEFAULT 1,
  emails TEXT NOT NULL DEFAULT '[]',
  uid INTEGER NOT NULL UNIQUE,
  gid INTEGER NOT NULL,
  home TEXT NOT NULL,
  shell TEXT NOT NULL,
  ssh_keys TEXT NOT NULL DEFAULT '[]',
  created INTEGER NOT NULL,
  modified INTEGER NOT NULL,
  version INTEGER NOT NULL);
CREATE INDEX users_external ON users(external_id);
CREATE TABLE grp(
  rowid INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  display_name TEXT NOT NULL UNIQUE,
  external_id TEXT,
  gid INTEGER NOT NULL UNIQUE,
  created INTEGER NOT NULL,
  modified INTEGER NOT NULL,
  version INTEGER NOT NULL);
CREATE TABLE members(
  group_rowid INTEGER NOT NULL REFERENCES grp(rowid) ON DELETE CASCADE,
  user_rowid INTEGER NOT NULL REFERENCES users(rowid) ON DELETE CASCADE,
  PRIMARY KEY(group_rowid, user_rowid)) WITHOUT ROWID;
CREATE INDEX members_user ON members(user_rowid);
CREATE TABLE id_alloc(
  kind TEXT NOT NULL,
  number INTEGER NOT NULL,
  owner TEXT NOT NULL,
  allocated INTEGER NOT NULL,
  PRIMARY KEY(kind, number)) WITHOUT ROWID;
CREATE TABLE sequences(kind TEXT PRIMARY KEY, next INTEGER NOT NULL);
CREATE TABLE api_tokens(
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  hash TEXT NOT NULL UNIQUE,
  scopes TEXT NOT NULL,
  created INTEGER NOT NULL,
  expires INTEGER NOT NULL,
  revoked INTEGER NOT NULL DEFAULT 0);
)SQL",
};
constexpr int kSchemaVersion = sizeof kMigrations / sizeof kMigrations[0];

Error internal(const std::string& what)
{
    return make_error(Errc::Internal, "store: " + what);
}
Error not_found(const std::string& what)
{
    return make_error(Errc::NotFound, what + " not found");
}
Error bad_filter(const std::string& what)
{
    return make_error(Errc::InvalidFilter, what);
}

int64_t now()
{
    return static_cast<int64_t>(std::time(nullptr));
}

std::string new_uuid()
{
    unsigned char b[16];
    if (RAND_bytes(b, sizeof b) != 1) throw std::runtime_error("RAND_bytes failed");
    b[6] = static_cast<unsigned char>((b[6] & 0x0F) | 0x40);
    b[8] = static_cast<unsigned char>((b[8] & 0x3F) | 0x80);
    static const char* hex = "0123456789abcdef";
    std::string out;
    for (int i = 0; i < 16; ++i) {
        if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
        out += hex[b[i] >> 4];
        out += hex[b[i] & 15];
    }
    return out;
}

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

// ---------------------------------------------------------------- filter → SQL

enum class ColType { String, Int, Bool, Time };

struct Column {
    const char* attr;  // lower-case attr
    const char* sub;   // lower-case sub ("" for none)
    const char* expr;  // SQL expression over the alias
    ColType type;
    bool extension;  // lives in the POSIX extension schema
};

// Multi-valued attributes: EXISTS over a row source, `v` names the value.
struct MultiColumn {
    const char* attr;
    const char* source;  // FROM … WHERE … (correlated to the outer alias)
    struct Sub {
        const char* sub;
        const char* expr;
        ColType type;
    };
    std::vector<Sub> subs;  // sub "" is the default ("value")
    bool extension;
};

struct ResourceMap {
    std::vector<Column> columns;
    std::vector<MultiColumn> multis;
    std::string core_schema;  // lower-case
    std::string ext_schema;   // lower-case
};

const ResourceMap& user_map(const std::string& ext_lower)
{
    static thread_local ResourceMap m;
    if (m.ext_schema != ext_lower || m.columns.empty()) {
        m.core_schema = "urn:ietf:params:scim:schemas:core:2.0:user";
        m.ext_schema = ext_lower;
        m.columns = {
            {"id", "", "u.id", ColType::String, false},
            {"externalid", "", "u.external_id", ColType::String, false},
            {"username", "", "u.user_name", ColType::String, false},
            {"displayname", "", "u.display_name", ColType::String, false},
            {"active", "", "u.active", ColType::Bool, false},
            {"uidnumber", "", "u.uid", ColType::Int, true},
            {"gidnumber", "", "u.gid", ColType::Int, true},
            {"homedirectory", "", "u.home", ColType::String, true},
            {"loginshell", "", "u.shell", ColType::String, true},
            {"meta", "created", "u.created", ColType::Time, false},
            {"meta", "lastmodified", "u.modified", ColType::Time, false},
        };
        m.multis = {
            {"emails",
             "FROM json_each(u.emails) j",
             {{"", "json_extract(j.value,'$.value')", ColType::String},
              {"value", "json_extract(j.value,'$.value')", ColType::String},
              {"type", "json_extract(j.value,'$.type')", ColType::String},
              {"primary", "json_extract(j.value,'$.primary')", ColType::Bool}},
             false},
            {"sshpublickeys",
             "FROM json_each(u.ssh_keys) j",
             {{"", "j.value", ColType::String}, {"value", "j.value", ColType::String}},
             true},
            {"groups",
             "FROM members gm JOIN grp gg ON gg.rowid = gm.group_rowid WHERE gm.user_rowid = "
             "u.rowid",
             {{"", "gg.id", ColType::String},
              {"value", "gg.id", ColType::String},
              {"display", "gg.display_name", ColType::String}},
             false},
        };
    }
    return m;
}

const ResourceMap& group_map()
{
    static const ResourceMap m = [] {
        ResourceMap r;
        r.core_schema = "urn:ietf:params:scim:schemas:core:2.0:group";
        r.ext_schema = "urn:ietf:params:scim:schemas:extension:allot:2.0:posixgroup";
        r.columns = {
            {"id", "", "g.id", ColType::String, false},
            {"externalid", "", "g.external_id", ColType::String, false},
            {"displayname", "", "g.display_name", ColType::String, false},
            {"gidnumber", "", "g.gid", ColType::Int, true},
            {"meta", "created", "g.created", ColType::Time, false},
            {"meta", "lastmodified", "g.modified", ColType::Time, false},
        };
        r.multis = {
            {"members",
             "FROM members mm JOIN users mu ON mu.rowid = mm.user_rowid WHERE mm.group_rowid = "
             "g.rowid",
             {{"", "mu.id", ColType::String},
              {"value", "mu.id", ColType::String},
              {"display", "mu.user_name", ColType::String}},
             false},
        };
        return r;
    }();
    return m;
}

size_t utf8_length(const std::string& s)
{
    size_t n = 0;
    for (unsigned char c : s)
        if ((c & 0xC0) != 0x80) ++n;
    return n;
}

struct Compiler {
    const ResourceMap& map;
    std::vector<SqlValue>& binds;

    Result<std::string> compare(const std::string& expr, ColType type, const Filter& f)
    {
        const auto& v = f.value;
        const std::string shown = f.path.display() + " " + op_name(f.op);
        if (f.op == CompareOp::Pr)
            return type == ColType::String ? "(" + expr + " IS NOT NULL AND " + expr + " <> '')"
                                           : "(" + expr + " IS NOT NULL)";
        if (v.kind == FilterValue::Kind::Null) {
            if (f.op == CompareOp::Eq) return "(" + expr + " IS NULL)";
            if (f.op == CompareOp::Ne) return "(" + expr + " IS NOT NULL)";
            return bad_filter(shown + ": null only with eq/ne");
        }
        SqlValue bound;
        switch (type) {
            case ColType::String:
                if (v.kind != FilterValue::Kind::String)
                    return bad_filter(shown + ": expects a string");
                bound = v.text;
                break;
            case ColType::Int:
                if (v.kind != FilterValue::Kind::Number || std::floor(v.number) != v.number)
                    return bad_filter(shown + ": expects an integer");
                bound = static_cast<int64_t>(v.number);
                break;
            case ColType::Bool:
                if (v.kind != FilterValue::Kind::Bool)
                    return bad_filter(shown + ": expects true or false");
                if (f.op != CompareOp::Eq && f.op != CompareOp::Ne)
                    return bad_filter(shown + ": booleans only with eq/ne");
                bound = static_cast<int64_t>(v.boolean ? 1 : 0);
                break;
            case ColType::Time: {
                auto t =
                    v.kind == FilterValue::Kind::String ? scim::parse_time(v.text) : std::nullopt;
                if (!t) return bad_filter(shown + ": expects an RFC 3339 date-time");
                bound = *t;
                break;
            }
        }
        const bool text_op =
            f.op == CompareOp::Co || f.op == CompareOp::Sw || f.op == CompareOp::Ew;
        if (text_op && type != ColType::String) return bad_filter(shown + ": only for strings");
        switch (f.op) {
            case CompareOp::Eq: binds.push_back(bound); return "(" + expr + " = ?)";
            case CompareOp::Ne:
                binds.push_back(bound);
                return "(" + expr + " IS NULL OR " + expr + " <> ?)";
            case CompareOp::Co: binds.push_back(bound); return "(instr(" + expr + ", ?) > 0)";
            case CompareOp::Sw:
                binds.push_back(static_cast<int64_t>(utf8_length(v.text)));
                binds.push_back(bound);
                return "(substr(" + expr + ", 1, ?) = ?)";
            case CompareOp::Ew:
                if (v.text.empty()) return "(" + expr + " IS NOT NULL)";
                binds.push_back(-static_cast<int64_t>(utf8_length(v.text)));
                binds.push_back(bound);
                return "(substr(" + expr + ", ?) = ?)";
            case CompareOp::Gt: binds.push_back(bound); return "(" + expr + " > ?)";
            case CompareOp::Ge: binds.push_back(bound); return "(" + expr + " >= ?)";
            case CompareOp::Lt: binds.push_back(bound); return "(" + expr + " < ?)";
            case CompareOp::Le: binds.push_back(bound); return "(" + expr + " <= ?)";
            case CompareOp::Pr: break;
        }
        return bad_filter(shown + ": unsupported");
    }

    bool schema_ok(const AttrPath& p, bool extension) const
    {
        if (p.schema.empty()) return true;
        return extension ? p.schema == map.ext_schema : p.schema == map.core_schema;
    }

    // Inside a valuePath, attributes name the sub-attributes of `multi`.
    Result<std::string> compile(const Filter& f, const MultiColumn* multi = nullptr)
    {
        switch (f.kind) {
            case Filter::Kind::And:
            case Filter::Kind::Or: {
                auto l = compile(*f.left, multi);
                if (!l) return l;
                auto r = compile(*f.right, multi);
                if (!r) return r;
                return "(" + l.value() + (f.kind == Filter::Kind::And ? " AND " : " OR ") +
                       r.value() + ")";
            }
            case Filter::Kind::Not: {
                auto inner = compile(*f.left, multi);
                if (!inner) return inner;
                return "(NOT COALESCE(" + inner.value() + ", 0))";
            }
            case Filter::Kind::ValuePath: {
                if (multi) return bad_filter("nested value filters are not supported");
                const MultiColumn* m = find_multi(f.path);
                if (!m) return bad_filter("'" + f.path.display() + "' is not multi-valued");
                auto inner = compile(*f.left, m);
                if (!inner) return inner;
                return "(EXISTS (SELECT 1 " + std::string(m->source) + where_join(m) +
                       inner.value() + "))";
            }
            case Filter::Kind::Compare: break;
        }
        if (multi) {
            if (!f.path.sub.empty() || !f.path.schema.empty())
                return bad_filter("'" + f.path.display() +
                                  "' inside [] must be a sub-attribute name");
            for (const auto& s : multi->subs)
                if (f.path.attr == s.sub) return compare(s.expr, s.type, f);
            return bad_filter("unknown sub-attribute '" + f.path.attr + "'");
        }
        for (const auto& c : map.columns)
            if (f.path.attr == c.attr && f.path.sub == c.sub && schema_ok(f.path, c.extension))
                return compare(c.expr, c.type, f);
        if (const MultiColumn* m = find_multi(f.path)) {
            for (const auto& s : m->subs) {
                if (f.path.sub != s.sub) continue;
                if (f.op == CompareOp::Pr)
                    return "(EXISTS (SELECT 1 " + std::string(m->source) + "))";
                auto inner = compare(s.expr, s.type, f);
                if (!inner) return inner;
                return "(EXISTS (SELECT 1 " + std::string(m->source) + where_join(m) +
                       inner.value() + "))";
            }
            return bad_filter("unknown sub-attribute '" + f.path.display() + "'");
        }
        return bad_filter("unknown or unfilterable attribute '" + f.path.display() + "'");
    }

    const MultiColumn* find_multi(const AttrPath& p) const
    {
        for (const auto& m : map.multis)
            if (p.attr == m.attr && schema_ok(p, m.extension)) return &m;
        return nullptr;
    }
    static std::string where_join(const MultiColumn* m)
    {
        return std::strstr(m->source, " WHERE ") ? " AND " : " WHERE ";
    }
};

struct Cursor {
    std::string key;
    std::string id;
};

std::string encode_cursor(const std::string& key, const std::string& id)
{
    return base64url_encode(key + '\x1f' + id);
}

std::optional<Cursor> decode_cursor(const std::string& text)
{
    if (text.size() > 1024) return std::nullopt;
    auto raw = base64url_decode(text);
    if (!raw) return std::nullopt;
    const size_t sep = raw->find('\x1f');
    if (sep == std::string::npos || raw->find('\x1f', sep + 1) != std::string::npos)
        return std::nullopt;
    return Cursor{raw->substr(0, sep), raw->substr(sep + 1)};
}

// ---------------------------------------------------------------- the store

class SqliteStore final : public DirectoryStore {
public:
    SqliteStore(std::string path, IdRange range) : path_(std::move(path)), range_(range) {}

    bool open(std::string* error)
    {
        auto conn = connect(error);
        if (!conn) return false;
        if (!migrate(*conn, error)) return false;
        pool_.push_back(std::move(conn));
        return true;
    }

    // ------------------------------------------------------------ users
    Result<scim::User> create_user(scim::User u) override
    {
        auto c = borrow();
        if (!c) return internal("cannot open database");
        Txn t(*c);
        if (!t.ok()) return internal(c->errmsg());
        if (exists(*c, "SELECT 1 FROM users WHERE user_name = ?", u.user_name))
            return make_error(Errc::Uniqueness, "userName '" + u.user_name + "' is taken");
        const int64_t ts = now();
        auto uid = allocate(*c, "uid", u.uid, "user:" + u.user_name, ts);
        if (!uid) return uid.error();
        u.uid = uid.value();
        if (!u.gid || !exists(*c, "SELECT 1 FROM grp WHERE gid = ?", *u.gid)) {
            auto gid = allocate(*c, "gid", u.gid, "user:" + u.user_name, ts);
            if (!gid) return gid.error();
            u.gid = gid.value();
        }
        u.id = new_uuid();
        u.created = u.modified = ts;
        u.version = 1;
        auto ins = c->prepare(
            "INSERT INTO users(id,user_name,external_id,display_name,active,emails,uid,gid,home,"
            "shell,ssh_keys,created,modified,version) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
        if (!ins) return internal(c->errmsg());
        ins.bind(1, u.id).bind(2, u.user_name).bind(3, u.external_id).bind(4, u.display_name);
        ins.bind(5, int64_t{u.active}).bind(6, emails_json(u.emails)).bind(7, *u.uid);
        ins.bind(8, *u.gid).bind(9, u.home).bind(10, u.shell);
        ins.bind(11, strings_json(u.ssh_keys)).bind(12, ts).bind(13, ts).bind(14, int64_t{1});
        if (ins.step() != SQLITE_DONE) return internal(c->errmsg());
        if (!t.commit()) return internal(c->errmsg());
        u.groups.clear();
        return u;
    }

    Result<scim::User> get_user(const std::string& id) override { return one_user("u.id = ?", id); }
    Result<scim::User> get_user_by_name(const std::string& name) override
    {
        return one_user("u.user_name = ?", name);
    }
    Result<scim::User> get_user_by_uid(uint32_t uid) override
    {
        return one_user("u.uid = ?", int64_t{uid});
    }

    Result<scim::User> replace_user(const std::string& id, scim::User n,
                                    int64_t expected_version) override
    {
        auto c = borrow();
        if (!c) return internal("cannot open database");
        Txn t(*c);
        if (!t.ok()) return internal(c->errmsg());
        auto cur = load_users(*c, "u.id = ?", {id}, "", 1);
        if (!cur) return cur.error();
        if (cur.value().empty()) return not_found("user " + id);
        scim::User old = cur.value()[0];
        if (expected_version && expected_version != old.version)
            return make_error(Errc::VersionMismatch,
                              "version mismatch (have " + scim::etag(old.version) + ")");
        if (n.uid && n.uid != old.uid)
            return make_error(Errc::Mutability, "uidNumber is immutable");
        if (n.gid && n.gid != old.gid)
            return make_error(Errc::Mutability, "gidNumber is immutable");
        if (n.user_name != old.user_name &&
            exists(*c, "SELECT 1 FROM users WHERE user_name = ?", n.user_name))
            return make_error(Errc::Uniqueness, "userName '" + n.user_name + "' is taken");
        n.id = old.id;
        n.uid = old.uid;
        n.gid = old.gid;
        n.created = old.created;
        n.modified = now();
        n.version = old.version + 1;
        auto up = c->prepare(
            "UPDATE users SET user_name=?, external_id=?, display_name=?, active=?, emails=?, "
            "home=?, shell=?, ssh_keys=?, modified=?, version=? WHERE id=?");
        if (!up) return internal(c->errmsg());
        up.bind(1, n.user_name).bind(2, n.external_id).bind(3, n.display_name);
        up.bind(4, int64_t{n.active}).bind(5, emails_json(n.emails)).bind(6, n.home);
        up.bind(7, n.shell).bind(8, strings_json(n.ssh_keys)).bind(9, n.modified);
        up.bind(10, n.version).bind(11, n.id);
        if (up.step() != SQLITE_DONE) return internal(c->errmsg());
        if (!t.commit()) return internal(c->errmsg());
        n.groups = old.groups;
        return n;
    }

    Result<Unit> delete_user(const std::string& id) override
    {
        return delete_row("DELETE FROM users WHERE id = ?", id, "user " + id);
    }

    // One row by id, in its own transaction; not_found when nothing was deleted.
    Result<Unit> delete_row(const char* sql, const std::string& id, const std::string& what)
    {
        auto c = borrow();
        if (!c) return internal("cannot open database");
        Txn t(*c);
        if (!t.ok()) return internal(c->errmsg());
        auto del = c->prepare(sql);
        del.bind(1, id);
        if (del.step() != SQLITE_DONE) return internal(c->errmsg());
        if (sqlite3_changes(c->db()) == 0) return not_found(what);
        if (!t.commit()) return internal(c->errmsg());
        return Unit{};
    }

    Result<Page<scim::User>> list_users(const ListQuery& q) override
    {
        auto c = borrow();
        if (!c) return internal("cannot open database");
        std::vector<SqlValue> binds;
        std::string where = "1";
        if (q.filter) {
            Compiler comp{user_map(lower_ext_), binds};
            auto w = comp.compile(*q.filter);
            if (!w) return w.error();
            where = w.value();
        }
        return list<scim::User>(
            *c, "users u", "u", "u.user_name", where, binds, q,
            [&](const std::string& wh, const std::vector<SqlValue>& b, const std::string& order,
                size_t limit,
                size_t offset) { return load_users(*c, wh, b, order, limit, offset); },
            [](const scim::User& u) { return u.user_name; });
    }

    // ------------------------------------------------------------ groups
    Result<scim::Group> create_group(scim::Group g) override
    {
        auto c = borrow();
        if (!c) return internal("cannot open database");
        Txn t(*c);
        if (!t.ok()) return internal(c->errmsg());
        if (exists(*c, "SELECT 1 FROM grp WHERE display_name = ?", g.display_name))
            return make_error(Errc::Uniqueness, "group '" + g.display_name + "' exists");
        const int64_t ts = now();
        auto gid = allocate(*c, "gid", g.gid, "group:" + g.display_name, ts);
        if (!gid) return gid.error();
        g.gid = gid.value();
        g.id = new_uuid();
        g.created = g.modified = ts;
        g.version = 1;
        auto ins = c->prepare(
            "INSERT INTO grp(id,display_name,external_id,gid,created,modified,version) "
            "VALUES(?,?,?,?,?,?,1)");
        ins.bind(1, g.id).bind(2, g.display_name).bind(3, g.external_id).bind(4, *g.gid);
        ins.bind(5, ts).bind(6, ts);
        if (ins.step() != SQLITE_DONE) return internal(c->errmsg());
        auto members = set_members(*c, g.id, g.members);
        if (!members) return members.error();
        if (!t.commit()) return internal(c->errmsg());
        g.members = members.value();
        return g;
    }

    Result<scim::Group> get_group(const std::string& id) override
    {
        return one_group("g.id = ?", id);
    }
    Result<scim::Group> get_group_by_name(const std::string& name) override
    {
        return one_group("g.display_name = ?", name);
    }

    Result<scim::Group> replace_group(const std::string& id, scim::Group n,
                                      int64_t expected_version) override
    {
        auto c = borrow();
        if (!c) return internal("cannot open database");
        Txn t(*c);
        if (!t.ok()) return internal(c->errmsg());
        auto cur = load_groups(*c, "g.id = ?", {id}, "", 1);
        if (!cur) return cur.error();
        if (cur.value().empty()) return not_found("group " + id);
        const scim::Group old = cur.value()[0];
        if (expected_version && expected_version != old.version)
            return make_error(Errc::VersionMismatch,
                              "version mismatch (have " + scim::etag(old.version) + ")");
        if (n.gid && n.gid != old.gid)
            return make_error(Errc::Mutability, "gidNumber is immutable");
        if (n.display_name != old.display_name &&
            exists(*c, "SELECT 1 FROM grp WHERE display_name = ?", n.display_name))
            return make_error(Errc::Uniqueness, "group '" + n.display_name + "' exists");
        n.id = old.id;
        n.gid = old.gid;
        n.created = old.created;
        n.modified = now();
        n.version = old.version + 1;
        auto up = c->prepare(
            "UPDATE grp SET display_name=?, external_id=?, modified=?, version=? WHERE id=?");
        up.bind(1, n.display_name).bind(2, n.external_id).bind(3, n.modified).bind(4, n.version);
        up.bind(5, n.id);
        if (up.step() != SQLITE_DONE) return internal(c->errmsg());
        auto members = set_members(*c, n.id, n.members);
        if (!members) return members.error();
        if (!t.commit()) return internal(c->errmsg());
        n.members = members.value();
        return n;
    }

    Result<Unit> delete_group(const std::string& id) override
    {
        return delete_row("DELETE FROM grp WHERE id = ?", id, "group " + id);
    }

    Result<Page<scim::Group>> list_groups(const ListQuery& q) override
    {
        auto c = borrow();
        if (!c) return internal("cannot open database");
        std::vector<SqlValue> binds;
        std::string where = "1";
        if (q.filter) {
            Compiler comp{group_map(), binds};
            auto w = comp.compile(*q.filter);
            if (!w) return w.error();
            where = w.value();
        }
        return list<scim::Group>(
            *c, "grp g", "g", "g.display_name", where, binds, q,
            [&](const std::string& wh, const std::vector<SqlValue>& b, const std::string& order,
                size_t limit,
                size_t offset) { return load_groups(*c, wh, b, order, limit, offset); },
            [](const scim::Group& g) { return g.display_name; });
    }

    // ------------------------------------------------------------ tokens
    Result<ApiToken> create_token(const std::string& name, const std::vector<std::string>& scopes,
                                  int64_t expires, const std::string& hash) override
    {
        auto c = borrow();
        if (!c) return internal("cannot open database");
        if (exists(*c, "SELECT 1 FROM api_tokens WHERE name = ?", name))
            return make_error(Errc::Uniqueness, "token '" + name + "' exists");
        ApiToken t{new_uuid(), name, scopes, now(), expires, false};
        std::string joined;
        for (const auto& s : scopes) joined += (joined.empty() ? "" : " ") + s;
        auto ins = c->prepare(
            "INSERT INTO api_tokens(id,name,hash,scopes,created,expires) VALUES(?,?,?,?,?,?)");
        ins.bind(1, t.id).bind(2, name).bind(3, hash).bind(4, joined).bind(5, t.created);
        ins.bind(6, expires);
        if (ins.step() != SQLITE_DONE) return internal(c->errmsg());
        return t;
    }

    Result<ApiToken> find_token(const std::string& hash) override
    {
        auto c = borrow();
        if (!c) return internal("cannot open database");
        auto tokens = load_tokens(*c, "WHERE hash = ?", hash);
        if (tokens.empty()) return not_found("token");
        return tokens[0];
    }

    Result<Unit> revoke_token(const std::string& name_or_id) override
    {
        auto c = borrow();
        if (!c) return internal("cannot open database");
        auto up = c->prepare("UPDATE api_tokens SET revoked = 1 WHERE name = ? OR id = ?");
        up.bind(1, name_or_id).bind(2, name_or_id);
        if (up.step() != SQLITE_DONE) return internal(c->errmsg());
        if (sqlite3_changes(c->db()) == 0) return not_found("token " + name_or_id);
        return Unit{};
    }

    Result<std::vector<ApiToken>> list_tokens() override
    {
        auto c = borrow();
        if (!c) return internal("cannot open database");
        return load_tokens(*c, "ORDER BY name", "");
    }

private:
    // A borrowed pooled connection, returned on scope exit.
    class Lease {
    public:
        Lease(SqliteStore* s, std::unique_ptr<Conn> c) : s_(s), c_(std::move(c)) {}
        Lease(Lease&& o) noexcept : s_(o.s_), c_(std::move(o.c_)) {}
        ~Lease()
        {
            if (c_) s_->give_back(std::move(c_));
        }
        explicit operator bool() const { return c_ != nullptr; }
        Conn& operator*() { return *c_; }
        Conn* operator->() { return c_.get(); }

    private:
        SqliteStore* s_;
        std::unique_ptr<Conn> c_;
    };

    class Txn {
    public:
        explicit Txn(Conn& c) : c_(c), ok_(c.exec("BEGIN IMMEDIATE")) {}
        ~Txn()
        {
            if (ok_ && !done_) c_.exec("ROLLBACK");
        }
        bool ok() const { return ok_; }
        bool commit()
        {
            done_ = c_.exec("COMMIT");
            return done_;
        }

    private:
        Conn& c_;
        bool ok_;
        bool done_ = false;
    };

    std::unique_ptr<Conn> connect(std::string* error)
    {
        sqlite3* db = nullptr;
        const int rc = sqlite3_open_v2(
            path_.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
            nullptr);
        auto conn = std::make_unique<Conn>(db);
        if (rc != SQLITE_OK) {
            if (error) *error = path_ + ": " + (db ? sqlite3_errmsg(db) : "cannot open");
            return nullptr;
        }
        sqlite3_busy_timeout(db, 10000);
        if (!conn->exec("PRAGMA journal_mode=WAL") || !conn->exec("PRAGMA foreign_keys=ON") ||
            !conn->exec("PRAGMA synchronous=NORMAL")) {
            if (error) *error = path_ + ": " + conn->errmsg();
            return nullptr;
        }
        return conn;
    }

    bool migrate(Conn& c, std::string* error)
    {
        int version = 0;
        {
            auto st = c.prepare("PRAGMA user_version");
            if (st && st.step() == SQLITE_ROW) version = static_cast<int>(st.col_int(0));
        }
        if (version > kSchemaVersion) {
            if (error)
                *error = path_ + ": schema version " + std::to_string(version) +
                         " is newer than this allot-scimd (" + std::to_string(kSchemaVersion) + ")";
            return false;
        }
        for (int v = version; v < kSchemaVersion; ++v) {
            Txn t(c);
            const std::string sql = std::string(kMigrations[v]) +
                                    "PRAGMA user_version = " + std::to_string(v + 1) + ";";
            if (!t.ok() || !c.exec(sql.c_str()) || !t.commit()) {
                if (error)
                    *error = path_ + ": migration " + std::to_string(v + 1) + ": " + c.errmsg();
                return false;
            }
        }
        return true;
    }

    Lease borrow()
    {
        {
            std::lock_guard<std::mutex> lock(mu_);
            if (!pool_.empty()) {
                auto c = std::move(pool_.back());
                pool_.pop_back();
                return Lease(this, std::move(c));
            }
        }
        return Lease(this, connect(nullptr));
    }
    void give_back(std::unique_ptr<Conn> c)
    {
        std::lock_guard<std::mutex> lock(mu_);
        if (pool_.size() < 32) pool_.push_back(std::move(c));
    }

    template <typename V>
    bool exists(Conn& c, const char* sql, const V& value)
    {
        auto st = c.prepare(sql);
        if constexpr (std::is_same_v<V, std::string>)
            st.bind(1, value);
        else
            st.bind(1, static_cast<int64_t>(value));
        return st.step() == SQLITE_ROW;
    }

    // Hands out `wanted` (if given: must never have been used) or the next free number.
    Result<int64_t> allocate(Conn& c, const char* kind, std::optional<int64_t> wanted,
                             const std::string& owner, int64_t ts)
    {
        const bool is_uid = std::strcmp(kind, "uid") == 0;
        const uint32_t lo = is_uid ? range_.uid_min : range_.gid_min;
        const uint32_t hi = is_uid ? range_.uid_max : range_.gid_max;
        auto taken = [&](int64_t n) {
            auto st = c.prepare("SELECT 1 FROM id_alloc WHERE kind = ? AND number = ?");
            st.bind(1, std::string(kind)).bind(2, n);
            return st.step() == SQLITE_ROW;
        };
        int64_t n = wanted.value_or(0);
        if (n) {
            if (n < lo || n > hi)
                return make_error(Errc::InvalidValue,
                                  std::string(is_uid ? "uidNumber " : "gidNumber ") +
                                      std::to_string(n) + " is outside " + std::to_string(lo) +
                                      ".." + std::to_string(hi));
            if (taken(n))
                return make_error(Errc::Uniqueness,
                                  std::string(is_uid ? "uidNumber " : "gidNumber ") +
                                      std::to_string(n) +
                                      " was already allocated (ids are never reused)");
        } else {
            auto st = c.prepare("SELECT next FROM sequences WHERE kind = ?");
            st.bind(1, std::string(kind));
            n = st.step() == SQLITE_ROW ? st.col_int(0) : lo;
            if (n < lo) n = lo;
            while (n <= hi && taken(n)) ++n;
            if (n > hi)
                return make_error(Errc::Exhausted, std::string(kind) + " range " +
                                                       std::to_string(lo) + ".." +
                                                       std::to_string(hi) + " is exhausted");
            auto seq = c.prepare(
                "INSERT INTO sequences(kind,next) VALUES(?,?) "
                "ON CONFLICT(kind) DO UPDATE SET next = excluded.next");
            seq.bind(1, std::string(kind)).bind(2, n + 1);
            if (seq.step() != SQLITE_DONE) return internal(c.errmsg());
        }
        auto ins = c.prepare("INSERT INTO id_alloc(kind,number,owner,allocated) VALUES(?,?,?,?)");
        ins.bind(1, std::string(kind)).bind(2, n).bind(3, owner).bind(4, ts);
        if (ins.step() != SQLITE_DONE) return internal(c.errmsg());
        return n;
    }

    // Replaces the member set; unknown user ids are an error (RFC: invalidValue).
    Result<std::vector<scim::Member>> set_members(Conn& c, const std::string& group_id,
                                                  const std::vector<scim::Member>& members)
    {
        auto del = c.prepare(
            "DELETE FROM members WHERE group_rowid = (SELECT rowid FROM grp WHERE id = ?)");
        del.bind(1, group_id);
        if (del.step() != SQLITE_DONE) return internal(c.errmsg());
        std::vector<scim::Member> out;
        for (const auto& m : members) {
            auto ins = c.prepare(
                "INSERT OR IGNORE INTO members(group_rowid, user_rowid) SELECT g.rowid, u.rowid "
                "FROM grp g, users u WHERE g.id = ? AND u.id = ?");
            ins.bind(1, group_id).bind(2, m.value);
            if (ins.step() != SQLITE_DONE) return internal(c.errmsg());
            if (sqlite3_changes(c.db()) == 0) {
                auto known = c.prepare("SELECT 1 FROM users WHERE id = ?");
                known.bind(1, m.value);
                if (known.step() != SQLITE_ROW)
                    return make_error(Errc::InvalidValue, "member '" + m.value + "' is not a user");
            }
        }
        auto names = c.prepare(
            "SELECT u.id, u.user_name FROM members m JOIN users u ON u.rowid = m.user_rowid "
            "WHERE m.group_rowid = (SELECT rowid FROM grp WHERE id = ?) ORDER BY u.user_name");
        names.bind(1, group_id);
        while (names.step() == SQLITE_ROW)
            out.push_back({names.col_text(0), "User", names.col_text(1)});
        return out;
    }

    template <typename V>
    Result<scim::User> one_user(const char* where, const V& value)
    {
        auto c = borrow();
        if (!c) return internal("cannot open database");
        std::vector<SqlValue> b{value};
        auto users = load_users(*c, where, b, "", 1);
        if (!users) return users.error();
        if (users.value().empty()) return not_found("user");
        return users.value()[0];
    }

    template <typename V>
    Result<scim::Group> one_group(const char* where, const V& value)
    {
        auto c = borrow();
        if (!c) return internal("cannot open database");
        std::vector<SqlValue> b{value};
        auto groups = load_groups(*c, where, b, "", 1);
        if (!groups) return groups.error();
        if (groups.value().empty()) return not_found("group");
        return groups.value()[0];
    }

    Result<std::vector<scim::User>> load_users(Conn& c, const std::string& where,
                                               const std::vector<SqlValue>& binds,
                                               const std::string& order, size_t limit,
                                               size_t offset = 0)
    {
        std::string sql =
            "SELECT u.id, u.user_name, u.external_id, u.display_name, u.active, u.emails, u.uid, "
            "u.gid, u.home, u.shell, u.ssh_keys, u.created, u.modified, u.version, "
            "(SELECT json_group_array(json_array(gg.id, gg.display_name)) FROM (SELECT g2.id, "
            "g2.display_name FROM members m2 JOIN grp g2 ON g2.rowid = m2.group_rowid WHERE "
            "m2.user_rowid = u.rowid ORDER BY g2.display_name) gg) FROM users u WHERE " +
            where + (order.empty() ? "" : " ORDER BY " + order) + " LIMIT ? OFFSET ?";
        auto st = c.prepare(sql);
        if (!st) return internal(c.errmsg());
        st.bind_all(binds);
        st.bind(static_cast<int>(binds.size()) + 1, static_cast<int64_t>(limit));
        st.bind(static_cast<int>(binds.size()) + 2, static_cast<int64_t>(offset));
        std::vector<scim::User> out;
        int rc;
        while ((rc = st.step()) == SQLITE_ROW) {
            scim::User u;
            u.id = st.col_text(0);
            u.user_name = st.col_text(1);
            u.external_id = st.col_text(2);
            u.display_name = st.col_text(3);
            u.active = st.col_int(4) != 0;
            JsonPtr emails = json_parse(st.col_text(5));
            const cJSON* e = nullptr;
            cJSON_ArrayForEach(e, emails.get())
            {
                u.emails.push_back({json_string(e, "value").value_or(""),
                                    json_string(e, "type").value_or(""),
                                    json_bool(e, "primary").value_or(false)});
            }
            u.uid = st.col_int(6);
            u.gid = st.col_int(7);
            u.home = st.col_text(8);
            u.shell = st.col_text(9);
            u.ssh_keys = strings_from_json(st.col_text(10));
            u.created = st.col_int(11);
            u.modified = st.col_int(12);
            u.version = st.col_int(13);
            JsonPtr groups = json_parse(st.col_text(14));
            const cJSON* g = nullptr;
            cJSON_ArrayForEach(g, groups.get())
            {
                const cJSON* id = cJSON_GetArrayItem(g, 0);
                const cJSON* name = cJSON_GetArrayItem(g, 1);
                if (cJSON_IsString(id) && cJSON_IsString(name))
                    u.groups.push_back({id->valuestring, name->valuestring});
            }
            out.push_back(std::move(u));
        }
        if (rc != SQLITE_DONE) return internal(c.errmsg());
        return out;
    }

    Result<std::vector<scim::Group>> load_groups(Conn& c, const std::string& where,
                                                 const std::vector<SqlValue>& binds,
                                                 const std::string& order, size_t limit,
                                                 size_t offset = 0)
    {
        std::string sql =
            "SELECT g.id, g.display_name, g.external_id, g.gid, g.created, g.modified, g.version, "
            "(SELECT json_group_array(json_array(mm.id, mm.user_name)) FROM (SELECT u2.id, "
            "u2.user_name FROM members m2 JOIN users u2 ON u2.rowid = m2.user_rowid WHERE "
            "m2.group_rowid = g.rowid ORDER BY u2.user_name) mm) FROM grp g WHERE " +
            where + (order.empty() ? "" : " ORDER BY " + order) + " LIMIT ? OFFSET ?";
        auto st = c.prepare(sql);
        if (!st) return internal(c.errmsg());
        st.bind_all(binds);
        st.bind(static_cast<int>(binds.size()) + 1, static_cast<int64_t>(limit));
        st.bind(static_cast<int>(binds.size()) + 2, static_cast<int64_t>(offset));
        std::vector<scim::Group> out;
        int rc;
        while ((rc = st.step()) == SQLITE_ROW) {
            scim::Group g;
            g.id = st.col_text(0);
            g.display_name = st.col_text(1);
            g.external_id = st.col_text(2);
            g.gid = st.col_int(3);
            g.created = st.col_int(4);
            g.modified = st.col_int(5);
            g.version = st.col_int(6);
            JsonPtr members = json_parse(st.col_text(7));
            const cJSON* m = nullptr;
            cJSON_ArrayForEach(m, members.get())
            {
                const cJSON* id = cJSON_GetArrayItem(m, 0);
                const cJSON* name = cJSON_GetArrayItem(m, 1);
                if (cJSON_IsString(id) && cJSON_IsString(name))
                    g.members.push_back({id->valuestring, "User", name->valuestring});
            }
            out.push_back(std::move(g));
        }
        if (rc != SQLITE_DONE) return internal(c.errmsg());
        return out;
    }

    template <typename T, typename Load, typename Key>
    Result<Page<T>> list(Conn& c, const std::string& table, const std::string& /*alias*/,
                         const std::string& key_col, const std::string& where,
                         const std::vector<SqlValue>& binds, const ListQuery& q, Load load,
                         Key key_of)
    {
        Page<T> page;
        {
            auto st = c.prepare("SELECT count(*) FROM " + table + " WHERE " + where);
            if (!st) return internal(c.errmsg());
            st.bind_all(binds);
            if (st.step() != SQLITE_ROW) return internal(c.errmsg());
            page.total = static_cast<size_t>(st.col_int(0));
        }
        const bool desc = q.order == SortOrder::Descending;
        // The key (userName / displayName) is UNIQUE, so it alone orders totally and
        // SQLite walks its index instead of sorting the table on every page.
        const std::string order = key_col + (desc ? " DESC" : "");
        const size_t count = std::min<size_t>(q.count, 1000);
        if (q.cursor) {
            std::string w = where;
            std::vector<SqlValue> b = binds;
            if (!q.cursor->empty()) {
                auto cur = decode_cursor(*q.cursor);
                if (!cur) return make_error(Errc::InvalidCursor, "cursor is not one of ours");
                w = "(" + where + ") AND " + key_col + (desc ? " < ?" : " > ?");
                b.push_back(cur->key);
            }
            // One extra row tells whether another page exists.
            auto rows = load(w, b, order, count + 1, 0);
            if (!rows) return rows.error();
            auto& items = rows.value();
            if (items.size() > count) {
                items.resize(count);
                page.next_cursor = encode_cursor(key_of(items.back()), items.back().id);
            }
            page.items = std::move(items);
            return page;
        }
        page.start_index = std::max<size_t>(q.start_index, 1);
        if (count == 0) return page;
        auto rows = load(where, binds, order, count, page.start_index - 1);
        if (!rows) return rows.error();
        page.items = std::move(rows.value());
        return page;
    }

    std::vector<ApiToken> load_tokens(Conn& c, const std::string& tail, const std::string& bind)
    {
        auto st =
            c.prepare("SELECT id, name, scopes, created, expires, revoked FROM api_tokens " + tail);
        if (!bind.empty()) st.bind(1, bind);
        std::vector<ApiToken> out;
        while (st.step() == SQLITE_ROW) {
            ApiToken t;
            t.id = st.col_text(0);
            t.name = st.col_text(1);
            const std::string scopes = st.col_text(2);
            size_t start = 0;
            while (start < scopes.size()) {
                size_t sp = scopes.find(' ', start);
                if (sp == std::string::npos) sp = scopes.size();
                if (sp > start) t.scopes.push_back(scopes.substr(start, sp - start));
                start = sp + 1;
            }
            t.created = st.col_int(3);
            t.expires = st.col_int(4);
            t.revoked = st.col_int(5) != 0;
            out.push_back(std::move(t));
        }
        return out;
    }

public:
    void set_extension(const std::string& ext) { lower_ext_ = to_lower(ext); }

private:
    std::string path_;
    IdRange range_;
    std::string lower_ext_ = "urn:ietf:params:scim:schemas:extension:allot:2.0:posixuser";
    std::mutex mu_;
    std::vector<std::unique_ptr<Conn>> pool_;
};

}  // namespace

std::unique_ptr<DirectoryStore> open_sqlite_store(const std::string& path, IdRange range,
                                                  const std::string& user_extension,
                                                  std::string* error)
{
    auto store = std::make_unique<SqliteStore>(path, range);
    store->set_extension(user_extension);
    if (!store->open(error)) return nullptr;
    return store;
}

}  // namespace allot::scimd
