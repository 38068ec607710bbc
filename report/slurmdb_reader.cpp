// slurmdb_reader.cpp - run records and capacity history from slurmdbd through libslurm
// (see slurmdb_reader.hpp).
#include "slurmdb_reader.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <mutex>
#include <unordered_set>

#include "compat/slurm_list.hpp"
#include "compat/slurmdb.hpp"
#include "run_stream.hpp"

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

// A request list of one name pointing into `name` (which must outlive it).
ListPtr name_list(const std::string& name)
{
    ListPtr l(slurm_list_create(nullptr));
    slurm_list_append(l.get(), const_cast<char*>(name.c_str()));
    return l;
}

std::optional<int64_t> end_of(time_t t)
{
    if (t <= 0) return std::nullopt;
    return static_cast<int64_t>(t);
}

// What reading runs needs first: the id of untyped gres/gpu and the QOS names by id.
struct Lookup {
    uint32_t gpu = 0;
    std::map<uint32_t, std::string> qos;
};

Result<TresTable> read_tres(const DbConnection& db)
{
    slurmdb_tres_cond_t cond{};
    cond.with_deleted = 1;  // old records may name a TRES removed since
    ListPtr list(slurmdb_tres_get(db.get(), &cond));
    if (!list) return dbd_down("TRES");
    TresTable table;
    for_each<slurmdb_tres_rec_t>(
        list.get(), [&](slurmdb_tres_rec_t* t) { table.add(t->id, str(t->type), str(t->name)); });
    return table;
}

Result<std::map<uint32_t, std::string>> read_qos_names(const DbConnection& db)
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

Result<Lookup> read_lookup(const DbConnection& db)
{
    auto tres = read_tres(db);
    if (!tres) return tres.error();
    const auto gpu = tres.value().gpu_id();
    if (!gpu)
        return make_error(Errc::NoGpuTres,
                          "slurmdbd accounts no gres/gpu TRES: add "
                          "AccountingStorageTRES=gres/gpu to slurm.conf");
    auto qos = read_qos_names(db);
    if (!qos) return qos.error();
    return Lookup{*gpu, std::move(qos.value())};
}

RunRecord run_of(const slurmdb_job_rec_t& j, const Lookup& lookup)
{
    RunRecord r;
    r.job_id = j.jobid;
    r.array_job_id = j.array_job_id;
    r.array_task_id = j.array_task_id;
    r.het_job_id = j.het_job_id;
    r.het_offset = j.het_job_offset;
    r.account = str(j.account);
    auto q = lookup.qos.find(j.qosid);
    r.qos = q == lookup.qos.end() ? std::to_string(j.qosid) : q->second;
    r.user = str(j.user);
    r.start = static_cast<int64_t>(j.start);
    r.end = end_of(j.end);
    r.gpus = static_cast<uint32_t>(untyped_gpus(str(j.tres_alloc_str), lookup.gpu));
    r.state = run_end_from_name(str(slurm_job_state_string(j.state)));
    if (!r.end) r.state = RunEnd::Running;
    return r;
}

// Every run record touching [from, until), with its row in the job table.
Result<std::vector<IndexedRun>> read_runs(const DbConnection& db, const std::string& cluster,
                                          const Lookup& lookup, int64_t from, int64_t until)
{
    ListPtr cluster_list = name_list(cluster);
    slurmdb_job_cond_t cond{};
    cond.cluster_list = cluster_list.get();
    cond.flags = slurm_compat::kEveryRunNoSteps;
    cond.db_flags = SLURMDB_JOB_FLAG_NOTSET;  // no filter on how jobs were scheduled
    cond.usage_start = static_cast<time_t>(from);
    cond.usage_end = static_cast<time_t>(until);
    ListPtr jobs(slurmdb_jobs_get(db.get(), &cond));
    cond.cluster_list = nullptr;  // owned by cluster_list
    if (!jobs) return dbd_down("jobs");
    std::vector<IndexedRun> runs;
    for_each<slurmdb_job_rec_t>(jobs.get(), [&](slurmdb_job_rec_t* j) {
        runs.push_back({j->db_index, run_of(*j, lookup)});
    });
    return runs;
}

Status read_events(const DbConnection& db, const std::string& cluster, uint32_t gpu, int64_t from,
                   int64_t until, Inputs& in)
{
    ListPtr cluster_list = name_list(cluster);
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
            in.outages.push_back({str(e->node_name), e->period_start, end_of(e->period_end), gpus});
        }
    });
    return ok_status();
}

