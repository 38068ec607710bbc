// store_schema.hpp - the directory database's schema and its migrations.
//
// The schema is versioned with PRAGMA user_version; each migration moves it
// one step and runs in its own transaction, so a crash leaves either the old
// or the new version, never a half. A database from a newer allot-scimd is
// refused rather than guessed at.
#pragma once

#include <string>

#include "sqlite_util.hpp"

namespace allot::scimd {

// Brings `c` to the current schema; false with *error set on failure.
bool migrate(Conn& c, const std::string& path, std::string* error);

}  // namespace allot::scimd
