// sync_engine.hpp - one allot-syncd cycle: fetch, validate, publish, plan, apply.
//
// The cycle talks to the world only through the interfaces below (SCIM source,
// accounting store, NSS resolver, cache publisher), so every safety rule —
// refuse an empty source, cap removals, hold users that do not resolve yet,
// keep the last good cache on a source error — is unit-tested with fakes.
// syncd/ provides the real implementations (libcurl, libslurm's slurmdb API,
// getpwnam, the identity cache writer).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "allot/config.hpp"
#include "allot/identity_validate.hpp"
#include "allot/result.hpp"
#include "allot/scim_client.hpp"
#include "sync_plan.hpp"

namespace allot {

class ScimSource {
public:
    virtual ~ScimSource() = default;
    virtual Result<ScimDirectory> fetch() = 0;
};

struct ApplyReport {
    size_t applied = 0;
    std::vector<std::string> deferred;  // e.g. association with running jobs
    std::vector<std::string> failed;
};

// A ScimSource over HTTP: the SCIM client's paging and retries over any HttpClient
// (libcurl in allot-syncd, a fake in the tests).
class HttpScimSource : public ScimSource {
public:
    HttpScimSource(HttpClient& http, ScimFetchOptions options)
        : http_(http), options_(std::move(options))
    {
    }
    Result<ScimDirectory> fetch() override { return fetch_directory(http_, options_); }

private:
    HttpClient& http_;
    ScimFetchOptions options_;
};

class AccountingStore {
public:
    virtual ~AccountingStore() = default;
    // Everything relevant, owned by allot or not (the planner decides).
    virtual Result<AccountingState> read() = 0;
    // Applies in plan order and commits; Error when nothing could be written
    // (connection lost), else a report of what failed one by one.
    virtual Result<ApplyReport> apply(const Plan& plan) = 0;
};

class UserResolver {
public:
    virtual ~UserResolver() = default;
    // True when `name` resolves through NSS to `uid` on this host.
    virtual bool resolves(const std::string& name, uint32_t uid) = 0;
};

class CachePublisher {
public:
    virtual ~CachePublisher() = default;
    virtual Result<bool> publish(const ValidatedDirectory& dir) = 0;
    // The user and group names ("user:x", "group:y") the published caches
    // hold now; nullopt when there are none yet (a new node: nothing to shrink).
    virtual std::optional<std::set<std::string>> published_names() { return std::nullopt; }
};

enum class SyncStatus {
    Ok = 0,
    SourceError = 2,      // SCIM unreachable or invalid: nothing written
    Refused = 3,          // safety refusal (empty source, too many removals)
    AccountingError = 4,  // slurmdbd read/apply failed (partly or wholly)
    CacheError = 6,
};

struct SyncOptions {
    bool plan_only = false;
    bool force = false;
    bool accounting = true;  // controller: write slurmdbd
    bool caches = true;      // every node: publish caches
    bool adopt = false;
    uint32_t max_removals = 50;
    const std::map<std::string, std::string>* last_applied = nullptr;
    // The node's own accounts and groups (load_local_identities()): no
    // directory record may take one of their names or ids.
    const LocalIdentities* local = nullptr;
};

struct SyncReport {
    SyncStatus status = SyncStatus::Ok;
    std::string message;
    ValidatedDirectory directory;
    Plan plan;
    ApplyReport applied;
    bool caches_published = false;
    bool accounting_applied = false;
    std::map<std::string, std::string> new_applied_state;  // save when accounting_applied
    uint32_t source_requests = 0;
    Error source_error;  // the code of a SourceError (a scim_source::Errc)
    // Users' private groups the source synthesised (userPrivateGroup), left out.
    size_t private_groups_skipped = 0;
    // Wall time of each phase run ("fetch+validate", "read accounting", ...),
    // in order, for -v: where a cycle's time goes.
    std::vector<std::pair<std::string, double>> phase_seconds;
};

SyncReport run_sync(const Config& config, ScimSource& source, AccountingStore* store,
                    UserResolver& resolver, CachePublisher* caches, const SyncOptions& options);

}  // namespace allot
