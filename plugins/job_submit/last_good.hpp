// last_good.hpp - the last allot.yaml job_submit/allot loaded, kept for a reconfigure.
//
// From 23.11 `scontrol reconfigure` starts a new slurmctld (SLURMCTLD_RECONF in its
// environment) and hands over only once that one's plugins have loaded. A broken
// allot.yaml must not stop the hand-over: on 24.11.5 the old process sometimes died while
// starting over (docs/lab.md G22). So every valid file loaded is copied under
// StateSaveLocation, and a reconfigure's new slurmctld runs on that copy when the file is
// broken, as a running one keeps its previous policy. A cold start never uses the copy:
// there a broken file still stops slurmctld (fail closed).
#pragma once

#include <string>

#include "allot/result.hpp"

namespace allot::job_submit {

// "<state_save_location>/allot.yaml.last-good"; empty when there is no such directory.
std::string last_good_path(const char* state_save_location);

// Whether this slurmctld is the new process of a reconfigure (23.11 and later).
bool started_by_reconfigure();

// Keeps `text` as the last valid allot.yaml (0600, replaced atomically), unless it is already.
Status keep_last_good(const std::string& path, const std::string& text);

}  // namespace allot::job_submit
