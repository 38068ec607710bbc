// slurmdb_store.hpp - the real AccountingStore: libslurm's slurmdb API.
//
// allot-syncd is a program, not a plugin, so it links libslurm (-lslurm) and
// talks to slurmdbd like sacctmgr does, without scraping sacctmgr output.
// A whole plan is applied on one connection and committed once at the end:
// slurmdbd keeps the changes in one database transaction until then, so a
// syncd killed mid-apply leaves accounting exactly as it was.
#pragma once

#include <memory>
#include <string>

#include "sync_engine.hpp"

namespace allot {

class SlurmdbStore : public AccountingStore {
public:
    explicit SlurmdbStore(std::string cluster);
    ~SlurmdbStore() override;
    SlurmdbStore(const SlurmdbStore&) = delete;
    SlurmdbStore& operator=(const SlurmdbStore&) = delete;

    Result<AccountingState> read() override;
    Result<ApplyReport> apply(const Plan& plan) override;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace allot
