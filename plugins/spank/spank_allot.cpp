// spank_allot.cpp - spank_allot.so: the node's job registry and the tier variables.
//
//   plugstack.conf:  required /usr/lib64/slurm/spank_allot.so [config=PATH] [run_dir=DIR]
//
// job_prolog (slurmstepd "spank prolog", root, once per job and node): asks
//   slurmctld for the job (slurm_load_job) and writes the registry entry
//   <node.run_dir>/jobs/<jobid>.<node> with the user, the boot id, an expiry
//   (job end time + a margin) and the tier derived from the job's QOS as
//   slurmctld holds it — the controller's decision, after job_submit — with
//   allot.yaml's tier names. Then prunes entries of other boots.
// job_epilog (root): removes the entry.
// task_init (remote context, per task, as the user): sets ALLOT_TIER,
//   ALLOT_PREEMPTIBLE and ALLOT_GRACE_SECONDS in the task's environment from
//   that root-written entry, overwriting (or removing) whatever the user set.
//
// Why slurm_load_job in the prolog: Slurm 22.05 gives SPANK no QOS item, and
// every QOS in a step's environment (SLURM_JOB_QOS) is set by the user's own
// srun/sbatch, so it cannot be trusted. The prolog runs in slurmstepd as root
// with libslurmfull loaded and slurm.conf read, so the RPC is resolved there
// at run time (dlsym), without linking libslurm into the plugin (which would
// load a second Slurm runtime into slurmstepd). One RPC per job per node; if
// it fails the entry is still written (the user may log in) with no tier.
//
// Never fails a job: every error is logged and the callback returns 0, except
// a registry write failure in the prolog, which is an error (the user could
// not reach the node they were allocated; better Slurm knows).
#include <dlfcn.h>
#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "allot/abi_guard.hpp"
#include "allot/config.hpp"
#include "allot/node_registry.hpp"
#include "compat/spank.hpp"

extern "C" {
ALLOT_EXPORT extern const char plugin_name[] = "allot";
ALLOT_EXPORT extern const char plugin_type[] = "spank";
ALLOT_EXPORT extern const unsigned int plugin_version = SLURM_VERSION_NUMBER;
ALLOT_EXPORT extern const unsigned int spank_plugin_version = 1;
}

namespace {

constexpr int64_t kExpiryMargin = 3600;       // after the job's end time
constexpr int64_t kUnknownEndExpiry = 86400;  // when slurmctld could not be asked

void log_exception(const char* what)
{
    slurm_error("allot: internal error: %s", what);
}

struct Args {
    std::string config = allot::kDefaultConfigPath;
    std::string run_dir;
};

Args parse_args(int ac, char** av)
{
    Args a;
    for (int i = 0; i < ac; ++i) {
        const std::string s = av[i] ? av[i] : "";
        if (s.rfind("config=", 0) == 0)
            a.config = s.substr(7);
        else if (s.rfind("run_dir=", 0) == 0)
            a.run_dir = s.substr(8);
        else
            slurm_error("allot: unknown plugstack option '%s' (ignored)", s.c_str());
    }
    return a;
}

// The config, or nullptr after logging why.
std::unique_ptr<allot::Config> load(const Args& a)
{
    auto l = allot::load_config(a.config);
    if (!l.ok()) {
        for (const auto& line : l.errors.lines) slurm_error("allot: %s", line.c_str());
        return nullptr;
    }
    auto c = std::make_unique<allot::Config>(std::move(*l.config));
    if (!a.run_dir.empty()) c->node.run_dir = a.run_dir;
    return c;
}

std::string node_name()
{
    const char* n = std::getenv("SLURMD_NODENAME");
    if (n && *n) return n;
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    return host;
}

// What slurmctld knows about the job; false if it could not be asked.
struct CtldJob {
    std::string qos;
    int64_t end_time = 0;
    bool unlimited = false;
};

bool query_ctld(uint32_t job_id, CtldJob& out)
{
    using load_fn = allot::slurm_compat::LoadJobFn;
    using free_fn = decltype(&slurm_free_job_info_msg);
    auto load_job = reinterpret_cast<load_fn>(dlsym(RTLD_DEFAULT, "slurm_load_job"));
    auto free_msg = reinterpret_cast<free_fn>(dlsym(RTLD_DEFAULT, "slurm_free_job_info_msg"));
    if (!load_job || !free_msg) {
        slurm_error("allot: slurm_load_job not available in this process");
        return false;
    }
    if (!allot::slurm_compat::load_rpc_plugins()) {
        slurm_error("allot: cannot load Slurm's auth, hash or TLS plugin; not asking slurmctld");
        return false;
    }
    job_info_msg_t* msg = nullptr;
    if (allot::slurm_compat::load_job(load_job, &msg, job_id, SHOW_ALL) != 0 || !msg) {
        slurm_error("allot: slurm_load_job(%u) failed (errno %d)", job_id, errno);
        return false;
    }
    bool found = false;
    for (uint32_t i = 0; i < msg->record_count; ++i) {
        const slurm_job_info_t& j = msg->job_array[i];
        if (j.job_id != job_id) continue;
        out.qos = j.qos ? j.qos : "";
        out.end_time = static_cast<int64_t>(j.end_time);
        out.unlimited = j.time_limit == INFINITE || j.time_limit == NO_VAL;
        found = true;
        break;
    }
    free_msg(msg);
    return found;
}

int job_prolog(spank_t sp, int ac, char** av)
{
    uint32_t job_id = 0;
    uid_t uid = 0;
    if (spank_get_item(sp, S_JOB_ID, &job_id) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_UID, &uid) != ESPANK_SUCCESS) {
        slurm_error("allot: prolog without job id or uid");
        return -1;
    }
    const auto config = load(parse_args(ac, av));
    if (!config) return -1;
    const int64_t now = static_cast<int64_t>(std::time(nullptr));

