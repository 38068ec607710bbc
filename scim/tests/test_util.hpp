// test_util.hpp - scratch directories and store fixtures for allot-scimd tests.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>

#include "store.hpp"

namespace allot::scimd::test {

// A fresh directory under $TMPDIR, removed with everything in it.
class ScratchDir {
public:
    ScratchDir()
    {
        std::string tmpl = (std::filesystem::temp_directory_path() / "scimd-test-XXXXXX").string();
        if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
        path_ = tmpl;
    }
    ~ScratchDir()
    {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    std::string file(const std::string& name) const { return path_ + "/" + name; }
    const std::string& path() const { return path_; }

private:
    std::string path_;
};

// A fresh SQLite directory store in `dir`: ids 1000..60000, the default extension.
inline std::unique_ptr<DirectoryStore> open_test_store(const ScratchDir& dir)
{
    std::string err;
    auto store = open_sqlite_store(dir.file("d.db"), IdRange{1000, 60000, 1000, 60000},
                                   scim::kDefaultPosixUser, &err);
    if (!store) throw std::runtime_error("open_sqlite_store: " + err);
    return store;
}

// A user with just a name, a home and a shell, for store tests.
inline scim::User user(const std::string& name)
{
    scim::User u;
    u.user_name = name;
    u.home = "/home/" + name;
    u.shell = "/bin/bash";
    return u;
}

}  // namespace allot::scimd::test
