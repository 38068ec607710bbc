// options.hpp - allot-exporter's command line (pure, unit-tested).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "allot/result.hpp"
#include "errors.hpp"

namespace allot::exporter {

struct Options {
    std::string config = "/etc/allot/allot.yaml";
    std::string host = "0.0.0.0";
    int port = 9733;
    unsigned interval_seconds = 30;
    std::string port_file;  // written with the bound port (for --listen=HOST:0)
    bool once = false;      // one snapshot printed to stdout, then exit
    bool help = false;
    bool version = false;
};

// `env_config` is $ALLOT_CONFIG (empty when unset); --config wins over it.
Result<Options> parse_options(const std::vector<std::string>& args, const std::string& env_config);
const char* usage_text();

}  // namespace allot::exporter
