// fixture.hpp - shared test data: the lab's allot.yaml (team-a, team-b; general, spot) and
// helpers to write run records and UTC instants briefly.
#pragma once

#include <gtest/gtest.h>

#include "allot/config.hpp"
#include "periods.hpp"
#include "records.hpp"

namespace allot::report::testing {

inline Config lab_config()
{
    static const char* kYaml = R"(cluster:
  name: lab
tiers:
  general:
    qos: general
    pool_gpus: 8
    per_team_gpus: 4
  spot:
    qos: spot
teams:
  - group: team-a
    account: team-a
    gpus: 8
  - group: team-b
    account: team-b
    gpus: 4
)";
    ConfigLoad c = parse_config(kYaml, "test.yaml");
    EXPECT_TRUE(c.ok()) << c.errors.joined();
    return *c.config;
}

// Unix seconds of a UTC time written as in ISO 8601 ("2026-11-30T00:00:00Z").
inline int64_t at(const char* text)
{
    auto t = parse_utc_time(text);
    EXPECT_TRUE(t.ok()) << text;
    return t.ok() ? t.value() : 0;
}

inline RunRecord run(uint32_t id, const char* account, const char* qos, int64_t start,
                     std::optional<int64_t> end, uint32_t gpus, RunEnd state = RunEnd::Completed)
{
    RunRecord r;
    r.job_id = id;
    r.account = account;
    r.qos = qos;
    r.user = "alice";
    r.start = start;
    r.end = end;
    r.gpus = gpus;
    r.state = end ? state : RunEnd::Running;
    return r;
}

}  // namespace allot::report::testing
