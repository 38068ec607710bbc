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

// Where a NUL byte, raw or escaped (\u0000), sits: cJSON keeps strings as C
// strings, so "nul\u0000x" would silently become "nul". nullopt when there is
// none; else the key whose value holds it ("" at the top level), so a caller
// can name the attribute. Keys are tracked per nesting level; a malformed
// text may be misattributed, never missed.
inline std::optional<std::string> nul_holder(std::string_view text)
{
    std::vector<std::string_view> outer;  // the key of each enclosing '{' / '['
    std::string_view key, last;
    bool in_string = false;
    size_t start = 0;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '\0') return std::string(key.substr(0, 64));
        if (in_string) {
            if (c == '\\') {
                if (text.substr(i + 1, 5) == "u0000") return std::string(key.substr(0, 64));
                ++i;  // the escaped character (an escaped backslash among them)
            } else if (c == '"') {
                in_string = false;
                last = text.substr(start, i - start);
            }
        } else if (c == '"') {
            in_string = true;
            start = i + 1;
        } else if (c == ':') {
            key = last;
        } else if ((c == '{' || c == '[') && outer.size() < 4096) {
            outer.push_back(key);
        } else if ((c == '}' || c == ']') && !outer.empty()) {
            key = outer.back();
            outer.pop_back();
        }
    }
    return std::nullopt;
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
    if (auto holder = json_detail::nul_holder(text)) {
        const std::string where = holder->empty() ? "a string" : "\"" + *holder + "\"";
        return refuse((where + " holds a NUL character").c_str());
    }
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
