// errors.cpp - the scimd error area's texts and HTTP classes (see errors.hpp).
#include "errors.hpp"

#include <cstddef>

namespace allot::scimd {
namespace {

struct Row {
    const char* text;
    HttpClass http;
};

// Indexed by Errc; keep in the enum's order.
constexpr Row kRows[] = {
    {"success", {200, ""}},
    {"not found", {404, ""}},
    {"already taken", {409, "uniqueness"}},
    {"modified concurrently", {409, ""}},
    {"version mismatch", {412, ""}},
    {"attribute is immutable", {400, "mutability"}},
    {"invalid value", {400, "invalidValue"}},
    {"invalid filter", {400, "invalidFilter"}},
    {"invalid syntax", {400, "invalidSyntax"}},
    {"invalid path", {400, "invalidPath"}},
    {"no target", {400, "noTarget"}},
    {"invalid cursor", {400, "invalidCursor"}},
    {"bad request", {400, "invalidValue"}},
    {"unauthorized", {401, ""}},
    {"forbidden", {403, ""}},
    {"method not allowed", {405, ""}},
    {"request too large", {413, "tooLarge"}},
    {"unsupported media type", {415, "invalidSyntax"}},
    {"id range exhausted", {507, ""}},
    {"internal error", {500, ""}},
};
constexpr size_t kCount = sizeof kRows / sizeof kRows[0];
static_assert(kCount == static_cast<size_t>(Errc::Internal) + 1, "one row per Errc");

constexpr auto texts()
{
    struct Texts {
        const char* t[kCount];
    } out{};
    for (size_t i = 0; i < kCount; ++i) out.t[i] = kRows[i].text;
    return out;
}
constexpr auto kTexts = texts();

}  // namespace

const std::error_category& category() noexcept
{
    static const ErrorArea area("scimd", kTexts.t);
    return area;
}

HttpClass http_class(const Error& e)
{
    if (e.code.category() == category()) {
        const int c = e.code.value();
        if (c > 0 && static_cast<size_t>(c) < kCount) return kRows[c].http;
        return {500, ""};
    }
    if (e.is(allot::Errc::Internal) || e.is(allot::Errc::Io) || e.is(allot::Errc::Unavailable))
        return {500, ""};
    if (e.is(allot::Errc::NotFound)) return {404, ""};
    return {400, "invalidValue"};
}

}  // namespace allot::scimd