    allot::JobEntry e;
    e.job_id = job_id;
    e.uid = uid;
    if (passwd* pw = getpwuid(uid)) e.user = pw->pw_name;
    e.node = node_name();
    e.boot_id = allot::current_boot_id();
    e.start = now;
    CtldJob job;
    if (query_ctld(job_id, job)) {
        allot::apply_tier(*config, job.qos, e);
        e.expires = job.unlimited || job.end_time <= 0 ? 0 : job.end_time + kExpiryMargin;
        if (e.expires && e.preemptible) e.expires += e.grace_seconds;
    } else {
        e.expires = now + kUnknownEndExpiry;
    }
    allot::prune_job_entries(config->node.run_dir, now);
    auto w = allot::write_job_entry(config->node.run_dir, e);
    if (!w) {
        slurm_error("allot: %s", w.error().message.c_str());
        return -1;
    }
    slurm_info("allot: job %u uid %u registered on %s (tier %s, qos %s)", job_id, unsigned(uid),
               e.node.c_str(), e.tier.empty() ? "unknown" : e.tier.c_str(), e.qos.c_str());
    return 0;
}

int job_epilog(spank_t sp, int ac, char** av)
{
    uint32_t job_id = 0;
    if (spank_get_item(sp, S_JOB_ID, &job_id) != ESPANK_SUCCESS) return 0;
    const auto config = load(parse_args(ac, av));
    if (!config) return 0;
    auto r = allot::remove_job_entry(config->node.run_dir, job_id, node_name());
    if (!r) slurm_error("allot: %s", r.error().message.c_str());
    return 0;
}

// Remote context, as the user, per task: the tier variables from the entry.
int task_env(spank_t sp, int ac, char** av)
{
    uint32_t job_id = 0;
    if (spank_get_item(sp, S_JOB_ID, &job_id) != ESPANK_SUCCESS) return 0;
    // As the user: with run_dir= in plugstack.conf allot.yaml need not be
    // readable by users at all.
    const Args args = parse_args(ac, av);
    std::string run_dir = args.run_dir;
    if (run_dir.empty()) {
        const auto config = load(args);
        if (config) run_dir = config->node.run_dir;
    }
    const int64_t now = static_cast<int64_t>(std::time(nullptr));
    const allot::JobEntry* mine = nullptr;
    std::vector<allot::JobEntry> jobs;
    if (!run_dir.empty()) {
        jobs = allot::current_jobs(run_dir, now);
        for (const auto& j : jobs)
            if (j.job_id == job_id) mine = &j;
    }
    // Whatever the user put there is removed first: only the registry speaks.
    spank_unsetenv(sp, "ALLOT_TIER");
    spank_unsetenv(sp, "ALLOT_PREEMPTIBLE");
    spank_unsetenv(sp, "ALLOT_GRACE_SECONDS");
    if (!mine || mine->tier.empty()) return 0;
    spank_setenv(sp, "ALLOT_TIER", mine->tier.c_str(), 1);
    spank_setenv(sp, "ALLOT_PREEMPTIBLE", mine->preemptible ? "1" : "0", 1);
    if (mine->preemptible)
        spank_setenv(sp, "ALLOT_GRACE_SECONDS", std::to_string(mine->grace_seconds).c_str(), 1);
    return 0;
}

}  // namespace

extern "C" {

ALLOT_EXPORT int slurm_spank_job_prolog(spank_t sp, int ac, char** av) noexcept
{
    return allot::abi_guard(log_exception, -1, [&] { return job_prolog(sp, ac, av); });
}

ALLOT_EXPORT int slurm_spank_job_epilog(spank_t sp, int ac, char** av) noexcept
{
    return allot::abi_guard(log_exception, 0, [&] { return job_epilog(sp, ac, av); });
}

ALLOT_EXPORT int slurm_spank_task_init(spank_t sp, int ac, char** av) noexcept
{
    return allot::abi_guard(log_exception, 0,
                            [&] { return spank_remote(sp) ? task_env(sp, ac, av) : 0; });
}

}  // extern "C"
