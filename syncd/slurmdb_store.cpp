// slurmdb_store.cpp - AccountingStore over libslurm's slurmdb API (see
// slurmdb_store.hpp). Every C handle has an owner: ListPtr destroys lists
// libslurm returns, Connection closes the slurmdbd connection. Input records
// and lists are built in C++-owned storage (lists without a destructor), so
// nothing we allocate is freed by Slurm's allocator or the other way round.
#include "slurmdb_store.hpp"

#include "syncd_support.hpp"

#include "compat/slurm_list.hpp"
#include "compat/slurmdb.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <type_traits>

namespace allot {
namespace {

using slurm_compat::for_each;
using slurm_compat::ListPtr;

// Strings handed to Slurm in input records; stable addresses until cleared.
class Strings {
public:
    char* keep(const std::string& s)
    {
        store_.push_back(s);
        return store_.back().data();
    }
    // A list of char* without a destructor: the strings stay ours.
    list_t* list(const std::vector<std::string>& items)
    {
        list_t* l = slurm_list_create(nullptr);
        lists_.emplace_back(l);
        for (const auto& i : items) slurm_list_append(l, keep(i));
        return l;
    }
    list_t* empty_list()
    {
        list_t* l = slurm_list_create(nullptr);
        lists_.emplace_back(l);
        return l;
    }

private:
    std::deque<std::string> store_;
    std::vector<ListPtr> lists_;
};

long long ms_since(std::chrono::steady_clock::time_point t0)
{
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                 t0)
        .count();
}

std::string str(const char* s)
{
    return s ? s : "";
}

std::string last_error(int rc = 0)
{
    const int e = (rc && rc != SLURM_ERROR) ? rc : slurm_compat::last_errno();
    return std::string(slurm_strerror(e)) + " (" + std::to_string(e) + ")";
}

// One slurmdbd connection and the id maps of what it knows.
struct Slurmdb {
    std::string cluster;
    void* conn = nullptr;
    std::map<std::string, uint32_t> tres_id;  // "gres/gpu" → id
    std::map<uint32_t, std::string> tres_name;
    std::map<std::string, uint32_t> qos_id;
    std::map<uint32_t, std::string> qos_name;
    // What read() saw on this connection: apply() plans its "=-1" clears
    // against it instead of reading everything again (six round trips).
    std::unique_ptr<AccountingState> last_read;  // not std::optional: GCC 16 warns falsely

