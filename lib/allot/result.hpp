// result.hpp - recoverable errors as values.
//
// Functions that can fail on bad input (config, payloads, job fields, I/O)
// return Result<T>: the value, or an Error. An Error is a code plus a detail:
// the code is what callers decide on (never the text); the detail says what and
// where for a person (a key path and line, a user name, a URL). Codes are
// std::error_code values of one enum per area, each area with one table of
// texts (as MUNGE's munge_strerror): see ALLOT_ERROR_AREA below and errors.hpp
// for the areas. Exceptions are kept for startup-fatal conditions in programs
// and never cross a shared-object boundary (see docs/STYLE.md).
#pragma once

#include <string>
#include <system_error>
#include <type_traits>
#include <utility>
#include <variant>

namespace allot {

// One area's table of texts: code i's text is texts[i]; 0 is "success".
class ErrorArea final : public std::error_category {
public:
    template <size_t N>
    constexpr ErrorArea(const char* name, const char* const (&texts)[N]) noexcept
        : name_(name), texts_(texts), count_(N)
    {
    }
    const char* name() const noexcept override { return name_; }
    std::string message(int code) const override { return text(code); }
    const char* text(int code) const noexcept
    {
        return code >= 0 && static_cast<size_t>(code) < count_ ? texts_[code] : "unknown error";
    }

private:
    const char* name_;
    const char* const* texts_;
    size_t count_;
};

// Codes of the core that belong to no narrower area.
enum class Errc {
    Ok = 0,
    Invalid,      // input is malformed or out of range
    NotFound,     // a named thing does not exist
    Io,           // reading or writing a file failed
    Unavailable,  // a service or daemon did not answer
    Refused,      // a safety rule refused the operation
    TooLarge,     // input beyond a documented bound
    Internal,     // a broken invariant (a bug)
};
const std::error_category& core_category() noexcept;
inline std::error_code make_error_code(Errc e) noexcept
{
    return {static_cast<int>(e), core_category()};
}

}  // namespace allot

template <>
struct std::is_error_code_enum<allot::Errc> : std::true_type {};

namespace allot {

struct Error {
    std::error_code code;
    std::string message;  // the detail, written for a person

    Error() = default;
    Error(std::error_code c, std::string detail) : code(c), message(std::move(detail)) {}
    template <typename E, typename = std::enable_if_t<std::is_error_code_enum<E>::value>>
    Error(E e, std::string detail) : code(make_error_code(e)), message(std::move(detail))
    {
    }
    template <typename E, typename = std::enable_if_t<std::is_error_code_enum<E>::value>>
    bool is(E e) const noexcept
    {
        return code == make_error_code(e);
    }
    // "<area text>: <detail>", or the detail alone when it already says it all.
    std::string describe() const
    {
        return message.empty() ? code.message() : message;
    }
};

template <typename T>
class Result {
public:
    Result(T value) : state_(std::move(value)) {}      // NOLINT: implicit by design
    Result(Error error) : state_(std::move(error)) {}  // NOLINT: implicit by design

    bool ok() const { return std::holds_alternative<T>(state_); }
    explicit operator bool() const { return ok(); }

    const T& value() const& { return std::get<T>(state_); }
    T& value() & { return std::get<T>(state_); }
    T&& value() && { return std::get<T>(std::move(state_)); }
    const Error& error() const { return std::get<Error>(state_); }

private:
    std::variant<T, Error> state_;
};

// For operations that return nothing but can fail.
struct Unit {};
using Status = Result<Unit>;
inline Status ok_status()
{
    return Unit{};
}

template <typename E, typename = std::enable_if_t<std::is_error_code_enum<E>::value>>
Error make_error(E code, std::string detail)
{
    return Error(code, std::move(detail));
}
// A detail with the core's generic code; prefer a specific code where a caller
// could act on it.
inline Error make_error(std::string detail)
{
    return Error(Errc::Invalid, std::move(detail));
}

}  // namespace allot

// Declares an area's enum as an error_code enum with its category. Use at
// global scope after the enum: ALLOT_ERROR_AREA(allot::scim, Errc)
// and define `const std::error_category& category() noexcept` in the area's
// namespace with a static ErrorArea holding the table.
#define ALLOT_ERROR_AREA(ns, Enum)                                               \
    namespace ns {                                                               \
    const std::error_category& category() noexcept;                              \
    inline std::error_code make_error_code(Enum e) noexcept                      \
    {                                                                            \
        return {static_cast<int>(e), category()};                                \
    }                                                                            \
    }                                                                            \
    template <>                                                                  \
    struct std::is_error_code_enum<ns::Enum> : std::true_type {}
