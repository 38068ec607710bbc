// store_pool.hpp - a small pool of SQLite connections to one database file.
//
// Each request thread borrows its own connection, so reads run in parallel
// under WAL; writes serialise on BEGIN IMMEDIATE (Txn). A Lease returns its
// connection on scope exit; at most kMaxIdle idle connections are kept.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "sqlite_util.hpp"

namespace allot::scimd {

class ConnPool {
public:
    class Lease {
    public:
        Lease(ConnPool* pool, std::unique_ptr<Conn> c) : pool_(pool), c_(std::move(c)) {}
        Lease(Lease&& o) noexcept : pool_(o.pool_), c_(std::move(o.c_)) {}
        Lease(const Lease&) = delete;
        Lease& operator=(const Lease&) = delete;
        Lease& operator=(Lease&&) = delete;
        ~Lease()
        {
            if (c_) pool_->give_back(std::move(c_));
        }
        explicit operator bool() const { return c_ != nullptr; }
        Conn& operator*() { return *c_; }
        Conn* operator->() { return c_.get(); }

    private:
        ConnPool* pool_;
        std::unique_ptr<Conn> c_;
    };

    explicit ConnPool(std::string path) : path_(std::move(path)) {}
    const std::string& path() const { return path_; }
    // A new connection in WAL mode with foreign keys on; null with *error set.
    std::unique_ptr<Conn> connect(std::string* error) const;
    // An idle connection, or a new one (false when the file cannot be opened).
    Lease borrow();
    void give_back(std::unique_ptr<Conn> c);

private:
    static constexpr size_t kMaxIdle = 32;
    std::string path_;
    std::mutex mu_;
    std::vector<std::unique_ptr<Conn>> idle_;
};

}  // namespace allot::scimd
