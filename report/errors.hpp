// errors.hpp - the report error area: what stopped allot-report, and its exit code.
#pragma once

#include "allot/result.hpp"

namespace allot::report {

enum class Errc {
    Ok = 0,
    Usage,         // bad command line
    Config,        // allot.yaml missing or invalid
    SlurmdbdDown,  // slurmdbd did not answer (or the Slurm configuration cannot be read)
    NoGpuTres,     // slurmdbd knows no gres/gpu TRES: nothing to count
    Output,        // an output file or directory cannot be written
};

enum ExitCode : int {
    kExitOk = 0,
    kExitInternal = 1,  // a bug: an exception reached main()
    kExitUsage = 2,
    kExitConfig = 3,
    kExitSlurm = 4,  // slurmdbd unreachable, or no gres/gpu TRES
    kExitOutput = 5,
};

int exit_code(const Error& error) noexcept;

}  // namespace allot::report

ALLOT_ERROR_AREA(allot::report, Errc);
