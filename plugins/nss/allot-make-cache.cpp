// allot-make-cache.cpp - publishes identity caches from passwd/group-format
// text files (tests and bench/nss-lookup only; not installed). allot-syncd is
// the real writer.
//
//   allot-make-cache DIR PASSWD GROUP [KEYS]
// PASSWD: name:x:uid:gid:gecos:home:shell   GROUP: name:x:gid:m1,m2
// KEYS:   name<TAB>key line  (one key per line)
//
//   allot-make-cache --set-uid PASSWD_CACHE FROM TO
// rewrites the uid FROM to TO in a published passwd.cache with a valid
// checksum, making what the writer refuses to make (uid 0): the image a
// hostile or broken writer would leave, for tests of the readers.
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "allot/identity_cache.hpp"
#include "allot/identity_cache_format.hpp"

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

int set_uid(const std::string& path, uint32_t from, uint32_t to)
{
    using namespace allot::idcache;
    std::ifstream in(path, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    FileHeader h;
    if (bytes.size() < sizeof h) return 1;
    std::memcpy(&h, bytes.data(), sizeof h);
    int changed = 0;
    for (uint32_t i = 0; i < h.section_count; ++i) {
        SectionEntry e;
        std::memcpy(&e, bytes.data() + sizeof h + i * sizeof e, sizeof e);
        if (e.id != static_cast<uint32_t>(SectionId::Records) || e.elem_size != sizeof(UserRecord))
            continue;
        for (uint64_t r = 0; r < e.count; ++r) {
            char* at = bytes.data() + e.offset + r * sizeof(UserRecord);
            UserRecord u;
            std::memcpy(&u, at, sizeof u);
            if (u.uid != from) continue;
            u.uid = to;
            std::memcpy(at, &u, sizeof u);
            ++changed;
        }
    }
    cache_seal(reinterpret_cast<unsigned char*>(bytes.data()), bytes.size());
    const std::string tmp = path + ".set-uid";
    std::ofstream(tmp, std::ios::binary) << bytes;
    if (!changed || std::rename(tmp.c_str(), path.c_str()) != 0) {
        unlink(tmp.c_str());
        std::fprintf(stderr, "allot-make-cache: no uid %u in %s\n", from, path.c_str());
        return 1;
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv)
{
    if (argc == 5 && std::string(argv[1]) == "--set-uid")
        return set_uid(argv[2], static_cast<uint32_t>(std::stoul(argv[3])),
                       static_cast<uint32_t>(std::stoul(argv[4])));
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
