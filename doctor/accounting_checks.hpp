// accounting_checks.hpp - checks of slurmdbd's QOS and accounts against
// allot.yaml (pure: the rows come from `sacctmgr -nP`, see slurm_reader.hpp).
//
// The QOS settings compared here are those allot-syncd writes (syncd/ computes
// them; doctor may not include syncd/, so the few it checks are derived again
// from the lib/ configuration: the tier QOS names, spot's GraceTime, and that
// project and general QOS preempt spot).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "allot/config.hpp"
#include "finding.hpp"

namespace allot::doctor {

struct QosRow {
    std::string name;
    std::vector<std::string> preempt;  // QOS this one may preempt
    std::string preempt_mode;          // lower-case: "requeue", "cancel", "cluster", ...
    std::optional<uint32_t> grace_seconds;
};

struct AccountingInputs {
    std::vector<QosRow> qos;
    std::vector<std::string> accounts;
};

// `sacctmgr -nP show qos format=Name,Preempt,PreemptMode,GraceTime`.
std::vector<QosRow> parse_qos_rows(std::string_view text);
// `sacctmgr -nP show account format=Account`.
std::vector<std::string> parse_account_rows(std::string_view text);
// sacctmgr's durations: [D-]HH:MM:SS, MM:SS or seconds.
std::optional<uint32_t> parse_duration(std::string_view text);

Findings check_qos_exist(const AccountingInputs& in, const Config& config);
Finding check_default_account(const AccountingInputs& in, const Config& config);
Finding check_spot_requeue(const AccountingInputs& in, const Config& config);
Findings check_preempts_spot(const AccountingInputs& in, const Config& config);

Findings check_accounting(const AccountingInputs& in, const Config& config);

}  // namespace allot::doctor
