// slurm_reader.cpp - see slurm_reader.hpp.
#include "slurm_reader.hpp"

#include <sys/stat.h>

#include <cstdio>
#include <ctime>
#include <memory>
#include <mutex>

#include "compat/slurm.hpp"
#include "compat/slurm_list.hpp"
#include "compat/slurm_msg.hpp"

extern "C" {
// src/common/slurm_protocol_defs.h: the items of slurm_ctl_conf_2_key_pairs()'s
// list, opaque in the installed slurm.h; the same two fields in every release.
typedef struct {
    char* name;
    char* value;
} allot_config_key_pair_t;
}

namespace allot::doctor {

namespace {

void init_once()
{
    static std::once_flag once;
    std::call_once(once, [] { slurm_init(nullptr); });
}

std::string str(const char* s)
{
    return s ? s : "";
}

std::string last_error()
{
    return str(slurm_strerror(slurm_compat::last_errno()));
}

Result<SlurmConf> read_conf()
{
    slurm_conf_t* raw = nullptr;
    if (slurm_load_ctl_conf(0, &raw) != SLURM_SUCCESS)
        return make_error("cannot read slurmctld's configuration: " + last_error());
    slurm_compat::CtlConfPtr conf(raw);
    slurm_compat::ListPtr pairs(static_cast<list_t*>(slurm_ctl_conf_2_key_pairs(conf.get())));
    SlurmConf out;
    slurm_compat::for_each<allot_config_key_pair_t>(
        pairs.get(), [&](allot_config_key_pair_t* p) { out[str(p->name)] = str(p->value); });
    return out;
}

Result<std::vector<Partition>> read_partitions()
{
    partition_info_msg_t* raw = nullptr;
    if (slurm_load_partitions(0, &raw, SHOW_ALL) != SLURM_SUCCESS)
        return make_error("cannot read slurmctld's partitions: " + last_error());
    slurm_compat::PartitionMsgPtr msg(raw);
    std::vector<Partition> out;
    for (uint32_t i = 0; i < msg->record_count; ++i) {
        const partition_info_t& p = msg->partition_array[i];
        out.push_back({str(p.name), (p.flags & PART_FLAG_DEFAULT) != 0});
    }
    return out;
}

Result<std::vector<NodeShape>> read_nodes()
{
    node_info_msg_t* raw = nullptr;
    if (slurm_load_node(0, &raw, SHOW_ALL) != SLURM_SUCCESS)
        return make_error("cannot read slurmctld's nodes: " + last_error());
    slurm_compat::NodeMsgPtr msg(raw);
    std::vector<NodeShape> out;
    for (uint32_t i = 0; i < msg->record_count; ++i) {
        const node_info_t& n = msg->node_array[i];
        if (!n.name) continue;
        out.push_back({str(n.name), n.cpus, n.real_memory, gpus_in_gres(str(n.gres))});
    }
    return out;
}

struct PipeCloser {
    void operator()(FILE* f) const
    {
        if (f) pclose(f);
    }
};

// Runs a fixed sacctmgr command line (no user input reaches the shell).
Result<std::string> run_sacctmgr(const char* command)
{
    std::unique_ptr<FILE, PipeCloser> pipe(popen(command, "r"));
    if (!pipe) return make_error(std::string("cannot run ") + command);
    std::string out;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, pipe.get())) > 0) out.append(buf, n);
    int status = pclose(pipe.release());
    if (status != 0) return make_error(std::string(command) + " failed (slurmdbd down?)");
    return out;
}

}  // namespace

Result<SlurmInputs> read_slurm()
{
    init_once();
    SlurmInputs in;
    Result<SlurmConf> conf = read_conf();
    if (!conf) return conf.error();
    in.conf = std::move(conf).value();
    Result<std::vector<Partition>> parts = read_partitions();
    if (!parts) return parts.error();
    in.partitions = std::move(parts).value();
    Result<std::vector<NodeShape>> nodes = read_nodes();
    if (!nodes) return nodes.error();
    in.nodes = std::move(nodes).value();
    in.signal_in_preempt_parameters = allot::slurm_compat::kUserSignalInPreemptParameters;
    return in;
}

Result<AccountingInputs> read_accounting(const std::string& syncd_state)
{
    Result<std::string> qos = run_sacctmgr(
        "sacctmgr -nP show qos "
        "format=Name,Preempt,PreemptMode,GraceTime,GrpTRES,MaxTRESPA,MaxWall,Priority 2>&1");
    if (!qos) return qos.error();
    Result<std::string> accounts = run_sacctmgr("sacctmgr -nP show account format=Account 2>&1");
    if (!accounts) return accounts.error();
    AccountingInputs in;
    in.qos = parse_qos_rows(qos.value());
    in.accounts = parse_account_rows(accounts.value());
    struct stat st;
    if (stat(syncd_state.c_str(), &st) != 0) return in;
    in.syncd_success = int64_t(st.st_mtime);
    // The command line holds only digits and punctuation of our own making.
    char start[32];
    struct tm tm;
    time_t t = st.st_mtime;
    strftime(start, sizeof start, "%Y-%m-%dT%H:%M:%S", localtime_r(&t, &tm));
    Result<std::string> since = run_sacctmgr((std::string("sacctmgr -nP list transactions start=") +
                                              start + " format=Time,Action,Actor,Where 2>&1")
                                                 .c_str());
    if (!since) return since.error();
    in.since_syncd = parse_transactions(since.value());
    return in;
}

}  // namespace allot::doctor
