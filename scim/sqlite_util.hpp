// sqlite_util.hpp - move-only RAII around sqlite3 handles for the store.
//
// A Conn owns one sqlite3 connection and a cache of prepared statements keyed
// by their SQL text (the store issues a small fixed set plus compiled
// filters). A Stmt borrows a cached statement and resets it on scope exit.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

namespace allot::scimd {

using SqlValue = std::variant<std::monostate, int64_t, double, std::string>;

class Conn;

class Stmt {
public:
    Stmt(sqlite3_stmt* stmt) : stmt_(stmt) {}  // NOLINT
    Stmt(const Stmt&) = delete;
    Stmt& operator=(const Stmt&) = delete;
    ~Stmt()
    {
        if (stmt_) {
            sqlite3_reset(stmt_);
            sqlite3_clear_bindings(stmt_);
        }
    }
    explicit operator bool() const { return stmt_ != nullptr; }
    Stmt& bind(int i, int64_t v)
    {
        sqlite3_bind_int64(stmt_, i, v);
        return *this;
    }
    Stmt& bind(int i, const std::string& v)
    {
        sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
        return *this;
    }
    Stmt& bind_all(const std::vector<SqlValue>& values, int first = 1)
    {
        int i = first;
        for (const auto& v : values) {
            if (auto p = std::get_if<int64_t>(&v))
                sqlite3_bind_int64(stmt_, i, *p);
            else if (auto d = std::get_if<double>(&v))
                sqlite3_bind_double(stmt_, i, *d);
            else if (auto s = std::get_if<std::string>(&v))
                sqlite3_bind_text(stmt_, i, s->data(), static_cast<int>(s->size()),
                                  SQLITE_TRANSIENT);
            else
                sqlite3_bind_null(stmt_, i);
            ++i;
        }
        return *this;
    }
    int step() { return sqlite3_step(stmt_); }
    int64_t col_int(int i) const { return sqlite3_column_int64(stmt_, i); }
    std::string col_text(int i) const
    {
        const unsigned char* t = sqlite3_column_text(stmt_, i);
        return t ? std::string(reinterpret_cast<const char*>(t),
                               static_cast<size_t>(sqlite3_column_bytes(stmt_, i)))
                 : std::string();
    }

private:
    sqlite3_stmt* stmt_;
};

class Conn {
public:
    explicit Conn(sqlite3* db) : db_(db) {}
    Conn(const Conn&) = delete;
    Conn& operator=(const Conn&) = delete;
    ~Conn()
    {
        for (auto& [sql, stmt] : cache_) sqlite3_finalize(stmt);
        sqlite3_close_v2(db_);
    }
    sqlite3* db() const { return db_; }
    // nullptr (and errmsg() set) when the SQL does not compile.
    Stmt prepare(const std::string& sql)
    {
        auto it = cache_.find(sql);
        if (it != cache_.end()) return Stmt(it->second);
        sqlite3_stmt* stmt = nullptr;
        if (sqlite3_prepare_v3(db_, sql.c_str(), static_cast<int>(sql.size()),
                               SQLITE_PREPARE_PERSISTENT, &stmt, nullptr) != SQLITE_OK)
            return Stmt(nullptr);
        // Compiled filters vary; keep the cache bounded.
        if (cache_.size() > 256) {
            for (auto& [s, st] : cache_) sqlite3_finalize(st);
            cache_.clear();
        }
        cache_.emplace(sql, stmt);
        return Stmt(stmt);
    }
    bool exec(const char* sql)
    {
        return sqlite3_exec(db_, sql, nullptr, nullptr, nullptr) == SQLITE_OK;
    }
    std::string errmsg() const { return sqlite3_errmsg(db_); }

private:
    sqlite3* db_;
    std::map<std::string, sqlite3_stmt*> cache_;
};

}  // namespace allot::scimd
