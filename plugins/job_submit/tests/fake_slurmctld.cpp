// fake_slurmctld.cpp - in-memory stand-ins for slurmctld's plugin-facing symbols.
#include "fake_slurmctld.hpp"

#include <cstring>
#include <ctime>

#include "compat/slurmctld.hpp"

extern "C" void* slurm_xcalloc(size_t count, size_t size, bool clear, bool try_, const char* file,
                               int line, const char* func);

namespace {

struct State {
    std::map<std::string, fake_slurmctld::Qos> qos;
    std::map<std::string, slurmdb_qos_rec_t> records;
    std::map<std::string, std::string> grp_strings, pa_strings;
    std::map<uint32_t, std::string> default_accounts;
    std::map<uint32_t, bool> operators;
    job_desc_msg_t current{};
    std::map<int, std::string> current_strings;  // owned copies of current's strings
    bool has_current = false;
    int locks = 0;
};
State& state()
{
    static State s;
    return s;
}

slurmdb_tres_rec_t gpu_tres = [] {
    slurmdb_tres_rec_t t;
    std::memset(&t, 0, sizeof t);
    t.id = fake_slurmctld::kGpuTresId;
    t.type = const_cast<char*>("gres");
    t.name = const_cast<char*>("gpu");
    return t;
}();
slurmdb_tres_rec_t* tres_array_storage[] = {&gpu_tres};

char* xdup(const char* s)
{
    return s ? slurm_xstrdup(s) : nullptr;
}

}  // namespace