// The runs of one half of the period, on a slurmdbd connection of this process's own.
std::string read_half_encoded(const std::string& cluster, int64_t from, int64_t until)
{
    DbConnection db;
    if (!db.get()) return encode_failure(dbd_down("a connection"));
    auto lookup = read_lookup(db);
    if (!lookup) return encode_failure(lookup.error());
    auto runs = read_runs(db, cluster, lookup.value(), from, until);
    return runs ? encode_runs(runs.value()) : encode_failure(runs.error());
}

bool write_all(int fd, std::string_view bytes)
{
    while (!bytes.empty()) {
        const ssize_t n = write(fd, bytes.data(), bytes.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        bytes.remove_prefix(static_cast<size_t>(n));
    }
    return true;
}

// The runs of [from, until) read by a child process at the same time as the parent reads
// the rest: libslurm sends one process's slurmdbd requests over one connection, one at a
// time, while slurmdbd and MariaDB answer each connection in a thread of its own (two
// halves at once took about 60% of the whole's time, bench/report/README.md). Forked
// before the parent opens its connection, so none is shared. A reader never collected is
// killed and reaped.
class SecondReader {
public:
    SecondReader(const std::string& cluster, int64_t from, int64_t until)
    {
        int fds[2];
        if (pipe2(fds, O_CLOEXEC) != 0) return;
        pid_ = fork();
        if (pid_ == 0) {
            close(fds[0]);
            int rc = 1;
            try {
                rc = write_all(fds[1], read_half_encoded(cluster, from, until)) ? 0 : 1;
            } catch (...) {
            }
            _exit(rc);  // none of the parent's atexit handlers or stdio buffers
        }
        close(fds[1]);
        if (pid_ < 0) {
            close(fds[0]);
            return;
        }
        fd_ = fds[0];
    }
    ~SecondReader()
    {
        if (fd_ >= 0) close(fd_);
        if (pid_ > 0) {
            kill(pid_, SIGKILL);
            reap();
        }
    }
    SecondReader(const SecondReader&) = delete;
    SecondReader& operator=(const SecondReader&) = delete;

    bool started() const { return pid_ > 0; }

    Result<std::vector<IndexedRun>> collect()
    {
        std::string bytes;
        char buf[65536];
        for (;;) {
            const ssize_t n = read(fd_, buf, sizeof buf);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            bytes.append(buf, static_cast<size_t>(n));
        }
        close(fd_);
        fd_ = -1;
        const int status = reap();
        auto runs = decode_runs(bytes);
        if (runs && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
            return runs_cut_short();  // records, but no clean exit: not believed
        return runs;
    }

private:
    int reap()
    {
        int status = 0;
        while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
        }
        pid_ = -1;
        return status;
    }

    pid_t pid_ = -1;
    int fd_ = -1;
};

// Adds the second reader's runs that the first did not read (a run crossing the halves'
// boundary is in both).
void merge_runs(std::vector<IndexedRun> mine, std::vector<IndexedRun> theirs, Inputs& in)
{
    std::unordered_set<uint64_t> seen;
    seen.reserve(mine.size());
    in.runs.reserve(mine.size() + theirs.size());
    for (IndexedRun& r : mine) {
        seen.insert(r.db_index);
        in.runs.push_back(std::move(r.run));
    }
    for (IndexedRun& r : theirs)
        if (!seen.count(r.db_index)) in.runs.push_back(std::move(r.run));
}

class SlurmdbSource final : public AccountingSource {
public:
    Result<Accounting> read(int64_t from, int64_t until) override
    {
        static std::once_flag once;
        std::call_once(once, [] { slurm_init(nullptr); });
        Accounting out;
        out.cluster = slurm_compat::local_cluster_name();
        const int64_t mid = from + (until - from) / 2;
        SecondReader second(out.cluster, mid, until);
        DbConnection db;
        if (!db.get()) return dbd_down("a connection");
        auto lookup = read_lookup(db);
        if (!lookup) return lookup.error();
        auto mine =
            read_runs(db, out.cluster, lookup.value(), from, second.started() ? mid : until);
        if (!mine) return mine.error();
        if (auto s = read_events(db, out.cluster, lookup.value().gpu, from, until, out.inputs); !s)
            return s.error();
        std::vector<IndexedRun> theirs;
        if (second.started()) {
            auto r = second.collect();
            if (!r) return r.error();
            theirs = std::move(r.value());
        }
        merge_runs(std::move(mine.value()), std::move(theirs), out.inputs);
        return out;
    }
};

}  // namespace

std::unique_ptr<AccountingSource> make_slurmdb_source()
{
    return std::make_unique<SlurmdbSource>();
}

}  // namespace allot::report
