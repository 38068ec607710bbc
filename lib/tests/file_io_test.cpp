// file_io_test.cpp - atomic file replacement: content, mode, group, the
// temporary's name, and no temporary left behind when a write fails.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "allot/file_io.hpp"

namespace {

using namespace allot;

// A scratch directory removed with everything in it at the end of the test.
class TempDir {
public:
    TempDir()
    {
        char tmpl[] = "/tmp/allot-file-io-XXXXXX";
        path_ = mkdtemp(tmpl) ? tmpl : "";
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    ~TempDir()
    {
        if (!path_.empty()) std::filesystem::remove_all(path_);
    }
    std::string operator/(const std::string& name) const { return path_ + "/" + name; }
    std::set<std::string> entries() const
    {
        std::set<std::string> out;
        for (const auto& e : std::filesystem::directory_iterator(path_))
            out.insert(e.path().filename());
        return out;
    }

private:
    std::string path_;
};

std::string slurp(const std::string& path)
{
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

mode_t mode_of(const std::string& path)
{
    struct stat st {};
    return stat(path.c_str(), &st) == 0 ? st.st_mode & 07777 : 0;
}

TEST(FileIo, WritesAndReplacesWithTheMode)
{
    const TempDir d;
    ASSERT_TRUE(write_file_atomically(d / "f", "one\n").ok());
    EXPECT_EQ(slurp(d / "f"), "one\n");
    EXPECT_EQ(mode_of(d / "f"), 0644u);  // the default, whatever the umask
    ASSERT_TRUE(write_file_atomically(d / "f", "two\n", AtomicWrite{0600}).ok());
    EXPECT_EQ(slurp(d / "f"), "two\n");
    EXPECT_EQ(mode_of(d / "f"), 0600u);
    ASSERT_TRUE(write_file_atomically(d / "empty", "", AtomicWrite{0640, getegid(), false}).ok());
    EXPECT_EQ(slurp(d / "empty"), "");
    EXPECT_EQ(mode_of(d / "empty"), 0640u);
    EXPECT_EQ(d.entries(), (std::set<std::string>{"f", "empty"}));  // no temporary left
}

TEST(FileIo, RelativePathWritesInTheCurrentDirectory)
{
    const TempDir d;
    const auto cwd = std::filesystem::current_path();
    std::filesystem::current_path(d / "");
    const auto written = write_file_atomically("rel", "x");
    std::filesystem::current_path(cwd);
    ASSERT_TRUE(written.ok()) << written.error().message;
    EXPECT_EQ(slurp(d / "rel"), "x");
}

TEST(FileIo, FailuresLeaveNoTemporary)
{
    const TempDir d;
    auto missing = write_file_atomically(d / "missing/f", "x");
    ASSERT_FALSE(missing.ok());
    EXPECT_TRUE(missing.error().is(Errc::Io));
    EXPECT_NE(missing.error().message.find(d / "missing/f"), std::string::npos);

    // The temporary is written, then the rename fails: over a non-empty directory.
    std::filesystem::create_directory(d / "dir");
    std::ofstream(d / "dir/inside") << "x";
    auto renamed = write_file_atomically(d / "dir", "x");
    ASSERT_FALSE(renamed.ok());
    EXPECT_NE(renamed.error().message.find("rename"), std::string::npos) << renamed.error().message;
    EXPECT_EQ(d.entries(), (std::set<std::string>{"dir"}));
}

TEST(FileIo, RecognisesOnlyItsOwnTemporaries)
{
    EXPECT_TRUE(is_temporary_of("syncd.state", ".syncd.state.Ab12Cd"));
    EXPECT_FALSE(is_temporary_of("syncd.state", ".syncd.state.toolong"));
    EXPECT_FALSE(is_temporary_of("syncd.state", ".syncd.state.Ab12C"));
    EXPECT_FALSE(is_temporary_of("syncd.state", "syncd.state"));
    EXPECT_FALSE(is_temporary_of("syncd.state", "syncd.state.tmp.Ab12Cd"));
    EXPECT_FALSE(is_temporary_of("syncd.state", ".other.state.Ab12Cd"));
    EXPECT_FALSE(is_temporary_of("syncd.state", ".syncd.stateXAb12Cd"));
    EXPECT_FALSE(is_temporary_of("a", ""));
}

}  // namespace
