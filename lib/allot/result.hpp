// result.hpp - recoverable errors as values.
//
// Functions that can fail on bad input (config, payloads, job fields) return
// Result<T>: either the value or an Error carrying a message meant for a
// person. Exceptions are kept for startup-fatal conditions in programs and
// never cross a shared-object boundary (see docs/STYLE.md).
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace allot {

struct Error {
    std::string message;
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

inline Error make_error(std::string message)
{
    return Error{std::move(message)};
}

}  // namespace allot