    ~Slurmdb() { close(); }
    void close()
    {
        if (conn) slurmdb_connection_close(&conn);
        conn = nullptr;
        last_read.reset();
    }
    Result<bool> connect()
    {
        if (conn) return true;
        uint16_t flags = 0;
        conn = slurm_compat::connection_get_without_nagle(&flags);
        if (!conn) return make_error("cannot connect to slurmdbd: " + last_error());
        return load_tres();
    }
    Result<bool> load_tres()
    {
        slurmdb_tres_cond_t cond;
        memset(&cond, 0, sizeof cond);
        ListPtr l(slurmdb_tres_get(conn, &cond));
        if (!l) return make_error("reading TRES: " + last_error());
        tres_id.clear();
        tres_name.clear();
        for_each<void>(l.get(), [&](void* x) {
            auto* t = static_cast<slurmdb_tres_rec_t*>(x);
            std::string n = str(t->type);
            if (t->name && *t->name) n += "/" + str(t->name);
            tres_id[n] = t->id;
            tres_name[t->id] = n;
        });
        return true;
    }
    // `records`, when given, keeps the QOS list read (one round trip for both).
    Result<bool> load_qos_ids(ListPtr* records = nullptr)
    {
        slurmdb_qos_cond_t cond;
        memset(&cond, 0, sizeof cond);
        cond.preempt_mode = NO_VAL16;
        ListPtr l(slurmdb_qos_get(conn, &cond));
        if (!l) return make_error("reading QOS: " + last_error());
        qos_id.clear();
        qos_name.clear();
        for_each<void>(l.get(), [&](void* x) {
            auto* q = static_cast<slurmdb_qos_rec_t*>(x);
            qos_id[str(q->name)] = q->id;
            qos_name[q->id] = str(q->name);
        });
        if (records) *records = std::move(l);
        return true;
    }
    Tres parse_tres(const char* s) const
    {
        Tres out;
        std::string text = str(s);
        size_t i = 0;
        while (i < text.size()) {
            size_t j = text.find(',', i);
            if (j == std::string::npos) j = text.size();
            std::string item = text.substr(i, j - i);
            auto eq = item.find('=');
            if (eq != std::string::npos) {
                const uint32_t id = uint32_t(strtoul(item.c_str(), nullptr, 10));
                const long long v = strtoll(item.c_str() + eq + 1, nullptr, 10);
                auto n = tres_name.find(id);
                if (v >= 0 && n != tres_name.end()) out[n->second] = uint64_t(v);
            }
            i = j + 1;
        }
        return out;
    }
    // "id=count" for each wanted TRES, "id=-1" to clear what `current` had.
    Result<std::string> tres_text(const Tres& want, const Tres& current = {}) const
    {
        std::string out;
        for (const auto& [n, v] : want) {
            auto id = tres_id.find(n);
            if (id == tres_id.end())
                return make_error("TRES " + n + " unknown to slurmdbd (AccountingStorageTRES?)");
            out += (out.empty() ? "" : ",") + std::to_string(id->second) + "=" + std::to_string(v);
        }
        for (const auto& [n, v] : current) {
            if (want.count(n)) continue;
            auto id = tres_id.find(n);
            if (id != tres_id.end())
                out += (out.empty() ? "" : ",") + std::to_string(id->second) + "=-1";
        }
        return out;
    }
    Result<std::vector<std::string>> qos_ids(const std::set<std::string>& names) const
    {
        std::vector<std::string> out;
        for (const auto& n : names) {
            auto it = qos_id.find(n);
            if (it == qos_id.end()) return make_error("QOS " + n + " does not exist");
            out.push_back(std::to_string(it->second));
        }
        return out;
    }
};

}  // namespace

struct SlurmdbStore::Impl : Slurmdb {};

SlurmdbStore::SlurmdbStore(std::string cluster) : impl_(new Impl)
{
    impl_->cluster = std::move(cluster);
    // Reads slurm.conf (SLURM_CONF) once: AccountingStorage* and munge options.
    static bool initialised = false;
    if (!initialised) {
        slurm_init(nullptr);
        initialised = true;
    }
}

SlurmdbStore::~SlurmdbStore() = default;

