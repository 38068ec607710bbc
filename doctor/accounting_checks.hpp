// accounting_checks.hpp - checks of slurmdbd's QOS and accounts against
// allot.yaml (pure: the rows come from `sacctmgr -nP`, see slurm_reader.hpp).
//
// The QOS settings compared here are those allot-syncd writes, computed by the
// same lib/allot/tier_qos.hpp allot-syncd plans from.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "allot/config.hpp"
#include "allot/tier_qos.hpp"
#include "finding.hpp"

namespace allot::doctor {

struct QosRow {
    std::string name;
    std::vector<std::string> preempt;  // QOS this one may preempt
    std::string preempt_mode;          // lower-case: "requeue", "cancel", "cluster", ...
    std::optional<uint32_t> grace_seconds;
    // The limits, when the rows carry them (format=...,GrpTRES,MaxTRESPA,MaxWall,Priority).
    bool has_limits = false;
    Tres grp_tres;     // mem in MB
    Tres max_tres_pa;  // MaxTRESPerAccount
    uint32_t max_wall_minutes = 0;
    uint32_t priority = 0;
};

// One of slurmdbd's transactions (`sacctmgr list transactions`).
struct Transaction {
    int64_t time = 0;  // epoch seconds
    std::string action, actor, where;
};

struct AccountingInputs {
    std::vector<QosRow> qos;
    std::vector<std::string> accounts;
    // End of allot-syncd's last successful cycle (its state file's mtime), and
    // the transactions since then; unset when allot-syncd never succeeded here.
    std::optional<int64_t> syncd_success;
    std::vector<Transaction> since_syncd;
};

// `sacctmgr -nP show qos
// format=Name,Preempt,PreemptMode,GraceTime[,GrpTRES,MaxTRESPA,MaxWall,Priority]`.
std::vector<QosRow> parse_qos_rows(std::string_view text);
// `sacctmgr -nP show account format=Account`.
std::vector<std::string> parse_account_rows(std::string_view text);
// sacctmgr's durations: [D-]HH:MM:SS, MM:SS or seconds.
std::optional<uint32_t> parse_duration(std::string_view text);
// sacctmgr's TRES lists: "cpu=16,gres/gpu=8,mem=64G" (mem in MB, K/M/G/T suffixes).
Tres parse_tres(std::string_view text);
// `sacctmgr -nP list transactions format=Time,Action,Actor,Where` (Time local, ISO).
std::vector<Transaction> parse_transactions(std::string_view text);

Findings check_qos_exist(const AccountingInputs& in, const Config& config);
Finding check_default_account(const AccountingInputs& in, const Config& config);
Finding check_spot_requeue(const AccountingInputs& in, const Config& config);
Findings check_preempts_spot(const AccountingInputs& in, const Config& config);
// GrpTRES, MaxTRESPerAccount, MaxWall and Priority of every QOS allot-syncd writes.
Findings check_qos_settings(const AccountingInputs& in, const Config& config);
// Users and associations written since allot-syncd's last successful cycle.
Finding check_other_writer(const AccountingInputs& in);

Findings check_accounting(const AccountingInputs& in, const Config& config);

}  // namespace allot::doctor
