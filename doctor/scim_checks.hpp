// scim_checks.hpp - checks of the SCIM source allot-syncd reads (pure): it
// answers with the configured token, lists the POSIX extension among its
// schemas when it serves /Schemas, and a sample page of Users carries it (a
// source not asked for its extension, or without one, gives users no UID).
// The answers are fetched by scim_reader.hpp.
#pragma once

#include <string>

#include "allot/config.hpp"
#include "allot/http_client.hpp"
#include "allot/result.hpp"
#include "finding.hpp"

namespace allot::doctor {

struct ScimAnswers {
    std::string users_url;  // the sample page asked for
    Result<HttpResponse> users = make_error("not asked");
    Result<HttpResponse> schemas = make_error("not asked");
    std::string token_error;  // the token file could not be read
};

Findings check_scim(const ScimAnswers& in, const IdentityConfig& identity);

}  // namespace allot::doctor
