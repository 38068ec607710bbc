// submit_bench.cpp - submit N held GPU batch jobs through libslurm, in process, and print jobs/s.
//
// The in-process API path measures slurmctld (and its job_submit plugin), not fork+exec of
// sbatch, which dominates on small machines (tests/lab findings). Usage:
//   submit_bench <jobs> <account> [qos]      (run as the submitting user, SLURM_CONF set)
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "compat/slurm.hpp"

int main(int argc, char** argv)
{
    if (argc < 3) {
        std::fprintf(stderr, "usage: submit_bench <jobs> <account> [qos]\n");
        return 2;
    }
    slurm_init(nullptr);  // from 24.05 libslurm's plugins (hash, auth) load only here
    const long jobs = std::strtol(argv[1], nullptr, 10);
    std::string account = argv[2];
    std::string qos = argc > 3 ? argv[3] : "";
    char script[] = "#!/bin/sh\ntrue\n";
    char name[] = "bench";
    char workdir[] = "/tmp";
    char gpu[] = ALLOT_GPU_TRES_PREFIX "1";
    char env0[] = "PATH=/usr/bin:/bin";
    char* env[] = {env0, nullptr};
    long failed = 0;
    const auto start = std::chrono::steady_clock::now();
    for (long i = 0; i < jobs; ++i) {
        job_desc_msg_t desc;
        slurm_init_job_desc_msg(&desc);
        desc.script = script;
        desc.name = name;
        desc.work_dir = workdir;
        desc.account = account.data();
        if (!qos.empty()) desc.qos = qos.data();
        desc.tres_per_job = gpu;
        desc.user_id = getuid();
        desc.group_id = getgid();
        desc.priority = 0;  // held: measures submission, not scheduling
        desc.min_nodes = 1;
        desc.environment = env;
        desc.env_size = 1;
        submit_response_msg_t* resp = nullptr;
        if (slurm_submit_batch_job(&desc, &resp) != SLURM_SUCCESS) {
            if (++failed == 1)
                std::fprintf(stderr, "submit failed: %s\n",
                             slurm_strerror(allot::slurm_compat::last_errno()));
        }
        if (resp) slurm_free_submit_response_response_msg(resp);
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("%.1f\n", static_cast<double>(jobs - failed) / seconds);
    return failed ? 1 : 0;
}
