// render.cpp - terminal, CSV, JSON and HTML renderings of a report (see render.hpp).
#include "render.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "allot/json.hpp"

namespace allot::report {

namespace {

constexpr const char* kViewNames[] = {"periods", "team", "tier", "user", "series"};

std::string number(double v, const char* fmt)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, fmt, v);
    return buf;
}

const std::map<std::string, uint64_t>& split_of(const PeriodUsage& p, View view)
{
    return view == View::Team ? p.by_team : view == View::Tier ? p.by_tier : p.by_user;
}

const std::vector<std::string>& keys_of(const Report& r, View view)
{
    return view == View::Team ? r.teams : view == View::Tier ? r.tiers : r.users;
}

std::string csv_field(const std::string& s)
{
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string out = "\"";
    for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

std::string html_escape(std::string_view s)
{
    std::string out;
    for (char c : s) {
        switch (c) {
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '&': out += "&amp;"; break;
            case '"': out += "&quot;"; break;
            default: out += c;
        }
    }
    return out;
}

std::string uri_encode(std::string_view s)
{
    static const char* hex = "0123456789ABCDEF";
    std::string out;
    for (unsigned char c : s) {
        if (isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
            out += char(c);
        } else {
            out += '%';
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    }
    return out;
}

std::string aligned(const Table& t)
{
    std::vector<size_t> width(t.header.size(), 0);
    auto measure = [&](const std::vector<std::string>& row) {
        for (size_t i = 0; i < row.size() && i < width.size(); ++i)
            width[i] = std::max(width[i], row[i].size());
    };
    measure(t.header);
    for (const auto& r : t.rows) measure(r);
    std::string out;
    auto line = [&](const std::vector<std::string>& row) {
        for (size_t i = 0; i < row.size(); ++i) {
            const bool numeric = i > 0;
            const std::string pad(width[i] - row[i].size(), ' ');
            out += numeric ? pad + row[i] : row[i] + pad;
            out += i + 1 < row.size() ? "  " : "\n";
        }
    };
    line(t.header);
    for (const auto& r : t.rows) line(r);
    return out;
}

// Totals of a split over the whole window, as a table of key and GPU-hours.
Table totals_table(const Report& r, View view, const char* key_name)
{
    Table t{{key_name, "gpu_hours", "share_pct"}, {}};
    const uint64_t used = r.total_used();
    for (const auto& key : keys_of(r, view)) {
        uint64_t s = 0;
        for (const auto& p : r.periods) {
            auto it = split_of(p, view).find(key);
            if (it != split_of(p, view).end()) s += it->second;
        }
        t.rows.push_back({key, hours_text(s), percent_text(s, used)});
    }
    return t;
}

}  // namespace

const char* view_name(View view)
{
    return kViewNames[static_cast<int>(view)];
}

std::optional<View> view_from_name(std::string_view name)
{
    for (View v : kViews)
        if (name == view_name(v)) return v;
    return std::nullopt;
}

std::string hours_text(uint64_t gpu_seconds)
{
    return number(double(gpu_seconds) / 3600.0, "%.2f");
}

std::string percent_text(uint64_t part, uint64_t whole)
{
    return whole ? number(100.0 * double(part) / double(whole), "%.1f") : "-";
}

Table view_table(const Report& r, View view)
{
    Table t;
    if (view == View::Periods) {
        t.header = {"period",
                    "start",
                    "end",
                    "provisional",
                    "used_gpu_seconds",
                    "used_gpu_hours",
                    "capacity_gpu_hours",
                    "available_gpu_hours",
                    "util_total_pct",
                    "util_available_pct",
                    "spot_lost_gpu_hours"};
        for (const auto& p : r.periods)
            t.rows.push_back({p.period.label, utc_time(p.period.start), utc_time(p.period.end),
                              p.period.provisional ? "yes" : "no", std::to_string(p.used),
                              hours_text(p.used), hours_text(p.capacity), hours_text(p.available()),
                              percent_text(p.used, p.capacity), percent_text(p.used, p.available()),
                              hours_text(p.spot_lost)});
        return t;
    }
    if (view == View::Series) {
        t.header = {"start", "seconds", "gpu_seconds", "gpus_in_use"};
        for (const auto& s : r.series)
            t.rows.push_back({utc_time(s.start), std::to_string(s.seconds),
                              std::to_string(s.gpu_seconds), number(s.gpus(), "%.2f")});
        return t;
    }
    t.header = {"period", view_name(view), "gpu_seconds", "gpu_hours", "share_pct"};
    for (const auto& p : r.periods)
        for (const auto& [key, s] : split_of(p, view))
            t.rows.push_back(
                {p.period.label, key, std::to_string(s), hours_text(s), percent_text(s, p.used)});
    return t;
}

std::string render_csv(const Table& table)
{
    std::string out;
    auto line = [&](const std::vector<std::string>& row) {
        for (size_t i = 0; i < row.size(); ++i) out += (i ? "," : "") + csv_field(row[i]);
        out += "\n";
    };
    line(table.header);
    for (const auto& r : table.rows) line(r);
    return out;
}

std::string render_text(const Report& r, const std::string& reconciliation, const Table* storage)
{
    std::string out = "GPU-hours of cluster " + r.cluster + ", " + utc_time(r.from) + " to " +
                      utc_time(r.until) + " (" + std::to_string(r.runs) + " runs)\n\n";
    Table periods{{"period", "used", "capacity", "available", "util%", "util_avail%", "spot_lost"},
                  {}};
    for (const auto& p : r.periods)
        periods.rows.push_back({p.period.label + (p.period.provisional ? " *" : ""),
                                hours_text(p.used), hours_text(p.capacity),
                                hours_text(p.available()), percent_text(p.used, p.capacity),
                                percent_text(p.used, p.available()), hours_text(p.spot_lost)});
    periods.rows.push_back(
        {"total", hours_text(r.total_used()), hours_text(r.total_capacity()),
         hours_text(r.total_available()), percent_text(r.total_used(), r.total_capacity()),
         percent_text(r.total_used(), r.total_available()), hours_text(r.total_spot_lost())});
    out += aligned(periods);
    out += "(* provisional: the period is not over)\n\nby team\n";
    out += aligned(totals_table(r, View::Team, "team"));
    out += "\nby tier\n" + aligned(totals_table(r, View::Tier, "tier"));
    if (r.by_user) out += "\nby user\n" + aligned(totals_table(r, View::User, "user"));
    if (storage && !storage->rows.empty()) {
        // The latest sample only: the history is in --csv storage.
        Table latest{storage->header, {}};
        std::string last;
        for (const auto& row : storage->rows) last = std::max(last, row[0]);
        for (const auto& row : storage->rows)
            if (row[0] == last) latest.rows.push_back(row);
        out += "\nstorage at " + last + "\n" + aligned(latest);
    }
    return out + "\n" + reconciliation + "\n";
}

std::string render_json(const Report& r, const std::string& reconciliation, const Table* storage)
{
    JsonPtr root(cJSON_CreateObject());
    cJSON_AddStringToObject(root.get(), "schema", "allot-report/1");
    cJSON_AddStringToObject(root.get(), "cluster", r.cluster.c_str());
    cJSON_AddStringToObject(root.get(), "from", utc_time(r.from).c_str());
    cJSON_AddStringToObject(root.get(), "until", utc_time(r.until).c_str());
    cJSON_AddNumberToObject(root.get(), "period_seconds", double(r.length));
    cJSON_AddNumberToObject(root.get(), "runs", double(r.runs));
    cJSON* periods = cJSON_AddArrayToObject(root.get(), "periods");
    for (const auto& p : r.periods) {
        cJSON* o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "period", p.period.label.c_str());
        cJSON_AddStringToObject(o, "start", utc_time(p.period.start).c_str());
        cJSON_AddStringToObject(o, "end", utc_time(p.period.end).c_str());
        cJSON_AddBoolToObject(o, "provisional", p.period.provisional);
        cJSON_AddNumberToObject(o, "used_gpu_seconds", double(p.used));
        cJSON_AddNumberToObject(o, "capacity_gpu_seconds", double(p.capacity));
        cJSON_AddNumberToObject(o, "unavailable_gpu_seconds", double(p.down));
        cJSON_AddNumberToObject(o, "available_gpu_seconds", double(p.available()));
        cJSON_AddNumberToObject(o, "spot_lost_gpu_seconds", double(p.spot_lost));
        for (View v : {View::Team, View::Tier, View::User}) {
            if (v == View::User && !r.by_user) continue;
            cJSON* m = cJSON_AddObjectToObject(o, (std::string("by_") + view_name(v)).c_str());
            for (const auto& [k, s] : split_of(p, v))
                cJSON_AddNumberToObject(m, k.c_str(), double(s));
        }
        cJSON_AddItemToArray(periods, o);
    }
    cJSON* series = cJSON_AddArrayToObject(root.get(), "gpus_in_use");
    for (const auto& s : r.series) {
        cJSON* o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "start", utc_time(s.start).c_str());
        cJSON_AddNumberToObject(o, "seconds", double(s.seconds));
        cJSON_AddNumberToObject(o, "gpu_seconds", double(s.gpu_seconds));
        cJSON_AddItemToArray(series, o);
    }
    if (storage) {
        cJSON* rows = cJSON_AddArrayToObject(root.get(), "storage");
        for (const auto& row : storage->rows) {
            cJSON* o = cJSON_CreateObject();
            for (size_t i = 0; i < row.size() && i < storage->header.size(); ++i) {
                const std::string& key = storage->header[i];
                if (row[i].empty())
                    cJSON_AddNullToObject(o, key.c_str());
                else if (key.rfind("bytes_", 0) != 0)
                    cJSON_AddStringToObject(o, key.c_str(), row[i].c_str());
                else
                    cJSON_AddNumberToObject(o, key.c_str(), std::stod(row[i]));
            }
            cJSON_AddItemToArray(rows, o);
        }
    }
    cJSON_AddStringToObject(root.get(), "reconciliation", reconciliation.c_str());
    char* text = cJSON_Print(root.get());
    std::string out = text ? text : "{}";
    cJSON_free(text);
    return out + "\n";
}

