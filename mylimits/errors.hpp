// errors.hpp - the mylimits error area: what went wrong, and the exit code it gives.
//
// Every failure that stops the report carries one of these codes; exit_code()
// turns it into the documented exit status (mylimits(1), docs/mylimits.md), so
// the status never depends on the wording. Quota sources that cannot be read
// are not fatal: their code (allot/quota.hpp's area) travels in the storage section.
#pragma once

#include "allot/result.hpp"

namespace allot::mylimits {

enum class Errc {
    Ok = 0,
    Usage,          // bad command line
    Config,         // allot.yaml missing or invalid
    SlurmctldDown,  // slurmctld did not answer (or SLURM_CONF cannot be read)
    SlurmdbdDown,   // slurmdbd did not answer
    Denied,         // --user/--account on someone else without root or Operator
    NoSuchUser,     // no passwd entry for the user (or the caller)
    NoAssociation,  // the user has no association with --account
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
