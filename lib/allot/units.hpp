// units.hpp - Slurm's spellings of durations, memory sizes and counts.
//
// Durations use Slurm's --time grammar ("60", "1:00:00", "3-00:00:00",
// "UNLIMITED"); memory uses --mem's ("16G", "512M", plain MB). Parsing is
// strict and overflow-safe because these strings come from users and from
// the config file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "allot/result.hpp"

namespace allot {

// Minutes; kUnlimitedMinutes stands for Slurm's INFINITE.
inline constexpr uint32_t kUnlimitedMinutes = 0xffffffffu;

// Parses a Slurm time limit into whole minutes (seconds round up, as Slurm does).
Result<uint32_t> parse_duration_minutes(std::string_view text);

// Formats minutes the way scontrol prints a TimeLimit: "D-HH:MM:SS" or "HH:MM:SS".
std::string format_minutes(uint32_t minutes);

// Parses "16G", "1024M", "1T", "2048" (MB) into megabytes.
Result<uint64_t> parse_memory_mb(std::string_view text);

// Formats megabytes as Slurm does in TRES strings: "16G" when whole, else "1500M".
std::string format_memory_mb(uint64_t mb);

// Parses a non-negative decimal integer with no sign, spaces or suffix; nullopt on
// anything else, including overflow past `max`.
std::optional<uint64_t> parse_count(std::string_view text, uint64_t max = UINT64_MAX);

}  // namespace allot
