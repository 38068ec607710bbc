// errors.hpp - allot-scimd's error area: one code per way a store or service
// operation fails, and the table that turns a code into the HTTP status and
// SCIM scimType (RFC 7644 §3.12) it is answered with.
//
// The store and the service return allot::Result with these codes; the
// response is derived from the code, never from message text, so the same
// failure always gets the same answer.
#pragma once

#include <string>

#include "allot/result.hpp"

namespace allot::scimd {

enum class Errc {
    Ok = 0,
    NotFound,          // 404: no such resource or endpoint
    Uniqueness,        // 409 uniqueness: a name or id is taken
    Conflict,          // 409: concurrent modification, retry
    VersionMismatch,   // 412: If-Match names another version
    Mutability,        // 400 mutability: an immutable or read-only attribute
    InvalidValue,      // 400 invalidValue: a value is malformed or out of range
    InvalidFilter,     // 400 invalidFilter
    InvalidSyntax,     // 400 invalidSyntax: the body is not what SCIM asks for
    InvalidPath,       // 400 invalidPath: a PATCH path names nothing we have
    NoTarget,          // 400 noTarget: a PATCH filter matched nothing
    InvalidCursor,     // 400 invalidCursor: a cursor we did not hand out
    BadRequest,        // 400: a malformed request line or path
    Unauthorized,      // 401: no, unknown, revoked or expired token
    Forbidden,         // 403: the token lacks the scope
    MethodNotAllowed,  // 405
    TooLarge,          // 413 tooLarge: body over the limit
    UnsupportedMedia,  // 415 invalidSyntax: wrong content type
    Exhausted,         // 507: the uid/gid range is used up
    Internal,          // 500: the database failed, or a bug
};

}  // namespace allot::scimd

ALLOT_ERROR_AREA(allot::scimd, Errc);

namespace allot::scimd {

struct HttpClass {
    int status;
    const char* scim_type;  // "" when SCIM defines none for the status
};

// The status and scimType an error is answered with. Codes of other areas
// (the codec's and the identity validator's) are the client's mistakes: 400
// invalidValue, except the core's Internal/Io/Unavailable (500) and NotFound.
HttpClass http_class(const Error& error);

}  // namespace allot::scimd
