// errors.cpp - the report area's texts and exit codes (see errors.hpp).
#include "errors.hpp"

namespace allot::report {

namespace {
constexpr const char* kTexts[] = {
    "success",
    "bad command line",
    "configuration error",
    "slurmdbd unreachable",
    "slurmdbd has no gres/gpu TRES",
    "cannot write output",
};
}  // namespace

const std::error_category& category() noexcept
{
    static const ErrorArea area("report", kTexts);
    return area;
}

int exit_code(const Error& error) noexcept
{
    if (error.code.category() != category()) return kExitInternal;
    switch (static_cast<Errc>(error.code.value())) {
        case Errc::Ok: return kExitOk;
        case Errc::Usage: return kExitUsage;
        case Errc::Config: return kExitConfig;
        case Errc::SlurmdbdDown:
        case Errc::NoGpuTres: return kExitSlurm;
        case Errc::Output: return kExitOutput;
    }
    return kExitInternal;
}

}  // namespace allot::report
