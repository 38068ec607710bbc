// sync_plan.hpp - Slurm accounting as allot wants it, and the plan that gets it there.
//
// allot-syncd computes the desired accounting state from allot.yaml (teams,
// tiers, default account) and the validated SCIM directory, reads the current
// state through an AccountingStore, and applies the difference. Everything
// here is pure and deterministic so `allot-syncd --plan` prints exactly what
// an apply would write, and the tests check every rule without a slurmdbd.
//
// Ownership: allot only touches accounts whose Organization and QOS whose
// Description start with kManagedMarker, plus users' associations inside
// those accounts. Root, "normal" and hand-made objects are never modified.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "allot/config.hpp"
#include "allot/scim_client.hpp"
#include "allot/tier_qos.hpp"

namespace allot {

struct AccountSpec {
    std::string name;
    std::string description;
    std::string organization;  // kManagedMarker when allot owns it
    Tres grp_tres;             // on the account's association (default account: gres/gpu=0)
    bool same_settings(const AccountSpec& o) const;
    std::string describe() const;
};

struct UserSpec {
    std::string name;
    std::string default_account;
};

struct AssocSpec {
    std::string user;
    std::string account;
    std::set<std::string> qos;
    std::string default_qos;
    bool same_settings(const AssocSpec& o) const;
    std::string describe() const;
};

struct AccountingState {
    std::map<std::string, QosSpec> qos;
    std::map<std::string, AccountSpec> accounts;
    std::map<std::string, UserSpec> users;
    std::map<std::pair<std::string, std::string>, AssocSpec> assocs;  // (user, account)
};

bool is_managed(const QosSpec& q);
bool is_managed(const AccountSpec& a);

// Desired state from config and directory. Notes say what was skipped and why
// (a team whose SCIM group does not exist, ...).
AccountingState desired_state(const Config& config, const ValidatedDirectory& dir,
                              std::vector<std::string>& notes);

enum class ChangeOp { Add, Modify, Remove };
enum class ChangeKind { Qos, Account, User, Assoc };

struct Change {
    ChangeOp op = ChangeOp::Add;
    ChangeKind kind = ChangeKind::Qos;
    std::string key;     // name, or "user@account"
    std::string detail;  // what changes, for people
    bool drift = false;  // an owned object was changed by someone else
    QosSpec qos;
    AccountSpec account;
    UserSpec user;
    AssocSpec assoc;
    std::string text() const;  // one --plan line
};

struct Plan {
    std::vector<Change> changes;          // in apply order
    std::vector<std::string> notes;       // left alone / held, with the reason
    std::vector<std::string> held_users;  // directory users not resolving here yet (NSS)
    size_t removals() const;
    size_t drifted() const;
    bool empty() const { return changes.empty(); }
};

struct PlanOptions {
    // Users in the directory who do not yet resolve on this host (NSS): their
    // associations are neither added nor removed until they do.
    std::set<std::string> held_users;
    // Take over same-named unmarked accounts/QOS named in the config.
    bool adopt = false;
    // Settings last applied per object key (see applied_state()); an owned
    // object that differs from an unchanged desired setting is drift.
    const std::map<std::string, std::string>* last_applied = nullptr;
};

Plan make_plan(const AccountingState& desired, const AccountingState& current,
               const PlanOptions& options);

// Object key → describe() of every desired object, saved after an apply.
std::map<std::string, std::string> applied_state(const AccountingState& desired);

}  // namespace allot
