// slurm_query.cpp - the libslurm implementation of SlurmQuery (see slurm_query.hpp).
//
// mylimits is an ordinary program, so it links libslurm (not libslurmfull like
// the plugins). Every structure or list Slurm hands back is owned by a
// move-only RAII holder and freed with Slurm's own destructor; request lists
// point into our std::strings and are created without a destructor so Slurm
// never frees what it did not allocate.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <type_traits>

#include "allot/gpu_request.hpp"
#include "allot/units.hpp"
#include "compat/slurm_job.hpp"
#include "compat/slurm_list.hpp"  // also the exported but undeclared state/reason names and bitmaps
#include "compat/slurm_msg.hpp"
#include "slurm_query.hpp"

namespace allot::mylimits {
namespace {

using slurm_compat::for_each;
using slurm_compat::ListPtr;

using slurm_compat::JobMsgPtr;
using AssocMgrPtr = slurm_compat::AssocMgrMsgPtr;

// One persistent slurmdbd connection, closed once.
class DbConn {
public:
    DbConn()
    {
        uint16_t flags = 0;
        conn_ = slurmdb_connection_get(&flags);
    }
    ~DbConn()
    {
        if (conn_) slurmdb_connection_close(&conn_);
    }
    DbConn(const DbConn&) = delete;
    DbConn& operator=(const DbConn&) = delete;
    void* get() const { return conn_; }

private:
    void* conn_ = nullptr;
};

// A request list of names pointing into `names` (which must outlive it).
ListPtr name_list(const std::vector<std::string>& names)
{
    ListPtr l(slurm_list_create(nullptr));
    for (const auto& n : names) slurm_list_append(l.get(), const_cast<char*>(n.c_str()));
    return l;
}

std::string str(const char* s)
{
    return s ? s : "";
}

// MYLIMITS_TRACE=1 prints the time of each Slurm call to stderr (for admins and the bench).
class Trace {
public:
    Trace() : on_(std::getenv("MYLIMITS_TRACE") != nullptr), t_(std::chrono::steady_clock::now()) {}
    void step(const char* what)
    {
        if (!on_) return;
        const auto now = std::chrono::steady_clock::now();
        std::fprintf(stderr, "mylimits: trace: %-22s %7.2f ms\n", what,
                     std::chrono::duration<double, std::milli>(now - t_).count());
        t_ = now;
    }

private:
    bool on_;
    std::chrono::steady_clock::time_point t_;
};

std::string last_error(const char* what)
{
    const int e = allot::slurm_compat::last_errno();
    return std::string(what) + ": " + (e ? slurm_strerror(e) : "no answer");
}

// What stops the report when a daemon does not answer; the text names the daemon.
Error ctld_down(const char* what)
{
    return make_error(Errc::SlurmctldDown, "cannot reach slurmctld: " + last_error(what));
}

Error dbd_down(const char* what)
{
    return make_error(Errc::SlurmdbdDown, "cannot reach slurmdbd: " + last_error(what));
}

void init_once()
{
    static std::once_flag once;
    std::call_once(once, [] { slurm_init(nullptr); });
}

std::optional<uint32_t> wall_minutes(uint32_t v)
{
    if (v == NO_VAL || v == 0) return std::nullopt;
    if (v == INFINITE) return kUnlimitedMinutes;
    return v;
}

limits::JobFacts job_facts(const slurm_job_info_t& j)
{
    limits::JobFacts f;
    f.job_id = j.job_id;
    if (j.array_job_id && j.array_task_id != NO_VAL)
        f.display_id = std::to_string(j.array_job_id) + "_" + std::to_string(j.array_task_id);
    else if (j.array_job_id && j.array_task_str)
        f.display_id = std::to_string(j.array_job_id) + "_[" + j.array_task_str + "]";
    else
        f.display_id = std::to_string(j.job_id);
    f.name = str(j.name);
    f.state = str(slurm_job_state_string(j.job_state & 0xff));
    f.reason =
        str(allot::slurm_compat::job_reason_string(static_cast<job_state_reason>(j.state_reason)));
    f.account = str(j.account);
    f.qos = str(j.qos);
    f.partition = str(j.partition);
    f.restarts = j.restart_cnt;
    f.submit_time = j.submit_time;
    f.start_time = j.start_time;
    f.eligible_time = j.eligible_time;
    f.preempt_time = j.preempt_time;
    f.time_limit_minutes = j.time_limit == NO_VAL     ? 0
                           : j.time_limit == INFINITE ? kUnlimitedMinutes
                                                      : j.time_limit;
    // Allocated TRES once running; requested TRES while pending; the --gpus*
    // options as a last resort (22.05 leaves tres_req_str empty for some jobs).
    const bool running =
        (j.job_state & 0xff) == JOB_RUNNING || (j.job_state & 0xff) == JOB_SUSPENDED;
    if (running) f.gpus = limits::gpus_in_tres_string(str(j.tres_alloc_str));
    if (!f.gpus) f.gpus = limits::gpus_in_tres_string(str(j.tres_req_str));
    if (!f.gpus) {
        if (auto c = count_gpus(slurm_compat::gpu_fields_of(j)); c.ok()) f.gpus = c.value().total;
    }
    return f;
}

std::optional<uint64_t> ctld_limit(const uint64_t* array, int idx)
{
    if (!array || idx < 0) return std::nullopt;
    const uint64_t v = array[idx];
    if (v == INFINITE64 || v == NO_VAL64) return std::nullopt;
    return v;
}

// Who may preempt whom: bit i of Preempt= is QOS id i.
std::vector<std::string> preempt_names(bitstr_t* bits,
                                       const std::map<uint32_t, std::string>& qos_by_id)
{
    std::vector<std::string> out;
    if (!bits) return out;
    const bitoff_t n = slurm_bit_size(bits);
    for (bitoff_t i = 0; i < n; ++i)
        if (slurm_bit_test(bits, i)) {
            auto it = qos_by_id.find(static_cast<uint32_t>(i));
            if (it != qos_by_id.end()) out.push_back(it->second);
        }
    return out;
}

void add_qos_ids(list_t* ids, const std::map<uint32_t, std::string>& qos_by_id,
                 std::vector<std::string>& names)
{
    for_each<char>(ids, [&](char* id_text) {
        auto id = parse_count(id_text, UINT32_MAX);
        if (!id) return;
        auto it = qos_by_id.find(static_cast<uint32_t>(*id));
        if (it != qos_by_id.end() &&
            std::find(names.begin(), names.end(), it->second) == names.end())
            names.push_back(it->second);
    });
}

// Adds one association row of the user to its account: partition-specific rows
// of one account give the union of their QOS.
void merge_assoc(const slurmdb_assoc_rec_t& a, const std::map<uint32_t, std::string>& qos_by_id,
                 std::map<std::string, limits::AssocFacts>& by_account)
{
    auto& f = by_account[a.acct];
    f.account = a.acct;
    add_qos_ids(a.qos_list, qos_by_id, f.qos);
    if (a.def_qos_id && a.def_qos_id != NO_VAL) {
        auto it = qos_by_id.find(a.def_qos_id);
        if (it != qos_by_id.end()) f.default_qos = it->second;
    }
}

class LibSlurmQuery final : public SlurmQuery {
public:
    LibSlurmQuery() { init_once(); }

