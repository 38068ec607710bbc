// options.cpp - allot-report's command line (see options.hpp).
#include "options.hpp"

#include <charconv>

#include "render.hpp"

namespace allot::report {

const char* usage_text()
{
    return "usage: allot-report [--config FILE] [--period LEN] [--periods N] [--until TIME]\n"
           "                    [--by-user] [--csv VIEW | --json | --html DIR] [--no-reconcile]\n"
           "GPU-hours used against capacity per period (default: the last 12 ISO weeks, UTC).\n"
           "  --period LEN   week (default), 1d, 6h, 10m, 60s: must divide a week\n"
           "  --periods N    how many periods, ending with the current one (default 12)\n"
           "  --until TIME   end of the window, 2026-12-03T00:00:00Z or @unix (default: now)\n"
           "  --by-user      add the per-user view\n"
           "  --csv VIEW     one view as CSV: periods, team, tier, user, series\n"
           "  --json         the whole report as JSON (docs/report.md)\n"
           "  --html DIR     DIR/index.html and DIR/<view>.csv, self-contained\n"
           "  --no-reconcile do not run sacct for the reconciliation line\n";
}

Result<Options> parse_options(const std::vector<std::string>& args, const std::string& env_config)
{
    Options o;
    if (!env_config.empty()) o.config = env_config;
    auto usage = [](const std::string& why) { return make_error(Errc::Usage, why); };
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        auto value = [&]() -> std::optional<std::string> {
            if (i + 1 >= args.size()) return std::nullopt;
            return args[++i];
        };
        if (a == "-h" || a == "--help") {
            o.help = true;
        } else if (a == "--by-user") {
            o.by_user = true;
        } else if (a == "--json") {
            o.output = Output::Json;
        } else if (a == "--no-reconcile") {
            o.reconcile = false;
        } else if (a == "--config" || a == "--period" || a == "--periods" || a == "--until" ||
                   a == "--csv" || a == "--html") {
            auto v = value();
            if (!v) return usage(a + " needs a value");
            if (a == "--config") {
                o.config = *v;
            } else if (a == "--period") {
                auto len = parse_period_length(*v);
                if (!len) return len.error();
                o.length = len.value();
            } else if (a == "--periods") {
                int n = 0;
                auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
                if (ec != std::errc() || p != v->data() + v->size() || n < 1 || n > 10000)
                    return usage("--periods '" + *v + "': a whole number from 1 to 10000");
                o.periods = n;
            } else if (a == "--until") {
                auto t = parse_utc_time(*v);
                if (!t) return t.error();
                o.until = t.value();
            } else if (a == "--csv") {
                if (!view_from_name(*v))
                    return usage("--csv '" + *v + "': one of periods, team, tier, user, series");
                o.output = Output::Csv;
                o.csv_view = *v;
            } else {
                o.output = Output::Html;
                o.html_dir = *v;
            }
        } else {
            return usage("unknown argument '" + a + "'");
        }
    }
    if (o.csv_view == "user") o.by_user = true;
    return o;
}

}  // namespace allot::report
