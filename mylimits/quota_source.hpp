// quota_source.hpp - the quota system seam of lib/ (allot/quota.hpp) under mylimits' names.
#pragma once

#include "allot/quota.hpp"

namespace allot::mylimits {

using quota::KernelQuota;
using quota::make_real_quota_system;
using quota::mount_of;
using quota::quotactl_error;
using quota::QuotaSystem;
using quota::read_quota_source;

}  // namespace allot::mylimits
