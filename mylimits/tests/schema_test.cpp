// schema_test.cpp - `mylimits --json` output against mylimits.schema.json.
//
// A small validator for the JSON Schema keywords the schema uses (type,
// required, properties, additionalProperties:false, items, enum, const,
// minimum). additionalProperties:false makes the schema complete: a field
// added to the output without documenting it fails here.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "allot/json.hpp"
#include "allot/units.hpp"
#include "app.hpp"
#include "fakes.hpp"

using namespace allot;
using namespace allot::mylimits;
using namespace allot::mylimits::testing;

namespace {

std::string type_of(const cJSON* v)
{
    if (cJSON_IsNull(v)) return "null";
    if (cJSON_IsBool(v)) return "boolean";
    if (cJSON_IsString(v)) return "string";
    if (cJSON_IsArray(v)) return "array";
    if (cJSON_IsObject(v)) return "object";
    if (cJSON_IsNumber(v))
        return std::floor(v->valuedouble) == v->valuedouble ? "integer" : "number";
    return "?";
}

bool same(const cJSON* a, const cJSON* b)
{
    return cJSON_Compare(a, b, true) != 0;
}

void validate(const cJSON* schema, const cJSON* v, const std::string& path,
              std::vector<std::string>& errors)
{
    if (const cJSON* c = cJSON_GetObjectItemCaseSensitive(schema, "const"))
        if (!same(c, v)) errors.push_back(path + ": not the constant");
    if (const cJSON* t = cJSON_GetObjectItemCaseSensitive(schema, "type")) {
        const std::string actual = type_of(v);
        bool ok = false;
        auto match = [&](const std::string& want) {
            return want == actual || (want == "number" && actual == "integer");
        };
        if (cJSON_IsString(t)) ok = match(t->valuestring);
        const cJSON* e = nullptr;
        if (cJSON_IsArray(t)) cJSON_ArrayForEach(e, t) ok = ok || match(e->valuestring);
        if (!ok) {
            errors.push_back(path + ": type " + actual);
            return;
        }
    }
    if (const cJSON* en = cJSON_GetObjectItemCaseSensitive(schema, "enum")) {
        bool ok = false;
        const cJSON* e = nullptr;
        cJSON_ArrayForEach(e, en) ok = ok || same(e, v);
        if (!ok) errors.push_back(path + ": not in enum");
    }
    if (const cJSON* m = cJSON_GetObjectItemCaseSensitive(schema, "minimum"))
        if (cJSON_IsNumber(v) && v->valuedouble < m->valuedouble)
            errors.push_back(path + ": below minimum");
    if (cJSON_IsObject(v)) {
        const cJSON* props = cJSON_GetObjectItemCaseSensitive(schema, "properties");
        const cJSON* req = cJSON_GetObjectItemCaseSensitive(schema, "required");
        const cJSON* r = nullptr;
        cJSON_ArrayForEach(r, req) if (!cJSON_GetObjectItemCaseSensitive(v, r->valuestring))
            errors.push_back(path + ": missing " + r->valuestring);
        const cJSON* addl = cJSON_GetObjectItemCaseSensitive(schema, "additionalProperties");
        const cJSON* field = nullptr;
        cJSON_ArrayForEach(field, v)
        {
            const cJSON* sub = cJSON_GetObjectItemCaseSensitive(props, field->string);
            if (sub)
                validate(sub, field, path + "." + field->string, errors);
            else if (cJSON_IsFalse(addl))
                errors.push_back(path + ": undocumented field " + field->string);
        }
    }
    if (cJSON_IsArray(v))
        if (const cJSON* items = cJSON_GetObjectItemCaseSensitive(schema, "items")) {
            int i = 0;
            const cJSON* e = nullptr;
            cJSON_ArrayForEach(e, v)
                validate(items, e, path + "[" + std::to_string(i++) + "]", errors);
        }
}

JsonPtr load_schema()
{
    std::ifstream in(SCHEMA_FILE);
    std::stringstream ss;
    ss << in.rdbuf();
    return json_parse(ss.str());
}

std::vector<std::string> check(const std::string& output)
{
    JsonPtr schema = load_schema();
    JsonPtr doc = json_parse(output);
    if (!schema) return {"schema file does not parse"};
    if (!doc) return {"output does not parse"};
    std::vector<std::string> errors;
    validate(schema.get(), doc.get(), "$", errors);
    return errors;
}

struct JsonRun {
    FakeSlurm slurm;
    FakeQuotaSystem quotas;
    Environment env;

