// options.cpp - parse_options() (see options.hpp).
#include "options.hpp"

#include "allot/units.hpp"

namespace allot::exporter {

namespace {

Error usage(const std::string& what)
{
    return make_error(Errc::Usage, what + " (see allot-exporter --help)");
}

// "HOST:PORT", "[v6]:PORT" or ":PORT" (all addresses).
Status parse_listen(const std::string& v, Options& o)
{
    const size_t colon = v.rfind(':');
    if (colon == std::string::npos) return usage("--listen needs HOST:PORT, got '" + v + "'");
    auto port = parse_count(v.substr(colon + 1), 65535);
    if (!port) return usage("--listen: bad port in '" + v + "'");
    std::string host = v.substr(0, colon);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
        host = host.substr(1, host.size() - 2);
    o.host = host.empty() ? "0.0.0.0" : host;
    o.port = static_cast<int>(*port);
    return ok_status();
}

}  // namespace

const char* usage_text()
{
    return "usage: allot-exporter [options]\n"
           "  --config=FILE       allot.yaml (default $ALLOT_CONFIG or /etc/allot/allot.yaml)\n"
           "  --listen=HOST:PORT  where to serve /metrics (default 0.0.0.0:9733; port 0: any)\n"
           "  --interval=SECONDS  seconds between snapshots from slurmctld (default 30)\n"
           "  --port-file=FILE    write the port actually bound to FILE\n"
           "  --once              print one snapshot's metrics to stdout and exit\n"
           "  --version, --help\n";
}

Result<Options> parse_options(const std::vector<std::string>& args, const std::string& env_config)
{
    Options o;
    if (!env_config.empty()) o.config = env_config;
    for (size_t i = 0; i < args.size(); ++i) {
        std::string a = args[i], value;
        const size_t eq = a.find('=');
        const bool takes = a == "--config" || a == "--listen" || a == "--interval" ||
                           a == "--port-file" || (eq != std::string::npos);
        if (eq != std::string::npos) {
            value = a.substr(eq + 1);
            a = a.substr(0, eq);
        } else if (takes) {
            if (i + 1 >= args.size()) return usage(a + " needs a value");
            value = args[++i];
        }
        if (a == "--config") {
            o.config = value;
        } else if (a == "--listen") {
            auto st = parse_listen(value, o);
            if (!st) return st.error();
        } else if (a == "--interval") {
            auto n = parse_count(value, 86400);
            if (!n || *n == 0)
                return usage("--interval needs 1..86400 seconds, got '" + value + "'");
            o.interval_seconds = static_cast<unsigned>(*n);
        } else if (a == "--port-file") {
            o.port_file = value;
        } else if (a == "--once" && !takes) {
            o.once = true;
        } else if (a == "--help" || a == "-h") {
            o.help = true;
        } else if (a == "--version") {
            o.version = true;
        } else {
            return usage("unknown option '" + args[i] + "'");
        }
    }
    return o;
}

}  // namespace allot::exporter
