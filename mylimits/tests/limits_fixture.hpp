// limits_fixture.hpp - a lab-shaped set of Slurm facts for the mylimits model tests.
//
// alice is in team-a (project QOS team-a, 8 GPUs) and in the zero-GPU default
// account; general is a 16-GPU pool with a 4-GPU burst cap per team; spot is
// uncapped and preempted by both. The numbers are chosen so that every column
// of the report is distinct and a swapped field shows up in a test.
#pragma once

#include <gtest/gtest.h>

#include "limits.hpp"

namespace allot::testing {

inline Config limits_config()
{
    auto load = parse_config(R"Y(
cluster:
  name: lab
  partition: main
  default_account: default
  join_hint: "ask your PI to add you to a team at https://id.example.org"
tiers:
  general: {qos: general, pool_gpus: 16, per_team_gpus: 4, max_time: "3-00:00:00"}
  spot: {qos: spot, max_time: "1-00:00:00", grace_seconds: 600}
teams:
  - {group: team-a, account: team-a, qos: team-a, gpus: 8, description: "Team A (vision)"}
  - {group: team-b, account: team-b, gpus: 4}
)Y",
                             "limits-test");
    EXPECT_TRUE(load.ok()) << load.errors.joined();
    return *load.config;
}

inline limits::JobFacts job(uint32_t id, const char* state, const char* reason, const char* qos,
                            uint64_t gpus, const char* account = "team-a")
{
    limits::JobFacts j;
    j.job_id = id;
    j.display_id = std::to_string(id);
    j.name = "job" + std::to_string(id);
    j.state = state;
    j.reason = reason;
    j.account = account;
    j.qos = qos;
    j.partition = "main";
    j.gpus = gpus;
    j.submit_time = 1764720000;
    j.time_limit_minutes = 60;
    return j;
}

inline limits::Facts limits_facts()
{
    limits::Facts f;
    f.now = 1764723600;
    f.user = {"alice", 1001, "team-a", true};
    limits::AssocFacts a;
    a.account = "team-a";
    a.qos = {"team-a", "general", "spot"};
    a.default_qos = "team-a";
    a.account_gpus_in_use = 13;
    f.assocs.push_back(a);
    limits::AssocFacts d;
    d.account = "default";
    d.qos = {"general", "spot"};
    d.grp_gpus = 0;
    f.assocs.push_back(d);

    limits::QosFacts p;
    p.name = "team-a";
    p.grp_gpus = 8;
    p.preempt = {"spot"};
    p.usage_known = true;
    p.gpus_in_use = 8;
    p.gpus_in_use_by_account = {{"team-a", 8}};
    limits::QosFacts g;
    g.name = "general";
    g.grp_gpus = 16;
    g.max_gpus_per_account = 4;
    g.max_wall_minutes = 3 * 1440;
    g.preempt = {"spot"};
    g.usage_known = true;
    g.gpus_in_use = 11;
    g.gpus_in_use_by_account = {{"team-a", 3}, {"team-b", 8}};
    limits::QosFacts s;
    s.name = "spot";
    s.max_wall_minutes = 1440;
    s.preempt_requeue = true;
    s.grace_seconds = 600;
    s.usage_known = true;
    s.gpus_in_use = 5;
    s.gpus_in_use_by_account = {{"team-a", 2}};
    f.qos = {p, g, s};

    f.jobs.push_back(job(101, "RUNNING", "None", "team-a", 4));
    f.jobs.push_back(job(102, "PENDING", "QOSGrpGRES", "team-a", 2));
    f.jobs.push_back(job(103, "RUNNING", "None", "general", 1));
    f.jobs.push_back(job(104, "PENDING", "QOSMaxGRESPerAccount", "general", 2));
    auto spot = job(105, "PENDING", "BeginTime", "spot", 1);
    spot.restarts = 1;
    spot.preempt_time = 1764723000;
    spot.eligible_time = 1764723720;
    f.jobs.push_back(spot);
    f.jobs.push_back(job(106, "RUNNING", "None", "spot", 2));
    return f;
}

}  // namespace allot::testing