    // The caller's AdminLevel, from slurmctld's cache (its own record is always visible).
    Result<bool> is_operator(const std::string& user) override
    {
        assoc_mgr_info_request_msg_t req;
        std::memset(&req, 0, sizeof req);
        std::vector<std::string> users{user};
        ListPtr ul = name_list(users);
        req.user_list = ul.get();
        req.flags = ASSOC_MGR_INFO_FLAG_USERS;
        assoc_mgr_info_msg_t* raw = nullptr;
        if (slurm_load_assoc_mgr_info(&req, &raw) != SLURM_SUCCESS || !raw)
            return make_error(Errc::SlurmctldDown, last_error("slurmctld (assoc_mgr)"));
        AssocMgrPtr msg(raw);
        bool op = false;
        for_each<slurmdb_user_rec_t>(msg->user_list, [&](slurmdb_user_rec_t* u) {
            if (u->name && user == u->name && u->admin_level >= SLURMDB_ADMIN_OPERATOR) op = true;
        });
        return op;
    }

    Result<SlurmFacts> fetch(const std::string& user, uint32_t uid,
                             const std::string& cluster) override
    {
        SlurmFacts out;
        out.user.name = user;
        out.user.uid = uid;
        out.user.known_to_slurm = false;
        Trace trace;
        // slurmctld's association manager is what enforces the limits, answers
        // in about a millisecond and holds usage; slurmdbd (≈90 ms per RPC
        // here) is asked only when slurmctld does not know the user yet, or
        // when MYLIMITS_SOURCE=slurmdbd asks for a cross-check.
        const char* source = std::getenv("MYLIMITS_SOURCE");
        const bool dbd_first = source && std::string(source) == "slurmdbd";
        std::map<std::string, limits::QosFacts> qos_facts;
        if (dbd_first) {
            if (auto s = dbd_config(user, cluster, out, qos_facts, trace); !s.ok())
                return s.error();
            if (auto s = ctld_state(user, false, out, qos_facts, trace); !s.ok()) return s.error();
        } else {
            if (auto s = ctld_state(user, true, out, qos_facts, trace); !s.ok()) return s.error();
            if (!out.user.known_to_slurm) {
                std::map<std::string, limits::QosFacts> db_qos;
                SlurmFacts db;
                db.user = out.user;
                if (dbd_config(user, cluster, db, db_qos, trace).ok() && db.user.known_to_slurm) {
                    out.user = db.user;
                    out.assocs = std::move(db.assocs);
                    out.notes.push_back(
                        "slurmctld does not know your associations yet; limits are from slurmdbd");
                }
            }
        }
        for (auto& [name, f] : qos_facts) out.qos.push_back(std::move(f));
        if (auto s = ctld_jobs(uid, out); !s.ok()) return s.error();
        trace.step("slurmctld jobs");
        return out;
    }

private:
    // slurmctld: QOS limits and usage, and (fill_config) the user record and associations.
    Status ctld_state(const std::string& user, bool fill_config, SlurmFacts& out,
                      std::map<std::string, limits::QosFacts>& qos_facts, Trace& trace)
    {
        assoc_mgr_info_request_msg_t req;
        std::memset(&req, 0, sizeof req);
        std::vector<std::string> users{user};
        ListPtr ul = name_list(users);
        req.user_list = ul.get();
        // Every QOS: association QOS lists and Preempt= bitmaps name them by id.
        req.flags = ASSOC_MGR_INFO_FLAG_QOS | ASSOC_MGR_INFO_FLAG_ASSOC |
                    (fill_config ? ASSOC_MGR_INFO_FLAG_USERS : 0);
        assoc_mgr_info_msg_t* raw = nullptr;
        if (slurm_load_assoc_mgr_info(&req, &raw) != SLURM_SUCCESS || !raw)
            return ctld_down("slurmctld (assoc_mgr)");
        AssocMgrPtr msg(raw);
        trace.step("slurmctld assoc_mgr");
        int gpu_idx = -1;
        for (uint32_t i = 0; i < msg->tres_cnt; ++i)
            if (msg->tres_names && msg->tres_names[i] && str(msg->tres_names[i]) == "gres/gpu")
                gpu_idx = static_cast<int>(i);
        if (gpu_idx < 0)
            out.notes.push_back(
                "Slurm does not account gres/gpu (AccountingStorageTRES); GPU caps are unknown");

        std::map<uint32_t, std::string> qos_by_id;
        for_each<slurmdb_qos_rec_t>(msg->qos_list, [&](slurmdb_qos_rec_t* q) {
            if (q->name) qos_by_id[q->id] = q->name;
        });
        for_each<slurmdb_qos_rec_t>(msg->qos_list, [&](slurmdb_qos_rec_t* q) {
            if (!q->name) return;
            if (fill_config) {
                limits::QosFacts f;
                f.name = q->name;
                f.grp_gpus = ctld_limit(q->grp_tres_ctld, gpu_idx);
                f.max_gpus_per_account = ctld_limit(q->max_tres_pa_ctld, gpu_idx);
                f.max_gpus_per_user = ctld_limit(q->max_tres_pu_ctld, gpu_idx);
                f.max_gpus_per_job = ctld_limit(q->max_tres_pj_ctld, gpu_idx);
                f.max_wall_minutes = wall_minutes(q->max_wall_pj);
                f.preempt_requeue = (q->preempt_mode & PREEMPT_MODE_REQUEUE) != 0;
                if (q->grace_time && q->grace_time != NO_VAL) f.grace_seconds = q->grace_time;
                f.preempt = preempt_names(q->preempt_bitstr, qos_by_id);
                qos_facts[f.name] = std::move(f);
            }
            auto it = qos_facts.find(q->name);
            if (it == qos_facts.end() || !q->usage || gpu_idx < 0) return;
            const auto gi = static_cast<uint32_t>(gpu_idx);
            auto& f = it->second;
            if (q->usage->grp_used_tres && gi < q->usage->tres_cnt)
                f.gpus_in_use = q->usage->grp_used_tres[gi];
            for_each<slurmdb_used_limits_t>(q->usage->acct_limit_list,
                                            [&](slurmdb_used_limits_t* u) {
                                                if (u->acct && u->tres && gi < q->usage->tres_cnt)
                                                    f.gpus_in_use_by_account[u->acct] = u->tres[gi];
                                            });
            f.usage_known = f.gpus_in_use.has_value();
        });

        if (fill_config) {
            for_each<slurmdb_user_rec_t>(msg->user_list, [&](slurmdb_user_rec_t* u) {
                if (!u->name || user != u->name) return;
                out.user.known_to_slurm = true;
                out.user.default_account = str(u->default_acct);
            });
        }
        std::map<std::string, limits::AssocFacts> by_account;
        for (auto& a : out.assocs) by_account[a.account] = a;
        // User rows first: they decide which accounts are the user's.
        for_each<slurmdb_assoc_rec_t>(msg->assoc_list, [&](slurmdb_assoc_rec_t* a) {
            if (!fill_config || !a->acct || !a->user || user != a->user) return;
            merge_assoc(*a, qos_by_id, by_account);
            out.user.known_to_slurm = true;
        });
        bool saw_account = false;
        for_each<slurmdb_assoc_rec_t>(msg->assoc_list, [&](slurmdb_assoc_rec_t* a) {
            if ((a->user && *a->user) || !a->acct || (a->partition && *a->partition)) return;
            auto it = by_account.find(a->acct);
            if (it == by_account.end()) return;
            saw_account = true;
            if (fill_config) it->second.grp_gpus = ctld_limit(a->grp_tres_ctld, gpu_idx);
            if (a->usage && a->usage->grp_used_tres && gpu_idx >= 0)
                it->second.account_gpus_in_use = a->usage->grp_used_tres[gpu_idx];
        });
        if (!saw_account && !by_account.empty())
            out.notes.push_back(
                "slurmctld does not show you whole-account limits and usage (PrivateData); "
                "team figures come from the tier QOS");
        out.assocs.clear();
        for (auto& [name, f] : by_account) out.assocs.push_back(std::move(f));
        return ok_status();
    }

