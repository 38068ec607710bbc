// fakes.hpp - in-memory Slurm and quota system for the mylimits unit tests.
#pragma once

#include <cerrno>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "app.hpp"

namespace allot::mylimits::testing {

class FakeSlurm : public SlurmQuery {
public:
    std::map<std::string, SlurmFacts> facts;  // by user name
    std::map<std::string, bool> operators;    // admin level ≥ Operator
    std::optional<Error> fail;                // set: fetch fails with it
    bool operator_lookup_fails = false;
    std::vector<std::string> fetched;  // users fetched, in order
    std::string last_cluster;

    Result<bool> is_operator(const std::string& user) override
    {
        if (operator_lookup_fails)
            return make_error(Errc::SlurmctldDown, "slurmctld (assoc_mgr): Connection refused");
        auto it = operators.find(user);
        return it != operators.end() && it->second;
    }
    Result<SlurmFacts> fetch(const std::string& user, uint32_t uid,
                             const std::string& cluster) override
    {
        fetched.push_back(user);
        last_cluster = cluster;
        if (fail) return *fail;
        auto it = facts.find(user);
        if (it != facts.end()) return it->second;
        SlurmFacts unknown;
        unknown.user.name = user;
        unknown.user.uid = uid;
        unknown.user.known_to_slurm = false;
        return unknown;
    }
};

class FakeQuotaSystem : public QuotaSystem {
public:
    std::map<std::string, std::string> files;
    std::map<std::string, std::pair<std::string, std::string>> mounts;  // path → {dev, mnt}
    int quotactl_errno = ESRCH;
    KernelQuota kernel;
    std::map<std::string, std::string> command_output;  // argv[0] → stdout
    std::vector<std::vector<std::string>> commands_run;
    uint32_t last_quota_uid = 0;

    Result<std::pair<std::string, std::string>> device_of(const std::string& path) override
    {
        auto it = mounts.find(path);
        if (it == mounts.end())
            return make_error(quota::Errc::NoMount, "no filesystem is mounted at " + path);
        return it->second;
    }
    int get_user_quota(const std::string&, uint32_t uid, KernelQuota& out) override
    {
        last_quota_uid = uid;
        if (quotactl_errno) return quotactl_errno;
        out = kernel;
        return 0;
    }
    Result<std::string> run(const std::vector<std::string>& argv, int) override
    {
        commands_run.push_back(argv);
        auto it = command_output.find(argv.at(0));
        if (it == command_output.end())
            return make_error(quota::Errc::CommandFailed, "cannot run " + argv.at(0));
        return it->second;
    }
    Result<std::string> read_file(const std::string& path) override
    {
        auto it = files.find(path);
        if (it == files.end())
            return make_error(allot::Errc::NotFound, path + ": No such file or directory");
        return it->second;
    }
};

}  // namespace allot::mylimits::testing
