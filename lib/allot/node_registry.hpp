// node_registry.hpp - the node-local registry of running jobs.
//
// spank_allot's job prolog (slurmstepd, root) writes one small file per job
// and node into <node.run_dir>/jobs, and its epilog removes it. allot-keys and
// pam_allot read the directory to decide whether a user may log in to a
// compute node; spank_allot's task hook reads the job's own entry to put the
// tier into the job environment.
//
// An entry only counts when it is safe to trust and still current:
//   - the file is owned by root and not group/world writable (an entry a user
//     could write would be a login grant), in a directory with the same rule;
//   - it carries the boot id of the running kernel (an epilog that never ran
//     because the node rebooted leaves a file that no longer counts, even
//     when run_dir is not a tmpfs);
//   - it has not expired: the prolog sets `expires` from the job's end time
//     plus a margin, so a lost epilog grants access no longer than that.
// Entries are text, key=value per line, at most kMaxEntryBytes.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "allot/config.hpp"
#include "allot/result.hpp"

namespace allot {

inline constexpr size_t kMaxEntryBytes = 4096;

struct JobEntry {
    uint32_t job_id = 0;
    uint32_t uid = 0;
    std::string user;
    std::string node;     // SLURMD_NODENAME (several slurmd may share a host)
    std::string boot_id;  // /proc/sys/kernel/random/boot_id at prolog time
    int64_t start = 0;    // seconds since the epoch
    int64_t expires = 0;  // 0: no expiry (job without time limit)
    std::string tier;     // project | general | spot | "" (unknown)
    std::string qos;
    bool preemptible = false;
    uint32_t grace_seconds = 0;
};

std::string format_job_entry(const JobEntry& entry);
Result<JobEntry> parse_job_entry(const std::string& text);

// Sets entry.qos, tier, preemptible and grace_seconds from the job's QOS as
// slurmctld has it, with the tier names of allot.yaml (the same mapping the
// job_submit plugin decides with): a team's project QOS → project,
// tiers.general.qos → general, tiers.spot.qos → spot (preemptible, grace
// tiers.spot.grace_seconds); any other QOS → tier "" (unknown).
void apply_tier(const Config& config, const std::string& qos, JobEntry& entry);

// The file name of an entry: "<job_id>.<node>" (node sanitised).
std::string job_entry_name(uint32_t job_id, const std::string& node);

// The running kernel's boot id, or "" if unreadable.
std::string current_boot_id();

struct RegistryOptions {
    bool require_root_owner = true;  // tests running unprivileged turn this off
};

// Writes <run_dir>/jobs/<name> atomically (creating run_dir and jobs 0755).
Result<bool> write_job_entry(const std::string& run_dir, const JobEntry& entry);
// Removes the entry; a missing entry is not an error.
Result<bool> remove_job_entry(const std::string& run_dir, uint32_t job_id, const std::string& node);

// One entry, if present and trustworthy (ownership and boot id checked, expiry not).
std::optional<JobEntry> read_job_entry(const std::string& run_dir, uint32_t job_id,
                                       const std::string& node,
                                       const RegistryOptions& options = {});

// All current entries (trusted, this boot, not expired at `now`).
std::vector<JobEntry> current_jobs(const std::string& run_dir, int64_t now,
                                   const RegistryOptions& options = {});

// True when `uid` has a current entry.
bool user_has_job(const std::string& run_dir, uint32_t uid, int64_t now,
                  const RegistryOptions& options = {});

// Removes entries from other boots and entries expired for more than a day
// (called by the prolog, so the directory never grows without bound).
void prune_job_entries(const std::string& run_dir, int64_t now,
                       const RegistryOptions& options = {});

}  // namespace allot
