// job_submit_allot.cpp - the job_submit/allot plugin: slurmctld's entry points.
//
// A thin shim: it translates job_desc_msg_t to the core's JobRequest, asks the
// policy (lib/policy.cpp), and writes the decision back. It runs under
// slurmctld's locks on every submission, so it does no I/O on that path: the
// config is parsed at init() and again only when slurmctld's own
// configuration changes (`scontrol reconfigure` bumps slurm_conf.last_update).
// Caps come from slurmctld's QOS cache (slurm_limits.cpp).
#include <cstdlib>
#include <memory>
#include <mutex>

#include "allot/abi_guard.hpp"
#include "allot/config.hpp"
#include "compat/slurmctld.hpp"
#include "job_desc_codec.hpp"
#include "slurm_limits.hpp"

extern "C" {
ALLOT_EXPORT extern const char plugin_name[] = "allot allocation policy";
ALLOT_EXPORT extern const char plugin_type[] = "job_submit/allot";
ALLOT_EXPORT extern const uint32_t plugin_version = SLURM_VERSION_NUMBER;
}

namespace {

using allot::Config;

// Heap-allocated in init() so the .so has no static objects with destructors.
struct PluginState {
    std::mutex reload_mutex;
    std::shared_ptr<const Config> config;
    time_t conf_stamp = 0;
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

// Loads the config; on failure keeps the previous one (if any) and says why.
bool reload_config(PluginState& state)
{
    auto load = allot::load_config(config_path());
    if (!load.ok()) {
        for (const auto& line : load.errors.lines) slurm_error("allot: %s", line.c_str());
        slurm_error("allot: %s", state.config ? "keeping the previous configuration"
                                              : "no valid configuration; refusing to start");
        return false;
    }
    std::atomic_store(&state.config, std::shared_ptr<const Config>(
                                         std::make_shared<Config>(std::move(*load.config))));
    slurm_info("allot: loaded %s (%zu teams)", config_path(), state.config->teams.size());
    return true;
}

std::shared_ptr<const Config> current_config()
{
    if (!g_state) return nullptr;
    if (slurm_conf.last_update != g_state->conf_stamp) {
        std::lock_guard<std::mutex> guard(g_state->reload_mutex);
        if (slurm_conf.last_update != g_state->conf_stamp) {
            reload_config(*g_state);
            g_state->conf_stamp = slurm_conf.last_update;
        }
    }
    return std::atomic_load(&g_state->config);
}

bool is_operator(uint32_t uid)
{
    return uid == 0 || validate_operator(uid);
}

}  // namespace

extern "C" ALLOT_EXPORT int init(void) noexcept
{
    return allot::abi_guard(log_exception, SLURM_ERROR, [] {
        auto state = std::make_unique<PluginState>();
        if (!reload_config(*state)) return SLURM_ERROR;
        state->conf_stamp = slurm_conf.last_update;
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
        const auto config = current_config();
        if (!desc || !config) return SLURM_SUCCESS;
        const std::string account = desc->account && *desc->account
                                        ? std::string(desc->account)
                                        : allot::job_submit::default_account(desc->user_id);
        const auto request = allot::job_submit::to_request(*desc, account);
        const auto decision =
            allot::decide_submit(request, *config, allot::job_submit::SlurmLimits());
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
    const auto config = current_config();
    if (!desc || !job_ptr || !config || is_operator(submit_uid)) return SLURM_SUCCESS;
    // The only way to read the job's current QOS/account/limits without slurmctld's
    // private headers; it also reads the job's script from StateSaveLocation, a cost
    // paid on `scontrol update` only, never on submission.
    const std::unique_ptr<job_desc_msg_t, CopiedJobDescDeleter> owner(
        copy_job_record_to_job_desc(job_ptr));
    job_desc_msg_t* current_desc = owner.get();
    if (!current_desc) return SLURM_SUCCESS;
    const std::string account = current_desc->account ? current_desc->account : "";
    const auto current = allot::job_submit::to_request(*current_desc, account);
    const auto update = allot::job_submit::to_request(*desc, desc->account ? desc->account : "");
    const auto decision =
        allot::decide_modify(current, update, *config, allot::job_submit::SlurmLimits());
    if (!decision.accepted) {
        slurm_info("allot: refused update of job %u from uid %u: %s", current_desc->job_id,
                   submit_uid, decision.message.c_str());
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
