// identity_cache_writer_test.cpp - the cache writer's file hygiene: it
// publishes only into a directory nobody else can write, creates the caches
// 0644, bumps the generation file in place, and knows the temporary names a
// killed publish leaves.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "allot/identity_cache.hpp"
#include "allot/identity_cache_format.hpp"

using namespace allot;
namespace fs = std::filesystem;

namespace {

struct TempDir {
    std::string path;
    TempDir()
    {
        char dir[] = "/tmp/allot-cache-writer-XXXXXX";
        path = mkdtemp(dir);
        chmod(path.c_str(), 0755);
    }
    ~TempDir() { fs::remove_all(path); }
};

std::vector<PosixUser> users()
{
    PosixUser u;
    u.name = "alice";
    u.uid = 20001;
    u.gid = 20001;
    u.home = "/home/alice";
    u.shell = "/bin/bash";
    return {u};
}

std::vector<PosixGroup> groups()
{
    return {PosixGroup{"team-a", 30001, {"alice"}}};
}

mode_t mode_of(const std::string& path)
{
    struct stat st {};
    stat(path.c_str(), &st);
    return st.st_mode & 07777;
}

idcache::GenerationFile read_generation(const std::string& path)
{
    idcache::GenerationFile g{};
    std::ifstream(path, std::ios::binary).read(reinterpret_cast<char*>(&g), sizeof g);
    return g;
}

ino_t inode_of(const std::string& path)
{
    struct stat st {};
    stat(path.c_str(), &st);
    return st.st_ino;
}

}  // namespace

TEST(IdentityCacheWriter, PublishesReadableCachesInATrustedDirectory)
{
    TempDir t;
    CacheWriteOptions o;
    o.fsync = false;
    auto r = publish_identity_cache(t.path, users(), groups(), o);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(mode_of(t.path + "/passwd.cache"), 0644u);
    EXPECT_EQ(mode_of(t.path + "/group.cache"), 0644u);
    EXPECT_EQ(mode_of(t.path + "/keys.cache"), 0640u);
    const std::string fresh = t.path + "/new";
    ASSERT_TRUE(publish_identity_cache(fresh, users(), groups(), o).ok());
    EXPECT_EQ(mode_of(fresh) & 0022, 0u);  // created without group/other write
}

TEST(IdentityCacheWriter, RefusesAWritableDirectoryAndReplacesNothing)
{
    TempDir t;
    CacheWriteOptions o;
    o.fsync = false;
    ASSERT_TRUE(publish_identity_cache(t.path, users(), groups(), o).ok());
    std::ifstream in(t.path + "/passwd.cache", std::ios::binary);
    const std::string before((std::istreambuf_iterator<char>(in)), {});
    for (mode_t bad : {0775, 0757, 01777}) {
        chmod(t.path.c_str(), bad);
        auto r = publish_identity_cache(t.path, {}, {}, o);
        ASSERT_FALSE(r.ok()) << std::oct << bad;
        EXPECT_TRUE(r.error().is(Errc::Refused)) << r.error().message;
    }
    std::ifstream again(t.path + "/passwd.cache", std::ios::binary);
    EXPECT_EQ(std::string((std::istreambuf_iterator<char>(again)), {}), before);
}

// Readers map the generation file: it is made once and then only bumped in
// place (same inode, never truncated); one they would not map is replaced.
TEST(IdentityCacheWriter, MakesTheGenerationFileOnceAndBumpsItInPlace)
{
    TempDir t;
    CacheWriteOptions o;
    o.fsync = false;
    const std::string gen = t.path + "/generation";
    ASSERT_TRUE(publish_identity_cache(t.path, users(), groups(), o).ok());
    EXPECT_EQ(mode_of(gen), 0644u);
    EXPECT_EQ(fs::file_size(gen), sizeof(idcache::GenerationFile));
    auto g = read_generation(gen);
    EXPECT_EQ(std::string(g.magic, 8), std::string(idcache::kGenerationMagic, 8));
    EXPECT_EQ(g.endian, idcache::kCacheEndian);
    EXPECT_EQ(g.version, idcache::kGenerationVersion);
    EXPECT_EQ(g.counter, 1u);
    const ino_t ino = inode_of(gen);
    for (uint64_t want = 2; want <= 4; ++want) {
        ASSERT_TRUE(publish_identity_cache(t.path, users(), groups(), o).ok());
        EXPECT_EQ(read_generation(gen).counter, want);
        EXPECT_EQ(inode_of(gen), ino);
    }
    // Not a file a reader would map (here: too short): made anew.
    fs::resize_file(gen, 8);
    ASSERT_TRUE(publish_identity_cache(t.path, users(), groups(), o).ok());
    EXPECT_EQ(fs::file_size(gen), sizeof(idcache::GenerationFile));
    EXPECT_EQ(read_generation(gen).counter, 1u);
    chmod(gen.c_str(), 0666);
    ASSERT_TRUE(publish_identity_cache(t.path, users(), groups(), o).ok());
    EXPECT_EQ(mode_of(gen), 0644u);
}

TEST(IdentityCacheWriter, KnowsItsOwnTemporaryNames)
{
    for (const char* name : {".passwd.cache.a1B2c3", ".group.cache.XyZ123", ".keys.cache.000000",
                             ".generation.q1W2e3"})
        EXPECT_TRUE(is_cache_temporary(name)) << name;
    for (const char* name : {".passwd.cache.toolong1", "passwd.cache.abcdef", ".other.abcdef",
                             "passwd.cache", ".passwd.cache.", "keep-me"})
        EXPECT_FALSE(is_cache_temporary(name)) << name;
}
