// filter_sql.hpp - compiles a SCIM filter tree (filter.hpp) into a SQL WHERE
// clause over the users or groups table.
//
// Every value is bound as a parameter, never spliced, so a filter cannot
// inject SQL. and/or chains compile to one flat n-ary expression, whatever
// the tree's shape, so a filter within the parser's limits (200 terms, 24
// levels) never nests deeper than SQLite's parser accepts: a valid filter
// runs, an invalid one is an invalidFilter error.
#pragma once

#include <string>
#include <vector>

#include "errors.hpp"
#include "filter.hpp"
#include "sqlite_util.hpp"

namespace allot::scimd {

enum class ColType { String, Int, Bool, Time };

struct Column {
    const char* attr;  // lower-case attr
    const char* sub;   // lower-case sub ("" for none)
    const char* expr;  // SQL expression over the alias
    ColType type;
    bool extension;  // lives in the POSIX extension schema
};

// Multi-valued attributes: EXISTS over a row source, `v` names the value.
struct MultiColumn {
    const char* attr;
    const char* source;  // FROM … WHERE … (correlated to the outer alias)
    struct Sub {
        const char* sub;
        const char* expr;
        ColType type;
    };
    std::vector<Sub> subs;  // sub "" is the default ("value")
    bool extension;
};

struct ResourceMap {
    std::vector<Column> columns;
    std::vector<MultiColumn> multis;
    std::string core_schema;  // lower-case
    std::string ext_schema;   // lower-case
};

// The attribute map of Users (`ext_lower`: the configured extension URN,
// lower-cased) and of Groups.
const ResourceMap& user_filter_map(const std::string& ext_lower);
const ResourceMap& group_filter_map();
// Groups over the view with private groups (GroupView, store_tables.hpp).
const ResourceMap& group_view_filter_map();

// The WHERE clause for `filter`; its values are appended to `binds`.
Result<std::string> compile_filter(const ResourceMap& map, const Filter& filter,
                                   std::vector<SqlValue>& binds);

}  // namespace allot::scimd
