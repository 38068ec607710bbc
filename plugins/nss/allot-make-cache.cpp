// allot-make-cache.cpp - publishes identity caches from passwd/group-format
// text files (tests and bench/nss-lookup only; not installed). allot-syncd is
// the real writer.
//
//   allot-make-cache DIR PASSWD GROUP [KEYS]
// PASSWD: name:x:uid:gid:gecos:home:shell   GROUP: name:x:gid:m1,m2
// KEYS:   name<TAB>key line  (one key per line)
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "allot/identity_cache.hpp"

namespace {

std::vector<std::string> split(const std::string& s, char sep)
{
    std::vector<std::string> out;
    std::string cur;
    std::istringstream in(s);
    while (std::getline(in, cur, sep)) out.push_back(cur);
    if (!s.empty() && s.back() == sep) out.emplace_back();
    return out;
}

}  // namespace

int main(int argc, char** argv)
{
    if (argc < 4 || argc > 5) {
        std::fprintf(stderr, "usage: allot-make-cache DIR PASSWD GROUP [KEYS]\n");
        return 1;
    }
    std::vector<allot::PosixUser> users;
    std::map<std::string, size_t> index;
    std::ifstream pw(argv[2]);
    for (std::string line; std::getline(pw, line);) {
        auto f = split(line, ':');
        if (f.size() != 7) continue;
        allot::PosixUser u;
        u.name = f[0];
        u.uid = static_cast<uint32_t>(std::stoul(f[2]));
        u.gid = static_cast<uint32_t>(std::stoul(f[3]));
        u.gecos = f[4];
        u.home = f[5];
        u.shell = f[6];
        index[u.name] = users.size();
        users.push_back(u);
    }
    std::vector<allot::PosixGroup> groups;
    std::ifstream gr(argv[3]);
    for (std::string line; std::getline(gr, line);) {
        auto f = split(line, ':');
        if (f.size() != 4) continue;
        allot::PosixGroup g;
        g.name = f[0];
        g.gid = static_cast<uint32_t>(std::stoul(f[2]));
        if (!f[3].empty()) g.members = split(f[3], ',');
        groups.push_back(g);
    }
    if (argc == 5) {
        std::ifstream keys(argv[4]);
        for (std::string line; std::getline(keys, line);) {
            const auto tab = line.find('\t');
            if (tab == std::string::npos) continue;
            auto it = index.find(line.substr(0, tab));
            if (it != index.end()) users[it->second].ssh_keys.push_back(line.substr(tab + 1));
        }
    }
    auto r = allot::publish_identity_cache(argv[1], users, groups);
    if (!r) {
        std::fprintf(stderr, "allot-make-cache: %s\n", r.error().message.c_str());
        return 1;
    }
    return 0;
}
