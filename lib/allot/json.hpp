// json.hpp - move-only ownership of cJSON trees and a few typed accessors.
//
// cJSON is the project's JSON library (SCIM, OIDC, --json output). A JsonPtr
// owns a root and deletes it once; the accessors never throw and treat a
// missing key or a wrong type alike (nullopt), so parsing code can say
// exactly which field was wrong without dereferencing null.
#pragma once

#include <cJSON.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace allot {

struct JsonDeleter {
    void operator()(cJSON* node) const { cJSON_Delete(node); }
};
using JsonPtr = std::unique_ptr<cJSON, JsonDeleter>;

// Parses at most `max_bytes`; nullptr on malformed input or when too large.
inline JsonPtr json_parse(std::string_view text, size_t max_bytes = 16u << 20)
{
    if (text.size() > max_bytes) return nullptr;
    return JsonPtr(cJSON_ParseWithLength(text.data(), text.size()));
}

// Compact serialisation ("" on allocation failure).
inline std::string json_print(const cJSON* node)
{
    char* text = cJSON_PrintUnformatted(node);
    if (!text) return {};
    std::string out(text);
    cJSON_free(text);
    return out;
}

inline std::optional<std::string> json_string(const cJSON* object, const char* key)
{
    const cJSON* item = cJSON_GetObjectItemCaseSensitive(object, key);
    if (!cJSON_IsString(item) || !item->valuestring) return std::nullopt;
    return std::string(item->valuestring);
}

// Whole numbers in [min, max] only: 1.5, 1e300, "12" and negatives out of range are nullopt.
inline std::optional<int64_t> json_integer(const cJSON* object, const char* key,
                                           int64_t min = INT64_MIN, int64_t max = INT64_MAX)
{
    const cJSON* item = cJSON_GetObjectItemCaseSensitive(object, key);
    if (!cJSON_IsNumber(item)) return std::nullopt;
    const double v = item->valuedouble;
    if (!(v >= -9007199254740992.0 && v <= 9007199254740992.0)) return std::nullopt;
    const auto whole = static_cast<int64_t>(v);
    if (static_cast<double>(whole) != v || whole < min || whole > max) return std::nullopt;
    return whole;
}

inline std::optional<bool> json_bool(const cJSON* object, const char* key)
{
    const cJSON* item = cJSON_GetObjectItemCaseSensitive(object, key);
    if (!cJSON_IsBool(item)) return std::nullopt;
    return cJSON_IsTrue(item) != 0;
}

}  // namespace allot