namespace {

// Slurm's "unset" and "unlimited" both mean none to allot.
uint32_t value_or_zero(uint32_t v)
{
    return (v == INFINITE || v == NO_VAL) ? 0 : v;
}

QosSpec qos_spec(const Slurmdb& m, const slurmdb_qos_rec_t& q)
{
    QosSpec s;
    s.name = str(q.name);
    s.description = str(q.description);
    s.grp_tres = m.parse_tres(q.grp_tres);
    s.max_tres_pa = m.parse_tres(q.max_tres_pa);
    s.max_wall_minutes = value_or_zero(q.max_wall_pj);
    s.priority = value_or_zero(q.priority);
    s.grace_seconds = value_or_zero(q.grace_time);
    s.requeue = q.preempt_mode != NO_VAL16 && (q.preempt_mode & PREEMPT_MODE_REQUEUE);
    if (q.preempt_bitstr) {
        const int64_t n = slurm_bit_size(q.preempt_bitstr);
        for (int64_t i = 0; i < n; ++i)
            if (slurm_bit_test(q.preempt_bitstr, i)) {
                auto it = m.qos_name.find(uint32_t(i));
                if (it != m.qos_name.end()) s.preempt.insert(it->second);
            }
    }
    return s;
}

void read_qos(const Slurmdb& m, const ListPtr& qos, AccountingState& st)
{
    for_each<slurmdb_qos_rec_t>(
        qos.get(), [&](slurmdb_qos_rec_t* q) { st.qos[str(q->name)] = qos_spec(m, *q); });
}

Status read_accounts(const Slurmdb& m, AccountingState& st)
{
    slurmdb_assoc_cond_t acond;
    memset(&acond, 0, sizeof acond);
    slurmdb_account_cond_t cond;
    memset(&cond, 0, sizeof cond);
    cond.assoc_cond = &acond;
    ListPtr accounts(slurmdb_accounts_get(m.conn, &cond));
    if (!accounts) return make_error(Errc::Unavailable, "reading accounts: " + last_error());
    for_each<slurmdb_account_rec_t>(accounts.get(), [&](slurmdb_account_rec_t* a) {
        AccountSpec s;
        s.name = str(a->name);
        s.description = str(a->description);
        s.organization = str(a->organization);
        st.accounts[s.name] = s;
    });
    return ok_status();
}

AssocSpec assoc_spec(const Slurmdb& m, const slurmdb_assoc_rec_t& a)
{
    AssocSpec s;
    s.user = a.user;
    s.account = str(a.acct);
    for_each<const char>(a.qos_list, [&](const char* id) {
        auto it = m.qos_name.find(uint32_t(strtoul(id, nullptr, 10)));
        if (it != m.qos_name.end()) s.qos.insert(it->second);
    });
    if (a.def_qos_id && a.def_qos_id != NO_VAL && a.def_qos_id != INFINITE) {
        auto it = m.qos_name.find(a.def_qos_id);
        if (it != m.qos_name.end()) s.default_qos = it->second;
    }
    return s;
}

// Users' associations, and the GrpTRES of accounts' own associations.
Status read_assocs(const Slurmdb& m, AccountingState& st)
{
    Strings keep;
    slurmdb_assoc_cond_t cond;
    memset(&cond, 0, sizeof cond);
    cond.cluster_list = keep.list({m.cluster});
    ListPtr assocs(slurmdb_associations_get(m.conn, &cond));
    if (!assocs) return make_error(Errc::Unavailable, "reading associations: " + last_error());
    for_each<slurmdb_assoc_rec_t>(assocs.get(), [&](slurmdb_assoc_rec_t* a) {
        if (a->partition && *a->partition) return;  // per-partition assocs are never allot's
        if (!a->user || !*a->user) {
            auto it = st.accounts.find(str(a->acct));
            if (it != st.accounts.end()) it->second.grp_tres = m.parse_tres(a->grp_tres);
            return;
        }
        const AssocSpec s = assoc_spec(m, *a);
        st.assocs[{s.user, s.account}] = s;
        if (a->is_def == 1) st.users[s.user].default_account = s.account;
        st.users[s.user].name = s.user;
    });
    return ok_status();
}

}  // namespace

Result<AccountingState> SlurmdbStore::read()
{
    Impl& m = *impl_;
    if (auto c = m.connect(); !c) return c.error();
    const auto t0 = std::chrono::steady_clock::now();
    ListPtr qos;
    if (auto q = m.load_qos_ids(&qos); !q) {
        m.close();  // a dead connection is reopened next time
        return q.error();
    }
    AccountingState st;
    read_qos(m, qos, st);
    for (auto step : {read_accounts, read_assocs})
        if (auto s = step(m, st); !s) return s.error();
    // Each read costs ~45 ms even when empty (bench/sync-scale/README.md),
    // hence as few as possible; -v shows the total.
    syncd::log(syncd::Level::Debug, "slurmdbd: read " + std::to_string(st.assocs.size()) +
                                        " associations in " + std::to_string(ms_since(t0)) + " ms");
    m.last_read = std::make_unique<AccountingState>(st);
    return st;
}

