// job_desc_codec.cpp - job_desc_msg_t <-> JobRequest/JobChanges (see job_desc_codec.hpp).
#include "job_desc_codec.hpp"

#include <csignal>
#include <cstring>
#include <string>

#include "allot/units.hpp"

namespace allot::job_submit {

namespace {

std::string text(const char* s)
{
    return s ? std::string(s) : std::string();
}

bool names_gpu(const char* tres)
{
    return tres && std::strstr(tres, "gpu");
}

// Whether the job names GPUs in a GPU field (--gpus*, --gres=gpu). From 24.11 slurmctld
// refuses per-GPU options (mem_per_tres, cpus_per_tres) on a job whose GPUs come only from
// --exclusive at submission, and on one whose GPUs come only from --ntasks-per-gpu at every
// later `scontrol update` ("Requested mem_per_tres=... but did not request any GPU"); 22.05
// took both. So per-GPU defaults go only to a job with a GPU field, on every release alike.
bool names_gpu_field(const job_desc_msg_t& d)
{
    return names_gpu(d.tres_per_job) || names_gpu(d.tres_per_node) || names_gpu(d.tres_per_task) ||
           names_gpu(d.tres_per_socket);
}

void replace_string(char** field, const std::string& value)
{
    if (*field) slurm_xfree(reinterpret_cast<void**>(field));
    *field = slurm_xstrdup(value.c_str());
}

int signal_number(const std::string& name)
{
    static const struct {
        const char* name;
        int number;
    } table[] = {{"TERM", SIGTERM}, {"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"INT", SIGINT},
                 {"HUP", SIGHUP},   {"URG", SIGURG},   {"CONT", SIGCONT}, {"QUIT", SIGQUIT}};
    for (const auto& entry : table)
        if (name == entry.name) return entry.number;
    return SIGTERM;
}

}  // namespace

JobRequest to_request(const job_desc_msg_t& d, const std::string& account)
{
    JobRequest job;
    job.uid = d.user_id;
    job.account = account;
    job.account_explicit = d.account && *d.account;
    job.qos = text(d.qos);
    job.partition = text(d.partition);
    job.gpus.per_job = slurm_compat::gres_list(d.tres_per_job);
    job.gpus.per_node = slurm_compat::gres_list(d.tres_per_node);
    job.gpus.per_task = slurm_compat::gres_list(d.tres_per_task);
    job.gpus.per_socket = slurm_compat::gres_list(d.tres_per_socket);
    if (d.min_nodes != NO_VAL && d.min_nodes != 0) job.gpus.nodes = d.min_nodes;
    if (d.num_tasks != NO_VAL && d.num_tasks != 0) job.gpus.tasks = d.num_tasks;
    if (d.ntasks_per_node != NO_VAL16 && d.ntasks_per_node != 0)
        job.gpus.tasks_per_node = d.ntasks_per_node;
    if (d.sockets_per_node != NO_VAL16 && d.sockets_per_node != 0)
        job.gpus.sockets_per_node = d.sockets_per_node;
    const uint32_t max_nodes = slurm_compat::requested_max_nodes(d);
    if (max_nodes != NO_VAL && max_nodes != 0 && max_nodes != INFINITE)
        job.gpus.max_nodes = max_nodes;
    if (d.ntasks_per_socket != NO_VAL16 && d.ntasks_per_socket != 0)
        job.gpus.tasks_per_socket = d.ntasks_per_socket;
    if (d.cpus_per_task != NO_VAL16 && d.cpus_per_task != 0)
        job.gpus.cpus_per_task = d.cpus_per_task;
    if (d.ntasks_per_tres != NO_VAL16 && d.ntasks_per_tres != 0)
        job.gpus.tasks_per_gpu = d.ntasks_per_tres;
    job.gpus.exclusive = d.shared == JOB_SHARED_NONE;
    if (d.het_job_offset != NO_VAL) job.het_component = d.het_job_offset;
    job.mem_set = d.pn_min_memory != NO_VAL64;
    job.mem_per_gpu_set = names_gpu(d.mem_per_tres);
    job.cpus_set = d.cpus_per_task != NO_VAL16;
    job.cpus_per_gpu_set = names_gpu(d.cpus_per_tres);
    if (d.time_limit != NO_VAL)
        job.time_minutes = d.time_limit == INFINITE ? kUnlimitedMinutes : d.time_limit;
    job.signal_set = d.warn_signal != 0 && d.warn_signal != NO_VAL16;
    job.requeue_set = d.requeue != NO_VAL16;
    job.requeue = d.requeue == 1;
    return job;
}

void apply_changes(const JobChanges& c, job_desc_msg_t& d)
{
    if (c.account) replace_string(&d.account, *c.account);
    if (c.qos) replace_string(&d.qos, *c.qos);
    if (c.time_minutes)
        d.time_limit = *c.time_minutes == kUnlimitedMinutes ? INFINITE : *c.time_minutes;
    const bool per_gpu_defaults = names_gpu_field(d);
    if (c.mem_per_gpu_mb && per_gpu_defaults)
        replace_string(&d.mem_per_tres, ALLOT_GPU_TRES_PREFIX + std::to_string(*c.mem_per_gpu_mb));
    if (c.cpus_per_gpu && per_gpu_defaults)
        replace_string(&d.cpus_per_tres, ALLOT_GPU_TRES_PREFIX + std::to_string(*c.cpus_per_gpu));
    if (c.set_requeue) d.requeue = 1;
    if (c.batch_signal) {
        d.warn_signal = static_cast<uint16_t>(signal_number(c.batch_signal->name));
        d.warn_time = static_cast<uint16_t>(c.batch_signal->seconds);
        d.warn_flags = KILL_JOB_BATCH;
    }
}

int rejection_code(const Decision& decision)
{
    using policy::Errc;
    const Error& e = decision.error;
    if (e.is(Errc::ZeroGpuAccount)) return ESLURM_INVALID_ACCOUNT;
    if (e.is(Errc::Walltime)) return ESLURM_INVALID_TIME_LIMIT;
    if (e.is(Errc::GpuCap)) return ESLURM_ACCOUNTING_POLICY;
    if (e.is(Errc::ForeignQos)) return ESLURM_INVALID_QOS;
    if (e.is(Errc::BadGpuRequest)) return ESLURM_INVALID_GRES;
    if (e.is(Errc::SpotRequeue) || e.is(Errc::SpotSignal)) return ESLURM_ACCESS_DENIED;
    return SLURM_ERROR;
}

}  // namespace allot::job_submit
