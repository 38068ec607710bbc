// store_resource.hpp - the one implementation of a SCIM resource table.
//
// ResourceTable<UserTable> and ResourceTable<GroupTable> are the store's
// Users and Groups: the same transaction, version check (If-Match), key
// uniqueness, immutable-id rule and paging for both; the Table parameter says
// only how its rows are read and written (store_tables.hpp).
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "cursor.hpp"
#include "filter_sql.hpp"
#include "store_pool.hpp"
#include "store_tables.hpp"

namespace allot::scimd {

template <typename Table>
class ResourceTable {
public:
    using T = typename Table::Resource;

    ResourceTable(ConnPool& pool, const IdAllocator& ids) : pool_(pool), ids_(ids) {}

    Result<T> get(const char* where, const SqlValue& value)
    {
        auto c = pool_.borrow();
        if (!c) return store_internal("cannot open database");
        auto rows = Table::load(*c, where, {value}, "", 1, 0);
        if (!rows) return rows.error();
        if (rows.value().empty()) return store_not_found(Table::kKind);
        return rows.value()[0];
    }

    Result<T> create(T draft)
    {
        auto c = pool_.borrow();
        if (!c) return store_internal("cannot open database");
        Txn t(*c);
        if (!t.ok()) return store_internal(c->errmsg());
        if (row_exists(*c, Table::kKeyTaken, Table::key(draft))) return taken(draft);
        draft.id = new_uuid();
        draft.created = draft.modified = unix_now();
        draft.version = 1;
        if (auto ok = Table::insert(*c, ids_, draft); !ok) return ok.error();
        if (!t.commit()) return store_internal(c->errmsg());
        return draft;
    }

    Result<T> replace(const std::string& id, T next, int64_t expected_version)
    {
        auto c = pool_.borrow();
        if (!c) return store_internal("cannot open database");
        Txn t(*c);
        if (!t.ok()) return store_internal(c->errmsg());
        auto cur = Table::load(*c, Table::kById, {id}, "", 1, 0);
        if (!cur) return cur.error();
        if (cur.value().empty()) return store_not_found(std::string(Table::kKind) + " " + id);
        const T old = cur.value()[0];
        if (expected_version && expected_version != old.version)
            return make_error(Errc::VersionMismatch,
                              "version mismatch (have W/\"" + std::to_string(old.version) + "\")");
        if (auto ok = Table::keep_immutable(old, next); !ok) return ok.error();
        if (Table::key(next) != Table::key(old) &&
            row_exists(*c, Table::kKeyTaken, Table::key(next)))
            return taken(next);
        next.id = old.id;
        next.created = old.created;
        next.modified = unix_now();
        next.version = old.version + 1;
        if (auto ok = Table::update(*c, next); !ok) return ok.error();
        if (!t.commit()) return store_internal(c->errmsg());
        return next;
    }

    Status remove(const std::string& id)
    {
        auto c = pool_.borrow();
        if (!c) return store_internal("cannot open database");
        Txn t(*c);
        if (!t.ok()) return store_internal(c->errmsg());
        auto del = c->prepare(Table::kDelete);
        del.bind(1, id);
        if (del.step() != SQLITE_DONE) return store_internal(c->errmsg());
        if (sqlite3_changes(c->db()) == 0)
            return store_not_found(std::string(Table::kKind) + " " + id);
        if (!t.commit()) return store_internal(c->errmsg());
        return Unit{};
    }

    // `scope` (SQL without parameters) narrows what the query may see at all,
    // before the filter: totalResults and paging count only what it admits.
    Result<Page<T>> list(const ListQuery& q, const ResourceMap& filter_map,
                         const std::string& scope = "1")
    {
        auto c = pool_.borrow();
        if (!c) return store_internal("cannot open database");
        std::vector<SqlValue> binds;
        std::string where = scope;
        if (q.filter) {
            auto w = compile_filter(filter_map, *q.filter, binds);
            if (!w) return w.error();
            where = "(" + scope + ") AND " + w.value();
        }
        Page<T> page;
        auto total = count(*c, where, binds);
        if (!total) return total.error();
        page.total = total.value();
        if (q.cursor) return cursor_page(*c, where, binds, q, std::move(page));
        return index_page(*c, where, binds, q, std::move(page));
    }

private:
    static Error taken(const T& r)
    {
        return make_error(Errc::Uniqueness,
                          std::string(Table::kKeyAttr) + " '" + Table::key(r) + "' is taken");
    }

    static Result<size_t> count(Conn& c, const std::string& where,
                                const std::vector<SqlValue>& binds)
    {
        auto st =
            c.prepare(std::string("SELECT count(*) FROM ") + Table::kFrom + " WHERE " + where);
        if (!st) return store_internal(c.errmsg());
        st.bind_all(binds);
        if (st.step() != SQLITE_ROW) return store_internal(c.errmsg());
        return static_cast<size_t>(st.col_int(0));
    }

    // The key (userName / displayName) is UNIQUE, so it alone orders totally and
    // SQLite walks its index instead of sorting the table on every page.
    static std::string order(const ListQuery& q)
    {
        return std::string(Table::kKeyCol) + (q.order == SortOrder::Descending ? " DESC" : "");
    }
    static size_t page_size(const ListQuery& q) { return std::min<size_t>(q.count, kMaxPage); }

    // Cursor paging. count=0 asks for totalResults only (RFC 7644 §3.4.2.4):
    // no rows, and no nextCursor (there is no last row to continue after).
    Result<Page<T>> cursor_page(Conn& c, const std::string& where,
                                const std::vector<SqlValue>& binds, const ListQuery& q,
                                Page<T> page)
    {
        std::string w = where;
        std::vector<SqlValue> b = binds;
        if (!q.cursor->empty()) {
            auto cur = decode_cursor(*q.cursor);
            if (!cur) return make_error(Errc::InvalidCursor, "cursor is not one of ours");
            w = "(" + where + ") AND " + Table::kKeyCol +
                (q.order == SortOrder::Descending ? " < ?" : " > ?");
            b.push_back(cur->key);
        }
        const size_t n = page_size(q);
        if (n == 0) return page;
        // One extra row tells whether another page exists.
        auto rows = Table::load(c, w, b, order(q), n + 1, 0);
        if (!rows) return rows.error();
        auto& items = rows.value();
        if (items.size() > n) {
            items.resize(n);
            page.next_cursor = encode_cursor({Table::key(items.back()), items.back().id});
        }
        page.items = std::move(items);
        return page;
    }

    Result<Page<T>> index_page(Conn& c, const std::string& where,
                               const std::vector<SqlValue>& binds, const ListQuery& q, Page<T> page)
    {
        page.start_index = std::max<size_t>(q.start_index, 1);
        const size_t n = page_size(q);
        if (n == 0) return page;
        auto rows = Table::load(c, where, binds, order(q), n, page.start_index - 1);
        if (!rows) return rows.error();
        page.items = std::move(rows.value());
        return page;
    }

    ConnPool& pool_;
    const IdAllocator& ids_;
};

}  // namespace allot::scimd
