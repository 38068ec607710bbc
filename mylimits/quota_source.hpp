// quota_source.hpp - reading one quota source: quotactl(2), a site command or a snapshot.
//
// The system calls sit behind QuotaSystem so unit tests can stand in for the
// kernel (this machine's kernel has no quota format compiled in, so the real
// quotactl path can only be exercised for its failure reporting). A source
// that fails yields an Error (a mylimits::Errc code, or the core's NotFound,
// Io or TooLarge for files) with a sentence saying why; nothing here throws or
// exits.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "allot/result.hpp"
#include "quota.hpp"

namespace allot::mylimits {

// What quotactl(Q_GETQUOTA) reports, in bytes and inodes (if_dqblk).
struct KernelQuota {
    uint64_t bytes_used = 0, bytes_soft = 0, bytes_hard = 0;  // limits 0: none
    uint64_t files_used = 0, files_soft = 0, files_hard = 0;
    int64_t block_grace_expires = 0, file_grace_expires = 0;  // 0: not in grace
};

class QuotaSystem {
public:
    virtual ~QuotaSystem() = default;
    // Block device (or filesystem source) and mount point holding `path`.
    virtual Result<std::pair<std::string, std::string>> device_of(const std::string& path) = 0;
    // quotactl(QCMD(Q_GETQUOTA, USRQUOTA), device, uid); errno on failure.
    virtual int get_user_quota(const std::string& device, uint32_t uid, KernelQuota& out) = 0;
    // Runs argv (no shell) with a time limit; stdout, bounded. CommandFailed,
    // CommandTimedOut or TooLarge.
    virtual Result<std::string> run(const std::vector<std::string>& argv, int timeout_ms) = 0;
    // The file's content; NotFound when it does not exist, Io or TooLarge otherwise.
    virtual Result<std::string> read_file(const std::string& path) = 0;
};

// The real system: /proc/self/mountinfo, quotactl(2), fork+execv, files.
std::unique_ptr<QuotaSystem> make_real_quota_system();

// Reads one source for `user`; never fails, reports instead.
quota::SourceResult read_quota_source(QuotaSystem& sys, const quota::SourceSpec& spec,
                                      const std::string& user, uint32_t uid);

// A quotactl errno as an error of the mylimits area, with a sentence
// ("quotas are not enabled on /home").
Error quotactl_error(int err, const std::string& mount_point);

// The mount entry of `path` in mountinfo text: the longest mount point that is
// a prefix of path; returns {source, mount point}, or NoMount. Pure, for tests.
Result<std::pair<std::string, std::string>> mount_of(const std::string& mountinfo,
                                                     const std::string& path);

}  // namespace allot::mylimits
