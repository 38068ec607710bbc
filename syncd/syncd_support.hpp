// syncd_support.hpp - allot-syncd's small host pieces: logging, the lock
// file, the drift state file, Prometheus textfile metrics, the NSS resolver
// and the identity-cache publisher adapter.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "sync_engine.hpp"

namespace allot::syncd {

enum class Level { Error = 0, Warning = 1, Info = 2, Debug = 3 };
void log_open(bool use_syslog, Level max_level);
void log(Level level, const std::string& message);

// An exclusive flock on `path`, held until destruction; fd -1 when busy.
class LockFile {
public:
    explicit LockFile(const std::string& path);
    ~LockFile();
    LockFile(const LockFile&) = delete;
    LockFile& operator=(const LockFile&) = delete;
    bool held() const { return fd_ >= 0; }
    const std::string& error() const { return error_; }

private:
    int fd_ = -1;
    std::string error_;
};

// Removes the entries of `dir` whose name `ours` accepts (the temporaries a
// killed run left, see allot/file_io.hpp); returns how many.
size_t remove_files(const std::string& dir, const std::function<bool(std::string_view)>& ours);

// Drift memory: "key<TAB>value" lines. A missing or unreadable file is empty.
std::map<std::string, std::string> load_state(const std::string& path);
Result<bool> save_state(const std::string& path, const std::map<std::string, std::string>& state);

struct Metrics {
    double last_run = 0, last_success = 0, duration = 0;
    uint64_t runs = 0, source_errors = 0, refusals = 0, accounting_errors = 0;
    uint64_t changes_total = 0, drift_total = 0;
    uint64_t last_changes = 0, rejected = 0, users = 0, groups = 0, held = 0;
    uint64_t rejected_total = 0;  // records rejected one by one, over every cycle
    int last_status = 0;
    std::string render() const;
};

class NssResolver : public UserResolver {
public:
    bool resolves(const std::string& name, uint32_t uid) override;
};

}  // namespace allot::syncd
