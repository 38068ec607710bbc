// finding.cpp - rendering and the exit status of allot-doctor's findings.
#include "finding.hpp"

#include <algorithm>

#include "allot/json.hpp"

namespace allot::doctor {

Finding ok(std::string id, std::string what)
{
    return Finding{std::move(id), Severity::Ok, std::move(what), {}, {}};
}

Finding problem(Severity severity, std::string id, std::string what, std::string why,
                std::string fix)
{
    return Finding{std::move(id), severity, std::move(what), std::move(why), std::move(fix)};
}

const char* severity_name(Severity s)
{
    switch (s) {
        case Severity::Ok: return "ok";
        case Severity::Warn: return "warn";
        case Severity::Fail: return "fail";
    }
    return "fail";
}

int exit_code(const Findings& findings)
{
    int worst = 0;
    for (const Finding& f : findings) {
        if (f.severity == Severity::Fail) worst = std::max(worst, 2);
        if (f.severity == Severity::Warn) worst = std::max(worst, 1);
    }
    return worst;
}

namespace {

void append_problem(std::string& out, const Finding& f)
{
    out += std::string(severity_name(f.severity)) + "  " + f.id + ": " + f.what + "\n";
    if (!f.why.empty()) out += "      why: " + f.why + "\n";
    if (!f.fix.empty()) out += "      fix: " + f.fix + "\n";
}

}  // namespace

std::string render_text(const Findings& findings)
{
    std::string out;
    for (const Finding& f : findings)
        if (f.severity != Severity::Ok) append_problem(out, f);
    for (const Finding& f : findings)
        if (f.severity == Severity::Ok) out += "ok    " + f.id + ": " + f.what + "\n";
    size_t problems = std::count_if(findings.begin(), findings.end(),
                                    [](const Finding& f) { return f.severity != Severity::Ok; });
    out += std::to_string(findings.size()) + " checks, " + std::to_string(problems) + " problems\n";
    return out;
}

std::string render_json(const Findings& findings)
{
    JsonPtr root(cJSON_CreateObject());
    cJSON* list = cJSON_AddArrayToObject(root.get(), "findings");
    for (const Finding& f : findings) {
        cJSON* o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "id", f.id.c_str());
        cJSON_AddStringToObject(o, "severity", severity_name(f.severity));
        cJSON_AddStringToObject(o, "what", f.what.c_str());
        cJSON_AddStringToObject(o, "why", f.why.c_str());
        cJSON_AddStringToObject(o, "fix", f.fix.c_str());
        cJSON_AddItemToArray(list, o);
    }
    cJSON_AddNumberToObject(root.get(), "exit", exit_code(findings));
    return json_print(root.get()) + "\n";
}

}  // namespace allot::doctor