namespace {

// Adds of one kind go to slurmdbd as one list (like `sacctmgr load`): one
// round trip and one hierarchy update for thousands of users, instead of one
// per object. Modifications and removals are few and go one by one.
struct Batch {
    ChangeKind kind = ChangeKind::Qos;
    std::vector<const Change*> changes;
    std::deque<slurmdb_qos_rec_t> qos;
    std::deque<slurmdb_account_rec_t> accounts;
    std::deque<slurmdb_assoc_rec_t> assocs;
    std::deque<slurmdb_user_rec_t> users;
    std::set<std::string> names;  // QOS added in this batch
    std::unique_ptr<Strings> keep = std::make_unique<Strings>();
};

// A modify that changed nothing is not a failure.
bool modify_failed(const ListPtr& r)
{
    return !r && slurm_compat::last_errno() != SLURM_NO_CHANGE_IN_DATA;
}

// One plan applied on one connection: each change either joins the current
// batch (adds) or is sent at once; errors are collected per change.
class Applier {
public:
    Applier(Slurmdb& db, AccountingState current) : m_(db), current_(std::move(current)) {}

    Result<ApplyReport> run(const Plan& plan)
    {
        const size_t qos_head = qos_head_of(plan);
        for (size_t idx = 0; idx < plan.changes.size(); ++idx) {
            const Change& c = plan.changes[idx];
            // slurmdbd sizes a new QOS's preempt bitmap (the one slurmctld receives) by the
            // QOS committed so far: one preempting a QOS of this batch waits for its commit.
            const bool preempts_batch =
                c.kind == ChangeKind::Qos &&
                std::any_of(c.qos.preempt.begin(), c.qos.preempt.end(),
                            [&](const std::string& p) { return batch_.names.count(p) > 0; });
            if (!joins_batch(c) || idx == qos_head) flush();
            if (((idx == qos_head && qos_head > 0) || preempts_batch) && rep_.failed.empty())
                if (auto s = commit_qos(); !s) return s.error();
            apply_one(c);
        }
        flush();
        return commit();
    }

private:
    Slurmdb& m_;
    AccountingState current_;  // for "=-1" clearing on modify
    ApplyReport rep_;
    Batch batch_;

    // slurmdbd validates an association's QOS against its in-memory QOS list,
    // which learns of new QOS only at commit: so QOS changes (first in plan
    // order) are committed on their own, everything else in one transaction.
    static size_t qos_head_of(const Plan& plan)
    {
        size_t n = 0;
        while (n < plan.changes.size() && plan.changes[n].kind == ChangeKind::Qos &&
               plan.changes[n].op != ChangeOp::Remove)
            ++n;
        return n;
    }

    // An add of the batch's kind that does not preempt a QOS of the batch.
    bool joins_batch(const Change& c) const
    {
        if (c.op != ChangeOp::Add || c.kind != batch_.kind) return false;
        return std::none_of(c.qos.preempt.begin(), c.qos.preempt.end(),
                            [&](const std::string& p) { return batch_.names.count(p) > 0; });
    }

    Status commit_qos()
    {
        if (slurmdb_connection_commit(m_.conn, true) != SLURM_SUCCESS) {
            m_.close();
            return make_error(Errc::Unavailable, "commit of QOS changes failed: " + last_error());
        }
        qos_ids_stale_ = true;
        return ok_status();
    }

    // New QOS's ids are read once, when a later change needs them, not after
    // each QOS batch and commit (a round trip each).
    bool qos_ids_stale_ = false;
    std::string refresh_qos_ids(const Change& c)
    {
        const bool needs =
            c.op != ChangeOp::Remove && (c.kind == ChangeKind::Qos || c.kind == ChangeKind::Assoc);
        if (!qos_ids_stale_ || !needs) return {};
        auto ids = m_.load_qos_ids();
        if (!ids) return ids.error().message;
        qos_ids_stale_ = false;
        return {};
    }

    std::string send_or_queue(const Change& c, Strings& keep)
    {
        switch (c.kind) {
            case ChangeKind::Qos: return qos(c, keep);
            case ChangeKind::Account: return account(c, keep);
            case ChangeKind::User: return user(c, keep);
            case ChangeKind::Assoc: return assoc(c, keep);
        }
        return {};
    }

