// finding_test.cpp - exit status and rendering of allot-doctor's findings.
#include <gtest/gtest.h>

#include "../finding.hpp"
#include "allot/json.hpp"

namespace allot::doctor {
namespace {

TEST(ExitCode, ZeroWhenAllOkOneOnWarningTwoOnFailure)
{
    EXPECT_EQ(exit_code({}), 0);
    EXPECT_EQ(exit_code({ok("a", "fine")}), 0);
    EXPECT_EQ(exit_code({ok("a", "fine"), problem(Severity::Warn, "b", "w", "y", "f")}), 1);
    EXPECT_EQ(exit_code({problem(Severity::Fail, "c", "x", "y", "f"),
                         problem(Severity::Warn, "b", "w", "y", "f")}),
              2);
}

TEST(RenderText, ProblemsComeFirstWithWhyAndFix)
{
    std::string text = render_text(
        {ok("a", "fine"), problem(Severity::Fail, "b", "broken", "it matters.", "do this")});
    EXPECT_LT(text.find("fail  b: broken"), text.find("ok    a: fine"));
    EXPECT_NE(text.find("why: it matters."), std::string::npos);
    EXPECT_NE(text.find("fix: do this"), std::string::npos);
    EXPECT_NE(text.find("2 checks, 1 problems"), std::string::npos);
}

TEST(RenderJson, EveryFieldAndTheExitStatus)
{
    JsonPtr root = json_parse(render_json({problem(Severity::Warn, "b", "w\"q", "y", "f")}));
    ASSERT_TRUE(root);
    EXPECT_EQ(json_integer(root.get(), "exit"), 1);
    cJSON* list = cJSON_GetObjectItemCaseSensitive(root.get(), "findings");
    ASSERT_EQ(cJSON_GetArraySize(list), 1);
    cJSON* f = cJSON_GetArrayItem(list, 0);
    EXPECT_EQ(json_string(f, "id"), "b");
    EXPECT_EQ(json_string(f, "severity"), "warn");
    EXPECT_EQ(json_string(f, "what"), "w\"q");
    EXPECT_EQ(json_string(f, "why"), "y");
    EXPECT_EQ(json_string(f, "fix"), "f");
}

}  // namespace
}  // namespace allot::doctor
