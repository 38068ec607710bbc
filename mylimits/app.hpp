// app.hpp - mylimits as a function: options in, report and exit code out.
//
// main.cpp wires the real Slurm query, quota system and passwd lookups into
// run(); the unit tests wire fakes, so every option, permission rule and exit
// code is tested without a cluster.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "allot/result.hpp"
#include "errors.hpp"
#include "quota_source.hpp"
#include "slurm_query.hpp"

namespace allot::mylimits {

enum class ColorMode { Auto, Always, Never };

struct Options {
    std::string config_path;  // --config (else $ALLOT_CONFIG, else /etc/allot/allot.yaml)
    std::string quota_conf;   // --quota-conf (else $ALLOT_QUOTA_CONF, else /etc/allot/quota.conf)
    std::string user;         // --user
    std::string account;      // --account
    bool json = false;
    bool all = false;
    bool no_quota = false;
    ColorMode color = ColorMode::Auto;
    bool help = false;
    bool version = false;
};

// Parses argv (getopt_long); a Usage error naming the bad option.
Result<Options> parse_options(const std::vector<std::string>& args);
std::string usage_text();

struct PasswdEntry {
    std::string name;
    uint32_t uid = 0;
    std::string home;
};

struct Environment {
    uint32_t caller_uid = 0;
    bool stdout_is_tty = false;
    bool no_color_env = false;   // NO_COLOR set, or TERM=dumb
    std::string env_config;      // $ALLOT_CONFIG
    std::string env_quota_conf;  // $ALLOT_QUOTA_CONF
    int64_t now = 0;
    std::function<std::optional<PasswdEntry>(const std::string&)> user_by_name;
    std::function<std::optional<PasswdEntry>(uint32_t)> user_by_uid;
};

// --help and --version print to `out` and return true; neither asked: false.
bool print_help_or_version(const Options& options, std::ostream& out);

// Prints the report (or help, or the version) to `out`; on failure the error
// goes to `err` and its code decides the exit status (errors.hpp).
int run(const Options& options, const Environment& env, SlurmQuery& slurm, QuotaSystem& quotas,
        std::ostream& out, std::ostream& err);

}  // namespace allot::mylimits