namespace {

constexpr const char* kPalette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
                                    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};

// SVG geometry shared by the charts.
struct Frame {
    double width = 900, height = 300, left = 60, bottom = 40, top = 20;
    double plot_w() const { return width - left - 10; }
    double plot_h() const { return height - bottom - top; }
    double y(double v, double max) const
    {
        return top + plot_h() * (1.0 - (max > 0 ? v / max : 0));
    }
};

std::string svg_open(const Frame& f, const std::string& id, const std::string& title)
{
    return "<figure><figcaption>" + html_escape(title) + "</figcaption><svg id=\"" + id +
           "\" class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
           number(f.width, "%.0f") + "\" height=\"" + number(f.height, "%.0f") +
           "\" role=\"img\">\n";
}

std::string axis(const Frame& f, double max, const char* unit)
{
    std::string s = "<line x1=\"" + number(f.left, "%.1f") + "\" y1=\"" + number(f.top, "%.1f") +
                    "\" x2=\"" + number(f.left, "%.1f") + "\" y2=\"" +
                    number(f.top + f.plot_h(), "%.1f") + "\" stroke=\"#333\"/>\n";
    for (int i = 0; i <= 4; ++i) {
        const double v = max * i / 4.0;
        s += "<text class=\"tick\" x=\"" + number(f.left - 4, "%.1f") + "\" y=\"" +
             number(f.y(v, max) + 4, "%.1f") + "\" text-anchor=\"end\">" +
             number(v, max < 1 ? "%.3f" : "%.1f") + "</text>\n";
    }
    s += "<text x=\"4\" y=\"12\">" + std::string(unit) + "</text>\n";
    return s;
}

