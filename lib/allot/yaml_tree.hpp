// yaml_tree.hpp - a small, bounded YAML document tree built with libyaml.
//
// The config loader (and anything else that reads YAML, such as the directory
// import) walks this tree instead of libyaml's event stream, so every value
// keeps the line it came from for error messages. Loading is bounded: input
// size, nesting depth and total node count (which also defuses alias bombs).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "allot/result.hpp"

namespace allot {

struct YamlNode {
    enum class Kind { Null, Scalar, Map, Seq };
    Kind kind = Kind::Null;
    int line = 0;  // 1-based line where the node starts
    std::string scalar;
    bool quoted = false;  // scalar was written in quotes (so "123" stays text)
    std::vector<std::pair<std::string, YamlNode>> map;  // keys in file order
    std::vector<YamlNode> seq;

    bool is_map() const { return kind == Kind::Map; }
    bool is_seq() const { return kind == Kind::Seq; }
    bool is_scalar() const { return kind == Kind::Scalar; }
    bool is_null() const { return kind == Kind::Null; }
    const YamlNode* find(std::string_view key) const;
};

struct YamlLimits {
    size_t max_bytes = 1 << 20;
    size_t max_depth = 64;
    size_t max_nodes = 100000;
};

// Parses one YAML document. An empty document yields a Null node.
Result<YamlNode> parse_yaml(std::string_view text, const YamlLimits& limits = {});

// Reads a whole file (refusing anything larger than max_bytes) into a string.
Result<std::string> read_file_bounded(const std::string& path, size_t max_bytes);

}  // namespace allot
