// store_changes.cpp - see store_changes.hpp.
#include "store_changes.hpp"

extern "C" {
#include <fcntl.h>
#include <sqlite3.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
}

namespace allot::scimd {
namespace {

constexpr size_t kMapped = 4096;

// The first page of the wal-index file, read-only; null when it is not there
// or shorter than a page.
const uint32_t* map_header(const std::string& shm_file)
{
    const int fd = ::open(shm_file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return nullptr;
    void* p = MAP_FAILED;
    struct stat st {};
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= static_cast<off_t>(kMapped))
        p = mmap(nullptr, kMapped, PROT_READ, MAP_SHARED, fd, 0);
    ::close(fd);  // the mapping stays
    return p == MAP_FAILED ? nullptr : static_cast<const uint32_t*>(p);
}

}  // namespace

StoreChanges::StoreChanges(const std::string& db_file)
{
    sqlite3* db = nullptr;
    const int rc = sqlite3_open_v2(db_file.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr);
    // A read maps the wal-index, so this connection holds it from now on.
    if (rc == SQLITE_OK && sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", nullptr, nullptr,
                                        nullptr) == SQLITE_OK)
        header_ = map_header(db_file + "-shm");
    if (header_)
        keep_ = db;
    else
        sqlite3_close_v2(db);
}

StoreChanges::~StoreChanges()
{
    if (header_) munmap(const_cast<uint32_t*>(header_), kMapped);
    sqlite3_close_v2(keep_);  // after the mapping is gone
}

bool StoreChanges::changed()
{
    if (!header_) return true;
    bool differs = first_;
    for (size_t i = 0; i < kHeaderWords; ++i) {
        // Another process writes these words: atomic loads, in any order (a
        // torn header differs from the last one seen, which is all that counts).
        const uint32_t w = __atomic_load_n(&header_[i], __ATOMIC_ACQUIRE);
        differs |= w != seen_[i];
        seen_[i] = w;
    }
    first_ = false;
    return differs;
}

}  // namespace allot::scimd
