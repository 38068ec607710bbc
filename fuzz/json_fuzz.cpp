// fuzz-sources: scim/codec.cpp lib/result.cpp lib/scim_time.cpp
// fuzz-pkg: libcjson
//
// json_fuzz.cpp - the shared JSON reader (allot/json.hpp: one document, no
// trailing bytes, no repeated key, no NUL in a string) and allot-scimd's SCIM
// codec on top of it. Properties: what json_parse accepts prints to text it
// accepts again, identically; a User or Group the codec accepts renders to
// JSON the codec accepts again, with the same values.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "allot/json.hpp"
#include "codec.hpp"

using namespace allot;

namespace {

void fail(const char* what, const std::string& detail)
{
    std::fprintf(stderr, "%s: %s\n", what, detail.c_str());
    std::abort();
}

void user_round_trip(const cJSON* json)
{
    auto u = scim::user_from_json(json, scim::kDefaultPosixUser);
    if (!u) return;
    JsonPtr again = scim::user_to_json(u.value(), {});
    auto back = scim::user_from_json(again.get(), scim::kDefaultPosixUser);
    if (!back) fail("rendered user refused", back.error().message);
    const scim::User& a = u.value();
    const scim::User& b = back.value();
    if (a.user_name != b.user_name || a.display_name != b.display_name || a.home != b.home ||
        a.shell != b.shell || a.ssh_keys != b.ssh_keys || a.uid != b.uid || a.gid != b.gid ||
        a.active != b.active || a.emails.size() != b.emails.size())
        fail("user changed in a round trip", a.user_name);
}

void group_round_trip(const cJSON* json)
{
    auto g = scim::group_from_json(json);
    if (!g) return;
    JsonPtr again = scim::group_to_json(g.value(), {});
    auto back = scim::group_from_json(again.get());
    if (!back) fail("rendered group refused", back.error().message);
    if (back.value().display_name != g.value().display_name || back.value().gid != g.value().gid ||
        back.value().members.size() != g.value().members.size())
        fail("group changed in a round trip", g.value().display_name);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    JsonPtr doc = json_parse(text, 1 << 20);
    if (!doc) return 0;
    const std::string printed = json_print(doc.get());
    JsonPtr again = json_parse(printed, 1 << 21);
    if (!again) fail("printed JSON refused", printed);
    if (json_print(again.get()) != printed) fail("printing is not stable", printed);
    user_round_trip(doc.get());
    group_round_trip(doc.get());
    return 0;
}
