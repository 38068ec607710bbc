// util.hpp - small helpers shared by allot-scimd's modules: base64url,
// hashing, randomness, string case, constant-time comparison and /metrics lines.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

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

// Appends one Prometheus counter family to `out`: HELP, TYPE and a sample per
// label set ("" or "{key=\"value\"}").
void append_counter(std::string& out, const char* name, const char* help,
                    std::initializer_list<std::pair<const char*, uint64_t>> samples);

}  // namespace allot::scimd
