// file_checks_test.cpp - token, cache, freshness and id-range checks over fabricated facts.
#include <gtest/gtest.h>

#include "../file_checks.hpp"

namespace allot::doctor {
namespace {

FileFacts facts(std::string path, uint32_t mode, uint32_t uid = 0, int64_t age = 10)
{
    return FileFacts{std::move(path), true, uid, mode, age};
}

TEST(TokenFile, PrivateToOwnerAndGroup)
{
    EXPECT_EQ(check_token_file(facts("/etc/allot/token", 0400)).severity, Severity::Ok);
    EXPECT_EQ(check_token_file(facts("/etc/allot/token", 0440)).severity, Severity::Ok);
    Finding f = check_token_file(facts("/etc/allot/token", 0644));
    EXPECT_EQ(f.severity, Severity::Fail);
    EXPECT_EQ(f.fix, "`chmod g-w,o-rwx /etc/allot/token`");
    EXPECT_EQ(check_token_file(FileFacts{"/x"}).severity, Severity::Fail);
}

TEST(Caches, OwnerWritersAndKeysPrivacy)
{
    Findings good = check_cache_files(
        facts("/var/lib/allot", 0755),
        {facts("/var/lib/allot/passwd.cache", 0644), facts("/var/lib/allot/keys.cache", 0640, 7)},
        7);
    for (const Finding& f : good) EXPECT_EQ(f.severity, Severity::Ok) << f.what;
    Findings bad = check_cache_files(facts("/var/lib/allot", 0775),
                                     {facts("/var/lib/allot/passwd.cache", 0644, 1000),
                                      facts("/var/lib/allot/keys.cache", 0644)},
                                     7);
    ASSERT_EQ(bad.size(), 3u);
    EXPECT_EQ(bad[0].fix, "`chmod go-w /var/lib/allot`");
    EXPECT_EQ(bad[1].fix, "`chown root /var/lib/allot/passwd.cache`");
    EXPECT_EQ(bad[2].severity, Severity::Warn);
    EXPECT_EQ(bad[2].fix, "`chmod o-r /var/lib/allot/keys.cache`");
}

TEST(Freshness, ThreePollIntervals)
{
    IdentityConfig id;
    id.poll_seconds = 300;
    EXPECT_EQ(check_cache_fresh(facts("/c/passwd.cache", 0644, 0, 900), id).severity, Severity::Ok);
    EXPECT_EQ(check_cache_fresh(facts("/c/passwd.cache", 0644, 0, 901), id).severity,
              Severity::Warn);
    EXPECT_EQ(check_cache_fresh(FileFacts{"/c/passwd.cache"}, id).severity, Severity::Fail);
    EXPECT_EQ(check_syncd_last_run(FileFacts{"/c/syncd.state"}, id).severity, Severity::Fail);
    EXPECT_EQ(check_syncd_last_run(facts("/c/syncd.state", 0600, 0, 7200), id).severity,
              Severity::Warn);
}

TEST(IdRanges, LocalIdsInsideTheRangeAreNamedWithTheBound)
{
    IdentityConfig id;
    id.uid_min = 10000;
    std::vector<LocalId> users = {{"root", 0}, {"nobody", 65534}, {"svc", 15000}, {"db", 12000}};
    Findings f = check_id_ranges(users, {{"nogroup", 65534}}, id, "/etc/allot/allot.yaml");
    ASSERT_EQ(f.size(), 2u);
    EXPECT_EQ(f[0].severity, Severity::Warn);
    EXPECT_NE(f[0].what.find("svc (15000)"), std::string::npos);
    EXPECT_EQ(f[0].fix,
              "set `identity.uid_min: 15001` in /etc/allot/allot.yaml (or renumber the local "
              "entries)");
    EXPECT_EQ(f[1].severity, Severity::Ok);
}

}  // namespace
}  // namespace allot::doctor
