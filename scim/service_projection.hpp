// service_projection.hpp - attributes / excludedAttributes (RFC 7644 §3.9):
// which attributes of a rendered resource a response keeps.
#pragma once

#include <string>
#include <vector>

#include "allot/json.hpp"
#include "filter.hpp"
#include "service.hpp"

namespace allot::scimd {

struct Projection {
    std::vector<AttrPath> include, exclude;
    bool extension = true;  // render the POSIX extension at all
};

// The projection a request asks for; `ext` is the resource's extension URN.
Projection projection(const HttpRequest& r, const ServiceOptions& o, const std::string& ext);

// Removes what `include`/`exclude` leave out; `id` and `schemas` always stay.
void project(cJSON* resource, const std::vector<AttrPath>& include,
             const std::vector<AttrPath>& exclude);

}  // namespace allot::scimd
