// slurmdb_store.cpp - AccountingStore over libslurm's slurmdb API (see
// slurmdb_store.hpp). Every C handle has an owner: ListPtr destroys lists
// libslurm returns, Connection closes the slurmdbd connection. Input records
// and lists are built in C++-owned storage (lists without a destructor), so
// nothing we allocate is freed by Slurm's allocator or the other way round.
#include "slurmdb_store.hpp"

#include "syncd_support.hpp"

#include "compat/slurm_list.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <map>
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

std::string str(const char* s)
{
    return s ? s : "";
}

std::string last_error(int rc = 0)
{
    const int e = (rc && rc != SLURM_ERROR) ? rc : slurm_compat::last_errno();
    return std::string(slurm_strerror(e)) + " (" + std::to_string(e) + ")";
}

}  // namespace

struct SlurmdbStore::Impl {
    std::string cluster;
    void* conn = nullptr;
    std::map<std::string, uint32_t> tres_id;  // "gres/gpu" → id
    std::map<uint32_t, std::string> tres_name;
    std::map<std::string, uint32_t> qos_id;
    std::map<uint32_t, std::string> qos_name;

    ~Impl() { close(); }
    void close()
    {
        if (conn) slurmdb_connection_close(&conn);
        conn = nullptr;
    }
    Result<bool> connect()
    {
        if (conn) return true;
        uint16_t flags = 0;
        conn = slurmdb_connection_get(&flags);
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
    Result<bool> load_qos_ids()
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

Result<AccountingState> SlurmdbStore::read()
{
    Impl& m = *impl_;
    if (auto c = m.connect(); !c) return c.error();
    if (auto q = m.load_qos_ids(); !q) {
        m.close();  // a dead connection is reopened next time
        return q.error();
    }
    AccountingState st;
    Strings keep;

    slurmdb_qos_cond_t qcond;
    memset(&qcond, 0, sizeof qcond);
    qcond.preempt_mode = NO_VAL16;
    ListPtr qos(slurmdb_qos_get(m.conn, &qcond));
    if (!qos) return make_error("reading QOS: " + last_error());
    for_each<void>(qos.get(), [&](void* x) {
        auto* q = static_cast<slurmdb_qos_rec_t*>(x);
        QosSpec s;
        s.name = str(q->name);
        s.description = str(q->description);
        s.grp_tres = m.parse_tres(q->grp_tres);
        s.max_tres_pa = m.parse_tres(q->max_tres_pa);
        s.max_wall_minutes =
            (q->max_wall_pj == INFINITE || q->max_wall_pj == NO_VAL) ? 0 : q->max_wall_pj;
        s.priority = (q->priority == INFINITE || q->priority == NO_VAL) ? 0 : q->priority;
        s.grace_seconds =
            (q->grace_time == NO_VAL || q->grace_time == INFINITE) ? 0 : q->grace_time;
        s.requeue = q->preempt_mode != NO_VAL16 && (q->preempt_mode & PREEMPT_MODE_REQUEUE);
        if (q->preempt_bitstr) {
            const int64_t n = slurm_bit_size(q->preempt_bitstr);
            for (int64_t i = 0; i < n; ++i)
                if (slurm_bit_test(q->preempt_bitstr, i)) {
                    auto it = m.qos_name.find(uint32_t(i));
                    if (it != m.qos_name.end()) s.preempt.insert(it->second);
                }
        }
        st.qos[s.name] = s;
    });

    slurmdb_assoc_cond_t acond;
    memset(&acond, 0, sizeof acond);
    slurmdb_account_cond_t account_cond;
    memset(&account_cond, 0, sizeof account_cond);
    account_cond.assoc_cond = &acond;
    ListPtr accounts(slurmdb_accounts_get(m.conn, &account_cond));
    if (!accounts) return make_error("reading accounts: " + last_error());
    for_each<void>(accounts.get(), [&](void* x) {
        auto* a = static_cast<slurmdb_account_rec_t*>(x);
        AccountSpec s;
        s.name = str(a->name);
        s.description = str(a->description);
        s.organization = str(a->organization);
        st.accounts[s.name] = s;
    });

    slurmdb_assoc_cond_t assoc_cond;
    memset(&assoc_cond, 0, sizeof assoc_cond);
    assoc_cond.cluster_list = keep.list({m.cluster});
    ListPtr assocs(slurmdb_associations_get(m.conn, &assoc_cond));
    if (!assocs) return make_error("reading associations: " + last_error());
    for_each<void>(assocs.get(), [&](void* x) {
        auto* a = static_cast<slurmdb_assoc_rec_t*>(x);
        if (a->partition && *a->partition) return;  // per-partition assocs are never allot's
        const std::string acct = str(a->acct);
        if (!a->user || !*a->user) {
            auto it = st.accounts.find(acct);
            if (it != st.accounts.end()) it->second.grp_tres = m.parse_tres(a->grp_tres);
            return;
        }
        AssocSpec s;
        s.user = a->user;
        s.account = acct;
        for_each<void>(a->qos_list, [&](void* q) {
            const char* id = static_cast<const char*>(q);
            auto it = m.qos_name.find(uint32_t(strtoul(id, nullptr, 10)));
            if (it != m.qos_name.end()) s.qos.insert(it->second);
        });
        if (a->def_qos_id && a->def_qos_id != NO_VAL && a->def_qos_id != INFINITE) {
            auto it = m.qos_name.find(a->def_qos_id);
            if (it != m.qos_name.end()) s.default_qos = it->second;
        }
        st.assocs[{s.user, s.account}] = s;
        if (a->is_def == 1) st.users[s.user].default_account = acct;
        st.users[s.user].name = s.user;
    });
    return st;
}

Result<ApplyReport> SlurmdbStore::apply(const Plan& plan)
{
    Impl& m = *impl_;
    if (auto c = m.connect(); !c) return c.error();
    if (auto q = m.load_qos_ids(); !q) return q.error();
    syncd::log(syncd::Level::Info,
               "applying " + std::to_string(plan.changes.size()) + " changes to slurmdbd");
    ApplyReport rep;
    AccountingState current;  // for "=-1" clearing on modify
    if (auto cur = read(); cur) current = cur.value();

    // slurmdbd validates an association's QOS against its in-memory QOS list,
    // which learns of new QOS only at commit: so QOS changes (first in plan
    // order) are committed on their own, everything else in one transaction.
    size_t qos_head = 0;
    while (qos_head < plan.changes.size() && plan.changes[qos_head].kind == ChangeKind::Qos &&
           plan.changes[qos_head].op != ChangeOp::Remove)
        ++qos_head;
    // Adds of one kind go to slurmdbd as one list (like `sacctmgr load`): one
    // round trip and one hierarchy update for thousands of users, instead of
    // one per object. Modifications and removals are few and go one by one.
    struct Pending {
        ChangeKind kind = ChangeKind::Qos;
        std::vector<const Change*> changes;
        std::deque<slurmdb_qos_rec_t> qos;
        std::deque<slurmdb_account_rec_t> accounts;
        std::deque<slurmdb_assoc_rec_t> assocs;
        std::deque<slurmdb_user_rec_t> users;
        std::set<std::string> names;
        std::unique_ptr<Strings> keep = std::make_unique<Strings>();
    } pend;
    auto flush = [&]() {
        if (pend.changes.empty()) return;
        Strings& k = *pend.keep;
        auto list_of = [&](auto& records) {
            list_t* l = k.empty_list();
            for (auto& r : records) slurm_list_append(l, &r);
            return l;
        };
        int rc = SLURM_SUCCESS;
        std::string err;
        const auto t0 = std::chrono::steady_clock::now();
        switch (pend.kind) {
            case ChangeKind::Qos:
                rc = slurmdb_qos_add(m.conn, list_of(pend.qos));
                if (rc == SLURM_SUCCESS)
                    if (auto ids = m.load_qos_ids(); !ids) err = ids.error().message;
                break;
            case ChangeKind::Account:
                rc = slurmdb_accounts_add(m.conn, list_of(pend.accounts));
                if (rc == SLURM_SUCCESS)
                    rc = slurmdb_associations_add(m.conn, list_of(pend.assocs));
                break;
            case ChangeKind::User: rc = slurmdb_users_add(m.conn, list_of(pend.users)); break;
            case ChangeKind::Assoc:
                // slurmdbd places each new association in its lft/rgt tree;
                // consecutive ones under the same parent are cheap (sacctmgr
                // load sends them grouped too), interleaved ones are not.
                std::stable_sort(pend.assocs.begin(), pend.assocs.end(),
                                 [](const slurmdb_assoc_rec_t& a, const slurmdb_assoc_rec_t& b) {
                                     return strcmp(a.acct, b.acct) < 0;
                                 });
                rc = slurmdb_associations_add(m.conn, list_of(pend.assocs));
                break;
        }
        if (rc != SLURM_SUCCESS) err = last_error(rc);
        static const char* kinds[] = {"QOS", "accounts", "users", "associations"};
        syncd::log(syncd::Level::Debug,
                   "slurmdbd: added " + std::to_string(pend.changes.size()) + " " +
                       kinds[int(pend.kind)] + " in " +
                       std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
                                          std::chrono::steady_clock::now() - t0)
                                          .count()) +
                       " ms");
        if (!err.empty()) {
            const std::string batch =
                pend.changes.size() > 1 ? " (batch of " + std::to_string(pend.changes.size()) + ")"
                                        : "";
            for (const Change* c : pend.changes)
                rep.failed.push_back(c->text() + ": " + err + batch);
        } else {
            rep.applied += pend.changes.size();
        }
        pend = Pending{};
    };
    for (size_t idx = 0; idx < plan.changes.size(); ++idx) {
        const Change& c = plan.changes[idx];
        const bool batch = c.op == ChangeOp::Add;
        bool needs_pending_qos = false;
        for (const auto& p : c.qos.preempt) needs_pending_qos |= pend.names.count(p) > 0;
        if (!batch || c.kind != pend.kind || needs_pending_qos || idx == qos_head) flush();
        if (idx == qos_head && qos_head > 0 && rep.failed.empty()) {
            if (slurmdb_connection_commit(m.conn, true) != SLURM_SUCCESS) {
                m.close();
                return make_error("commit of QOS changes failed: " + last_error());
            }
            if (auto ids = m.load_qos_ids(); !ids) return ids.error();
        }
        Strings local;
        Strings& keep = batch ? *pend.keep : local;
        std::string err;
        bool queued = false;
        auto queue = [&] {
            pend.kind = c.kind;
            pend.changes.push_back(&c);
            queued = true;
        };
        switch (c.kind) {
            case ChangeKind::Qos: {
                slurmdb_qos_cond_t cond;
                memset(&cond, 0, sizeof cond);
                cond.preempt_mode = NO_VAL16;
                cond.name_list = keep.list({c.key});
                if (c.op == ChangeOp::Remove) {
                    ListPtr r(slurmdb_qos_remove(m.conn, &cond));
                    if (!r) err = last_error();
                    break;
                }
                slurmdb_qos_rec_t q;
                slurmdb_init_qos_rec(&q, false, NO_VAL);
                const QosSpec& s = c.qos;
                const QosSpec* cur = current.qos.count(s.name) ? &current.qos.at(s.name) : nullptr;
                q.name = keep.keep(s.name);
                q.description = keep.keep(s.description);
                auto grp = m.tres_text(s.grp_tres, cur ? cur->grp_tres : Tres{});
                auto pa = m.tres_text(s.max_tres_pa, cur ? cur->max_tres_pa : Tres{});
                auto pre = m.qos_ids(s.preempt);
                if (!grp || !pa || !pre) {
                    err = !grp  ? grp.error().message
                          : !pa ? pa.error().message
                                : pre.error().message;
                    break;
                }
                if (!grp.value().empty()) q.grp_tres = keep.keep(grp.value());
                if (!pa.value().empty()) q.max_tres_pa = keep.keep(pa.value());
                q.max_wall_pj = s.max_wall_minutes ? s.max_wall_minutes : INFINITE;
                q.priority = s.priority;
                q.grace_time = s.grace_seconds;
                q.preempt_mode = s.requeue ? PREEMPT_MODE_REQUEUE : 0;
                // Plain ids replace the list; a single "" clears it.
                q.preempt_list = pre.value().empty() ? keep.list({""}) : keep.list(pre.value());
                if (c.op == ChangeOp::Add) {
                    pend.qos.push_back(q);
                    pend.names.insert(s.name);
                    queue();
                } else {
                    ListPtr r(slurmdb_qos_modify(m.conn, &cond, &q));
                    if (!r && slurm_compat::last_errno() != SLURM_NO_CHANGE_IN_DATA)
                        err = last_error();
                }
                break;
            }
            case ChangeKind::Account: {
                slurmdb_assoc_cond_t acond;
                memset(&acond, 0, sizeof acond);
                acond.acct_list = keep.list({c.key});
                slurmdb_account_cond_t cond;
                memset(&cond, 0, sizeof cond);
                cond.assoc_cond = &acond;
                if (c.op == ChangeOp::Remove) {
                    ListPtr r(slurmdb_accounts_remove(m.conn, &cond));
                    if (!r) err = last_error();
                    break;
                }
                slurmdb_account_rec_t a;
                memset(&a, 0, sizeof a);
                a.name = keep.keep(c.key);
                a.description = keep.keep(c.account.description);
                a.organization = keep.keep(c.account.organization);
                const AccountSpec* cur =
                    current.accounts.count(c.key) ? &current.accounts.at(c.key) : nullptr;
                auto grp = m.tres_text(c.account.grp_tres, cur ? cur->grp_tres : Tres{});
                if (!grp) {
                    err = grp.error().message;
                    break;
                }
                slurmdb_assoc_rec_t assoc;
                slurmdb_init_assoc_rec(&assoc, false);
                assoc.acct = keep.keep(c.key);
                assoc.cluster = keep.keep(m.cluster);
                if (!grp.value().empty()) assoc.grp_tres = keep.keep(grp.value());
                if (c.op == ChangeOp::Add) {
                    assoc.parent_acct = keep.keep("root");
                    pend.accounts.push_back(a);
                    pend.assocs.push_back(assoc);
                    queue();
                } else {
                    ListPtr r(slurmdb_accounts_modify(m.conn, &cond, &a));
                    if (!r && slurm_compat::last_errno() != SLURM_NO_CHANGE_IN_DATA) {
                        err = last_error();
                        break;
                    }
                    // user_list = {""}: the account's own association, not its users'.
                    slurmdb_assoc_cond_t mcond;
                    memset(&mcond, 0, sizeof mcond);
                    mcond.acct_list = keep.list({c.key});
                    mcond.cluster_list = keep.list({m.cluster});
                    mcond.user_list = keep.list({""});
                    ListPtr r2(slurmdb_associations_modify(m.conn, &mcond, &assoc));
                    if (!r2 && slurm_compat::last_errno() != SLURM_NO_CHANGE_IN_DATA)
                        err = last_error();
                }
                break;
            }
            case ChangeKind::User: {
                slurmdb_assoc_cond_t acond;
                memset(&acond, 0, sizeof acond);
                acond.user_list = keep.list({c.key});
                acond.cluster_list = keep.list({m.cluster});
                slurmdb_user_cond_t cond;
                memset(&cond, 0, sizeof cond);
                cond.assoc_cond = &acond;
                slurmdb_user_rec_t u;
                memset(&u, 0, sizeof u);
                u.name = keep.keep(c.key);
                u.uid = NO_VAL;
                u.default_acct = keep.keep(c.user.default_account);
                if (c.op == ChangeOp::Remove) {
                    ListPtr r(slurmdb_users_remove(m.conn, &cond));
                    if (!r) err = last_error();
                } else if (c.op == ChangeOp::Add) {
                    u.admin_level = SLURMDB_ADMIN_NONE;
                    pend.users.push_back(u);
                    queue();
                } else {
                    u.admin_level = SLURMDB_ADMIN_NOTSET;
                    ListPtr r(slurmdb_users_modify(m.conn, &cond, &u));
                    if (!r && slurm_compat::last_errno() != SLURM_NO_CHANGE_IN_DATA)
                        err = last_error();
                }
                break;
            }
            case ChangeKind::Assoc: {
                slurmdb_assoc_cond_t cond;
                memset(&cond, 0, sizeof cond);
                cond.acct_list = keep.list({c.assoc.account});
                cond.user_list = keep.list({c.assoc.user});
                cond.cluster_list = keep.list({m.cluster});
                if (c.op == ChangeOp::Remove) {
                    ListPtr r(slurmdb_associations_remove(m.conn, &cond));
                    if (!r) {
                        if (slurm_compat::last_errno() == ESLURM_JOBS_RUNNING_ON_ASSOC)
                            rep.deferred.push_back(c.text() +
                                                   ": jobs are running under it; removal "
                                                   "retried next cycle");
                        else
                            err = last_error();
                    }
                    break;
                }
                auto ids = m.qos_ids(c.assoc.qos);
                if (!ids) {
                    err = ids.error().message;
                    break;
                }
                slurmdb_assoc_rec_t a;
                slurmdb_init_assoc_rec(&a, false);
                a.qos_list = keep.list(ids.value());
                if (!c.assoc.default_qos.empty()) a.def_qos_id = m.qos_id.at(c.assoc.default_qos);
                if (c.op == ChangeOp::Add) {
                    a.acct = keep.keep(c.assoc.account);
                    a.user = keep.keep(c.assoc.user);
                    a.cluster = keep.keep(m.cluster);
                    a.is_def = c.user.default_account == c.assoc.account ? 1 : NO_VAL16;
                    pend.assocs.push_back(a);
                    queue();
                } else {
                    ListPtr r(slurmdb_associations_modify(m.conn, &cond, &a));
                    if (!r && slurm_compat::last_errno() != SLURM_NO_CHANGE_IN_DATA)
                        err = last_error();
                }
                break;
            }
        }
        if (queued) continue;
        if (!err.empty())
            rep.failed.push_back(c.text() + ": " + err);
        else
            ++rep.applied;
    }
    flush();
    // One commit for the whole plan; on failure slurmdbd rolls back with it.
    if (!rep.failed.empty()) {
        slurmdb_connection_commit(m.conn, false);
        rep.applied = 0;
        return rep;
    }
    const auto t0 = std::chrono::steady_clock::now();
    if (slurmdb_connection_commit(m.conn, true) != SLURM_SUCCESS) {
        m.close();
        return make_error("commit failed: " + last_error());
    }
    syncd::log(syncd::Level::Debug,
               "slurmdbd: commit in " +
                   std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
                                      std::chrono::steady_clock::now() - t0)
                                      .count()) +
                   " ms");
    return rep;
}

}  // namespace allot
