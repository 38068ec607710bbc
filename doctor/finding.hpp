// finding.hpp - what allot-doctor reports: one finding per check, with what is
// wrong, why it matters and the exact line or command that fixes it.
//
// Pure: the checks (slurm_checks.hpp, accounting_checks.hpp) return these, the
// readers never do anything but gather inputs, and main() only renders them.
#pragma once

#include <string>
#include <vector>

namespace allot::doctor {

enum class Severity { Ok, Warn, Fail };

struct Finding {
    std::string id;  // stable name of the check, e.g. "slurm.accounting_tres"
    Severity severity = Severity::Ok;
    std::string what;  // what is wrong (or, when ok, what was verified)
    std::string why;   // why it matters, one sentence; empty when ok
    std::string fix;   // the exact slurm.conf line or command; empty when ok
};

using Findings = std::vector<Finding>;

Finding ok(std::string id, std::string what);
Finding problem(Severity severity, std::string id, std::string what, std::string why,
                std::string fix);

const char* severity_name(Severity s);

// 0 when every finding is ok, 1 when the worst is a warning, 2 on any failure.
int exit_code(const Findings& findings);

// Human report: problems first with their why and fix, then one line per passed check.
std::string render_text(const Findings& findings);
// {"findings":[{"id","severity","what","why","fix"}...],"exit":N}
std::string render_json(const Findings& findings);

}  // namespace allot::doctor