// Bars of used GPU-hours per period (stacked by `stack` when given), the capacity and
// available lines, and the utilization printed on each bar.
std::string bar_chart(const Report& r, const std::string& id, const std::string& title,
                      std::optional<View> stack)
{
    Frame f;
    double max = 0;
    for (const auto& p : r.periods) max = std::max({max, p.used / 3600.0, p.capacity / 3600.0});
    max = max > 0 ? max * 1.1 : 1;  // an empty window still draws its axis
    const double slot = f.plot_w() / std::max<size_t>(1, r.periods.size());
    std::string s = svg_open(f, id, title) + axis(f, max, "GPU-h");
    std::string cap_line, avail_line;
    for (size_t i = 0; i < r.periods.size(); ++i) {
        const auto& p = r.periods[i];
        const double x = f.left + slot * i + slot * 0.15, w = slot * 0.7;
        double base = 0;
        auto seg = [&](double hours, const std::string& color, const std::string& key) {
            const double y1 = f.y(base + hours, max), y0 = f.y(base, max);
            s += "<rect class=\"bar\" data-period=\"" + html_escape(p.period.label) +
                 "\" data-key=\"" + html_escape(key) + "\" x=\"" + number(x, "%.1f") + "\" y=\"" +
                 number(y1, "%.1f") + "\" width=\"" + number(w, "%.1f") + "\" height=\"" +
                 number(y0 - y1, "%.1f") + "\" fill=\"" + color + "\"><title>" +
                 html_escape(p.period.label + " " + key) + ": " + number(hours, "%.2f") +
                 " GPU-h</title></rect>\n";
            base += hours;
        };
        if (stack) {
            const auto& keys = keys_of(r, *stack);
            for (size_t k = 0; k < keys.size(); ++k) {
                auto it = split_of(p, *stack).find(keys[k]);
                if (it != split_of(p, *stack).end())
                    seg(it->second / 3600.0, kPalette[k % 10], keys[k]);
            }
        } else {
            seg(p.used / 3600.0, kPalette[0], "used");
        }
        s += "<text class=\"util\" data-period=\"" + html_escape(p.period.label) + "\" x=\"" +
             number(x + w / 2, "%.1f") + "\" y=\"" + number(f.y(p.used / 3600.0, max) - 4, "%.1f") +
             "\" text-anchor=\"middle\">" + percent_text(p.used, p.capacity) + "%</text>\n";
        s += "<text class=\"label\" x=\"" + number(x + w / 2, "%.1f") + "\" y=\"" +
             number(f.height - f.bottom + 16, "%.1f") + "\" text-anchor=\"middle\">" +
             html_escape(p.period.label) + (p.period.provisional ? "*" : "") + "</text>\n";
        const double cx0 = f.left + slot * i, cx1 = cx0 + slot;
        cap_line += number(cx0, "%.1f") + "," + number(f.y(p.capacity / 3600.0, max), "%.1f") +
                    " " + number(cx1, "%.1f") + "," +
                    number(f.y(p.capacity / 3600.0, max), "%.1f") + " ";
        avail_line += number(cx0, "%.1f") + "," + number(f.y(p.available() / 3600.0, max), "%.1f") +
                      " " + number(cx1, "%.1f") + "," +
                      number(f.y(p.available() / 3600.0, max), "%.1f") + " ";
    }
    s += "<polyline class=\"capacity\" fill=\"none\" stroke=\"#000\" stroke-width=\"2\" points=\"" +
         cap_line + "\"/>\n";
    s += "<polyline class=\"available\" fill=\"none\" stroke=\"#c00\" stroke-dasharray=\"6 3\" "
         "points=\"" +
         avail_line + "\"/>\n";
    if (stack) {
        const auto& keys = keys_of(r, *stack);
        for (size_t k = 0; k < keys.size(); ++k)
            s += "<rect x=\"" + number(f.left + 10 + 120.0 * k, "%.1f") +
                 "\" y=\"2\" width=\"10\" height=\"10\" fill=\"" + kPalette[k % 10] +
                 "\"/><text x=\"" + number(f.left + 24 + 120.0 * k, "%.1f") + "\" y=\"11\">" +
                 html_escape(keys[k]) + "</text>\n";
    }
    return s + "</svg></figure>\n";
}

