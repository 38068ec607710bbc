// software_walk.hpp - the shared software trees and allot's own files as an
// ordinary user sees them. root's view hides the commonest ticket (software
// installed unreadable), so walk_as_user() forks a child that drops to that
// user and reports what it cannot traverse, read, or can write; the findings
// are made from its report by the pure software_findings()/tamper_finding().
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "allot/result.hpp"
#include "finding.hpp"

namespace allot::doctor {

struct WalkLimits {
    size_t max_entries = 200000;  // per root: the walk stops there and says so
    size_t max_listed = 8;        // offending paths named per kind
};

// Offending paths of one kind: the first max_listed, and how many in all.
struct PathList {
    std::vector<std::string> first;
    size_t count = 0;
    void add(const std::string& path, size_t max_listed);
};

struct WalkResult {
    std::string root;
    std::string error;  // the root itself cannot be reached ("" when walked)
    size_t entries = 0;
    bool truncated = false;
    PathList untraversable;  // directories the user cannot list or enter
    PathList unreadable;     // files the user cannot read
    PathList writable;       // the tree and its parent directories, writable by the user
    PathList user_owned;     // the subset of writable the user owns
};

// Walks every root (and checks every path of `protect` and their parent
// directories for writability) as `user`, in a child process. Root only.
Result<std::vector<WalkResult>> walk_as_user(const std::vector<std::string>& roots,
                                             const std::vector<std::string>& protect,
                                             const std::string& user, const WalkLimits& limits);

// The protocol between the child and the parent: one "K\tpath" line per item.
std::vector<WalkResult> parse_walk_report(const std::string& text, size_t max_listed);

// software.<root>: unreadable or untraversable (warn), writable (fail), truncated (warn).
Findings software_findings(const std::vector<WalkResult>& results, const std::string& user);
// node.tamper: allot's binaries, plugins and configs, or a directory above them,
// writable by an ordinary user.
Finding tamper_finding(const WalkResult& protect, const std::string& user);

}  // namespace allot::doctor
