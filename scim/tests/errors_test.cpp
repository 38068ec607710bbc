// errors_test.cpp - the scimd error area: every code has a text and an HTTP class.
#include <gtest/gtest.h>

#include <string>

#include "errors.hpp"

using namespace allot;

TEST(ScimdErrors, TheResponseFollowsTheCodeNotTheText)
{
    auto cls = [](scimd::Errc c) { return scimd::http_class(make_error(c, "whatever")); };
    EXPECT_EQ(cls(scimd::Errc::NotFound).status, 404);
    EXPECT_EQ(cls(scimd::Errc::Uniqueness).status, 409);
    EXPECT_STREQ(cls(scimd::Errc::Uniqueness).scim_type, "uniqueness");
    EXPECT_EQ(cls(scimd::Errc::VersionMismatch).status, 412);
    EXPECT_STREQ(cls(scimd::Errc::InvalidFilter).scim_type, "invalidFilter");
    EXPECT_STREQ(cls(scimd::Errc::InvalidCursor).scim_type, "invalidCursor");
    EXPECT_EQ(cls(scimd::Errc::TooLarge).status, 413);
    EXPECT_EQ(cls(scimd::Errc::Exhausted).status, 507);
    EXPECT_EQ(cls(scimd::Errc::Internal).status, 500);
    for (int c = 1; c <= static_cast<int>(scimd::Errc::Internal); ++c) {
        const Error e(std::error_code(c, scimd::category()), "");
        EXPECT_NE(std::string(scimd::category().message(c)), "unknown error") << c;
        EXPECT_GE(scimd::http_class(e).status, 400) << c;
    }
}

TEST(ScimdErrors, OtherAreasAreTheClientsMistakeUnlessTheyAreOurs)
{
    EXPECT_EQ(scimd::http_class(make_error("bad body")).status, 400);
    EXPECT_STREQ(scimd::http_class(make_error("bad body")).scim_type, "invalidValue");
    EXPECT_EQ(scimd::http_class(make_error(Errc::Internal, "bug")).status, 500);
    EXPECT_EQ(scimd::http_class(make_error(Errc::NotFound, "x")).status, 404);
}
