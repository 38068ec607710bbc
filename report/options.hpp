// options.hpp - allot-report's command line (pure, unit-tested).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "allot/result.hpp"
#include "errors.hpp"
#include "periods.hpp"

namespace allot::report {

enum class Output { Text, Csv, Json, Html };

struct Options {
    std::string config = "/etc/allot/allot.yaml";
    int64_t length = kWeek;        // --period
    int periods = 12;              // --periods
    std::optional<int64_t> until;  // --until (default: now)
    bool by_user = false;          // --by-user
    Output output = Output::Text;
    std::string csv_view;   // --csv VIEW
    std::string html_dir;   // --html DIR
    bool reconcile = true;  // --no-reconcile skips running sacct
    bool help = false;
    // record-storage: append every user's quota usage to the store, then exit.
    bool record_storage = false;
    std::string store = "/var/lib/allot-report/storage.csv";  // --store
    std::string quota_conf;   // --quota-conf (else $ALLOT_QUOTA_CONF, else /etc/allot/quota.conf)
    uint32_t min_uid = 1000;  // record-storage --min-uid: system accounts are left out
};

// `env_config` is $ALLOT_CONFIG (empty when unset); --config wins over it.
Result<Options> parse_options(const std::vector<std::string>& args, const std::string& env_config);
const char* usage_text();

}  // namespace allot::report
