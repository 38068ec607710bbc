// render.hpp - the report's views as tables (terminal, CSV, HTML share the same strings),
// as JSON (schema: docs/report.md) and as a self-contained HTML page with inline SVG.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "usage.hpp"

namespace allot::report {

// periods: used against capacity per period; team, tier, user: GPU-hours per period and
// key; series: GPUs in use over time.
enum class View { Periods, Team, Tier, User, Series };
inline constexpr View kViews[] = {View::Periods, View::Team, View::Tier, View::User, View::Series};

const char* view_name(View view);
std::optional<View> view_from_name(std::string_view name);

struct Table {
    std::vector<std::string> header;
    std::vector<std::vector<std::string>> rows;
};

Table view_table(const Report& report, View view);
std::string hours_text(uint64_t gpu_seconds);             // "12.50"
std::string percent_text(uint64_t part, uint64_t whole);  // "41.7" or "-" of nothing

std::string render_csv(const Table& table);
// `storage`, when given, is the storage view (storage.hpp): the terminal shows its latest
// sample, JSON carries it whole as "storage", the page as one more table with its CSV.
// The terminal report: periods, then team and tier totals, then `reconciliation`.
std::string render_text(const Report& report, const std::string& reconciliation,
                        const Table* storage = nullptr);
std::string render_json(const Report& report, const std::string& reconciliation,
                        const Table* storage = nullptr);
// index.html: charts, one table per view and a CSV download per view, no network fetch.
std::string render_html(const Report& report, const std::string& reconciliation,
                        const std::string& generated_at, const Table* storage = nullptr);

}  // namespace allot::report
