// nss_bench.cpp - getpwnam/getpwuid/getgrgid latency through whatever the
// process's nsswitch.conf says (run.sh runs it once with "files" on a big
// /etc/passwd and once with "allot" on the same users' caches).
//
//   nss_bench N ITERATIONS   (users are bench0..bench<N-1>, uid 200000+i,
//                             groups benchg0.. gid 300000+i/10)
#include <grp.h>
#include <pwd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double ns_since(Clock::time_point t)
{
    return std::chrono::duration<double, std::nano>(Clock::now() - t).count();
}

}  // namespace

int main(int argc, char** argv)
{
    if (argc != 3) return 2;
    const long n = std::atol(argv[1]), iters = std::atol(argv[2]);
    std::mt19937 rng(42);
    std::vector<std::string> names;
    std::vector<long> picks;
    for (long i = 0; i < iters; ++i) picks.push_back(long(rng() % uint32_t(n)));
    for (long p : picks) names.push_back("bench" + std::to_string(p));

    std::vector<char> buf(1 << 16);
    passwd pw, *out = nullptr;
    group gr, *gout = nullptr;
    // First lookup: opens (and for allot maps and validates) the database.
    auto t = Clock::now();
    if (getpwnam_r("bench0", &pw, buf.data(), buf.size(), &out) != 0 || !out) {
        std::fprintf(stderr, "bench0 does not resolve\n");
        return 1;
    }
    const double first = ns_since(t);
    long misses = 0;
    t = Clock::now();
    for (long i = 0; i < iters; ++i)
        if (getpwnam_r(names[size_t(i)].c_str(), &pw, buf.data(), buf.size(), &out) != 0 || !out)
            ++misses;
    const double byname = ns_since(t) / double(iters);
    t = Clock::now();
    for (long i = 0; i < iters; ++i)
        if (getpwuid_r(uid_t(200000 + picks[size_t(i)]), &pw, buf.data(), buf.size(), &out) != 0 ||
            !out)
            ++misses;
    const double byuid = ns_since(t) / double(iters);
    t = Clock::now();
    for (long i = 0; i < iters; ++i)
        if (getgrgid_r(gid_t(300000 + picks[size_t(i)] / 10), &gr, buf.data(), buf.size(), &gout) !=
                0 ||
            !gout)
            ++misses;
    const double bygid = ns_since(t) / double(iters);
    std::printf("%ld %.0f %.0f %.0f %.0f %ld\n", n, first, byname, byuid, bygid, misses);
    return misses ? 1 : 0;
}
