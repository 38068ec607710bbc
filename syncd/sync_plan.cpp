// sync_plan.cpp - desired accounting state and the add/modify/remove planner
// (see allot/sync_plan.hpp).
#include "sync_plan.hpp"

#include <algorithm>
#include <unordered_map>

namespace allot {
namespace {

std::string assoc_key(const std::string& user, const std::string& account)
{
    return user + "@" + account;
}

}  // namespace

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
    return "QOS=" + slurm_list(qos) + " DefaultQOS=" + (default_qos.empty() ? "none" : default_qos);
}

bool is_managed(const QosSpec& q)
{
    return q.description.rfind(kManagedMarker, 0) == 0;
}

bool is_managed(const AccountSpec& a)
{
    return a.organization == kManagedMarker;
}

namespace {

AccountSpec team_account(const TeamConfig& t)
{
    AccountSpec a;
    a.name = t.account;
    a.description = t.description.empty() ? "team " + t.group : t.description;
    a.organization = kManagedMarker;
    return a;
}

// The zero-GPU landing account of users in no team.
AccountSpec default_account(const Config& config)
{
    AccountSpec def;
    def.name = config.cluster.default_account;
    def.description = "users in no team (0 GPUs)";
    def.organization = kManagedMarker;
    def.grp_tres["gres/gpu"] = 0;
    return def;
}

// A user's associations: one per team (the first in config order is the
// DefaultAccount), or the default account under its own QOS only.
void add_user(const Config& config, const PosixUser& u, const std::vector<const TeamConfig*>* teams,
              AccountingState& st)
{
    const std::string& general = config.tiers.general.qos;
    const std::string& spot = config.tiers.spot.qos;
    UserSpec us;
    us.name = u.name;
    if (!teams) {
        us.default_account = config.cluster.default_account;
        AssocSpec as;
        as.user = u.name;
        as.account = us.default_account;
        as.qos = {config.cluster.default_account};
        as.default_qos = config.cluster.default_account;
        st.assocs[{u.name, as.account}] = as;
    } else {
        us.default_account = teams->front()->account;
        for (const TeamConfig* t : *teams) {
            AssocSpec as;
            as.user = u.name;
            as.account = t->account;
            as.qos = {project_qos_name(*t), general, spot};
            as.default_qos = project_qos_name(*t);
            st.assocs[{u.name, t->account}] = as;
        }
    }
    st.users[u.name] = us;
}

}  // namespace

