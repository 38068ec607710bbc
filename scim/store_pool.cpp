// store_pool.cpp - see store_pool.hpp.
#include "store_pool.hpp"

namespace allot::scimd {

std::unique_ptr<Conn> ConnPool::connect(std::string* error) const
{
    sqlite3* db = nullptr;
    const int rc =
        sqlite3_open_v2(path_.c_str(), &db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
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

ConnPool::Lease ConnPool::borrow()
{
    {
        std::lock_guard<std::mutex> lock(mu_);
        if (!idle_.empty()) {
            auto c = std::move(idle_.back());
            idle_.pop_back();
            return Lease(this, std::move(c));
        }
    }
    return Lease(this, connect(nullptr));
}

void ConnPool::give_back(std::unique_ptr<Conn> c)
{
    std::lock_guard<std::mutex> lock(mu_);
    if (idle_.size() < kMaxIdle) idle_.push_back(std::move(c));
}

}  // namespace allot::scimd
