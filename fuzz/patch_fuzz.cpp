// fuzz-sources: scim/patch.cpp scim/filter.cpp scim/codec.cpp scim/errors.cpp
// fuzz-sources: scim/util.cpp lib/result.cpp lib/scim_time.cpp
// fuzz-pkg: libcjson libcrypto
//
// patch_fuzz.cpp - SCIM PATCH (RFC 7644 §3.5.2): PATCH paths and operations
// applied to a user and a group as IdPs send them. Property: any body either
// is refused with an error or leaves a resource that renders and parses back.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "allot/json.hpp"
#include "codec.hpp"
#include "filter.hpp"
#include "patch.hpp"

using namespace allot;
using namespace allot::scimd;

namespace {

scim::User sample_user()
{
    scim::User u;
    u.id = "2819c223-7f76-453a-919d-413861904646";
    u.user_name = "alice";
    u.display_name = "Alice";
    u.emails = {{"alice@example.org", "work", true}, {"a@home.example", "home", false}};
    u.uid = 10001;
    u.gid = 10001;
    u.home = "/home/alice";
    u.shell = "/bin/bash";
    u.ssh_keys = {
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl"};
    return u;
}

scim::Group sample_group()
{
    scim::Group g;
    g.id = "e9e30dba-f08f-4109-8486-d5c6a331660a";
    g.display_name = "team-a";
    g.gid = 20001;
    g.members = {{"2819c223-7f76-453a-919d-413861904646", "User", "alice"}};
    return g;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    // The path grammar on its own (the first line), then whole bodies.
    (void)parse_patch_path(text.substr(0, text.find('\n')));
    JsonPtr body = json_parse(text, 1 << 20);
    if (!body) return 0;
    scim::User u = sample_user();
    if (apply_user_patch(u, body.get(), scim::kDefaultPosixUser)) {
        scim::RenderOptions ro;
        JsonPtr rendered = scim::user_to_json(u, ro);
        if (!rendered) std::abort();
        (void)scim::user_from_json(rendered.get(), scim::kDefaultPosixUser);
    }
    scim::Group g = sample_group();
    if (apply_group_patch(g, body.get())) {
        JsonPtr rendered = scim::group_to_json(g, {});
        if (!rendered) std::abort();
        (void)scim::group_from_json(rendered.get());
    }
    return 0;
}