AccountingState desired_state(const Config& config, const ValidatedDirectory& dir,
                              std::vector<std::string>& notes)
{
    AccountingState st;
    for (QosSpec q : {spot_qos(config.tiers), general_qos(config.tiers), no_team_qos(config)})
        st.qos[q.name] = q;
    const AccountSpec def = default_account(config);
    st.accounts[def.name] = def;

    std::unordered_map<std::string, const PosixGroup*> groups;
    for (const auto& g : dir.groups) groups[g.name] = &g;

    // user → teams in config order.
    std::map<std::string, std::vector<const TeamConfig*>> teams_of;
    for (const TeamConfig& t : config.teams) {
        const QosSpec q = project_qos(config, t);
        st.qos[q.name] = q;
        st.accounts[t.account] = team_account(t);
        auto g = groups.find(t.group);
        if (g == groups.end()) {
            notes.push_back("team " + t.account + ": SCIM group '" + t.group +
                            "' not found or rejected; the account has no members");
            continue;
        }
        for (const auto& m : g->second->members) teams_of[m].push_back(&t);
    }
    for (const PosixUser& u : dir.users) {
        auto it = teams_of.find(u.name);
        add_user(config, u, it == teams_of.end() ? nullptr : &it->second, st);
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

namespace {

// make_plan's steps, in the order they run. Each collects the changes of one
// kind; assemble() puts them in apply order (adds parents first, removals
// children first).
class PlanBuilder {
public:
    PlanBuilder(const AccountingState& desired, const AccountingState& current,
                const PlanOptions& opt)
        : desired_(desired), current_(current), opt_(opt)
    {
        for (const auto& [n, a] : current_.accounts)
            if (is_managed(a)) managed_now_.insert(n);
    }

    Plan build()
    {
        plan_qos();
        plan_accounts();
        plan_wanted_assocs();
        plan_users();
        plan_unwanted_assocs();
        plan_user_moves_and_removals();
        plan_account_removals();
        plan_qos_removals();
        return assemble();
    }

private:
    const AccountingState& desired_;
    const AccountingState& current_;
    const PlanOptions& opt_;
    Plan plan_;
    std::vector<Change> qos_add_, acct_add_, user_add_, assoc_add_, user_mod_, assoc_rm_, user_rm_,
        acct_rm_, qos_rm_;
    std::set<std::string> owned_accounts_;     // accounts allot may write into (after this plan)
    std::set<std::string> managed_now_;        // currently owned accounts (removal candidates)
    std::map<std::string, size_t> remaining_;  // user → associations left after this plan

    bool held(const std::string& user) const { return opt_.held_users.count(user) > 0; }

    // An owned object whose settings differ from what allot last applied,
    // while allot's wish is unchanged: someone else changed it.
    bool drift_of(const std::string& key, const std::string& desired_text) const
    {
        if (!opt_.last_applied) return false;
        auto it = opt_.last_applied->find(key);
        return it != opt_.last_applied->end() && it->second == desired_text;
    }

    void plan_qos()
    {
        // Spot first, so Preempt= of the others can name it.
        std::vector<const QosSpec*> order;
        for (const auto& [n, q] : desired_.qos)
            if (q.requeue)
                order.insert(order.begin(), &q);
            else
                order.push_back(&q);
        for (const QosSpec* q : order) {
            auto cur = current_.qos.find(q->name);
            Change c;
            c.kind = ChangeKind::Qos;
            c.key = q->name;
            c.qos = *q;
            if (cur == current_.qos.end()) {
                c.op = ChangeOp::Add;
                c.detail = q->describe();
                qos_add_.push_back(c);
            } else if (!is_managed(cur->second) && !opt_.adopt) {
                plan_.notes.push_back(
                    "qos " + q->name +
                    " exists and is not allot-managed; left alone (use --adopt to take it over)");
            } else if (!cur->second.same_settings(*q)) {
                c.op = ChangeOp::Modify;
                c.detail = cur->second.describe() + " -> " + q->describe();
                c.drift = is_managed(cur->second) && drift_of("qos " + q->name, q->describe());
                qos_add_.push_back(c);
            }
        }
    }

    void plan_accounts()
    {
        for (const auto& [n, a] : desired_.accounts) {
            auto cur = current_.accounts.find(n);
            Change c;
            c.kind = ChangeKind::Account;
            c.key = n;
            c.account = a;
            if (cur == current_.accounts.end()) {
                c.op = ChangeOp::Add;
                c.detail = a.describe();
                acct_add_.push_back(c);
                owned_accounts_.insert(n);
            } else if (!is_managed(cur->second) && !opt_.adopt) {
                plan_.notes.push_back(
                    "account " + n +
                    " exists and is not allot-managed; left alone with its members "
                    "(use --adopt to take it over)");
            } else {
                owned_accounts_.insert(n);
                if (!cur->second.same_settings(a)) {
                    c.op = ChangeOp::Modify;
                    c.detail = cur->second.describe() + " -> " + a.describe();
                    c.drift = is_managed(cur->second) && drift_of("account " + n, a.describe());
                    acct_add_.push_back(c);
                }
            }
        }
    }

    // Associations wanted, for users that resolve here.
    void plan_wanted_assocs()
    {
        for (const auto& [k, a] : desired_.assocs) {
            if (held(a.user) || !owned_accounts_.count(a.account)) continue;
            auto cur = current_.assocs.find(k);
            Change c;
            c.kind = ChangeKind::Assoc;
            c.key = assoc_key(a.user, a.account);
            c.assoc = a;
            if (auto du = desired_.users.find(a.user); du != desired_.users.end())
                c.user = du->second;
            if (cur == current_.assocs.end()) {
                c.op = ChangeOp::Add;
                c.detail = a.describe();
                assoc_add_.push_back(c);
            } else if (!cur->second.same_settings(a)) {
                c.op = ChangeOp::Modify;
                c.detail = cur->second.describe() + " -> " + a.describe();
                c.drift = drift_of("assoc " + c.key, a.describe());
                assoc_add_.push_back(c);
            }
        }
    }

    void plan_users()
    {
        for (const auto& [n, u] : desired_.users) {
            if (held(n)) {
                plan_.held_users.push_back(n);
                plan_.notes.push_back("user " + n +
                                      " does not resolve on this host yet (NSS); held");
                continue;
            }
            if (!owned_accounts_.count(u.default_account)) continue;
            auto cur = current_.users.find(n);
            Change c;
            c.kind = ChangeKind::User;
            c.key = n;
            c.user = u;
            if (cur == current_.users.end()) {
                c.op = ChangeOp::Add;
                c.detail = "DefaultAccount=" + u.default_account;
                user_add_.push_back(c);
            } else if (cur->second.default_account != u.default_account) {
                c.op = ChangeOp::Modify;
                c.detail =
                    "DefaultAccount=" + cur->second.default_account + " -> " + u.default_account;
                user_mod_.push_back(c);
            }
        }
    }

    // Associations in owned accounts that are not wanted any more.
    void plan_unwanted_assocs()
    {
        for (const auto& [k, a] : current_.assocs) ++remaining_[k.first];
        for (const auto& [k, a] : desired_.assocs)
            if (!current_.assocs.count(k) && !held(a.user) && owned_accounts_.count(a.account))
                ++remaining_[k.first];
        for (const auto& [k, a] : current_.assocs) {
            if (!managed_now_.count(a.account) && !owned_accounts_.count(a.account)) continue;
            if (desired_.assocs.count(k) && owned_accounts_.count(a.account)) continue;
            if (held(a.user)) continue;
            Change c;
            c.op = ChangeOp::Remove;
            c.kind = ChangeKind::Assoc;
            c.key = assoc_key(a.user, a.account);
            c.assoc = a;
            assoc_rm_.push_back(c);
            --remaining_[a.user];
        }
    }

    bool assoc_removed(const std::string& user, const std::string& account) const
    {
        return std::any_of(assoc_rm_.begin(), assoc_rm_.end(), [&](const Change& c) {
            return c.assoc.user == user && c.assoc.account == account;
        });
    }

    // A user whose associations all go, and all in allot's accounts, goes too.
    void plan_user_removal(const std::string& name, const UserSpec& u)
    {
        bool any = false, all_owned = true;
        for (const auto& [k, a] : current_.assocs) {
            if (k.first != name) continue;
            any = true;
            if (!managed_now_.count(a.account)) all_owned = false;
        }
        if (!any || !all_owned) return;
        Change c;
        c.op = ChangeOp::Remove;
        c.kind = ChangeKind::User;
        c.key = name;
        c.user = u;
        user_rm_.push_back(c);
    }

    // The account a user whose DefaultAccount goes away moves to: the desired
    // default, else any association that stays. Empty: none.
    std::string move_target(const std::string& name, const UserSpec& u) const
    {
        auto d = desired_.users.find(name);
        if (d != desired_.users.end() && owned_accounts_.count(d->second.default_account))
            return d->second.default_account;
        for (const auto& [k, a] : current_.assocs)
            if (k.first == name && k.second != u.default_account && !assoc_removed(name, k.second))
                return k.second;
        return {};
    }

    // A user whose DefaultAccount is going away moves first (Slurm refuses to
    // remove the default association while others remain), and a user left
    // without associations is removed (only users allot's accounts hold).
    void plan_user_moves_and_removals()
    {
        std::set<std::string> moved;
        for (const auto& c : user_mod_) moved.insert(c.key);
        for (const auto& [n, u] : current_.users) {
            if (held(n)) continue;
            if (remaining_[n] == 0) {
                plan_user_removal(n, u);
                continue;
            }
            if (!assoc_removed(n, u.default_account) || moved.count(n)) continue;
            const std::string target = move_target(n, u);
            if (target.empty()) continue;
            Change c;
            c.op = ChangeOp::Modify;
            c.kind = ChangeKind::User;
            c.key = n;
            c.user = u;
            c.user.default_account = target;
            c.detail = "DefaultAccount=" + u.default_account + " -> " + target;
            user_mod_.push_back(c);
        }
    }

    void plan_account_removals()
    {
        for (const auto& n : managed_now_) {
            if (desired_.accounts.count(n)) continue;
            Change c;
            c.op = ChangeOp::Remove;
            c.kind = ChangeKind::Account;
            c.key = n;
            c.account = current_.accounts.at(n);
            acct_rm_.push_back(c);
        }
    }

    void plan_qos_removals()
    {
        for (const auto& [n, q] : current_.qos) {
            if (!is_managed(q) || desired_.qos.count(n)) continue;
            Change c;
            c.op = ChangeOp::Remove;
            c.kind = ChangeKind::Qos;
            c.key = n;
            c.qos = q;
            qos_rm_.push_back(c);
        }
    }

    Plan assemble()
    {
        for (auto* group : {&qos_add_, &acct_add_, &user_add_, &assoc_add_, &user_mod_, &assoc_rm_,
                            &user_rm_, &acct_rm_, &qos_rm_})
            for (auto& c : *group) plan_.changes.push_back(std::move(c));
        return std::move(plan_);
    }
};

}  // namespace

Plan make_plan(const AccountingState& desired, const AccountingState& current,
               const PlanOptions& opt)
{
    return PlanBuilder(desired, current, opt).build();
}

}  // namespace allot
