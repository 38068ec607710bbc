// store_ids.cpp - the store's shared helpers and the uid/gid ledger (see store_tables.hpp).
#include <openssl/rand.h>

#include <cstring>
#include <ctime>
#include <stdexcept>

#include "allot/identity_validate.hpp"
#include "store_tables.hpp"

namespace allot::scimd {

Error store_internal(const std::string& what)
{
    return make_error(Errc::Internal, "store: " + what);
}

Error store_not_found(const std::string& what)
{
    return make_error(Errc::NotFound, what + " not found");
}

int64_t unix_now()
{
    return static_cast<int64_t>(std::time(nullptr));
}

// A random (version 4) UUID.
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

std::string private_group_id(const std::string& user_id)
{
    std::string id = user_id;
    if (id.size() == 36) id[14] = '8';
    return id;
}

bool is_private_group_id(const std::string& id)
{
    return id.size() == 36 && id[14] == '8';
}

bool row_exists(Conn& c, const char* sql, const SqlValue& value)
{
    auto st = c.prepare(sql);
    st.bind_all({value});
    return st.step() == SQLITE_ROW;
}

namespace {

bool in_ledger(Conn& c, const std::string& kind, int64_t n)
{
    auto st = c.prepare("SELECT 1 FROM id_alloc WHERE kind = ? AND number = ?");
    st.bind(1, kind).bind(2, n);
    return st.step() == SQLITE_ROW;
}

// The first number at or after the kind's sequence that the ledger lacks, or
// 0 when [lo, hi] is used up; the sequence moves past it.
Result<int64_t> next_free(Conn& c, const std::string& kind, int64_t lo, int64_t hi)
{
    int64_t n = lo;
    {
        auto st = c.prepare("SELECT next FROM sequences WHERE kind = ?");
        st.bind(1, kind);
        if (st.step() == SQLITE_ROW) n = std::max(lo, st.col_int(0));
    }
    // 0 (root) and 65534 (nobody) are never a directory id: the validator refuses them.
    while (n <= hi && (n == 0 || n == kNobodyId || in_ledger(c, kind, n))) ++n;
    if (n > hi) return int64_t{0};
    auto seq = c.prepare(
        "INSERT INTO sequences(kind,next) VALUES(?,?) "
        "ON CONFLICT(kind) DO UPDATE SET next = excluded.next");
    seq.bind(1, kind).bind(2, n + 1);
    if (seq.step() != SQLITE_DONE) return store_internal(c.errmsg());
    return n;
}

}  // namespace

Result<int64_t> IdAllocator::allocate(Conn& c, const char* kind, std::optional<int64_t> wanted,
                                      const std::string& owner, int64_t ts) const
{
    const bool is_uid = std::strcmp(kind, "uid") == 0;
    const int64_t lo = is_uid ? range_.uid_min : range_.gid_min;
    const int64_t hi = is_uid ? range_.uid_max : range_.gid_max;
    const std::string attr = is_uid ? "uidNumber " : "gidNumber ";
    int64_t n = wanted.value_or(0);
    if (n) {
        if (n < lo || n > hi)
            return make_error(Errc::InvalidValue, attr + std::to_string(n) + " is outside " +
                                                      std::to_string(lo) + ".." +
                                                      std::to_string(hi));
        if (in_ledger(c, kind, n))
            return make_error(
                Errc::Uniqueness,
                attr + std::to_string(n) + " was already allocated (ids are never reused)");
    } else {
        auto free = next_free(c, kind, lo, hi);
        if (!free) return free.error();
        n = free.value();
        if (!n)
            return make_error(Errc::Exhausted, std::string(kind) + " range " + std::to_string(lo) +
                                                   ".." + std::to_string(hi) + " is exhausted");
    }
    auto ins = c.prepare("INSERT INTO id_alloc(kind,number,owner,allocated) VALUES(?,?,?,?)");
    ins.bind(1, std::string(kind)).bind(2, n).bind(3, owner).bind(4, ts);
    if (ins.step() != SQLITE_DONE) return store_internal(c.errmsg());
    return n;
}

}  // namespace allot::scimd
