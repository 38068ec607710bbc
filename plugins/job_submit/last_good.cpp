// last_good.cpp - the last valid allot.yaml under StateSaveLocation (see last_good.hpp).
#include "last_good.hpp"

#include <cstdlib>

#include "allot/config.hpp"
#include "allot/file_io.hpp"
#include "allot/yaml_tree.hpp"

namespace allot::job_submit {

std::string last_good_path(const char* state_save_location)
{
    if (!state_save_location || !*state_save_location) return {};
    return std::string(state_save_location) + "/allot.yaml.last-good";
}

bool started_by_reconfigure()
{
    return std::getenv("SLURMCTLD_RECONF") != nullptr;
}

Status keep_last_good(const std::string& path, const std::string& text)
{
    if (path.empty()) return make_error(Errc::NotFound, "slurm.conf names no StateSaveLocation");
    auto kept = read_file_bounded(path, kMaxConfigBytes);
    if (kept && kept.value() == text) return ok_status();
    return write_file_atomically(path, text, AtomicWrite{0600});
}

}  // namespace allot::job_submit
