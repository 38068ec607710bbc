// scim_checks_test.cpp - the SCIM source checks over fabricated answers.
#include <gtest/gtest.h>

#include "../scim_checks.hpp"

namespace allot::doctor {
namespace {

const char* kExt = "urn:ietf:params:scim:schemas:extension:allot:2.0:PosixUser";

IdentityConfig identity()
{
    IdentityConfig id;
    id.scim_url = "https://scim.example/scim/v2";
    id.token_file = "/etc/allot/token";
    return id;
}

std::string page(bool with_extension)
{
    // The schemas list names the extension either way, as a source that drops it may.
    std::string user =
        std::string(R"({"schemas":[")") + kExt + R"("],"id":"1","userName":"alice","active":true)";
    if (with_extension)
        user += std::string(R"(,")") + kExt + R"(":{"uidNumber":42001,"gidNumber":42001})";
    user += "}";
    return R"({"schemas":["urn:ietf:params:scim:api:messages:2.0:ListResponse"],)"
           R"("totalResults":1,"startIndex":1,"itemsPerPage":1,"Resources":[)" +
           user + "]}";
}

ScimAnswers answers(long status, std::string body)
{
    ScimAnswers a;
    a.users_url = "https://scim.example/scim/v2/Users?count=1";
    a.users = HttpResponse{status, std::move(body), 0};
    a.schemas = HttpResponse{404, "", 0};
    return a;
}

TEST(CheckScim, ReachableWithTheExtension)
{
    Findings f = check_scim(answers(200, page(true)), identity());
    ASSERT_EQ(f.size(), 2u);
    EXPECT_EQ(f[0].severity, Severity::Ok);
    EXPECT_EQ(f[1].severity, Severity::Ok) << f[1].what;
}

TEST(CheckScim, NoExtensionInThePageOrTheSchemas)
{
    Findings f = check_scim(answers(200, page(false)), identity());
    ASSERT_EQ(f.size(), 2u);
    EXPECT_EQ(f[1].severity, Severity::Fail);
    ScimAnswers a = answers(200, page(true));
    a.schemas = HttpResponse{200, R"({"Resources":[{"id":"urn:other"}]})", 0};
    EXPECT_NE(check_scim(a, identity())[1].what.find("/Schemas"), std::string::npos);
}

TEST(CheckScim, RefusedTokenDownOrUnreachable)
{
    Findings f = check_scim(answers(401, ""), identity());
    ASSERT_EQ(f.size(), 1u);
    EXPECT_NE(f[0].what.find("refuses the token"), std::string::npos);
    EXPECT_NE(check_scim(answers(503, ""), identity())[0].what.find("HTTP 503"), std::string::npos);
    ScimAnswers down;
    down.users = make_error("Couldn't connect to server");
    EXPECT_EQ(check_scim(down, identity())[0].severity, Severity::Fail);
    IdentityConfig unset;
    EXPECT_EQ(check_scim(ScimAnswers{}, unset)[0].what, "identity.scim_url is not set");
}

}  // namespace
}  // namespace allot::doctor
