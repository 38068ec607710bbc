// result.cpp - the core area's table of error texts.
#include "allot/result.hpp"

namespace allot {

namespace {
constexpr const char* kCoreTexts[] = {
    "success",
    "invalid input",
    "not found",
    "input/output error",
    "service unavailable",
    "refused by a safety rule",
    "input too large",
    "internal error",
};
}  // namespace

const std::error_category& core_category() noexcept
{
    static const ErrorArea area("allot", kCoreTexts);
    return area;
}

}  // namespace allot