    void apply_one(const Change& c)
    {
        Strings local;
        Strings& keep = c.op == ChangeOp::Add ? *batch_.keep : local;
        std::string err = refresh_qos_ids(c);
        if (err.empty()) err = send_or_queue(c, keep);
        if (queued_) {
            queued_ = false;
            return;
        }
        if (!err.empty())
            rep_.failed.push_back(c.text() + ": " + err);
        else
            ++rep_.applied;
    }

    bool queued_ = false;
    void queue(const Change& c)
    {
        batch_.kind = c.kind;
        batch_.changes.push_back(&c);
        queued_ = true;
    }

    template <typename Records>
    list_t* list_of(Records& records)
    {
        list_t* l = batch_.keep->empty_list();
        for (auto& r : records) slurm_list_append(l, &r);
        return l;
    }

    int send_batch()
    {
        switch (batch_.kind) {
            case ChangeKind::Qos: return slurmdb_qos_add(m_.conn, list_of(batch_.qos));
            case ChangeKind::Account: {
                const int rc = slurmdb_accounts_add(m_.conn, list_of(batch_.accounts));
                return rc == SLURM_SUCCESS
                           ? slurmdb_associations_add(m_.conn, list_of(batch_.assocs))
                           : rc;
            }
            case ChangeKind::User: return slurmdb_users_add(m_.conn, list_of(batch_.users));
            case ChangeKind::Assoc:
                // slurmdbd places each new association in its lft/rgt tree;
                // consecutive ones under the same parent are cheap (sacctmgr
                // load sends them grouped too), interleaved ones are not.
                std::stable_sort(batch_.assocs.begin(), batch_.assocs.end(),
                                 [](const slurmdb_assoc_rec_t& a, const slurmdb_assoc_rec_t& b) {
                                     return strcmp(a.acct, b.acct) < 0;
                                 });
                return slurmdb_associations_add(m_.conn, list_of(batch_.assocs));
        }
        return SLURM_SUCCESS;
    }

    void flush()
    {
        if (batch_.changes.empty()) return;
        const auto t0 = std::chrono::steady_clock::now();
        const int rc = send_batch();
        std::string err = rc == SLURM_SUCCESS ? "" : last_error(rc);
        if (rc == SLURM_SUCCESS && batch_.kind == ChangeKind::Qos) qos_ids_stale_ = true;
        static const char* kinds[] = {"QOS", "accounts", "users", "associations"};
        syncd::log(syncd::Level::Debug, "slurmdbd: added " + std::to_string(batch_.changes.size()) +
                                            " " + kinds[int(batch_.kind)] + " in " +
                                            std::to_string(ms_since(t0)) + " ms");
        if (!err.empty()) {
            const std::string of = batch_.changes.size() > 1
                                       ? " (batch of " + std::to_string(batch_.changes.size()) + ")"
                                       : "";
            for (const Change* c : batch_.changes)
                rep_.failed.push_back(c->text() + ": " + err + of);
        } else {
            rep_.applied += batch_.changes.size();
        }
        batch_ = Batch{};
    }

    // One commit for the whole plan; on failure slurmdbd rolls back with it.
    Result<ApplyReport> commit()
    {
        if (!rep_.failed.empty()) {
            slurmdb_connection_commit(m_.conn, false);
            rep_.applied = 0;
            return rep_;
        }
        const auto t0 = std::chrono::steady_clock::now();
        if (slurmdb_connection_commit(m_.conn, true) != SLURM_SUCCESS) {
            m_.close();
            return make_error(Errc::Unavailable, "commit failed: " + last_error());
        }
        syncd::log(syncd::Level::Debug,
                   "slurmdbd: commit in " + std::to_string(ms_since(t0)) + " ms");
        return rep_;
    }

