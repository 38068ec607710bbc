// nss_bench.cpp - getpwnam/getpwuid/getgrgid latency through whatever the
// process's nsswitch.conf says (run.sh runs it once with "files" on a big
// /etc/passwd and once with "allot" on the same users' caches).
//
//   nss_bench N ITERATIONS [GETGROUPLIST_ITERATIONS]   (users are bench0..bench<N-1>, uid 200000+i,
//                             primary group benchg<i/10>, gid 300000+i/10)
//       prints "N FIRST GETPWNAM GETPWUID GETGRGID MISSES GETGROUPLIST GRNAM_BIG GRGID_BIG" (ns);
//       the last two are getgrnam_r and getgrgid_r of the shape's big groups, named by
//       $ALLOT_BENCH_BIG = "PREFIX GID_BASE COUNT" (run.sh's realistic shape: "benchbig 400000
//       N/500", the 500-member groups; unset: "benchg 300000 N/10"), ITERATIONS/10 calls each.
//   nss_bench floor N ITERATIONS
//   nss_bench replace N ROUNDS     (runs $ALLOT_BENCH_REPUBLISH, a shell command, each round)
//   nss_bench first N 1            (only the first lookup: prints "first NS")
//
// "replace" is a cache replaced under a running process: after warm lookups,
// each round has the writer republish (outside the timing), then times the
// first getpwuid_r after it and the mean of the next 1,000; prints
// "replace FIRST_AFTER_MEDIAN STEADY_AFTER_MEAN" in ns.
//
// "floor" prints "floor GLIBC_HIT GLIBC_MISS MODULE_HIT MODULE_MISS" in ns per
// lookup: getpwuid_r through glibc for existing and absent uids, then
// libnss_allot's _nss_allot_getpwuid_r called directly (dlopen through
// LD_LIBRARY_PATH). An absent uid costs the module one binary search that finds
// nothing, so the glibc miss is close to what glibc spends per call around any
// module (glibc 2.36: a stat() of /etc/nsswitch.conf on every call, and on every
// 100th a connect() to nscd's socket while nscd does not answer).
#include <dlfcn.h>
#include <grp.h>
#include <nss.h>
#include <pwd.h>

#include <algorithm>
#include <cerrno>
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

template <typename Lookup>
double ns_per_call(long iterations, Lookup lookup)
{
    const Clock::time_point t = Clock::now();
    for (long i = 0; i < iterations; ++i) lookup(i);
    return ns_since(t) / double(iterations);
}

using GetpwuidFn = nss_status (*)(uid_t, passwd*, char*, size_t, int*);

// The i-th uid of a walk that visits the N users in a scattered order.
uid_t spread_uid(long n, long i)
{
    return uid_t(200000 + (i * 7919) % n);
}

int floor_main(long n, long iterations)
{
    passwd pw, *res;
    char buf[1024];
    int err;
    const auto present = [n](long i) { return spread_uid(n, i); };
    const auto absent = [&](long i) { return uid_t(4000000000u - uint32_t(i & 1023)); };
    getpwuid_r(present(0), &pw, buf, sizeof buf, &res);  // loads the module
    const double glibc_hit = ns_per_call(
        iterations, [&](long i) { getpwuid_r(present(i), &pw, buf, sizeof buf, &res); });
    const double glibc_miss =
        ns_per_call(iterations, [&](long i) { getpwuid_r(absent(i), &pw, buf, sizeof buf, &res); });
    void* so = dlopen("libnss_allot.so.2", RTLD_NOW);
    auto* module = so ? reinterpret_cast<GetpwuidFn>(dlsym(so, "_nss_allot_getpwuid_r")) : nullptr;
    if (!module) {
        std::fprintf(stderr, "libnss_allot.so.2 not found\n");
        return 1;
    }
    const double module_hit =
        ns_per_call(iterations, [&](long i) { module(present(i), &pw, buf, sizeof buf, &err); });
    const double module_miss =
        ns_per_call(iterations, [&](long i) { module(absent(i), &pw, buf, sizeof buf, &err); });
    std::printf("floor %.0f %.0f %.0f %.0f\n", glibc_hit, glibc_miss, module_hit, module_miss);
    return 0;
}

// The first lookup of the process, by itself: run.sh takes the median of several
// processes, as one sample moves 2-4x with the load.
int first_main()
{
    passwd pw, *out = nullptr;
    std::vector<char> buf(1 << 16);
    const Clock::time_point t = Clock::now();
    if (getpwnam_r("bench0", &pw, buf.data(), buf.size(), &out) != 0 || !out) return 1;
    std::printf("first %.0f\n", ns_since(t));
    return 0;
}

