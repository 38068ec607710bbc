// fake_limits.hpp - an in-memory LimitsView for unit tests of the policy.
#pragma once

#include <map>
#include <string>

#include "allot/policy.hpp"

namespace allot::testing {

class FakeLimits : public LimitsView {
public:
    std::map<std::string, QosLimits, std::less<>> qos_by_name;
    std::optional<QosLimits> qos(std::string_view name) const override
    {
        auto it = qos_by_name.find(name);
        if (it == qos_by_name.end()) return std::nullopt;
        return it->second;
    }
};

}  // namespace allot::testing
