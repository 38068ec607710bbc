// support_test.cpp - allot-syncd's host pieces: lock file exclusion, drift
// state round trip, metrics text, the real NSS resolver, stale temporaries.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "allot/file_io.hpp"
#include "syncd_support.hpp"

using namespace allot::syncd;

namespace {
// A scratch directory removed with everything in it at the end of the test.
struct TempDir {
    std::string path;
    TempDir()
    {
        char dir[] = "/tmp/allot-syncd-test-XXXXXX";
        path = mkdtemp(dir) ? dir : "";
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    ~TempDir()
    {
        if (!path.empty()) std::filesystem::remove_all(path);
    }
    operator std::string() const { return path; }
    std::string operator+(const char* s) const { return path + s; }
};
}  // namespace

TEST(LockFile, SecondHolderIsRefused)
{
    const TempDir d;
    {
        LockFile a(d + "/lock");
        ASSERT_TRUE(a.held()) << a.error();
        LockFile b(d + "/lock");
        EXPECT_FALSE(b.held());
        EXPECT_NE(b.error().find("another allot-syncd"), std::string::npos);
    }
    LockFile c(d + "/lock");  // released with its holder
    EXPECT_TRUE(c.held());
    LockFile bad(d + "/no/such/dir/lock");
    EXPECT_FALSE(bad.held());
}

TEST(State, RoundTripAndGarbage)
{
    const TempDir d;
    std::map<std::string, std::string> s{{"qos spot", "MaxWall=1-00:00:00"}, {"user a", "team-a"}};
    ASSERT_TRUE(save_state(d + "/state", s).ok());
    EXPECT_EQ(load_state(d + "/state"), s);
    struct stat st {};
    ASSERT_EQ(stat((d + "/state").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);  // drift memory names users: not for everyone
    std::ofstream(d + "/bad") << "no tab here\n\x01\x02\n";
    EXPECT_TRUE(load_state(d + "/bad").empty());
    EXPECT_TRUE(load_state(d + "/missing").empty());
}

TEST(Metrics, PrometheusText)
{
    Metrics m;
    m.rejected = 3;
    m.last_success = 1700000000;
    const std::string t = m.render();
    EXPECT_NE(t.find("# TYPE allot_syncd_rejected_records gauge\nallot_syncd_rejected_records 3"),
              std::string::npos);
    EXPECT_NE(t.find("allot_syncd_last_success_timestamp_seconds 1700000000\n"), std::string::npos);
    EXPECT_NE(t.find("allot_syncd_source_errors_total"), std::string::npos);
}

TEST(NssResolver, RealLookups)
{
    NssResolver r;
    EXPECT_TRUE(r.resolves("root", 0));
    EXPECT_FALSE(r.resolves("root", 1));
    EXPECT_FALSE(r.resolves("no-such-user-allot", 20000));
}

TEST(Support, RemovesOnlyTheTemporariesItIsAskedTo)
{
    TempDir t;
    for (const char* name :
         {".syncd.state.Ab12Cd", ".syncd.state.toolong", "syncd.state", ".other.abcdef", "notes"})
        std::ofstream(t.path + "/" + name) << "x";
    const auto ours = [](std::string_view n) { return allot::is_temporary_of("syncd.state", n); };
    EXPECT_EQ(remove_files(t.path, ours), 1u);
    std::set<std::string> left;
    for (const auto& e : std::filesystem::directory_iterator(t.path))
        left.insert(e.path().filename());
    EXPECT_EQ(left, (std::set<std::string>{".syncd.state.toolong", "syncd.state", ".other.abcdef",
                                           "notes"}));
    EXPECT_EQ(remove_files(t.path + "/missing", [](std::string_view) { return true; }), 0u);
}
