// quota.hpp - mylimits reads storage quotas through the shared quota sources of lib/
// (allot/quota.hpp: quota.conf, tables, snapshots; allot-report records them too).
#pragma once

#include "allot/quota.hpp"