std::string series_chart(const Report& r)
{
    Frame f;
    double max = 0;
    for (const auto& s : r.series) max = std::max(max, s.gpus());
    max = max > 0 ? max * 1.1 : 1;
    const double span = double(std::max<int64_t>(1, r.until - r.from));
    std::string s = svg_open(f, "chart-series", "GPUs in use") + axis(f, max, "GPUs");
    std::string pts;
    for (const auto& p : r.series) {
        const double x0 = f.left + f.plot_w() * double(p.start - r.from) / span;
        const double x1 = f.left + f.plot_w() * double(p.start + p.seconds - r.from) / span;
        const std::string y = number(f.y(p.gpus(), max), "%.1f");
        pts += number(x0, "%.1f") + "," + y + " " + number(x1, "%.1f") + "," + y + " ";
    }
    s += "<polyline class=\"series\" fill=\"none\" stroke=\"#4e79a7\" stroke-width=\"1.5\" "
         "points=\"" +
         pts + "\"/>\n";
    return s + "</svg></figure>\n";
}

std::string html_table(const Table& t, const std::string& name)
{
    std::string s = "<section><h2>" + name + "</h2><p><a class=\"csv\" download=\"" + name +
                    ".csv\" href=\"data:text/csv;charset=utf-8," + uri_encode(render_csv(t)) +
                    "\">Download " + name + ".csv</a></p>\n<table id=\"view-" + name +
                    "\" class=\"view\"><thead><tr>";
    for (const auto& h : t.header) s += "<th>" + html_escape(h) + "</th>";
    s += "</tr></thead><tbody>\n";
    for (const auto& row : t.rows) {
        s += "<tr>";
        for (const auto& c : row) s += "<td>" + html_escape(c) + "</td>";
        s += "</tr>\n";
    }
    return s + "</tbody></table></section>\n";
}

}  // namespace

