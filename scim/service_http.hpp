// service_http.hpp - the response and request helpers every allot-scimd
// endpoint uses: SCIM and OAuth error bodies, JSON responses, query and header
// access, the checked JSON body. Internal to the service (service*.cpp).
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "allot/json.hpp"
#include "errors.hpp"
#include "service.hpp"

namespace allot::scimd {

// The SCIM error response for `e`: status and scimType from the code's row.
HttpResponse scim_error(const Error& e);
HttpResponse scim_error(Errc code, const std::string& detail);
// The answer to an at_hand_only request that needs more than memory (service.hpp).
inline HttpResponse not_at_hand()
{
    HttpResponse r;
    r.status = kNotAtHand;
    return r;
}
HttpResponse json_response(int status, const cJSON* json,
                           const char* type = "application/scim+json");
// An OAuth 2.0 error body (RFC 6749 §5.2), never cached.
HttpResponse oauth_error(int status, const std::string& error, const std::string& description);

// A query parameter by case-insensitive name, or null.
const std::string* query(const HttpRequest& r, const char* name);
std::vector<std::string> split_csv(const std::string& s);
// Our resource ids are lower-case UUIDs; anything else names nothing.
bool valid_id(const std::string& id);
// The version an If-Match header pins: 0 for none or "*", -1 when malformed.
int64_t if_match_version(const HttpRequest& r);
// Parses a SCIM request body into `out`, or the error response to send.
std::optional<HttpResponse> check_body(const HttpRequest& r, size_t max, JsonPtr& out);
cJSON* string_array(std::initializer_list<const char*> items);

}  // namespace allot::scimd