    std::string qos(const Change& c, Strings& keep)
    {
        slurmdb_qos_cond_t cond;
        memset(&cond, 0, sizeof cond);
        cond.preempt_mode = NO_VAL16;
        cond.name_list = keep.list({c.key});
        if (c.op == ChangeOp::Remove) {
            ListPtr r(slurmdb_qos_remove(m_.conn, &cond));
            return r ? "" : last_error();
        }
        slurmdb_qos_rec_t q;
        slurmdb_init_qos_rec(&q, false, NO_VAL);
        if (auto err = fill_qos(c.qos, keep, q); !err.empty()) return err;
        if (c.op == ChangeOp::Add) {
            batch_.qos.push_back(q);
            batch_.names.insert(c.qos.name);
            queue(c);
            return {};
        }
        ListPtr r(slurmdb_qos_modify(m_.conn, &cond, &q));
        return modify_failed(r) ? last_error() : "";
    }

    std::string fill_qos(const QosSpec& s, Strings& keep, slurmdb_qos_rec_t& q) const
    {
        auto cur = current_.qos.find(s.name);
        const QosSpec* old = cur == current_.qos.end() ? nullptr : &cur->second;
        q.name = keep.keep(s.name);
        q.description = keep.keep(s.description);
        auto grp = m_.tres_text(s.grp_tres, old ? old->grp_tres : Tres{});
        if (!grp) return grp.error().message;
        auto pa = m_.tres_text(s.max_tres_pa, old ? old->max_tres_pa : Tres{});
        if (!pa) return pa.error().message;
        auto pre = m_.qos_ids(s.preempt);
        if (!pre) return pre.error().message;
        if (!grp.value().empty()) q.grp_tres = keep.keep(grp.value());
        if (!pa.value().empty()) q.max_tres_pa = keep.keep(pa.value());
        q.max_wall_pj = s.max_wall_minutes ? s.max_wall_minutes : INFINITE;
        q.priority = s.priority;
        q.grace_time = s.grace_seconds;
        q.preempt_mode = s.requeue ? PREEMPT_MODE_REQUEUE : 0;
        // Plain ids replace the list; a single "" clears it.
        q.preempt_list = pre.value().empty() ? keep.list({""}) : keep.list(pre.value());
        return {};
    }

    std::string account(const Change& c, Strings& keep)
    {
        slurmdb_assoc_cond_t acond;
        memset(&acond, 0, sizeof acond);
        acond.acct_list = keep.list({c.key});
        slurmdb_account_cond_t cond;
        memset(&cond, 0, sizeof cond);
        cond.assoc_cond = &acond;
        if (c.op == ChangeOp::Remove) {
            ListPtr r(slurmdb_accounts_remove(m_.conn, &cond));
            return r ? "" : last_error();
        }
        slurmdb_account_rec_t a;
        memset(&a, 0, sizeof a);
        a.name = keep.keep(c.key);
        a.description = keep.keep(c.account.description);
        a.organization = keep.keep(c.account.organization);
        auto cur = current_.accounts.find(c.key);
        auto grp = m_.tres_text(c.account.grp_tres,
                                cur == current_.accounts.end() ? Tres{} : cur->second.grp_tres);
        if (!grp) return grp.error().message;
        slurmdb_assoc_rec_t assoc;
        slurmdb_init_assoc_rec(&assoc, false);
        assoc.acct = keep.keep(c.key);
        assoc.cluster = keep.keep(m_.cluster);
        if (!grp.value().empty()) assoc.grp_tres = keep.keep(grp.value());
        if (c.op == ChangeOp::Add) {
            assoc.parent_acct = keep.keep("root");
            batch_.accounts.push_back(a);
            batch_.assocs.push_back(assoc);
            queue(c);
            return {};
        }
        ListPtr r(slurmdb_accounts_modify(m_.conn, &cond, &a));
        if (modify_failed(r)) return last_error();
        // user_list = {""}: the account's own association, not its users'.
        slurmdb_assoc_cond_t mcond;
        memset(&mcond, 0, sizeof mcond);
        mcond.acct_list = keep.list({c.key});
        mcond.cluster_list = keep.list({m_.cluster});
        mcond.user_list = keep.list({""});
        ListPtr r2(slurmdb_associations_modify(m_.conn, &mcond, &assoc));
        return modify_failed(r2) ? last_error() : "";
    }

