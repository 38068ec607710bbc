// json.hpp - move-only ownership of cJSON trees and a few typed accessors.
//
// cJSON is the project's JSON library (SCIM, OIDC, --json output). A JsonPtr
// owns a root and deletes it once; the accessors never throw and treat a
// missing key or a wrong type alike (nullopt), so parsing code can say
// exactly which field was wrong without dereferencing null.
#pragma once

#include <cJSON.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace allot {

struct JsonDeleter {
    void operator()(cJSON* node) const { cJSON_Delete(node); }
};
using JsonPtr = std::unique_ptr<cJSON, JsonDeleter>;

namespace json_detail {

// A NUL byte, raw or escaped (\u0000): cJSON keeps strings as C strings, so
// "nul\u0000x" would silently become "nul".
inline bool has_nul(std::string_view text)
{
    if (text.find('\0') != std::string_view::npos) return true;
    for (size_t i = 0; i + 1 < text.size(); ++i) {
        if (text[i] != '\\') continue;
        if (text[i + 1] == 'u' && text.substr(i + 2, 4) == "0000") return true;
        ++i;  // skip the escaped character (an escaped backslash among them)
    }
    return false;
}

// An object that names a key twice: readers could disagree on which one counts.
inline bool has_duplicate_key(const cJSON* node)
{
    std::vector<std::string_view> keys;
    for (const cJSON* c = node->child; c; c = c->next) {
        if (cJSON_IsObject(node) && c->string) keys.emplace_back(c->string);
        if (c->child && has_duplicate_key(c)) return true;
    }
    std::sort(keys.begin(), keys.end());
    return std::adjacent_find(keys.begin(), keys.end()) != keys.end();
}

}  // namespace json_detail

// Parses at most `max_bytes`; nullptr on malformed input, when too large, when
// anything but whitespace follows the document, on a NUL in a string and on a
// key given twice in one object. `why`, when given, says which.
inline JsonPtr json_parse(std::string_view text, size_t max_bytes = 16u << 20,
                          std::string* why = nullptr)
{
    auto refuse = [why](const char* reason) {
        if (why) *why = reason;
        return JsonPtr();
    };
    if (text.size() > max_bytes) return refuse("too large");
    if (json_detail::has_nul(text)) return refuse("a string holds a NUL character");
    const char* end = nullptr;
    JsonPtr root(cJSON_ParseWithLengthOpts(text.data(), text.size(), &end, false));
    if (!root || !end) return refuse("malformed");
    const std::string_view rest = text.substr(static_cast<size_t>(end - text.data()));
    if (rest.find_first_not_of(" \t\r\n") != std::string_view::npos)
        return refuse("bytes follow the document");
    if (json_detail::has_duplicate_key(root.get())) return refuse("an object names a key twice");
    return root;
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
