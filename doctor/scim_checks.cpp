// scim_checks.cpp - see scim_checks.hpp.
#include "scim_checks.hpp"

#include "allot/scim_client.hpp"

namespace allot::doctor {

namespace {

// The extension URN the map reads UIDs from ("" when uid is a core attribute).
std::string extension_of(const ScimAttributeMap& map)
{
    size_t colon = map.uid.rfind(':');
    return colon == std::string::npos ? "" : map.uid.substr(0, colon);
}

const char* kWhyUnreachable =
    "allot-syncd cannot refresh users, groups and keys, so changes at the source never reach "
    "the cluster.";

Finding reachable(const ScimAnswers& in, const IdentityConfig& identity)
{
    const char* id = "identity.scim_reachable";
    if (identity.scim_url.empty())
        return problem(Severity::Fail, id, "identity.scim_url is not set", kWhyUnreachable,
                       "set `identity.scim_url` (and `identity.token_file`) in allot.yaml");
    if (!in.token_error.empty())
        return problem(Severity::Fail, id, "the token cannot be read: " + in.token_error,
                       kWhyUnreachable, "write the source's token to " + identity.token_file);
    if (!in.users)
        return problem(Severity::Fail, id,
                       identity.scim_url + " cannot be reached: " + in.users.error().message,
                       kWhyUnreachable,
                       "start the SCIM source or correct `identity.scim_url` (`curl -sS " +
                           identity.scim_url + "/ServiceProviderConfig` shows what answers)");
    long status = in.users.value().status;
    if (status == 401 || status == 403)
        return problem(Severity::Fail, id,
                       "the SCIM source refuses the token of " + identity.token_file + " (HTTP " +
                           std::to_string(status) + ")",
                       kWhyUnreachable,
                       "write a valid token for the source to " + identity.token_file);
    if (status < 200 || status > 299)
        return problem(
            Severity::Fail, id,
            "the SCIM source answers HTTP " + std::to_string(status) + " to " + in.users_url,
            kWhyUnreachable, "look at the SCIM source's log and bring it back");
    return ok(id, "the SCIM source answers a sample page with the configured token");
}

Finding extension(const ScimAnswers& in, const IdentityConfig& identity)
{
    const char* id = "identity.scim_extension";
    ScimAttributeMap map = scim_attribute_map(identity);
    std::string urn = extension_of(map);
    const char* why =
        "users without the POSIX extension have no UID or GID, so allot-syncd rejects them and "
        "they cannot log in or run jobs.";
    std::string fix = "enable the POSIX user extension " + urn +
                      " at the SCIM source (or set `identity.dialect` / "
                      "`identity.extension_schema` to the one it serves)";
    if (in.schemas && in.schemas.value().status == 200 &&
        in.schemas.value().body.find(urn) == std::string::npos)
        return problem(Severity::Fail, id, "the source's /Schemas does not list " + urn, why, fix);
    Result<ScimPage<scim::User>> page = parse_user_page(in.users.value().body, map);
    if (!page)
        return problem(Severity::Fail, id,
                       "the sample page of Users cannot be read: " + page.error().message,
                       "allot-syncd fails the same way on every cycle.",
                       "look at what the source answers: `curl -sS -H 'Authorization: Bearer "
                       "...' '" +
                           in.users_url + "'`");
    if (page.value().resources.empty())
        return problem(Severity::Warn, id, "the source has no users to sample",
                       "whether users carry the POSIX extension cannot be told.",
                       "add the first users at the source, then run allot-doctor again");
    const scim::User& sample = page.value().resources.front();
    if (!sample.uid)
        return problem(Severity::Fail, id,
                       "the sample user \"" + sample.user_name + "\" has no " + map.uid +
                           " (the page asked for it by name)",
                       why, fix);
    return ok(id, "the sample page of Users carries " + (urn.empty() ? map.uid : urn));
}

}  // namespace

Findings check_scim(const ScimAnswers& in, const IdentityConfig& identity)
{
    Finding r = reachable(in, identity);
    if (r.severity != Severity::Ok) return {r};
    return {r, extension(in, identity)};
}

}  // namespace allot::doctor