    std::string user(const Change& c, Strings& keep)
    {
        slurmdb_assoc_cond_t acond;
        memset(&acond, 0, sizeof acond);
        acond.user_list = keep.list({c.key});
        acond.cluster_list = keep.list({m_.cluster});
        slurmdb_user_cond_t cond;
        memset(&cond, 0, sizeof cond);
        cond.assoc_cond = &acond;
        slurmdb_user_rec_t u;
        memset(&u, 0, sizeof u);
        u.name = keep.keep(c.key);
        u.uid = NO_VAL;
        u.default_acct = keep.keep(c.user.default_account);
        if (c.op == ChangeOp::Remove) {
            ListPtr r(slurmdb_users_remove(m_.conn, &cond));
            return r ? "" : last_error();
        }
        if (c.op == ChangeOp::Add) {
            u.admin_level = SLURMDB_ADMIN_NONE;
            batch_.users.push_back(u);
            queue(c);
            return {};
        }
        u.admin_level = SLURMDB_ADMIN_NOTSET;
        ListPtr r(slurmdb_users_modify(m_.conn, &cond, &u));
        return modify_failed(r) ? last_error() : "";
    }

    std::string assoc(const Change& c, Strings& keep)
    {
        slurmdb_assoc_cond_t cond;
        memset(&cond, 0, sizeof cond);
        cond.acct_list = keep.list({c.assoc.account});
        cond.user_list = keep.list({c.assoc.user});
        cond.cluster_list = keep.list({m_.cluster});
        if (c.op == ChangeOp::Remove) return remove_assoc(c, cond);
        auto ids = m_.qos_ids(c.assoc.qos);
        if (!ids) return ids.error().message;
        slurmdb_assoc_rec_t a;
        slurmdb_init_assoc_rec(&a, false);
        a.qos_list = keep.list(ids.value());
        if (!c.assoc.default_qos.empty()) a.def_qos_id = m_.qos_id.at(c.assoc.default_qos);
        if (c.op == ChangeOp::Add) {
            a.acct = keep.keep(c.assoc.account);
            a.user = keep.keep(c.assoc.user);
            a.cluster = keep.keep(m_.cluster);
            a.is_def = c.user.default_account == c.assoc.account ? 1 : NO_VAL16;
            batch_.assocs.push_back(a);
            queue(c);
            return {};
        }
        ListPtr r(slurmdb_associations_modify(m_.conn, &cond, &a));
        return modify_failed(r) ? last_error() : "";
    }

    // An association with running jobs stays until they end: deferred, not failed.
    std::string remove_assoc(const Change& c, slurmdb_assoc_cond_t& cond)
    {
        ListPtr r(slurmdb_associations_remove(m_.conn, &cond));
        if (r) return {};
        if (slurm_compat::last_errno() != ESLURM_JOBS_RUNNING_ON_ASSOC) return last_error();
        rep_.deferred.push_back(c.text() +
                                ": jobs are running under it; removal retried next cycle");
        return {};
    }
};

}  // namespace

Result<ApplyReport> SlurmdbStore::apply(const Plan& plan)
{
    Impl& m = *impl_;
    AccountingState current;
    if (m.conn && m.last_read) {
        current = std::move(*m.last_read);  // the plan was made from it
    } else {
        if (auto c = m.connect(); !c) return c.error();
        if (auto q = m.load_qos_ids(); !q) return q.error();
        if (auto cur = read(); cur) current = std::move(cur).value();
    }
    m.last_read.reset();
    syncd::log(syncd::Level::Info,
               "applying " + std::to_string(plan.changes.size()) + " changes to slurmdbd");
    return Applier(m, std::move(current)).run(plan);
}

}  // namespace allot