    // slurmdbd: the user record, associations and QOS limits (the configured truth).
    Status dbd_config(const std::string& user, const std::string& cluster, SlurmFacts& out,
                      std::map<std::string, limits::QosFacts>& qos_facts, Trace& trace)
    {
        DbConn db;
        if (!db.get()) return dbd_down("slurmdbd");
        trace.step("slurmdbd connect");
        std::vector<std::string> clusters;
        if (!cluster.empty()) clusters.push_back(cluster);
        ListPtr cl = name_list(clusters);

        // GPU limits in slurmdbd are "id=count" strings: find gres/gpu's id.
        uint32_t gpu_tres_id = 0;
        {
            slurmdb_tres_cond_t cond;
            std::memset(&cond, 0, sizeof cond);
            ListPtr tres(slurmdb_tres_get(db.get(), &cond));
            if (!tres) return dbd_down("slurmdbd (tres)");
            for_each<slurmdb_tres_rec_t>(tres.get(), [&](slurmdb_tres_rec_t* t) {
                if (str(t->type) == "gres" && str(t->name) == "gpu") gpu_tres_id = t->id;
            });
            trace.step("slurmdbd tres");
        }
        std::map<uint32_t, std::string> qos_by_id;
        {
            slurmdb_qos_cond_t cond;
            std::memset(&cond, 0, sizeof cond);
            ListPtr qos(slurmdb_qos_get(db.get(), &cond));
            if (!qos) return dbd_down("slurmdbd (qos)");
            for_each<slurmdb_qos_rec_t>(qos.get(), [&](slurmdb_qos_rec_t* q) {
                if (q->name) qos_by_id[q->id] = q->name;
            });
            for_each<slurmdb_qos_rec_t>(qos.get(), [&](slurmdb_qos_rec_t* q) {
                if (!q->name) return;
                limits::QosFacts f;
                f.name = q->name;
                if (gpu_tres_id) {
                    f.grp_gpus = limits::tres_id_value(str(q->grp_tres), gpu_tres_id);
                    f.max_gpus_per_account =
                        limits::tres_id_value(str(q->max_tres_pa), gpu_tres_id);
                    f.max_gpus_per_user = limits::tres_id_value(str(q->max_tres_pu), gpu_tres_id);
                    f.max_gpus_per_job = limits::tres_id_value(str(q->max_tres_pj), gpu_tres_id);
                }
                f.max_wall_minutes = wall_minutes(q->max_wall_pj);
                f.preempt_requeue = (q->preempt_mode & PREEMPT_MODE_REQUEUE) != 0;
                if (q->grace_time && q->grace_time != NO_VAL) f.grace_seconds = q->grace_time;
                f.preempt = preempt_names(q->preempt_bitstr, qos_by_id);
                qos_facts[f.name] = std::move(f);
            });
            trace.step("slurmdbd qos");
        }
        std::vector<std::string> accounts;
        {
            slurmdb_assoc_cond_t assoc_cond;
            std::memset(&assoc_cond, 0, sizeof assoc_cond);
            std::vector<std::string> users{user};
            ListPtr ul = name_list(users);
            assoc_cond.user_list = ul.get();
            if (!clusters.empty()) assoc_cond.cluster_list = cl.get();
            slurmdb_user_cond_t cond;
            std::memset(&cond, 0, sizeof cond);
            cond.assoc_cond = &assoc_cond;
            cond.with_assocs = 1;
            ListPtr res(slurmdb_users_get(db.get(), &cond));
            if (!res) return dbd_down("slurmdbd (users)");
            std::map<std::string, limits::AssocFacts> by_account;
            for_each<slurmdb_user_rec_t>(res.get(), [&](slurmdb_user_rec_t* u) {
                if (!u->name || user != u->name) return;
                out.user.known_to_slurm = true;
                out.user.default_account = str(u->default_acct);
                for_each<slurmdb_assoc_rec_t>(u->assoc_list, [&](slurmdb_assoc_rec_t* a) {
                    if (!a->acct) return;
                    if (!cluster.empty() && a->cluster && cluster != a->cluster) return;
                    merge_assoc(*a, qos_by_id, by_account);
                });
            });
            for (auto& [name, f] : by_account) {
                accounts.push_back(name);
                out.assocs.push_back(std::move(f));
            }
            trace.step("slurmdbd users+assocs");
        }
        // Account-level GrpTRES (user='' rows); hidden under PrivateData=users
        // unless the caller coordinates the account.
        if (!accounts.empty() && gpu_tres_id) {
            slurmdb_assoc_cond_t cond;
            std::memset(&cond, 0, sizeof cond);
            ListPtr al = name_list(accounts);
            std::vector<std::string> empty_user{""};
            ListPtr ul = name_list(empty_user);
            cond.acct_list = al.get();
            cond.user_list = ul.get();
            if (!clusters.empty()) cond.cluster_list = cl.get();
            ListPtr res(slurmdb_associations_get(db.get(), &cond));
            for_each<slurmdb_assoc_rec_t>(res.get(), [&](slurmdb_assoc_rec_t* a) {
                if ((a->user && *a->user) || (a->partition && *a->partition)) return;
                for (auto& f : out.assocs)
                    if (a->acct && f.account == a->acct)
                        f.grp_gpus = limits::tres_id_value(str(a->grp_tres), gpu_tres_id);
            });
            trace.step("slurmdbd account assocs");
        }
        return ok_status();
    }

    // The user's own jobs only: the cost does not grow with the queue. Only
    // this cluster's (SHOW_LOCAL): its limits are the ones explained, and
    // libslurm then skips asking slurmctld whether the cluster is federated.
    Status ctld_jobs(uint32_t uid, SlurmFacts& out)
    {
        job_info_msg_t* raw = nullptr;
        if (slurm_load_job_user(&raw, uid, SHOW_ALL | SHOW_LOCAL) != SLURM_SUCCESS || !raw)
            return ctld_down("slurmctld (jobs)");
        JobMsgPtr msg(raw);
        out.jobs.reserve(msg->record_count);
        for (uint32_t i = 0; i < msg->record_count; ++i) {
            const auto& j = msg->job_array[i];
            if (j.user_id != uid) continue;
            out.jobs.push_back(job_facts(j));
        }
        return ok_status();
    }
};

}  // namespace

std::unique_ptr<SlurmQuery> make_libslurm_query()
{
    return std::make_unique<LibSlurmQuery>();
}

}  // namespace allot::mylimits
