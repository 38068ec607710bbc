// filter.hpp - the SCIM filter language (RFC 7644 §3.4.2.2) as a syntax tree.
//
// parse_filter() turns `userName eq "alice" and (active eq true or not (x pr))`
// into a tree; the store compiles the tree to parameterised SQL (values are
// always bound, never spliced), so a filter can never inject SQL. Attribute
// names and operators are case-insensitive, as the RFC says. Limits on length,
// depth and node count keep a hostile filter from costing more than a small one.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "allot/result.hpp"

namespace allot::scimd {

enum class CompareOp { Eq, Ne, Co, Sw, Ew, Gt, Ge, Lt, Le, Pr };

struct FilterValue {
    enum class Kind { String, Number, Bool, Null };
    Kind kind = Kind::Null;
    std::string text;  // String
    double number = 0;
    bool boolean = false;
};

// [schema ":"] attr ["." sub]; attr and sub are lower-cased, schema too.
struct AttrPath {
    std::string schema;
    std::string attr;
    std::string sub;
    std::string display() const;
};

struct Filter {
    enum class Kind { And, Or, Not, Compare, ValuePath };
    Kind kind = Kind::Compare;
    AttrPath path;  // Compare, ValuePath
    CompareOp op = CompareOp::Eq;
    FilterValue value;
    std::unique_ptr<Filter> left;   // And/Or left, Not operand, ValuePath inner filter
    std::unique_ptr<Filter> right;  // And/Or right
};

struct FilterLimits {
    size_t max_length = 4096;
    size_t max_depth = 24;
    size_t max_nodes = 200;
};

Result<std::unique_ptr<Filter>> parse_filter(std::string_view text, FilterLimits limits = {});

// A PATCH path: attrPath, or valuePath with an optional sub-attribute
// (`members[value eq "x"]`, `emails[type eq "work"].value`).
struct PatchPath {
    AttrPath path;
    std::unique_ptr<Filter> filter;  // null unless a valuePath
    std::string sub_after;           // lower-cased, after the closing bracket
};
Result<PatchPath> parse_patch_path(std::string_view text);

// Splits an `attributes=` entry into schema/attr/sub; a bare URN gives attr "".
AttrPath parse_attribute_name(std::string_view text);

const char* op_name(CompareOp op);

}  // namespace allot::scimd
