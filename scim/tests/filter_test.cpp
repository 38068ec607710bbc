// filter_test.cpp - the SCIM filter parser: grammar, precedence, limits, hostile input.
#include <gtest/gtest.h>

#include "filter.hpp"

using namespace allot::scimd;

namespace {

// A compact rendering of the tree, to assert on structure.
std::string show(const Filter& f)
{
    switch (f.kind) {
        case Filter::Kind::And: return "(" + show(*f.left) + " AND " + show(*f.right) + ")";
        case Filter::Kind::Or: return "(" + show(*f.left) + " OR " + show(*f.right) + ")";
        case Filter::Kind::Not: return "NOT " + show(*f.left);
        case Filter::Kind::ValuePath: return f.path.display() + "[" + show(*f.left) + "]";
        case Filter::Kind::Compare: break;
    }
    std::string v;
    switch (f.value.kind) {
        case FilterValue::Kind::String: v = "'" + f.value.text + "'"; break;
        case FilterValue::Kind::Number:
            v = std::to_string(static_cast<long long>(f.value.number));
            break;
        case FilterValue::Kind::Bool: v = f.value.boolean ? "true" : "false"; break;
        case FilterValue::Kind::Null: v = "null"; break;
    }
    return f.path.display() + " " + op_name(f.op) + (f.op == CompareOp::Pr ? "" : " " + v);
}

std::string parsed(const char* text)
{
    auto f = parse_filter(text);
    return f ? show(*f.value()) : "ERR: " + f.error().message;
}

}  // namespace

TEST(Filter, Operators)
{
    EXPECT_EQ(parsed(R"(userName eq "alice")"), "username eq 'alice'");
    EXPECT_EQ(parsed(R"(userName Eq "a\"b\\c")"), "username eq 'a\"b\\c'");
    EXPECT_EQ(parsed("title pr"), "title pr");
    for (const char* op : {"eq", "ne", "co", "sw", "ew", "gt", "ge", "lt", "le"})
        EXPECT_EQ(parsed((std::string("x ") + op + " 5").c_str()), std::string("x ") + op + " 5");
    EXPECT_EQ(parsed("active eq TRUE"), "active eq true");
    EXPECT_EQ(parsed("externalId eq null"), "externalid eq null");
    EXPECT_EQ(parsed(R"(meta.lastModified gt "2011-05-13T04:42:34Z")"),
              "meta.lastmodified gt '2011-05-13T04:42:34Z'");
    EXPECT_EQ(
        parsed("urn:ietf:params:scim:schemas:extension:allot:2.0:PosixUser:uidNumber ge 10000"),
        "urn:ietf:params:scim:schemas:extension:allot:2.0:posixuser:uidnumber ge 10000");
}

TEST(Filter, PrecedenceAndGrouping)
{
    EXPECT_EQ(parsed("a eq 1 or b eq 2 and c eq 3"), "(a eq 1 OR (b eq 2 AND c eq 3))");
    EXPECT_EQ(parsed("(a eq 1 or b eq 2) and c eq 3"), "((a eq 1 OR b eq 2) AND c eq 3)");
    EXPECT_EQ(parsed("not (a eq 1) and b pr"), "(NOT a eq 1 AND b pr)");
    // `not` after and/or, and right after an opening parenthesis.
    EXPECT_EQ(parsed("a pr or not (b pr)"), "(a pr OR NOT b pr)");
    EXPECT_EQ(parsed("(not (a pr))"), "NOT a pr");
    EXPECT_EQ(parsed("a eq 1 AND b eq 2 OR c eq 3"), "((a eq 1 AND b eq 2) OR c eq 3)");
    EXPECT_EQ(parsed(R"(emails[type eq "work" and value co "@example.com"])"),
              "emails[(type eq 'work' AND value co '@example.com')]");
    EXPECT_EQ(parsed(R"(userType eq "Employee" and emails[type eq "work"])"),
              "(usertype eq 'Employee' AND emails[type eq 'work'])");
}

TEST(Filter, RejectsMalformed)
{
    for (const char* bad : {"",
                            "userName",
                            "userName eq",
                            "userName xx \"a\"",
                            "userName eq \"unterminated",
                            "(userName eq \"a\"",
                            "userName eq \"a\")",
                            "userName eq \"a\" and",
                            "userName eq 'single'",
                            "a eq 1 or or b eq 2",
                            "emails[type eq \"w\"",
                            "a[b[c eq 1]]",
                            "userName eq \"a\\q\"",
                            "userName eq \"\\u0000\"",
                            "x eq 1e999",
                            "x eq --1",
                            "1abc eq 1",
                            "userName  eq\"a\"",
                            "userName eq \"a\" ; DROP TABLE users",
                            "not a eq 1",
                            "a.b.c eq 1"}) {
        EXPECT_FALSE(parse_filter(bad)) << bad;
    }
    EXPECT_FALSE(parse_filter(std::string("userName eq \"a\0b\"", 17)));
}

TEST(Filter, Limits)
{
    std::string deep;
    for (int i = 0; i < 100; ++i) deep += "(";
    deep += "a eq 1";
    for (int i = 0; i < 100; ++i) deep += ")";
    EXPECT_FALSE(parse_filter(deep));
    std::string wide = "a eq 1";
    for (int i = 0; i < 300; ++i) wide += " or a eq 1";
    EXPECT_FALSE(parse_filter(wide));
    EXPECT_FALSE(parse_filter(std::string(5000, 'a')));
    // A megabyte of garbage returns an error, quickly, without recursion.
    EXPECT_FALSE(parse_filter(std::string(1 << 20, '(')));
}

TEST(Filter, PatchPaths)
{
    auto p = parse_patch_path(R"(members[value eq "2819c223"])");
    ASSERT_TRUE(p);
    EXPECT_EQ(p.value().path.attr, "members");
    ASSERT_TRUE(p.value().filter);
    auto q =
        parse_patch_path("urn:ietf:params:scim:schemas:extension:allot:2.0:PosixUser:loginShell");
    ASSERT_TRUE(q);
    EXPECT_EQ(q.value().path.attr, "loginshell");
    EXPECT_EQ(q.value().path.schema, "urn:ietf:params:scim:schemas:extension:allot:2.0:posixuser");
    auto r = parse_patch_path(R"(emails[type eq "work"].value)");
    ASSERT_TRUE(r);
    EXPECT_EQ(r.value().sub_after, "value");
    EXPECT_FALSE(parse_patch_path("members[value eq"));
    EXPECT_FALSE(parse_patch_path(""));
    EXPECT_FALSE(parse_patch_path("members[value eq \"x\"]junk"));
}

TEST(Filter, AttributeNames)
{
    auto a = parse_attribute_name("urn:ietf:params:scim:schemas:extension:allot:2.0:PosixUser");
    EXPECT_EQ(a.attr, "");
    EXPECT_EQ(a.schema, "urn:ietf:params:scim:schemas:extension:allot:2.0:posixuser");
    auto b = parse_attribute_name(
        "urn:ietf:params:scim:schemas:extension:allot:2.0:PosixUser:uidNumber");
    EXPECT_EQ(b.attr, "uidnumber");
    auto c = parse_attribute_name("meta.lastModified");
    EXPECT_EQ(c.attr, "meta");
    EXPECT_EQ(c.sub, "lastmodified");
}