    JsonRun()
    {
        env.caller_uid = 1001;
        env.now = 1764723600;
        env.env_config = std::string(FIXTURES) + "/allot.yaml";
        env.user_by_uid = [](uint32_t) {
            return std::optional<PasswdEntry>(PasswdEntry{"alice", 1001, "/home/alice"});
        };
        env.user_by_name = [](const std::string&) { return std::optional<PasswdEntry>(); };
    }
    std::string json()
    {
        Options o;
        o.json = true;
        std::ostringstream out, err;
        EXPECT_EQ(run(o, env, slurm, quotas, out, err), kExitOk) << err.str();
        return out.str();
    }
};

}  // namespace

TEST(JsonSchema, SchemaFileIsValidJsonWithItsId)
{
    JsonPtr schema = load_schema();
    ASSERT_TRUE(schema);
    const cJSON* props = cJSON_GetObjectItemCaseSensitive(schema.get(), "properties");
    const cJSON* id = cJSON_GetObjectItemCaseSensitive(props, "schema");
    EXPECT_EQ(json_string(id, "const"), "allot.mylimits/1");
}

TEST(JsonSchema, UnknownUserNoQuotaConf)
{
    JsonRun r;  // alice has no Slurm record; home quotactl fails (no mount known)
    auto errors = check(r.json());
    EXPECT_TRUE(errors.empty()) << ::testing::PrintToString(errors);
}

TEST(JsonSchema, FullReportWithEveryKindOfValue)
{
    JsonRun r;
    SlurmFacts f;
    f.user = {"alice", 1001, "team-a", true};
    limits::AssocFacts a;
    a.account = "team-a";
    a.qos = {"team-a", "general", "spot"};
    a.grp_gpus = 12;
    a.account_gpus_in_use = 3;
    f.assocs = {a};
    limits::QosFacts p, g, s;
    p.name = "team-a";
    p.grp_gpus = 8;
    p.usage_known = true;
    p.gpus_in_use = 2;
    g.name = "general";
    g.grp_gpus = 16;
    g.max_gpus_per_account = 4;
    g.max_wall_minutes = 4320;
    s.name = "spot";
    f.qos = {p, g, s};
    limits::JobFacts j;
    j.job_id = 7;
    j.display_id = "7_1";
    j.state = "PENDING";
    j.reason = "QOSMaxGRESPerAccount";
    j.account = "team-a";
    j.qos = "general";
    j.gpus = 3;
    j.submit_time = 5;
    j.start_time = 9;
    j.time_limit_minutes = kUnlimitedMinutes;
    limits::JobFacts k = j;
    k.job_id = 8;
    k.state = "RUNNING";
    k.qos = "other";
    k.restarts = 2;
    f.jobs = {j, k};
    f.notes = {"a note"};
    r.slurm.facts["alice"] = f;
    r.env.env_quota_conf = "/q";
    r.quotas.files["/q"] = "h quotactl /home\np command /bin/lfs\ns snapshot /s\n";
    r.quotas.mounts["/home"] = {"/dev/x", "/home"};
    r.quotas.quotactl_errno = 0;
    r.quotas.kernel.bytes_hard = 5;
    r.quotas.kernel.block_grace_expires = 99;
    r.quotas.command_output["/bin/lfs"] = "Filesystem\n/p 1* 1 2 3d 1 0 0 -\n";
    r.quotas.files["/s"] = R"({"schema":"allot.quota-snapshot/1","generated_at":1,"entries":[]})";
    const std::string out = r.json();
    auto errors = check(out);
    EXPECT_TRUE(errors.empty()) << ::testing::PrintToString(errors) << out;
}

TEST(JsonSchema, ValidatorCatchesDrift)
{
    // The validator itself must reject wrong output, or the tests above prove nothing.
    auto errors = check(R"({"schema":"allot.mylimits/2","version":1,"extra":true})");
    EXPECT_GE(errors.size(), 3u);
}
