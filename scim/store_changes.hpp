// store_changes.hpp - "may the store have changed?", asked without SQLite.
//
// allot-scimd's event loops answer reads from caches keyed by the store's
// generation (user_snapshot.hpp, token_cache.hpp); reading the generation is
// a SQLite read transaction with its file locks for every request. The store
// runs in WAL mode, where every commit rewrites the wal-index header at the
// start of the shared "<db>-shm" file (two 48-byte copies, the first one
// written last) and every process using the database reads it from there, so
// SQLite versions sharing one database agree on its place. If those bytes are
// what they were before the last generation read, no commit has landed since;
// anything else (a commit, a checkpoint's restart, a recovery, no mapping)
// means "read the generation again". The header is only a change detector:
// what a request sees still comes from SQLite.
//
// SQLite truncates or removes "-shm" only when no connection has it open; this
// keeps a connection of its own open for as long as it maps the file, so the
// mapping cannot lose its pages under a reader.
#pragma once

#include <array>
#include <cstdint>
#include <string>

struct sqlite3;

namespace allot::scimd {

class StoreChanges {
public:
    // Opens the store (never creating it) and maps its <db_file>-shm
    // read-only; when either fails, changed() is always true.
    explicit StoreChanges(const std::string& db_file);
    ~StoreChanges();
    StoreChanges(StoreChanges&&) = delete;
    StoreChanges& operator=(StoreChanges&&) = delete;
    StoreChanges(const StoreChanges&) = delete;
    StoreChanges& operator=(const StoreChanges&) = delete;

    // True when a commit may have landed since the previous call (always the
    // first time). Call it before reading the generation: a commit between the
    // two is then seen by that read or by the next call.
    bool changed();
    bool watching() const { return header_ != nullptr; }

    static constexpr size_t kHeaderWords = 24;  // both copies of the wal-index header

private:
    sqlite3* keep_ = nullptr;           // holds "-shm" in place while it is mapped
    const uint32_t* header_ = nullptr;  // the mapping's first bytes
    std::array<uint32_t, kHeaderWords> seen_{};
    bool first_ = true;
};

}  // namespace allot::scimd