// Default visibility: -rdynamic exports these to the dlopen'ed plugin.
#pragma GCC visibility push(default)
extern "C" {

void* acct_db_conn = nullptr;
uint16_t accounting_enforce = 0x3f;
slurmdb_tres_rec_t** assoc_mgr_tres_array = tres_array_storage;
struct xlist* assoc_mgr_assoc_list = nullptr;  // no associations: user_teams stays empty

void assoc_mgr_lock(allot_assoc_mgr_lock_t*)
{
    ++state().locks;
}
void assoc_mgr_unlock(allot_assoc_mgr_lock_t*)
{
    --state().locks;
}

int assoc_mgr_find_tres_pos(slurmdb_tres_rec_t* rec, bool)
{
    return rec && rec->type && rec->name && !std::strcmp(rec->type, "gres") &&
                   !std::strcmp(rec->name, "gpu")
               ? 0
               : -1;
}

int assoc_mgr_fill_in_qos(void*, slurmdb_qos_rec_t* qos, int, slurmdb_qos_rec_t** out, bool)
{
    auto& s = state();
    if (out) *out = nullptr;
    if (!qos || !qos->name) return SLURM_ERROR;
    auto it = s.qos.find(qos->name);
    if (it == s.qos.end()) return SLURM_ERROR;
    auto& rec = s.records[it->first];
    std::memset(&rec, 0, sizeof rec);
    s.grp_strings[it->first] = it->second.grp_tres;
    s.pa_strings[it->first] = it->second.max_tres_pa;
    rec.name = const_cast<char*>(it->first.c_str());
    rec.grp_tres = const_cast<char*>(s.grp_strings[it->first].c_str());
    rec.max_tres_pa = const_cast<char*>(s.pa_strings[it->first].c_str());
    rec.max_wall_pj = it->second.max_wall;
    if (out) *out = &rec;
    return SLURM_SUCCESS;
}

int assoc_mgr_fill_in_user(void*, slurmdb_user_rec_t* user, int, slurmdb_user_rec_t**, bool)
{
    auto it = state().default_accounts.find(user->uid);
    if (it == state().default_accounts.end()) return SLURM_ERROR;
    user->default_acct = const_cast<char*>(it->second.c_str());
    return SLURM_SUCCESS;
}

bool validate_operator(uid_t uid)
{
    return state().operators.count(uid) > 0;
}

job_desc_msg_t* copy_job_record_to_job_desc(job_record_t*)
{
    auto& s = state();
    if (!s.has_current) return nullptr;
    auto* d = static_cast<job_desc_msg_t*>(
        slurm_xcalloc(1, sizeof(job_desc_msg_t), true, false, __FILE__, __LINE__, __func__));
    *d = s.current;
    d->account = xdup(s.current.account);
    d->qos = xdup(s.current.qos);
    d->partition = xdup(s.current.partition);
    d->tres_per_job = xdup(s.current.tres_per_job);
    d->tres_per_node = xdup(s.current.tres_per_node);
    d->tres_per_task = xdup(s.current.tres_per_task);
    d->tres_per_socket = xdup(s.current.tres_per_socket);
    d->mem_per_tres = xdup(s.current.mem_per_tres);
    d->cpus_per_tres = xdup(s.current.cpus_per_tres);
    // Fields the fake does not model must not be freed by slurm_free_job_desc_msg.
    d->name = nullptr;
    // Like get_job_env(): one xmalloc'ed block holding every string, plus the array.
    static const char env_block[] = "HOME=/home/alice\0PATH=/usr/bin\0";
    char* block = static_cast<char*>(
        slurm_xcalloc(1, sizeof env_block, true, false, __FILE__, __LINE__, __func__));
    std::memcpy(block, env_block, sizeof env_block);
    d->environment = static_cast<char**>(
        slurm_xcalloc(3, sizeof(char*), true, false, __FILE__, __LINE__, __func__));
    d->environment[0] = block;
    d->environment[1] = block + std::strlen(block) + 1;
    d->env_size = 2;
    d->script = nullptr;
    d->argv = nullptr;
    d->argc = 0;
    d->spank_job_env = nullptr;
    d->spank_job_env_size = 0;
    return d;
}

// libslurm's version frees select-plugin data and so wants a whole Slurm
// configuration; the fake frees exactly what copy_job_record_to_job_desc made.
void slurm_free_job_desc_msg(job_desc_msg_t* d)
{
    if (!d) return;
    // As env_array_free(): every string, then the array. Freeing environment[1]
    // (inside the block) is an invalid free unless the caller released the block first.
    if (d->environment) {
        for (uint32_t i = 0; i < d->env_size; ++i)
            slurm_xfree(reinterpret_cast<void**>(&d->environment[i]));
        slurm_xfree(reinterpret_cast<void**>(&d->environment));
    }
    for (char** f : {&d->account, &d->qos, &d->partition, &d->tres_per_job, &d->tres_per_node,
                     &d->tres_per_task, &d->tres_per_socket, &d->mem_per_tres, &d->cpus_per_tres})
        if (*f) slurm_xfree(reinterpret_cast<void**>(f));
    slurm_xfree(reinterpret_cast<void**>(&d));
}
}
#pragma GCC visibility pop

namespace fake_slurmctld {

void reset()
{
    auto& s = state();
    s.qos.clear();
    s.records.clear();
    s.default_accounts.clear();
    s.operators.clear();
    s.has_current = false;
    s.locks = 0;
}
void add_qos(const std::string& name, Qos qos)
{
    state().qos[name] = std::move(qos);
}
void set_default_account(uint32_t uid, const std::string& account)
{
    state().default_accounts[uid] = account;
}
void set_operator(uint32_t uid)
{
    state().operators[uid] = true;
}
void set_current_job(const job_desc_msg_t& desc)
{
    auto& s = state();
    s.current = desc;
    int slot = 0;
    for (char** field :
         {&s.current.account, &s.current.qos, &s.current.partition, &s.current.tres_per_job,
          &s.current.tres_per_node, &s.current.tres_per_task, &s.current.tres_per_socket,
          &s.current.mem_per_tres, &s.current.cpus_per_tres}) {
        if (*field) {
            s.current_strings[slot] = *field;
            *field = const_cast<char*>(s.current_strings[slot].c_str());
        }
        ++slot;
    }
    s.has_current = true;
}
void reconfigure()
{
    slurm_conf.last_update += 1;
}
int lock_depth()
{
    return state().locks;
}

}  // namespace fake_slurmctld
