// job_submit_allot.cpp - the job_submit/allot plugin: slurmctld's entry points.
//
// A thin shim: it translates job_desc_msg_t to the core's JobRequest, asks the
// policy (lib/policy.cpp), and writes the decision back. It runs under
// slurmctld's locks on every submission, so it does no I/O on that path: the
// config is parsed at init() and again only when slurmctld's own
// configuration changes (`scontrol reconfigure` bumps slurm_conf.last_update).
// Caps come from slurmctld's QOS cache (slurm_limits.cpp).
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include <sys/stat.h>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "allot/abi_guard.hpp"
#include "allot/config.hpp"
#include "allot/yaml_tree.hpp"
#include "compat/slurmctld.hpp"
#include "job_desc_codec.hpp"
#include "last_good.hpp"
#include "node_table.hpp"
#include "slurm_limits.hpp"

extern "C" {
ALLOT_EXPORT extern const char plugin_name[] = "allot allocation policy";
ALLOT_EXPORT extern const char plugin_type[] = "job_submit/allot";
ALLOT_EXPORT extern const uint32_t plugin_version = SLURM_VERSION_NUMBER;
}

namespace {

using allot::Config;
using allot::NodeShape;

// What a (re)configure loads: allot.yaml and the governed partition's node shape.
struct Loaded {
    Config config;
    NodeShape shape;
};

// Heap-allocated in init() so the .so has no static objects with destructors.
struct PluginState {
    std::mutex reload_mutex;
    std::shared_ptr<const Loaded> loaded;
    std::atomic<time_t> conf_stamp{0};    // slurm_conf.last_update when we last loaded
    std::atomic<time_t> loaded_at{0};     // when we last loaded (time(), seconds)
    std::atomic<int64_t> files_stamp{0};  // allot.yaml and slurm.conf mtimes (ns) at that load
};
PluginState* g_state = nullptr;

void log_exception(const char* what)
{
    slurm_error("allot: internal error: %s", what);
}

const char* config_path()
{
    const char* env = std::getenv("ALLOT_CONFIG");
    return env && *env ? env : allot::kDefaultConfigPath;
}

// Said once per (re)configure, not on every job: a per-GPU default a node cannot give.
void log_clamped_defaults(const Config& config, const NodeShape& shape)
{
    const auto& c = config.cluster;
    if (c.mem_per_gpu_mb && shape.mem_per_gpu_mb && c.mem_per_gpu_mb > shape.mem_per_gpu_mb)
        slurm_info(
            "allot: cluster.mem_per_gpu (%llu MB) is more than a node of partition '%s' "
            "has per GPU; GPU jobs get %llu MB per GPU",
            static_cast<unsigned long long>(c.mem_per_gpu_mb), c.partition.c_str(),
            static_cast<unsigned long long>(shape.mem_per_gpu_mb));
    if (c.cpus_per_gpu && shape.cpus_per_gpu && c.cpus_per_gpu > shape.cpus_per_gpu)
        slurm_info(
            "allot: cluster.cpus_per_gpu (%u) is more than a node of partition '%s' has "
            "per GPU; GPU jobs get %u CPUs per GPU",
            static_cast<unsigned>(c.cpus_per_gpu), c.partition.c_str(),
            static_cast<unsigned>(shape.cpus_per_gpu));
}

// Where this slurmctld resolves a relative Include name (see IncludeBase).
allot::job_submit::IncludeBase include_base()
{
    return allot::slurm_compat::kIncludeRelativeToSlurmConf
               ? allot::job_submit::IncludeBase::SlurmConfDir
               : allot::job_submit::IncludeBase::IncludingFile;
}

void log_config_errors(const allot::ConfigLoad& load)
{
    for (const auto& line : load.errors.lines) slurm_error("allot: %s", line.c_str());
}

// allot.yaml as parsed now; a valid file is also kept as the last valid copy.
allot::ConfigLoad load_config_file()
{
    const std::string path = config_path();
    auto text = allot::read_file_bounded(path, allot::kMaxConfigBytes);
    if (!text) {
        allot::ConfigLoad failed;
        failed.errors.lines.push_back(text.error().message);
        return failed;
    }
    auto load = allot::parse_config(text.value(), path);
    if (!load.ok()) return load;
    const auto copy = allot::job_submit::last_good_path(slurm_conf.state_save_location);
    if (auto kept = allot::job_submit::keep_last_good(copy, text.value()); !kept)
        slurm_error("allot: cannot keep a copy of the last valid configuration: %s",
                    kept.error().message.c_str());
    return load;
}

// A reconfigure's new slurmctld runs on the last valid copy rather than fail the
// hand-over (see last_good.hpp); anywhere else a broken file gives no configuration.
allot::ConfigLoad load_last_good()
{
    const auto copy = allot::job_submit::last_good_path(slurm_conf.state_save_location);
    auto load = allot::load_config(copy);
    if (load.ok())
        slurm_error(
            "allot: %s is broken; this slurmctld, started by a reconfigure, runs on "
            "the last valid copy (%s) until it is fixed",
            config_path(), copy.c_str());
    else
        log_config_errors(load);
    return load;
}

// Loads the config and the node shape; on a config error keeps the previous state (if any).
bool reload_config(PluginState& state)
{
    auto load = load_config_file();
    if (!load.ok()) {
        log_config_errors(load);
        if (!state.loaded && allot::job_submit::started_by_reconfigure()) load = load_last_good();
    }
    if (!load.ok()) {
        slurm_error("allot: %s", state.loaded ? "keeping the previous configuration"
                                              : "no valid configuration; refusing to start");
        return false;
    }
    auto loaded = std::make_shared<Loaded>();
    loaded->config = std::move(*load.config);
    if (slurm_conf.slurm_conf)
        loaded->shape = allot::job_submit::read_node_shape(
            slurm_conf.slurm_conf, loaded->config.cluster.partition, include_base());
    log_clamped_defaults(loaded->config, loaded->shape);
    std::atomic_store(&state.loaded, std::shared_ptr<const Loaded>(std::move(loaded)));
    slurm_info("allot: loaded %s (%zu teams)", config_path(), state.loaded->config.teams.size());
    return true;
}

int64_t mtime_ns(const char* path)
{
    struct stat st {};
    if (!path || stat(path, &st) != 0) return 0;
    return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

// Both files a load reads, as one stamp: any change to either changes it.
int64_t files_stamp()
{
    return mtime_ns(config_path()) ^ (mtime_ns(slurm_conf.slurm_conf) * 31);
}

// last_update has a resolution of one second: a second reconfigure within the
// second we loaded in leaves it unchanged. Within that second the files are
// compared with the load (two stat() calls, for one second after a reconfigure
// only); once it is over, the load is made once more.
bool reload_due(const PluginState& state, time_t now)
{
    const time_t update = slurm_conf.last_update;
    if (update != state.conf_stamp) return true;
    if (state.loaded_at > update) return false;  // loaded after that second: nothing missed
    if (now > state.loaded_at) return true;
    return files_stamp() != state.files_stamp;
}

std::shared_ptr<const Loaded> current()
{
    if (!g_state) return nullptr;
    const time_t now = time(nullptr);
    if (reload_due(*g_state, now)) {
        std::lock_guard<std::mutex> guard(g_state->reload_mutex);
        if (reload_due(*g_state, now)) {
            g_state->conf_stamp = slurm_conf.last_update;
            g_state->loaded_at = now;
            g_state->files_stamp = files_stamp();
            reload_config(*g_state);
        }
    }
    return std::atomic_load(&g_state->loaded);
}

bool is_operator(uint32_t uid)
{
    return uid == 0 || validate_operator(uid);
}

std::vector<std::string> team_accounts(const Config& config)
{
    std::vector<std::string> out;
    for (const auto& team : config.teams) out.push_back(allot::lower(team.account));
    return out;
}

// The teams a user could charge instead, only looked up when the rule needs them.
void add_user_teams(allot::JobRequest& request, const Config& config)
{
    if (allot::lower(request.account) != allot::lower(config.cluster.default_account)) return;
    request.user_teams = allot::job_submit::user_team_accounts(request.uid, team_accounts(config));
}

// The components of one heterogeneous job reach job_submit one after another
// in the same slurmctld thread (proc_req.c validates them in one loop), so a
// per-thread tally is the job's sum; offset 0 starts a new job. Trivially
// destructible, as a thread_local in a plugin must be.
struct HetTally {
    struct Entry {
        char key[160];
        uint64_t gpus;
    } entries[16];
    size_t size = 0;

    void reset() { size = 0; }
    uint64_t gpus(const std::string& key) const
    {
        for (size_t i = 0; i < size; ++i)
            if (key == entries[i].key) return entries[i].gpus;
        return 0;
    }
    void add(const std::string& key, uint64_t gpus)
    {
        for (size_t i = 0; i < size; ++i)
            if (key == entries[i].key) {
                entries[i].gpus += gpus;
                return;
            }
        if (size == 16 || key.size() >= sizeof entries[0].key) return;
        std::memcpy(entries[size].key, key.c_str(), key.size() + 1);
        entries[size++].gpus = gpus;
    }
};
thread_local HetTally t_het;

std::string tally_key(const allot::Decision& d, const allot::JobRequest& request)
{
    return d.qos + "/" + allot::lower(request.account);
}

allot::Decision decide_new_job(allot::JobRequest& request, const Loaded& loaded)
{
    const allot::job_submit::SlurmLimits limits(loaded.shape);
    if (!request.het_component) return allot::decide_submit(request, loaded.config, limits);
    if (*request.het_component == 0) t_het.reset();
    auto decision = allot::decide_submit(request, loaded.config, limits);
    if (decision.accepted && !decision.qos.empty()) {
        const auto key = tally_key(decision, request);
        if (const uint64_t before = t_het.gpus(key)) {
            request.het_gpus_before = before;
            decision = allot::decide_submit(request, loaded.config, limits);
        }
        if (decision.accepted) t_het.add(key, decision.gpus);
    }
    return decision;
}

// One debug line per decision (`scontrol setdebug debug`), what the lab's differential
// test compares with slurmctld's own record of the job.
void log_decision(const job_desc_msg_t& desc, const allot::JobRequest& request,
                  const allot::Decision& d)
{
    const auto& c = d.changes;
    const std::string time = c.time_minutes         ? std::to_string(*c.time_minutes)
                             : request.time_minutes ? std::to_string(*request.time_minutes)
                                                    : "none";
    const char* requeue = c.set_requeue          ? "1"
                          : !request.requeue_set ? "default"
                          : request.requeue      ? "1"
                                                 : "0";
    slurm_debug(
        "allot: decided job '%s' of uid %u: accepted=%d gpus=%llu tier=%s qos=%s "
        "account=%s time=%s requeue=%s",
        desc.name ? desc.name : "", request.uid, d.accepted ? 1 : 0,
        static_cast<unsigned long long>(d.gpus), allot::tier_name(d.tier),
        c.qos ? c.qos->c_str() : request.qos.c_str(),
        c.account ? c.account->c_str() : request.account.c_str(), time.c_str(), requeue);
}

// The same for an update: the job as it will be once slurmctld applies the update.
void log_update_decision(uint32_t job_id, const allot::JobRequest& current,
                         const allot::JobRequest& update, const allot::Decision& d)
{
    const auto& c = d.changes;
    const auto minutes = c.time_minutes        ? c.time_minutes
                         : update.time_minutes ? update.time_minutes
                                               : current.time_minutes;
    const std::string time = minutes ? std::to_string(*minutes) : "none";
    const bool requeue = c.set_requeue || (update.requeue_set ? update.requeue : current.requeue);
    const std::string& qos = c.qos ? *c.qos : !update.qos.empty() ? update.qos : current.qos;
    slurm_debug(
        "allot: decided update of job %u: accepted=%d gpus=%llu tier=%s qos=%s time=%s "
        "requeue=%d",
        job_id, d.accepted ? 1 : 0, static_cast<unsigned long long>(d.gpus),
        allot::tier_name(d.tier), qos.c_str(), time.c_str(), requeue ? 1 : 0);
}

}  // namespace

extern "C" ALLOT_EXPORT int init(void) noexcept
{
    return allot::abi_guard(log_exception, SLURM_ERROR, [] {
        auto state = std::make_unique<PluginState>();
        if (!reload_config(*state)) return SLURM_ERROR;
        state->conf_stamp = slurm_conf.last_update;
        state->loaded_at = time(nullptr);
        state->files_stamp = files_stamp();
        g_state = state.release();
        return SLURM_SUCCESS;
    });
}

extern "C" ALLOT_EXPORT int fini(void) noexcept
{
    delete g_state;
    g_state = nullptr;
    return SLURM_SUCCESS;
}

extern "C" ALLOT_EXPORT int job_submit(job_desc_msg_t* desc, uint32_t submit_uid,
                                       char** err_msg) noexcept
{
    return allot::abi_guard(log_exception, SLURM_ERROR, [&] {
        const auto loaded = current();
        if (!desc || !loaded) return SLURM_SUCCESS;
        const std::string account = desc->account && *desc->account
                                        ? std::string(desc->account)
                                        : allot::job_submit::default_account(desc->user_id);
        auto request = allot::job_submit::to_request(*desc, account);
        add_user_teams(request, loaded->config);
        const auto decision = decide_new_job(request, *loaded);
        log_decision(*desc, request, decision);
        if (!decision.accepted) {
            slurm_info("allot: rejected job from uid %u: %s", submit_uid, decision.message.c_str());
            if (err_msg) *err_msg = slurm_xstrdup(decision.message.c_str());
            return allot::job_submit::rejection_code(decision);
        }
        allot::job_submit::apply_changes(decision.changes, *desc);
        return SLURM_SUCCESS;
    });
}

namespace {

int modify(job_desc_msg_t* desc, job_record_t* job_ptr, uint32_t submit_uid, char** err_msg)
{
    const auto loaded = current();
    if (!desc || !job_ptr || !loaded || is_operator(submit_uid)) return SLURM_SUCCESS;
    // The only way to read the job's current QOS/account/limits without slurmctld's
    // private headers; it also reads the job's script from StateSaveLocation, a cost
    // paid on `scontrol update` only, never on submission.
    const std::unique_ptr<job_desc_msg_t, CopiedJobDescDeleter> owner(
        copy_job_record_to_job_desc(job_ptr));
    job_desc_msg_t* current_desc = owner.get();
    if (!current_desc) return SLURM_SUCCESS;
    const std::string account = current_desc->account ? current_desc->account : "";
    auto current_job = allot::job_submit::to_request(*current_desc, account);
    auto update = allot::job_submit::to_request(*desc, desc->account ? desc->account : "");
    update.uid = current_job.uid;
    // Neither the copied record nor an update message carries a het offset (both read 0).
    current_job.het_component.reset();
    update.het_component.reset();
    current_job.user_teams =
        allot::job_submit::user_team_accounts(current_job.uid, team_accounts(loaded->config));
    const auto decision = allot::decide_modify(current_job, update, loaded->config,
                                               allot::job_submit::SlurmLimits(loaded->shape));
    log_update_decision(allot::slurm_compat::job_desc_job_id(*current_desc), current_job, update,
                        decision);
    if (!decision.accepted) {
        slurm_info("allot: refused update of job %u from uid %u: %s",
                   allot::slurm_compat::job_desc_job_id(*current_desc), submit_uid,
                   decision.message.c_str());
        if (err_msg) *err_msg = slurm_xstrdup(decision.message.c_str());
        return allot::job_submit::rejection_code(decision);
    }
    allot::job_submit::apply_changes(decision.changes, *desc);
    return SLURM_SUCCESS;
}

}  // namespace

// From 23.02 slurmctld passes err_msg and returns it to `scontrol update`, so a refused
// update says why in the words of a rejected submission (compat/slurmctld.hpp).
extern "C" ALLOT_EXPORT int job_modify(ALLOT_JOB_MODIFY_PARAMS) noexcept
{
    return allot::abi_guard(log_exception, SLURM_ERROR, [&] {
        return modify(desc, job_ptr, submit_uid, ALLOT_JOB_MODIFY_ERR_MSG);
    });
}
