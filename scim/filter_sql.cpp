// filter_sql.cpp - see filter_sql.hpp.
#include "filter_sql.hpp"

#include <cmath>
#include <cstring>
#include <optional>

#include "codec.hpp"

namespace allot::scimd {

namespace {

Error bad_filter(const std::string& what)
{
    return make_error(Errc::InvalidFilter, what);
}

// A boolean literal, or the string "true"/"false" (any case).
std::optional<bool> boolean_value(const FilterValue& v)
{
    if (v.kind == FilterValue::Kind::Bool) return v.boolean;
    if (v.kind != FilterValue::Kind::String || v.text.size() > 5) return std::nullopt;
    std::string lower;
    for (char c : v.text) lower += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    if (lower == "true") return true;
    if (lower == "false") return false;
    return std::nullopt;
}

// A group's members, read through `source`: it must join the member rows as
// `mu` (users), whatever table the group's own rows come from.
MultiColumn members_column(const char* source)
{
    return {"members",
            source,
            {{"", "mu.id", ColType::String},
             {"value", "mu.id", ColType::String},
             {"display", "mu.user_name", ColType::String}},
            false};
}

}  // namespace

const ResourceMap& user_filter_map(const std::string& ext_lower)
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

const ResourceMap& group_filter_map()
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
        r.multis = {members_column(
            "FROM members mm JOIN users mu ON mu.rowid = mm.user_rowid WHERE mm.group_rowid = "
            "g.rowid")};
        return r;
    }();
    return m;
}

const ResourceMap& group_view_filter_map()
{
    static const ResourceMap m = [] {
        ResourceMap r = group_filter_map();
        // The view's columns carry grp's names; only where members come from differs.
        r.multis = {members_column(
            "FROM (SELECT mm.user_rowid AS r FROM members mm WHERE mm.group_rowid = g.grp_rowid "
            "UNION ALL SELECT g.user_rowid) mx JOIN users mu ON mu.rowid = mx.r WHERE 1")};
        return r;
    }();
    return m;
}

namespace {

size_t utf8_length(const std::string& s)
{
    size_t n = 0;
    for (unsigned char c : s)
        if ((c & 0xC0) != 0x80) ++n;
    return n;
}

// The operands of an and/or chain rooted at `f`, left to right: nested nodes
// of the same kind are the same chain.
std::vector<const Filter*> chain_terms(const Filter& f)
{
    std::vector<const Filter*> out, stack{&f};
    while (!stack.empty()) {
        const Filter* n = stack.back();
        stack.pop_back();
        if (n->kind == f.kind) {
            stack.push_back(n->right.get());
            stack.push_back(n->left.get());
        } else {
            out.push_back(n);
        }
    }
    return out;
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
            case ColType::Bool: {
                // SUNK's nsscache example sends `active eq "true"`: the quoted
                // words are read as the booleans they name.
                auto b = boolean_value(v);
                if (!b) return bad_filter(shown + ": expects true or false");
                if (f.op != CompareOp::Eq && f.op != CompareOp::Ne)
                    return bad_filter(shown + ": booleans only with eq/ne");
                bound = static_cast<int64_t>(*b ? 1 : 0);
                break;
            }
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
    // `negate`: compile `not (f)`. Negation is pushed down to the leaves (De
    // Morgan), so `not` adds no nesting and the SQL nests only where and/or
    // alternate: within the parser's 24 levels SQLite's parser stack holds.
    Result<std::string> compile(const Filter& f, const MultiColumn* multi = nullptr,
                                bool negate = false)
    {
        switch (f.kind) {
            case Filter::Kind::And:
            case Filter::Kind::Or: return chain(f, multi, negate);
            case Filter::Kind::Not: return compile(*f.left, multi, !negate);
            case Filter::Kind::ValuePath:
            case Filter::Kind::Compare: break;
        }
        auto leaf = f.kind == Filter::Kind::ValuePath ? value_path(f, multi) : comparison(f, multi);
        if (!leaf || !negate) return leaf;
        // True unless the leaf is true: a NULL (missing attribute) counts as false.
        return "(" + leaf.value() + " IS NOT 1)";
    }

    // One flat (a AND b AND c ...) per chain: the parser's left-deep tree
    // nested as deep as it has terms, past SQLite's parser stack.
    Result<std::string> chain(const Filter& f, const MultiColumn* multi, bool negate)
    {
        const bool all = (f.kind == Filter::Kind::And) != negate;
        std::string out = "(";
        bool first = true;
        for (const Filter* term : chain_terms(f)) {
            auto t = compile(*term, multi, negate);
            if (!t) return t;
            out += (first ? "" : all ? " AND " : " OR ") + t.value();
            first = false;
        }
        return out + ")";
    }

    Result<std::string> value_path(const Filter& f, const MultiColumn* multi)
    {
        if (multi) return bad_filter("nested value filters are not supported");
        const MultiColumn* m = find_multi(f.path);
        if (!m) return bad_filter("'" + f.path.display() + "' is not multi-valued");
        auto inner = compile(*f.left, m);
        if (!inner) return inner;
        return "(EXISTS (SELECT 1 " + std::string(m->source) + where_join(m) + inner.value() + "))";
    }

    Result<std::string> comparison(const Filter& f, const MultiColumn* multi)
    {
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

}  // namespace

Result<std::string> compile_filter(const ResourceMap& map, const Filter& filter,
                                   std::vector<SqlValue>& binds)
{
    Compiler c{map, binds};
    return c.compile(filter);
}

}  // namespace allot::scimd
