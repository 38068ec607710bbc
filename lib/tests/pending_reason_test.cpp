// pending_reason_test.cpp - Slurm reason names to causes, and the causes' short words.
#include <gtest/gtest.h>

#include "allot/pending_reason.hpp"

namespace allot {
namespace {

TEST(PendingReason, GpuLimitsByTheirSlurmNames)
{
    EXPECT_EQ(pending_cause("QOSGrpGRES"), PendingCause::TierGroupCap);
    EXPECT_EQ(pending_cause("QOSGrpGRESRunMinutes"), PendingCause::TierGroupCap);
    EXPECT_EQ(pending_cause("QOSMaxGRESPerAccount"), PendingCause::TeamBurstCap);
    EXPECT_EQ(pending_cause("MaxGRESPerAccount"), PendingCause::TeamBurstCap);
    EXPECT_EQ(pending_cause("QOSMaxGRESPerUser"), PendingCause::UserCap);
    EXPECT_EQ(pending_cause("MaxGRESPerJob"), PendingCause::JobTooLarge);
    EXPECT_EQ(pending_cause("AssocGrpGRES"), PendingCause::AccountGpuLimit);
    EXPECT_EQ(pending_cause("PartitionTimeLimit"), PendingCause::TimeLimit);
}

TEST(PendingReason, JobCountLimitsBeforeTheirLimitFamily)
{
    EXPECT_EQ(pending_cause("QOSMaxJobsPerUserLimit"), PendingCause::JobCountLimit);
    EXPECT_EQ(pending_cause("AssocGrpJobsLimit"), PendingCause::JobCountLimit);
    EXPECT_EQ(pending_cause("QOSGrpCpuLimit"), PendingCause::OtherLimit);
    EXPECT_EQ(pending_cause("AssocMaxMemPerJob"), PendingCause::OtherLimit);
}

TEST(PendingReason, SchedulerStatesAndUnknownNames)
{
    EXPECT_EQ(pending_cause("Priority"), PendingCause::Priority);
    EXPECT_EQ(pending_cause("Resources"), PendingCause::Resources);
    EXPECT_EQ(pending_cause("JobHeldAdmin"), PendingCause::HeldByAdmin);
    EXPECT_EQ(pending_cause("launch_failed_requeued_held"), PendingCause::HeldAfterLaunchFailure);
    EXPECT_EQ(pending_cause("None"), PendingCause::None);
    EXPECT_EQ(pending_cause(""), PendingCause::None);
    EXPECT_EQ(pending_cause("SomeFutureReason"), PendingCause::Other);
    EXPECT_EQ(pending_cause("qosgrpgres"), PendingCause::Other);  // Slurm's names are exact
}

TEST(PendingReason, LabelsNameTheTiersCapAndTheRequeue)
{
    EXPECT_EQ(pending_label(PendingCause::TierGroupCap, Tier::Project, false), "project cap");
    EXPECT_EQ(pending_label(PendingCause::TierGroupCap, Tier::General, false), "general pool");
    EXPECT_EQ(pending_label(PendingCause::TierGroupCap, Tier::Spot, false), "group limit");
    EXPECT_EQ(pending_label(PendingCause::TeamBurstCap, Tier::General, false), "team burst cap");
    EXPECT_EQ(pending_label(PendingCause::BeginTime, Tier::Spot, true),
              "requeued after preemption");
    EXPECT_EQ(pending_label(PendingCause::BeginTime, Tier::Spot, false), "begin time");
    EXPECT_EQ(pending_label(PendingCause::InvalidQos, Tier::None, false), "not allowed");
    EXPECT_EQ(pending_label(PendingCause::Other, Tier::None, false), "other");
}

}  // namespace
}  // namespace allot
