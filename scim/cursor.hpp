// cursor.hpp - the opaque cursor of cursor paging (draft-ietf-scim-cursor-pagination).
//
// A cursor is the sort key and id of the last row a page returned, base64url
// encoded; the next page starts after that key. Anything we did not encode
// fails to decode (an invalidCursor answer, never a crash).
#pragma once

#include <optional>
#include <string>

namespace allot::scimd {

struct Cursor {
    std::string key;
    std::string id;
};

std::string encode_cursor(const Cursor& cursor);
std::optional<Cursor> decode_cursor(const std::string& text);

}  // namespace allot::scimd
