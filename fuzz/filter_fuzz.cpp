// fuzz-sources: scim/filter.cpp scim/filter_sql.cpp scim/codec.cpp
// fuzz-sources: scim/errors.cpp scim/store_schema.cpp lib/result.cpp lib/scim_time.cpp
// fuzz-pkg: libcjson sqlite3
//
// filter_fuzz.cpp - the SCIM filter parser and the filter->SQL compiler.
// Property: any input either fails to parse, fails to compile with an error,
// or compiles to SQL that SQLite prepares on the real schema (a filter that
// passes our checks must never be a 500), with one bound value per `?`.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "filter.hpp"
#include "filter_sql.hpp"
#include "store_schema.hpp"

using namespace allot::scimd;

namespace {

Conn& database()
{
    static Conn* conn = [] {
        sqlite3* db = nullptr;
        sqlite3_open(":memory:", &db);
        auto* c = new Conn(db);
        std::string error;
        if (!migrate(*c, ":memory:", &error)) {
            std::fprintf(stderr, "migrate: %s\n", error.c_str());
            std::abort();
        }
        return c;
    }();
    return *conn;
}

void must_prepare(const ResourceMap& map, const Filter& f, const char* from)
{
    std::vector<SqlValue> binds;
    auto where = compile_filter(map, f, binds);
    if (!where) return;
    const std::string sql = std::string("SELECT count(*) FROM ") + from + " WHERE " + where.value();
    auto st = database().prepare(sql);
    if (!st) {
        std::fprintf(stderr, "valid filter, SQL refused: %s\n%s\n", database().errmsg().c_str(),
                     sql.c_str());
        std::abort();
    }
    st.bind_all(binds);
    if (st.step() != SQLITE_ROW) {
        std::fprintf(stderr, "valid filter, query failed: %s\n", database().errmsg().c_str());
        std::abort();
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto f = parse_filter(text);
    if (!f) return 0;
    must_prepare(user_filter_map("urn:ietf:params:scim:schemas:extension:allot:2.0:posixuser"),
                 *f.value(), "users u");
    must_prepare(group_filter_map(), *f.value(), "grp g");
    return 0;
}
