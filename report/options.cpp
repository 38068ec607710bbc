// options.cpp - allot-report's command line (see options.hpp).
#include "options.hpp"

#include <charconv>

#include "render.hpp"

namespace allot::report {

const char* usage_text()
{
    return "usage: allot-report [--config FILE] [--period LEN] [--periods N] [--until TIME]\n"
           "                    [--by-user] [--csv VIEW | --json | --html DIR] [--no-reconcile]\n"
           "                    [--store FILE]\n"
           "       allot-report record-storage [--quota-conf FILE] [--store FILE] [--min-uid N]\n"
           "GPU-hours used against capacity per period (default: the last 12 ISO weeks, UTC).\n"
           "  --period LEN   week (default), 1d, 6h, 10m, 60s: must divide a week\n"
           "  --periods N    how many periods, ending with the current one (default 12)\n"
           "  --until TIME   end of the window, 2026-12-03T00:00:00Z or @unix (default: now)\n"
           "  --by-user      add the per-user view\n"
           "  --csv VIEW     one view as CSV: periods, team, tier, user, series, storage\n"
           "  --json         the whole report as JSON (docs/report.md)\n"
           "  --html DIR     DIR/index.html and DIR/<view>.csv, self-contained\n"
           "  --no-reconcile do not run sacct for the reconciliation line\n"
           "  --store FILE   storage history (default /var/lib/allot-report/storage.csv)\n"
           "record-storage appends each user's usage of every quota.conf source to the store.\n"
           "  --quota-conf FILE  quota sources (default $ALLOT_QUOTA_CONF, /etc/allot/quota.conf)\n"
           "  --min-uid N        users from this UID up (default 1000)\n";
}

Result<Options> parse_options(const std::vector<std::string>& args, const std::string& env_config)
{
    Options o;
    if (!env_config.empty()) o.config = env_config;
    auto usage = [](const std::string& why) { return make_error(Errc::Usage, why); };
    size_t first = 0;
    if (!args.empty() && args[0] == "record-storage") {
        o.record_storage = true;
        first = 1;
    }
    for (size_t i = first; i < args.size(); ++i) {
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
                   a == "--csv" || a == "--html" || a == "--store" || a == "--quota-conf" ||
                   a == "--min-uid") {
            auto v = value();
            if (!v) return usage(a + " needs a value");
            if (a == "--config") {
                o.config = *v;
            } else if (a == "--store") {
                o.store = *v;
            } else if (a == "--quota-conf") {
                o.quota_conf = *v;
            } else if (a == "--min-uid") {
                uint32_t n = 0;
                auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
                if (ec != std::errc() || p != v->data() + v->size())
                    return usage("--min-uid '" + *v + "': a UID");
                o.min_uid = n;
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
                if (!view_from_name(*v) && *v != "storage")
                    return usage("--csv '" + *v +
                                 "': one of periods, team, tier, user, series, storage");
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
    if (o.record_storage && (o.output != Output::Text || o.by_user))
        return usage("record-storage takes --quota-conf, --store, --min-uid and --config only");
    return o;
}

}  // namespace allot::report
