// cursor.cpp - see cursor.hpp.
#include "cursor.hpp"

#include "util.hpp"

namespace allot::scimd {

namespace {
constexpr char kSeparator = '\x1f';
constexpr size_t kMaxCursor = 1024;
}  // namespace

std::string encode_cursor(const Cursor& cursor)
{
    return base64url_encode(cursor.key + kSeparator + cursor.id);
}

std::optional<Cursor> decode_cursor(const std::string& text)
{
    if (text.empty() || text.size() > kMaxCursor) return std::nullopt;
    auto raw = base64url_decode(text);
    if (!raw) return std::nullopt;
    const size_t sep = raw->find(kSeparator);
    if (sep == std::string::npos || raw->find(kSeparator, sep + 1) != std::string::npos)
        return std::nullopt;
    return Cursor{raw->substr(0, sep), raw->substr(sep + 1)};
}

}  // namespace allot::scimd
