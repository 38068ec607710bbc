// sqlite_util.hpp - move-only RAII around sqlite3 handles for the store.
//
// A Conn owns one sqlite3 connection and a cache of prepared statements keyed
// by their SQL text (the store issues a small fixed set plus compiled
// filters). A Stmt borrows a cached statement and resets it on scope exit; a
// statement still borrowed is never evicted, and asking for one that is (the
// same SQL used twice at once) gets a private copy finalised with the Stmt.
// A Txn is one BEGIN IMMEDIATE transaction, rolled back unless committed.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace allot::scimd {

using SqlValue = std::variant<std::monostate, int64_t, double, std::string>;

class Conn;

class Stmt {
public:
    Stmt() = default;
    Stmt(sqlite3_stmt* stmt, bool* borrowed, bool owned)
        : stmt_(stmt), borrowed_(borrowed), owned_(owned)
    {
    }
    Stmt(Stmt&& o) noexcept
        : stmt_(std::exchange(o.stmt_, nullptr)),
          borrowed_(std::exchange(o.borrowed_, nullptr)),
          owned_(o.owned_)
    {
    }
    Stmt(const Stmt&) = delete;
    Stmt& operator=(const Stmt&) = delete;
    Stmt& operator=(Stmt&&) = delete;
    ~Stmt()
    {
        if (!stmt_) return;
        if (owned_) {
            sqlite3_finalize(stmt_);
            return;
        }
        sqlite3_reset(stmt_);
        sqlite3_clear_bindings(stmt_);
        if (borrowed_) *borrowed_ = false;
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
    int step() { return stmt_ ? sqlite3_step(stmt_) : SQLITE_MISUSE; }
    int64_t col_int(int i) const { return sqlite3_column_int64(stmt_, i); }
    std::string col_text(int i) const
    {
        const unsigned char* t = sqlite3_column_text(stmt_, i);
        return t ? std::string(reinterpret_cast<const char*>(t),
                               static_cast<size_t>(sqlite3_column_bytes(stmt_, i)))
                 : std::string();
    }

private:
    sqlite3_stmt* stmt_ = nullptr;
    bool* borrowed_ = nullptr;  // the cache entry's flag; null when owned
    bool owned_ = false;
};

class Conn {
public:
    explicit Conn(sqlite3* db) : db_(db) {}
    Conn(const Conn&) = delete;
    Conn& operator=(const Conn&) = delete;
    ~Conn()
    {
        for (auto& [sql, entry] : cache_) sqlite3_finalize(entry.stmt);
        sqlite3_close_v2(db_);
    }
    sqlite3* db() const { return db_; }
    // A null Stmt (and errmsg() set) when the SQL does not compile.
    Stmt prepare(const std::string& sql)
    {
        auto it = cache_.find(sql);
        if (it != cache_.end() && !it->second.borrowed) {
            it->second.borrowed = true;
            return Stmt(it->second.stmt, &it->second.borrowed, false);
        }
        sqlite3_stmt* stmt = nullptr;
        if (sqlite3_prepare_v3(db_, sql.c_str(), static_cast<int>(sql.size()),
                               SQLITE_PREPARE_PERSISTENT, &stmt, nullptr) != SQLITE_OK)
            return Stmt();
        if (it != cache_.end()) return Stmt(stmt, nullptr, true);
        if (cache_.size() >= kMaxCached) evict_idle();
        Entry& e = cache_[sql];
        e.stmt = stmt;
        e.borrowed = true;
        return Stmt(stmt, &e.borrowed, false);
    }
    bool exec(const char* sql)
    {
        return sqlite3_exec(db_, sql, nullptr, nullptr, nullptr) == SQLITE_OK;
    }
    std::string errmsg() const { return sqlite3_errmsg(db_); }

private:
    struct Entry {
        sqlite3_stmt* stmt = nullptr;
        bool borrowed = false;
    };
    // Compiled filters vary; keep the cache bounded.
    static constexpr size_t kMaxCached = 256;
    void evict_idle()
    {
        for (auto it = cache_.begin(); it != cache_.end();) {
            if (it->second.borrowed) {
                ++it;
                continue;
            }
            sqlite3_finalize(it->second.stmt);
            it = cache_.erase(it);
        }
    }

    sqlite3* db_;
    std::map<std::string, Entry> cache_;  // map: entries never move, Stmt keeps &borrowed
};

class Txn {
public:
    explicit Txn(Conn& c) : c_(c), ok_(c.exec("BEGIN IMMEDIATE")) {}
    Txn(const Txn&) = delete;
    Txn& operator=(const Txn&) = delete;
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

}  // namespace allot::scimd
