// support_test.cpp - allot-syncd's host pieces: lock file exclusion, atomic
// writes, drift state round trip, metrics text, the real NSS resolver.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

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

std::string slurp(const std::string& p)
{
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}
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

TEST(AtomicWrite, ReplacesWholeFileWithMode)
{
    const TempDir d;
    ASSERT_TRUE(write_atomically(d + "/f", "one\n", 0644).ok());
    ASSERT_TRUE(write_atomically(d + "/f", "two\n", 0600).ok());
    EXPECT_EQ(slurp(d + "/f"), "two\n");
    struct stat st {};
    stat((d + "/f").c_str(), &st);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    EXPECT_FALSE(write_atomically(d + "/missing/f", "x", 0600).ok());
}

TEST(State, RoundTripAndGarbage)
{
    const TempDir d;
    std::map<std::string, std::string> s{{"qos spot", "MaxWall=1-00:00:00"}, {"user a", "team-a"}};
    ASSERT_TRUE(save_state(d + "/state", s).ok());
    EXPECT_EQ(load_state(d + "/state"), s);
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
    for (const char* name : {"syncd.state.tmp.Ab12Cd", "syncd.state.tmp.toolong", "syncd.state",
                             "other.tmp.abcdef", "notes"})
        std::ofstream(t.path + "/" + name) << "x";
    const std::string state = t.path + "/syncd.state";
    EXPECT_TRUE(is_temporary_of(state, "syncd.state.tmp.Ab12Cd"));
    EXPECT_FALSE(is_temporary_of(state, "other.tmp.abcdef"));
    EXPECT_EQ(remove_files(t.path, [&](std::string_view n) { return is_temporary_of(state, n); }),
              1u);
    std::set<std::string> left;
    for (const auto& e : std::filesystem::directory_iterator(t.path))
        left.insert(e.path().filename());
    EXPECT_EQ(left, (std::set<std::string>{"syncd.state.tmp.toolong", "syncd.state",
                                           "other.tmp.abcdef", "notes"}));
    EXPECT_EQ(remove_files(t.path + "/missing", [](std::string_view) { return true; }), 0u);
}
