// file_io.hpp - whole files replaced at once: what a reader sees is the old file or
// the new one, never part of either (a temporary beside it, fsync, rename(2)).
#pragma once

#include <string>
#include <string_view>
#include <sys/types.h>

#include "allot/result.hpp"

namespace allot {

struct AtomicWrite {
    mode_t mode = 0644;
    gid_t gid = static_cast<gid_t>(-1);  // -1: the creating process's group
    bool fsync = true;                   // false only where a crash may lose the new file
};

// Writes `bytes` to `path` through ".<name>.XXXXXX" in the same directory.
Status write_file_atomically(const std::string& path, std::string_view bytes,
                             const AtomicWrite& how = {});

// True when `entry` (a name in the same directory) is a temporary that
// write_file_atomically(dir + "/" + name) left behind when it was killed.
bool is_temporary_of(std::string_view name, std::string_view entry);

}  // namespace allot
