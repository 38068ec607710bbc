// slurmdb_reader.hpp - what allot-report reads from slurmdbd, behind an interface.
//
// The real reader uses libslurm's slurmdb API (never sacct's text): slurmdb_jobs_get with
// every run record (duplicates) and no steps, slurmdb_events_get for the cluster's GPU
// TRES history and node down/drain events, slurmdb_tres_get and slurmdb_qos_get to name
// ids. Unit tests build Inputs directly.
#pragma once

#include <memory>
#include <string>

#include "allot/result.hpp"
#include "errors.hpp"
#include "usage.hpp"

namespace allot::report {

struct Accounting {
    std::string cluster;
    Inputs inputs;
};

class AccountingSource {
public:
    virtual ~AccountingSource() = default;
    // Every run record and capacity event touching [from, until).
    virtual Result<Accounting> read(int64_t from, int64_t until) = 0;
};

std::unique_ptr<AccountingSource> make_slurmdb_source();

}  // namespace allot::report
