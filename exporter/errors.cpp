// errors.cpp - the exporter area's texts (see errors.hpp).
#include "errors.hpp"

namespace allot::exporter {

namespace {
constexpr const char* kTexts[] = {
    "success",
    "bad command line",
    "configuration error",
    "slurmctld unreachable",
    "cannot listen on the HTTP port",
};
}  // namespace

const std::error_category& category() noexcept
{
    static const ErrorArea area("exporter", kTexts);
    return area;
}

}  // namespace allot::exporter
