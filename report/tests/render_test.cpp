// render_test.cpp - the views as CSV, JSON and a self-contained HTML page.
#include "render.hpp"

#include <gtest/gtest.h>

#include "allot/json.hpp"
#include "fixture.hpp"

namespace allot::report {
namespace {

using testing::at;
using testing::run;

Report sample()
{
    static Config config = testing::lab_config();
    const int64_t mon = at("2026-11-30T00:00:00Z");
    Inputs in;
    in.capacity = {{mon - 4 * kWeek, std::nullopt, 16}};
    in.runs = {run(1, "team-a", "team-a", mon, mon + kHour, 2),
               run(2, "team-b", "spot", mon + kHour, mon + 2 * kHour, 4, RunEnd::Requeued)};
    ReportRequest req;
    req.until = req.now = mon + 3 * kHour;
    req.periods = 2;
    Report r = build_report(in, Classifier(config), req);
    r.cluster = "lab";
    return r;
}

TEST(Render, PeriodsCsvHasOneRowPerPeriod)
{
    const std::string csv = render_csv(view_table(sample(), View::Periods));
    EXPECT_EQ(csv.substr(0, csv.find('\n')),
              "period,start,end,provisional,used_gpu_seconds,used_gpu_hours,capacity_gpu_hours,"
              "available_gpu_hours,util_total_pct,util_available_pct,spot_lost_gpu_hours");
    EXPECT_NE(csv.find("2026-W49,2026-11-30T00:00:00Z,2026-11-30T03:00:00Z,yes,21600,6.00,48.00,"
                       "48.00,12.5,12.5,4.00\n"),
              std::string::npos)
        << csv;
    EXPECT_NE(csv.find("2026-W48,"), std::string::npos);
}

TEST(Render, TeamAndTierViews)
{
    const std::string team = render_csv(view_table(sample(), View::Team));
    EXPECT_NE(team.find("2026-W49,team-a,7200,2.00,33.3\n"), std::string::npos) << team;
    EXPECT_NE(team.find("2026-W49,team-b,14400,4.00,66.7\n"), std::string::npos) << team;
    const std::string tier = render_csv(view_table(sample(), View::Tier));
    EXPECT_NE(tier.find("2026-W49,spot,14400,4.00,66.7\n"), std::string::npos) << tier;
}

TEST(Render, CsvQuotesFieldsThatNeedIt)
{
    Table t{{"a", "b"}, {{"x,y", "say \"hi\""}}};
    EXPECT_EQ(render_csv(t), "a,b\n\"x,y\",\"say \"\"hi\"\"\"\n");
}

TEST(Render, SeriesView)
{
    const std::string csv = render_csv(view_table(sample(), View::Series));
    EXPECT_NE(csv.find("2026-11-30T00:00:00Z,3600,7200,2.00\n"), std::string::npos) << csv;
    EXPECT_NE(csv.find("2026-11-30T01:00:00Z,3600,14400,4.00\n"), std::string::npos) << csv;
}

TEST(Render, JsonFollowsTheDocumentedSchema)
{
    const std::string text = render_json(sample(), "reconciliation: x");
    JsonPtr root(cJSON_Parse(text.c_str()));
    ASSERT_TRUE(root);
    EXPECT_STREQ(cJSON_GetObjectItem(root.get(), "schema")->valuestring, "allot-report/1");
    cJSON* periods = cJSON_GetObjectItem(root.get(), "periods");
    ASSERT_EQ(cJSON_GetArraySize(periods), 2);
    cJSON* w49 = cJSON_GetArrayItem(periods, 1);
    EXPECT_EQ(cJSON_GetObjectItem(w49, "used_gpu_seconds")->valuedouble, 21600);
    EXPECT_EQ(cJSON_GetObjectItem(w49, "spot_lost_gpu_seconds")->valuedouble, 14400);
    EXPECT_TRUE(cJSON_IsTrue(cJSON_GetObjectItem(w49, "provisional")));
    EXPECT_EQ(cJSON_GetObjectItem(cJSON_GetObjectItem(w49, "by_team"), "team-a")->valuedouble,
              7200);
    EXPECT_FALSE(cJSON_GetObjectItem(w49, "by_user"));
    EXPECT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(root.get(), "gpus_in_use")), 7 * 24 + 3);
}

TEST(Render, HtmlIsSelfContainedWithEveryChartAndView)
{
    const std::string html = render_html(sample(), "reconciliation: x", "now");
    for (const char* id : {"chart-used", "chart-team", "chart-tier", "chart-series", "view-periods",
                           "view-team", "view-tier", "view-series"})
        EXPECT_NE(html.find(std::string("id=\"") + id + "\""), std::string::npos) << id;
    EXPECT_EQ(html.find("view-user"), std::string::npos);
    EXPECT_NE(html.find("download=\"periods.csv\" href=\"data:text/csv"), std::string::npos);
    EXPECT_NE(html.find(">12.5%</text>"), std::string::npos);  // utilization on the bar
    // Nothing fetched from anywhere: no src= and no http(s) link.
    EXPECT_EQ(html.find("src="), std::string::npos);
    EXPECT_EQ(html.find("href=\"http"), std::string::npos);
    EXPECT_EQ(html.find("<script"), std::string::npos);
}

TEST(Render, TextTableEndsWithTheReconciliation)
{
    const std::string text = render_text(sample(), "reconciliation: here");
    EXPECT_NE(text.find("2026-W49 *"), std::string::npos) << text;
    EXPECT_NE(text.find("by team"), std::string::npos);
    EXPECT_NE(text.find("reconciliation: here\n"), std::string::npos);
}

}  // namespace
}  // namespace allot::report
