// submit_held.cpp - fills the queue for bench/mylimits: N held batch jobs submitted through
// libslurm's API from T threads (no process per job), as the calling user.
// Build: g++ -std=c++17 -O2 -pthread -I<top> -I<build> -o submit_held submit_held.cpp -lslurm
// Usage: SLURM_CONF=... submit_held <N> <threads> <account> <qos> [gpus]
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "compat/slurm.hpp"

int main(int argc, char** argv)
{
    if (argc < 5) {
        std::fprintf(stderr, "usage: %s N threads account qos [gpus]\n", argv[0]);
        return 2;
    }
    const int n = std::atoi(argv[1]), threads = std::atoi(argv[2]);
    std::string account = argv[3], qos = argv[4];
    std::string tres = std::string("gres:gpu:") + (argc > 5 ? argv[5] : "1");
    slurm_init(nullptr);
    std::atomic<int> ok{0}, failed{0};
    auto worker = [&](int count) {
        for (int i = 0; i < count; ++i) {
            job_desc_msg_t d;
            slurm_init_job_desc_msg(&d);
            char name[] = "bench-held", script[] = "#!/bin/sh\ntrue\n", out[] = "/dev/null",
                 cwd[] = "/tmp", env0[] = "PATH=/usr/bin:/bin";
            char* env[] = {env0, nullptr};
            d.name = name;
            d.script = script;
            d.std_out = out;
            d.work_dir = cwd;
            d.environment = env;
            d.env_size = 1;
            d.user_id = getuid();
            d.group_id = getgid();
            d.min_nodes = 1;
            d.priority = 0;  // held: the queue grows, nothing runs
            d.account = account.data();
            d.qos = qos.data();
            d.tres_per_job = tres.data();
            d.time_limit = 60;
            submit_response_msg_t* resp = nullptr;
            if (slurm_submit_batch_job(&d, &resp) == SLURM_SUCCESS)
                ++ok;
            else if (failed++ < 3)
                std::fprintf(stderr, "submit failed: %s\n",
                             slurm_strerror(allot::slurm_compat::last_errno()));
            if (resp) slurm_free_submit_response_response_msg(resp);
        }
    };
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) pool.emplace_back(worker, n / threads + (t < n % threads));
    for (auto& t : pool) t.join();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%d submitted, %d failed, %.1f s, %.0f jobs/s\n", ok.load(), failed.load(), s,
                ok / s);
    slurm_fini();
    return failed ? 1 : 0;
}
