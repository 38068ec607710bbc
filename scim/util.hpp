// util.hpp - small helpers shared by allot-scimd's modules: base64url,
// hashing, randomness, string case and constant-time comparison.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace allot::scimd {

std::string base64url_encode(std::string_view bytes);
// Strict: only the URL-safe alphabet, no padding, no whitespace.
std::optional<std::string> base64url_decode(std::string_view text);
std::string base64_encode(std::string_view bytes);

std::string sha256(std::string_view bytes);  // raw 32 bytes
std::string hex(std::string_view bytes);
std::string random_bytes(size_t n);  // throws on RNG failure (startup-fatal class)

std::string to_lower(std::string_view s);

// URL-decoding for application/x-www-form-urlencoded bodies.
std::optional<std::string> url_decode(std::string_view s, bool plus_is_space = true);

}  // namespace allot::scimd