std::string render_html(const Report& r, const std::string& reconciliation,
                        const std::string& generated_at, const Table* storage)
{
    std::string s =
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "style-src 'unsafe-inline'; img-src data:\">"
        "<title>GPU usage: " +
        html_escape(r.cluster) +
        "</title><style>"
        "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}"
        "figure{margin:1em 0}svg text{font-size:11px}"
        "</style></head><body>\n<h1>GPU usage of " +
        html_escape(r.cluster) + "</h1>\n<p>" + html_escape(utc_time(r.from)) + " to " +
        html_escape(utc_time(r.until)) + ", " + std::to_string(r.runs) + " runs; generated " +
        html_escape(generated_at) +
        ". * marks a provisional period. Black line: capacity; red dashes: available (capacity "
        "less nodes down or drained). Utilization against capacity on each bar.</p>\n<p "
        "id=\"reconciliation\">" +
        html_escape(reconciliation) + "</p>\n";
    s += bar_chart(r, "chart-used", "GPU-hours used per period against capacity", std::nullopt);
    s += bar_chart(r, "chart-team", "GPU-hours by team", View::Team);
    s += bar_chart(r, "chart-tier", "GPU-hours by tier", View::Tier);
    s += series_chart(r);
    for (View v : kViews) {
        if (v == View::User && !r.by_user) continue;
        s += html_table(view_table(r, v), view_name(v));
    }
    if (storage) s += html_table(*storage, "storage");
    return s + "</body></html>\n";
}

}  // namespace allot::report
