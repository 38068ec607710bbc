// render.hpp - the two faces of a mylimits report: 80-column text and JSON.
//
// The text form is for people: aligned tables that fit 80 columns, the pending
// reason's Slurm name next to its explanation (so it can be searched), colour
// only when asked (mylimits asks when stdout is a TTY and NO_COLOR is unset).
// The JSON form is for scripts and follows the versioned schema
// "allot.mylimits/1" (mylimits/mylimits.schema.json, docs/mylimits.md): fields
// are only ever added within a version; renaming or removing one bumps it.
#pragma once

#include <cstddef>
#include <string>

#include "limits.hpp"

namespace allot::limits {

inline constexpr const char* kJsonSchemaId = "allot.mylimits/1";
inline constexpr int kJsonSchemaVersion = 1;

struct TextOptions {
    bool color = false;
    size_t width = 80;     // lines never exceed this
    size_t max_jobs = 30;  // jobs listed before "… N more (--all)"; 0: all
};

std::string render_text(const Report& report, const TextOptions& options);
std::string render_json(const Report& report);

// Human sizes in IEC units as `ls -h`/`lfs quota -h` print them: "512 B",
// "1.5 KiB", "12 GiB", "1.0 TiB".
std::string format_bytes(uint64_t bytes);

// Wraps `text` into lines of at most `width` columns, each starting with `indent` spaces.
std::string wrap(const std::string& text, size_t indent, size_t width);

}  // namespace allot::limits
