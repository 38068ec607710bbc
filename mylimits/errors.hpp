// errors.hpp - the mylimits error area: what went wrong, and the exit code it gives.
//
// Every failure that stops the report carries one of these codes; exit_code()
// turns it into the documented exit status (mylimits(1), docs/mylimits.md), so
// the status never depends on the wording. Quota sources that cannot be read
// are not fatal: their code travels in the report's storage section.
#pragma once

#include "allot/result.hpp"

namespace allot::mylimits {

enum class Errc {
    Ok = 0,
    Usage,              // bad command line
    Config,             // allot.yaml missing or invalid
    SlurmctldDown,      // slurmctld did not answer (or SLURM_CONF cannot be read)
    SlurmdbdDown,       // slurmdbd did not answer
    Denied,             // --user/--account on someone else without root or Operator
    NoSuchUser,         // no passwd entry for the user (or the caller)
    NoAssociation,      // the user has no association with --account
    QuotaConfInvalid,   // quota.conf has a bad line
    NoMount,            // no filesystem is mounted at a quota source's path
    QuotasOff,          // quotactl: quotas are not enabled on the filesystem
    QuotasUnsupported,  // quotactl: kernel or filesystem without quota support
    NotLocalDevice,     // quotactl: not a local block device (NFS, Lustre...)
    QuotaDenied,        // quotactl: not allowed to read the quota
    QuotactlFailed,     // quotactl: any other errno
    CommandFailed,      // a command source could not run, or failed
    CommandTimedOut,    // a command source did not answer in time
    BadQuotaData,       // a command's table or a snapshot could not be parsed
};

// Documented exit codes.
enum ExitCode : int {
    kExitOk = 0,         // report printed (missing quota sources are reported inside it)
    kExitInternal = 1,   // a bug: an exception reached main()
    kExitUsage = 2,      // bad command line
    kExitConfig = 3,     // allot.yaml missing or invalid
    kExitSlurm = 4,      // slurmdbd or slurmctld unreachable
    kExitDenied = 5,     // --user/--account on someone else without root or Operator
    kExitNoSuchUser = 6  // unknown user, or the user has no association with --account
};

// The exit status an error that stopped the report gives.
int exit_code(const Error& error) noexcept;

}  // namespace allot::mylimits

ALLOT_ERROR_AREA(allot::mylimits, Errc);
