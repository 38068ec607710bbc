// patch.hpp - RFC 7644 §3.5.2 PATCH on the in-memory resource model.
//
// The service loads the resource, applies every operation here (all or
// nothing: the caller only writes the result if every operation succeeded),
// validates, and stores it with the version it read. Operation names are
// case-insensitive ("Replace" from Entra ID), a no-path operation merges an
// object value (Okta), and Group members are added/removed by id, by a
// `members[value eq "…"]` path or by a value list.
#pragma once

#include <string>

#include "allot/json.hpp"
#include "codec.hpp"
#include "store.hpp"

namespace allot::scimd {

// Errors are 400 with scimType invalidSyntax, invalidPath, noTarget,
// invalidValue or mutability.
Result<Unit> apply_user_patch(scim::User& user, const cJSON* body,
                              const std::string& user_extension);
Result<Unit> apply_group_patch(scim::Group& group, const cJSON* body);

}  // namespace allot::scimd