int replace_main(long n, long rounds)
{
    const char* republish = std::getenv("ALLOT_BENCH_REPUBLISH");
    if (!republish || rounds < 1) return 2;
    passwd pw, *res;
    char buf[1024];
    const auto present = [n](long i) { return spread_uid(n, i); };
    ns_per_call(2000, [&](long i) { getpwuid_r(present(i), &pw, buf, sizeof buf, &res); });
    std::vector<double> first;
    double steady = 0;
    for (long r = 0; r < rounds; ++r) {
        if (std::system(republish) != 0) return 1;
        first.push_back(
            ns_per_call(1, [&](long) { getpwuid_r(present(r + 1), &pw, buf, sizeof buf, &res); }));
        if (!res) return 1;
        steady += ns_per_call(
            1000, [&](long i) { getpwuid_r(present(i + 17 * r), &pw, buf, sizeof buf, &res); });
    }
    std::sort(first.begin(), first.end());
    std::printf("replace %.0f %.0f\n", first[first.size() / 2], steady / double(rounds));
    return 0;
}

}  // namespace

int main(int argc, char** argv)
{
    if (argc == 4 && std::string(argv[1]) == "floor")
        return floor_main(std::atol(argv[2]), std::atol(argv[3]));
    if (argc == 4 && std::string(argv[1]) == "first") return first_main();
    if (argc == 4 && std::string(argv[1]) == "replace")
        return replace_main(std::atol(argv[2]), std::atol(argv[3]));
    if (argc != 3 && argc != 4) return 2;
    const long n = std::atol(argv[1]), iters = std::atol(argv[2]);
    // getgrouplist is linear in the groups for modules without initgroups_dyn: fewer calls.
    const long glist_iters = argc == 4 ? std::min(iters, std::atol(argv[3])) : iters;
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
    // A module may ask for a larger buffer (libnss-cache wants 1 MiB for groups): grow it
    // and keep it grown, as glibc's getgrgid() does with its own buffer.
    auto grgid = [&](gid_t gid) {
        int rc;
        while ((rc = getgrgid_r(gid, &gr, buf.data(), buf.size(), &gout)) == ERANGE)
            buf.resize(buf.size() * 2);
        return rc == 0 && gout;
    };
    t = Clock::now();
    for (long i = 0; i < iters; ++i)
        if (!grgid(gid_t(300000 + picks[size_t(i)] / 10))) ++misses;
    const double bygid = ns_since(t) / double(iters);
    // getgrouplist: what initgroups() (sshd, slurmstepd) asks for each user.
    std::vector<gid_t> groups(64);
    t = Clock::now();
    for (long i = 0; i < glist_iters; ++i) {
        int count = static_cast<int>(groups.size());
        const gid_t primary = gid_t(300000 + picks[size_t(i)] / 10);
        if (getgrouplist(names[size_t(i)].c_str(), primary, groups.data(), &count) < 1) ++misses;
    }
    const double bylist = ns_since(t) / double(glist_iters);
    // The big groups (a 500-member group is what a getgrnam of a department costs).
    char big_prefix[64] = "benchg";
    long big_base = 300000, big_count = std::max(1L, n / 10);
    if (const char* big = std::getenv("ALLOT_BENCH_BIG"); big && *big)
        if (std::sscanf(big, "%63s %ld %ld", big_prefix, &big_base, &big_count) != 3 ||
            big_count < 1)
            return 2;
    const long big_iters = std::max(1L, iters / 10);
    std::vector<std::string> big_names;
    for (long i = 0; i < big_iters; ++i)
        big_names.push_back(big_prefix + std::to_string(picks[size_t(i)] % big_count));
    t = Clock::now();
    for (long i = 0; i < big_iters; ++i) {
        int rc;
        while ((rc = getgrnam_r(big_names[size_t(i)].c_str(), &gr, buf.data(), buf.size(),
                                &gout)) == ERANGE)
            buf.resize(buf.size() * 2);
        if (rc != 0 || !gout) ++misses;
    }
    const double bigname = ns_since(t) / double(big_iters);
    t = Clock::now();
    for (long i = 0; i < big_iters; ++i)
        if (!grgid(gid_t(big_base + picks[size_t(i)] % big_count))) ++misses;
    const double biggid = ns_since(t) / double(big_iters);
    std::printf("%ld %.0f %.0f %.0f %.0f %ld %.0f %.0f %.0f\n", n, first, byname, byuid, bygid,
                misses, bylist, bigname, biggid);
    return misses ? 1 : 0;
}
