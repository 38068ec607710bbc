// sync_plan.cpp - desired accounting state and the add/modify/remove planner
// (see allot/sync_plan.hpp).
#include "sync_plan.hpp"

#include <algorithm>
#include <unordered_map>

namespace allot {
namespace {

std::string join(const std::set<std::string>& items)
{
    std::string out;
    for (const auto& i : items) out += (out.empty() ? "" : ",") + i;
    return out;
}

std::string assoc_key(const std::string& user, const std::string& account)
{
    return user + "@" + account;
}

std::string minutes_text(uint32_t m)
{
    if (m == 0) return "none";
    char buf[32];
    snprintf(buf, sizeof buf, "%u-%02u:%02u:00", m / 1440, (m / 60) % 24, m % 60);
    return buf;
}

}  // namespace

std::string tres_string(const Tres& tres)
{
    std::string out;
    for (const auto& [k, v] : tres) out += (out.empty() ? "" : ",") + k + "=" + std::to_string(v);
    return out;
}

bool QosSpec::same_settings(const QosSpec& o) const
{
    return description == o.description && grp_tres == o.grp_tres && max_tres_pa == o.max_tres_pa &&
           max_wall_minutes == o.max_wall_minutes && priority == o.priority &&
           grace_seconds == o.grace_seconds && preempt == o.preempt && requeue == o.requeue;
}

std::string QosSpec::describe() const
{
    std::string s = "Description='" + description + "'";
    s += " GrpTRES=" + (grp_tres.empty() ? std::string("none") : tres_string(grp_tres));
    if (!max_tres_pa.empty()) s += " MaxTRESPerAccount=" + tres_string(max_tres_pa);
    s += " MaxWall=" + minutes_text(max_wall_minutes);
    s += " Priority=" + std::to_string(priority);
    s += " Preempt=" + (preempt.empty() ? std::string("none") : join(preempt));
    s += std::string(" PreemptMode=") + (requeue ? "requeue" : "cluster");
    s += " GraceTime=" + std::to_string(grace_seconds);
    return s;
}

bool AccountSpec::same_settings(const AccountSpec& o) const
{
    return description == o.description && organization == o.organization && grp_tres == o.grp_tres;
}

std::string AccountSpec::describe() const
{
    return "Description='" + description + "' Organization='" + organization +
           "' GrpTRES=" + (grp_tres.empty() ? std::string("none") : tres_string(grp_tres));
}

bool AssocSpec::same_settings(const AssocSpec& o) const
{
    return qos == o.qos && default_qos == o.default_qos;
}

std::string AssocSpec::describe() const
{
    return "QOS=" + join(qos) + " DefaultQOS=" + (default_qos.empty() ? "none" : default_qos);
}

bool is_managed(const QosSpec& q)
{
    return q.description.rfind(kManagedMarker, 0) == 0;
}

bool is_managed(const AccountSpec& a)
{
    return a.organization == kManagedMarker;
}

AccountingState desired_state(const Config& config, const ValidatedDirectory& dir,
                              std::vector<std::string>& notes)
{
    AccountingState st;
    const auto& tiers = config.tiers;
    const std::string marker = kManagedMarker;

    QosSpec spot;
    spot.name = tiers.spot.qos;
    spot.description = marker + ": spot tier";
    spot.max_wall_minutes = tiers.spot.max_minutes;
    spot.priority = tiers.spot.priority;
    spot.requeue = true;
    spot.grace_seconds = tiers.spot.grace_seconds;
    st.qos[spot.name] = spot;

    QosSpec general;
    general.name = tiers.general.qos;
    general.description = marker + ": general tier";
    general.grp_tres["gres/gpu"] = tiers.general.pool_gpus;
    general.max_tres_pa["gres/gpu"] = tiers.general.per_team_gpus;
    general.max_wall_minutes = tiers.general.max_minutes;
    general.priority = tiers.general.priority;
    general.preempt = {spot.name};
    st.qos[general.name] = general;

    AccountSpec def;
    def.name = config.cluster.default_account;
    def.description = "users in no team (0 GPUs)";
    def.organization = marker;
    def.grp_tres["gres/gpu"] = 0;
    st.accounts[def.name] = def;

    std::unordered_map<std::string, const PosixGroup*> groups;
    for (const auto& g : dir.groups) groups[g.name] = &g;

    // user → accounts in config order (the first is the DefaultAccount).
    std::map<std::string, std::vector<const TeamConfig*>> teams_of;
    for (const TeamConfig& t : config.teams) {
        const std::string qos_name = t.qos.empty() ? t.account : t.qos;
        QosSpec q;
        q.name = qos_name;
        q.description = marker + ": project QOS of " + t.account;
        q.grp_tres["gres/gpu"] = t.gpus;
        if (config.cluster.cpus_per_gpu)
            q.grp_tres["cpu"] = uint64_t(t.gpus) * config.cluster.cpus_per_gpu;
        if (config.cluster.mem_per_gpu_mb)
            q.grp_tres["mem"] = uint64_t(t.gpus) * config.cluster.mem_per_gpu_mb;
        q.max_wall_minutes = tiers.project.max_minutes;
        q.priority = tiers.project.priority;
        q.preempt = {spot.name};
        st.qos[q.name] = q;

        AccountSpec a;
        a.name = t.account;
        a.description = t.description.empty() ? "team " + t.group : t.description;
        a.organization = marker;
        st.accounts[a.name] = a;

        auto g = groups.find(t.group);
        if (g == groups.end()) {
            notes.push_back("team " + t.account + ": SCIM group '" + t.group +
                            "' not found or rejected; the account has no members");
            continue;
        }
        for (const auto& m : g->second->members) teams_of[m].push_back(&t);
    }

    for (const PosixUser& u : dir.users) {
        UserSpec us;
        us.name = u.name;
        auto it = teams_of.find(u.name);
        if (it == teams_of.end()) {
            us.default_account = def.name;
            AssocSpec as;
            as.user = u.name;
            as.account = def.name;
            // Opt-in tiers only; the account's GrpTRES=gres/gpu=0 keeps GPUs away.
            as.qos = {general.name, spot.name};
            as.default_qos = general.name;
            st.assocs[{u.name, def.name}] = as;
        } else {
            us.default_account = it->second.front()->account;
            for (const TeamConfig* t : it->second) {
                AssocSpec as;
                as.user = u.name;
                as.account = t->account;
                const std::string project = t->qos.empty() ? t->account : t->qos;
                as.qos = {project, general.name, spot.name};
                as.default_qos = project;
                st.assocs[{u.name, t->account}] = as;
            }
        }
        st.users[u.name] = us;
    }
    return st;
}

std::string Change::text() const
{
    static const char* ops[] = {"add", "modify", "remove"};
    static const char* kinds[] = {"qos", "account", "user", "assoc"};
    std::string s = std::string(ops[int(op)]) + " " + kinds[int(kind)] + " " + key;
    if (!detail.empty()) s += ": " + detail;
    if (drift) s += " [drift: changed outside allot]";
    return s;
}

size_t Plan::removals() const
{
    return size_t(std::count_if(changes.begin(), changes.end(),
                                [](const Change& c) { return c.op == ChangeOp::Remove; }));
}

size_t Plan::drifted() const
{
    return size_t(
        std::count_if(changes.begin(), changes.end(), [](const Change& c) { return c.drift; }));
}

std::map<std::string, std::string> applied_state(const AccountingState& d)
{
    std::map<std::string, std::string> out;
    for (const auto& [n, q] : d.qos) out["qos " + n] = q.describe();
    for (const auto& [n, a] : d.accounts) out["account " + n] = a.describe();
    for (const auto& [k, a] : d.assocs) out["assoc " + assoc_key(k.first, k.second)] = a.describe();
    for (const auto& [n, u] : d.users) out["user " + n] = u.default_account;
    return out;
}

Plan make_plan(const AccountingState& desired, const AccountingState& current,
               const PlanOptions& opt)
{
    Plan plan;
    std::vector<Change> qos_add, acct_add, user_add, assoc_add, user_mod, assoc_rm, user_rm,
        acct_rm, qos_rm;
    auto drift_of = [&](const std::string& key, const std::string& desired_text) {
        if (!opt.last_applied) return false;
        auto it = opt.last_applied->find(key);
        return it != opt.last_applied->end() && it->second == desired_text;
    };
    std::set<std::string> owned_accounts;  // accounts allot may write into (after this plan)

    // QOS: spot first, so Preempt= of the others can name it.
    std::vector<const QosSpec*> qos_order;
    for (const auto& [n, q] : desired.qos)
        if (q.requeue)
            qos_order.insert(qos_order.begin(), &q);
        else
            qos_order.push_back(&q);
    for (const QosSpec* q : qos_order) {
        auto cur = current.qos.find(q->name);
        Change c;
        c.kind = ChangeKind::Qos;
        c.key = q->name;
        c.qos = *q;
        if (cur == current.qos.end()) {
            c.op = ChangeOp::Add;
            c.detail = q->describe();
            qos_add.push_back(c);
        } else if (!is_managed(cur->second) && !opt.adopt) {
            plan.notes.push_back(
                "qos " + q->name +
                " exists and is not allot-managed; left alone (use --adopt to take it over)");
        } else if (!cur->second.same_settings(*q)) {
            c.op = ChangeOp::Modify;
            c.detail = cur->second.describe() + " -> " + q->describe();
            c.drift = is_managed(cur->second) && drift_of("qos " + q->name, q->describe());
            qos_add.push_back(c);
        }
    }
    for (const auto& [n, a] : desired.accounts) {
        auto cur = current.accounts.find(n);
        Change c;
        c.kind = ChangeKind::Account;
        c.key = n;
        c.account = a;
        if (cur == current.accounts.end()) {
            c.op = ChangeOp::Add;
            c.detail = a.describe();
            acct_add.push_back(c);
            owned_accounts.insert(n);
        } else if (!is_managed(cur->second) && !opt.adopt) {
            plan.notes.push_back("account " + n +
                                 " exists and is not allot-managed; left alone with its members "
                                 "(use --adopt to take it over)");
        } else {
            owned_accounts.insert(n);
            if (!cur->second.same_settings(a)) {
                c.op = ChangeOp::Modify;
                c.detail = cur->second.describe() + " -> " + a.describe();
                c.drift = is_managed(cur->second) && drift_of("account " + n, a.describe());
                acct_add.push_back(c);
            }
        }
    }
    std::set<std::string> managed_now;  // currently owned accounts (removal candidates)
    for (const auto& [n, a] : current.accounts)
        if (is_managed(a)) managed_now.insert(n);

    // Associations wanted, for users that resolve here.
    for (const auto& [k, a] : desired.assocs) {
        if (opt.held_users.count(a.user) || !owned_accounts.count(a.account)) continue;
        auto cur = current.assocs.find(k);
        Change c;
        c.kind = ChangeKind::Assoc;
        c.key = assoc_key(a.user, a.account);
        c.assoc = a;
        if (auto du = desired.users.find(a.user); du != desired.users.end()) c.user = du->second;
        if (cur == current.assocs.end()) {
            c.op = ChangeOp::Add;
            c.detail = a.describe();
            assoc_add.push_back(c);
        } else if (!cur->second.same_settings(a)) {
            c.op = ChangeOp::Modify;
            c.detail = cur->second.describe() + " -> " + a.describe();
            c.drift = drift_of("assoc " + c.key, a.describe());
            assoc_add.push_back(c);
        }
    }
    for (const auto& [n, u] : desired.users) {
        if (opt.held_users.count(n)) {
            plan.notes.push_back("user " + n + " does not resolve on this host yet (NSS); held");
            continue;
        }
        if (!owned_accounts.count(u.default_account)) continue;
        auto cur = current.users.find(n);
        Change c;
        c.kind = ChangeKind::User;
        c.key = n;
        c.user = u;
        if (cur == current.users.end()) {
            c.op = ChangeOp::Add;
            c.detail = "DefaultAccount=" + u.default_account;
            user_add.push_back(c);
        } else if (cur->second.default_account != u.default_account) {
            c.op = ChangeOp::Modify;
            c.detail = "DefaultAccount=" + cur->second.default_account + " -> " + u.default_account;
            user_mod.push_back(c);
        }
    }
    // Associations in owned accounts that are not wanted any more.
    std::map<std::string, size_t> remaining;  // user → assocs left after this plan
    for (const auto& [k, a] : current.assocs) ++remaining[k.first];
    for (const auto& [k, a] : desired.assocs)
        if (!current.assocs.count(k) && !opt.held_users.count(a.user) &&
            owned_accounts.count(a.account))
            ++remaining[k.first];
    for (const auto& [k, a] : current.assocs) {
        if (!managed_now.count(a.account) && !owned_accounts.count(a.account)) continue;
        if (desired.assocs.count(k) && owned_accounts.count(a.account)) continue;
        if (opt.held_users.count(a.user)) continue;
        Change c;
        c.op = ChangeOp::Remove;
        c.kind = ChangeKind::Assoc;
        c.key = assoc_key(a.user, a.account);
        c.assoc = a;
        assoc_rm.push_back(c);
        --remaining[a.user];
    }
    // A user whose DefaultAccount is going away moves first (Slurm refuses to
    // remove the default association while others remain), and a user left
    // without associations is removed — only users allot's accounts hold.
    std::set<std::string> moved;
    for (const auto& c : user_mod) moved.insert(c.key);
    for (const auto& [n, u] : current.users) {
        if (opt.held_users.count(n)) continue;
        if (remaining[n] == 0) {
            bool any = false, all_owned = true;
            for (const auto& [k, a] : current.assocs) {
                if (k.first != n) continue;
                any = true;
                if (!managed_now.count(a.account)) all_owned = false;
            }
            if (any && all_owned) {
                Change c;
                c.op = ChangeOp::Remove;
                c.kind = ChangeKind::User;
                c.key = n;
                c.user = u;
                user_rm.push_back(c);
            }
            continue;
        }
        const bool default_removed =
            std::any_of(assoc_rm.begin(), assoc_rm.end(), [&](const Change& c) {
                return c.assoc.user == n && c.assoc.account == u.default_account;
            });
        if (!default_removed || moved.count(n)) continue;
        // Move to another association that stays: a desired one, else any left.
        std::string target;
        auto d = desired.users.find(n);
        if (d != desired.users.end() && owned_accounts.count(d->second.default_account))
            target = d->second.default_account;
        for (const auto& [k, a] : current.assocs)
            if (target.empty() && k.first == n && k.second != u.default_account &&
                std::none_of(assoc_rm.begin(), assoc_rm.end(),
                             [&](const Change& c) { return c.key == assoc_key(n, k.second); }))
                target = k.second;
        if (target.empty()) continue;
        Change c;
        c.op = ChangeOp::Modify;
        c.kind = ChangeKind::User;
        c.key = n;
        c.user = u;
        c.user.default_account = target;
        c.detail = "DefaultAccount=" + u.default_account + " -> " + target;
        user_mod.push_back(c);
    }
    for (const auto& n : managed_now) {
        if (desired.accounts.count(n)) continue;
        Change c;
        c.op = ChangeOp::Remove;
        c.kind = ChangeKind::Account;
        c.key = n;
        c.account = current.accounts.at(n);
        acct_rm.push_back(c);
    }
    for (const auto& [n, q] : current.qos) {
        if (!is_managed(q) || desired.qos.count(n)) continue;
        Change c;
        c.op = ChangeOp::Remove;
        c.kind = ChangeKind::Qos;
        c.key = n;
        c.qos = q;
        qos_rm.push_back(c);
    }
    for (auto* group : {&qos_add, &acct_add, &user_add, &assoc_add, &user_mod, &assoc_rm, &user_rm,
                        &acct_rm, &qos_rm})
        for (auto& c : *group) plan.changes.push_back(std::move(c));
    return plan;
}

}  // namespace allot
