// errors.cpp - the mylimits area's texts and its exit codes (see errors.hpp).
#include "errors.hpp"

namespace allot::mylimits {

namespace {
constexpr const char* kTexts[] = {
    "success",
    "bad command line",
    "configuration error",
    "slurmctld unreachable",
    "slurmdbd unreachable",
    "permission denied",
    "no such user",
    "no association with the account",
};
}  // namespace

const std::error_category& category() noexcept
{
    static const ErrorArea area("mylimits", kTexts);
    return area;
}

int exit_code(const Error& error) noexcept
{
    if (error.code.category() != category()) return kExitInternal;
    switch (static_cast<Errc>(error.code.value())) {
        case Errc::Ok: return kExitOk;
        case Errc::Usage: return kExitUsage;
        case Errc::Config: return kExitConfig;
        case Errc::SlurmctldDown:
        case Errc::SlurmdbdDown: return kExitSlurm;
        case Errc::Denied: return kExitDenied;
        case Errc::NoSuchUser:
        case Errc::NoAssociation: return kExitNoSuchUser;
    }
    return kExitInternal;
}

}  // namespace allot::mylimits
