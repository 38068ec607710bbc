// scim_reader.hpp - asks the SCIM source of allot.yaml for what check_scim()
// needs: one page of one user, with the POSIX extension asked for by name,
// and /Schemas, over libcurl with the configured token and CA. Tested against
// the lab's SCIM fixture (tests/doctor-lab.sh).
#pragma once

#include "allot/config.hpp"
#include "scim_checks.hpp"

namespace allot::doctor {

ScimAnswers read_scim(const IdentityConfig& identity);

}  // namespace allot::doctor
