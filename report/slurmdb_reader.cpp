// slurmdb_reader.cpp - run records and capacity history from slurmdbd through libslurm
// (see slurmdb_reader.hpp).
#include "slurmdb_reader.hpp"

#include <map>
#include <mutex>

#include "compat/slurm_list.hpp"
#include "compat/slurmdb.hpp"

namespace allot::report {

namespace {

using slurm_compat::DbConnection;
using slurm_compat::for_each;
using slurm_compat::ListPtr;

std::string str(const char* s)
{
    return s ? s : "";
}

Error dbd_down(const std::string& what)
{
    const int e = slurm_compat::last_errno();
    return make_error(Errc::SlurmdbdDown,
                      "cannot read " + what + " from slurmdbd: " + str(slurm_strerror(e)));
}

// A request list of names pointing into `names` (which must outlive it).
ListPtr name_list(const std::vector<std::string>& names)
{
    ListPtr l(slurm_list_create(nullptr));
    for (const auto& n : names) slurm_list_append(l.get(), const_cast<char*>(n.c_str()));
    return l;
}

std::optional<int64_t> end_of(time_t t)
{
    if (t <= 0) return std::nullopt;
    return static_cast<int64_t>(t);
}

class SlurmdbSource final : public AccountingSource {
public:
    Result<Accounting> read(int64_t from, int64_t until) override
    {
        static std::once_flag once;
        std::call_once(once, [] { slurm_init(nullptr); });
        Accounting out;
        out.cluster = slurm_compat::local_cluster_name();
        DbConnection db;
        if (!db.get()) return dbd_down("a connection");
        auto tres = read_tres(db);
        if (!tres) return tres.error();
        const auto gpu = tres.value().gpu_id();
        if (!gpu)
            return make_error(Errc::NoGpuTres,
                              "slurmdbd accounts no gres/gpu TRES: add "
                              "AccountingStorageTRES=gres/gpu to slurm.conf");
        auto qos = read_qos_names(db);
        if (!qos) return qos.error();
        const std::vector<std::string> clusters{out.cluster};
        if (auto s = read_runs(db, clusters, *gpu, qos.value(), from, until, out.inputs); !s)
            return s.error();
        if (auto s = read_events(db, clusters, *gpu, from, until, out.inputs); !s) return s.error();
        return out;
    }

private:
    static Result<TresTable> read_tres(const DbConnection& db)
    {
        slurmdb_tres_cond_t cond{};
        cond.with_deleted = 1;  // old records may name a TRES removed since
        ListPtr list(slurmdb_tres_get(db.get(), &cond));
        if (!list) return dbd_down("TRES");
        TresTable table;
        for_each<slurmdb_tres_rec_t>(list.get(), [&](slurmdb_tres_rec_t* t) {
            table.add(t->id, str(t->type), str(t->name));
        });
        return table;
    }

    static Result<std::map<uint32_t, std::string>> read_qos_names(const DbConnection& db)
    {
        slurmdb_qos_cond_t cond{};
        slurm_compat::include_deleted(cond);
        ListPtr list(slurmdb_qos_get(db.get(), &cond));
        if (!list) return dbd_down("QOS");
        std::map<uint32_t, std::string> names;
        for_each<slurmdb_qos_rec_t>(list.get(),
                                    [&](slurmdb_qos_rec_t* q) { names[q->id] = str(q->name); });
        return names;
    }

    static Status read_runs(const DbConnection& db, const std::vector<std::string>& clusters,
                            uint32_t gpu, const std::map<uint32_t, std::string>& qos, int64_t from,
                            int64_t until, Inputs& in)
    {
        ListPtr cluster_list = name_list(clusters);
        slurmdb_job_cond_t cond{};
        cond.cluster_list = cluster_list.get();
        cond.flags = slurm_compat::kEveryRunNoSteps;
        cond.db_flags = SLURMDB_JOB_FLAG_NOTSET;  // no filter on how jobs were scheduled
        cond.usage_start = static_cast<time_t>(from);
        cond.usage_end = static_cast<time_t>(until);
        ListPtr jobs(slurmdb_jobs_get(db.get(), &cond));
        cond.cluster_list = nullptr;  // owned by cluster_list
        if (!jobs) return dbd_down("jobs");
        for_each<slurmdb_job_rec_t>(jobs.get(), [&](slurmdb_job_rec_t* j) {
            RunRecord r;
            r.job_id = j->jobid;
            r.array_job_id = j->array_job_id;
            r.array_task_id = j->array_task_id;
            r.het_job_id = j->het_job_id;
            r.het_offset = j->het_job_offset;
            r.account = str(j->account);
            auto q = qos.find(j->qosid);
            r.qos = q == qos.end() ? std::to_string(j->qosid) : q->second;
            r.user = str(j->user);
            r.start = static_cast<int64_t>(j->start);
            r.end = end_of(j->end);
            r.gpus = static_cast<uint32_t>(untyped_gpus(str(j->tres_alloc_str), gpu));
            r.state = run_end_from_name(str(slurm_job_state_string(j->state)));
            if (!r.end) r.state = RunEnd::Running;
            in.runs.push_back(std::move(r));
        });
        return ok_status();
    }

    static Status read_events(const DbConnection& db, const std::vector<std::string>& clusters,
                              uint32_t gpu, int64_t from, int64_t until, Inputs& in)
    {
        ListPtr cluster_list = name_list(clusters);
        slurmdb_event_cond_t cond{};
        cond.cluster_list = cluster_list.get();
        cond.event_type = SLURMDB_EVENT_ALL;
        cond.period_start = static_cast<time_t>(from);
        cond.period_end = static_cast<time_t>(until);
        ListPtr events(slurmdb_events_get(db.get(), &cond));
        cond.cluster_list = nullptr;
        if (!events) return dbd_down("events");
        for_each<slurmdb_event_rec_t>(events.get(), [&](slurmdb_event_rec_t* e) {
            const uint64_t gpus = untyped_gpus(str(e->tres_str), gpu);
            if (e->event_type == SLURMDB_EVENT_CLUSTER) {
                in.capacity.push_back({e->period_start, end_of(e->period_end), gpus});
            } else if (e->event_type == SLURMDB_EVENT_NODE) {
                in.outages.push_back(
                    {str(e->node_name), e->period_start, end_of(e->period_end), gpus});
            }
        });
        return ok_status();
    }
};

}  // namespace

std::unique_ptr<AccountingSource> make_slurmdb_source()
{
    return std::make_unique<SlurmdbSource>();
}

}  // namespace allot::report
