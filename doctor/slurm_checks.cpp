// slurm_checks.cpp - see slurm_checks.hpp. Each check reads keys by the names
// slurmctld reports them, so a key that is absent counts as unset.
#include "slurm_checks.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>

namespace allot::doctor {

namespace {

std::string lower(std::string_view s)
{
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

std::string trim(std::string_view s)
{
    size_t b = s.find_first_not_of(" \t");
    if (b == std::string_view::npos) return {};
    size_t e = s.find_last_not_of(" \t");
    return std::string(s.substr(b, e - b + 1));
}

std::string value_of(const SlurmConf& conf, const std::string& key)
{
    auto it = conf.find(key);
    // slurmctld reports unset strings as "(null)".
    if (it == conf.end() || it->second == "(null)") return {};
    return it->second;
}

// The line that adds `items` to a list key while keeping what is there.
std::string extended_line(const std::string& key, const std::string& current,
                          const std::vector<std::string>& items)
{
    std::string value = current;
    for (const std::string& item : items) {
        if (list_has(value, item)) continue;
        value += (value.empty() ? "" : ",") + item;
    }
    return key + "=" + value;
}

std::string conf_fix(const std::string& line)
{
    return "set `" + line + "` in slurm.conf, then `scontrol reconfigure`";
}

}  // namespace

std::vector<std::string> split_list(std::string_view text)
{
    std::vector<std::string> items;
    size_t start = 0;
    while (start <= text.size()) {
        size_t comma = text.find(',', start);
        if (comma == std::string_view::npos) comma = text.size();
        std::string item = lower(trim(text.substr(start, comma - start)));
        if (!item.empty()) items.push_back(item);
        start = comma + 1;
    }
    return items;
}

bool list_has(std::string_view text, std::string_view item)
{
    std::vector<std::string> items = split_list(text);
    return std::find(items.begin(), items.end(), lower(item)) != items.end();
}

Finding check_accounting_tres(const SlurmConf& conf)
{
    const char* id = "slurm.accounting_tres";
    std::string tres = value_of(conf, "AccountingStorageTRES");
    if (list_has(tres, "gres/gpu")) return ok(id, "AccountingStorageTRES tracks gres/gpu");
    return problem(Severity::Fail, id,
                   "AccountingStorageTRES does not include gres/gpu (is \"" + tres + "\")",
                   "Slurm ignores every QOS GPU limit unless GPUs are tracked as an accounting "
                   "resource, so teams can take any number of GPUs.",
                   "set `AccountingStorageTRES=gres/gpu` in slurm.conf, then restart "
                   "slurmctld (`systemctl restart slurmctld`)");
}

Finding check_accounting_enforce(const SlurmConf& conf)
{
    const char* id = "slurm.accounting_enforce";
    std::string enforce = value_of(conf, "AccountingStorageEnforce");
    std::vector<std::string> missing;
    for (const char* item : {"associations", "limits", "qos", "safe"})
        if (!list_has(enforce, item)) missing.push_back(item);
    if (missing.empty())
        return ok(id, "AccountingStorageEnforce includes associations,limits,qos,safe");
    std::string names;
    for (const std::string& m : missing) names += (names.empty() ? "" : ",") + m;
    return problem(Severity::Fail, id,
                   "AccountingStorageEnforce lacks " + names + " (is \"" + enforce + "\")",
                   "without limits and qos enforcement the QOS GPU limits allot writes are "
                   "recorded but never applied.",
                   conf_fix(extended_line("AccountingStorageEnforce", enforce,
                                          {"associations", "limits", "qos", "safe"})));
}

Finding check_preempt_type(const SlurmConf& conf)
{
    const char* id = "slurm.preempt_type";
    std::string type = lower(value_of(conf, "PreemptType"));
    if (type == "preempt/qos") return ok(id, "PreemptType=preempt/qos");
    return problem(Severity::Fail, id, "PreemptType is \"" + type + "\", not preempt/qos",
                   "project and general jobs can only take GPUs back from spot jobs when "
                   "preemption follows the QOS.",
                   conf_fix("PreemptType=preempt/qos"));
}

namespace {

bool loads_allot_job_submit(const SlurmConf& conf)
{
    for (const std::string& p : split_list(value_of(conf, "JobSubmitPlugins")))
        if (p == "allot" || p == "job_submit/allot") return true;
    return false;
}

// A QOS PreemptMode that replaces slurm.conf's for the QOS's jobs (sacctmgr(1): "OFF",
// "" and "cluster" leave the cluster-wide mode in force).
bool overrides_cluster_mode(const std::optional<std::string>& qos_mode)
{
    return qos_mode && !qos_mode->empty() && *qos_mode != "cluster" && *qos_mode != "off";
}

}  // namespace

Finding check_preempt_mode(const SlurmConf& conf, const std::optional<std::string>& spot_mode,
                           const Config& config)
{
    const char* id = "slurm.preempt_mode";
    const std::string& spot = config.tiers.spot.qos;
    std::string mode = value_of(conf, "PreemptMode");
    bool by_qos = overrides_cluster_mode(spot_mode);
    bool requeues = by_qos ? lower(*spot_mode) == "requeue" : list_has(mode, "requeue");
    std::string where = by_qos ? "QOS \"" + spot + "\" has PreemptMode=" + *spot_mode +
                                     ", which replaces slurm.conf's PreemptMode=" + mode
                               : "PreemptMode=" + mode;
    if (!requeues)
        return problem(Severity::Fail, id, "spot jobs are not requeued on preemption: " + where,
                       "preempted spot jobs are cancelled instead of requeued, so their work "
                       "is lost rather than resumed.",
                       by_qos ? "`sacctmgr -i modify qos " + spot + " set PreemptMode=requeue`"
                              : conf_fix(list_has(mode, "gang") ? "PreemptMode=REQUEUE,GANG"
                                                                : "PreemptMode=REQUEUE") +
                                    " (or `sacctmgr -i modify qos " + spot +
                                    " set PreemptMode=requeue`)");
    bool marked = loads_allot_job_submit(conf);
    if (!marked && value_of(conf, "JobRequeue") == "0")
        return problem(Severity::Fail, id,
                       where + " but JobRequeue=0 and job_submit/allot is not loaded",
                       "REQUEUE cancels jobs that are not requeueable, so spot jobs submitted "
                       "without --requeue are lost when preempted.",
                       conf_fix("JobRequeue=1"));
    return ok(id, where + "; spot jobs are requeueable (" +
                      (marked ? "job_submit/allot marks them" : "JobRequeue=1") + ")");
}

Finding check_preempt_signal(const SlurmConf& conf, bool signal_in_preempt_parameters)
{
    const char* id = "slurm.preempt_signal";
    if (list_has(value_of(conf, "PreemptParameters"), "send_user_signal") ||
        list_has(value_of(conf, "SlurmctldParameters"), "preempt_send_user_signal"))
        return ok(id, "the user signal is sent on preemption");
    std::string line =
        signal_in_preempt_parameters
            ? extended_line("PreemptParameters", value_of(conf, "PreemptParameters"),
                            {"send_user_signal"})
            : extended_line("SlurmctldParameters", value_of(conf, "SlurmctldParameters"),
                            {"preempt_send_user_signal"});
    return problem(Severity::Fail, id, "the user signal is not sent on preemption",
                   "spot jobs never hear their grace signal and cannot checkpoint before "
                   "they are requeued.",
                   conf_fix(line));
}

Finding check_job_submit(const SlurmConf& conf)
{
    const char* id = "slurm.job_submit";
    std::string plugins = value_of(conf, "JobSubmitPlugins");
    if (loads_allot_job_submit(conf)) return ok(id, "JobSubmitPlugins includes allot");
    std::string kept;
    for (const std::string& p : split_list(plugins)) kept += (kept.empty() ? "" : ",") + p;
    return problem(Severity::Fail, id,
                   "JobSubmitPlugins does not include allot (is \"" + plugins + "\")",
                   "jobs are not routed to their team's account and tier QOS, so the policy "
                   "is not applied at submission.",
                   "set `JobSubmitPlugins=" + kept + (kept.empty() ? "" : ",") +
                       "allot` in slurm.conf, then restart slurmctld (`systemctl restart "
                       "slurmctld`)");
}

Finding check_partition(const std::vector<Partition>& partitions, const Config& config)
{
    const char* id = "slurm.partition";
    const std::string& name = config.cluster.partition;
    if (name.empty()) return ok(id, "cluster.partition unset: every partition is governed");
    auto it = std::find_if(partitions.begin(), partitions.end(),
                           [&](const Partition& p) { return p.name == name; });
    if (it == partitions.end())
        return problem(Severity::Fail, id, "the governed partition \"" + name + "\" does not exist",
                       "allot.yaml names a partition slurmctld does not have, so no job is "
                       "governed.",
                       "add `PartitionName=" + name +
                           " Nodes=<gpu nodes> Default=YES State=UP` to slurm.conf, then "
                           "`scontrol reconfigure`");
    if (it->is_default) return ok(id, "the governed partition \"" + name + "\" is the default");
    return problem(Severity::Warn, id,
                   "the governed partition \"" + name + "\" is not the default partition",
                   "jobs submitted without -p land outside the policy.",
                   "`scontrol update PartitionName=" + name +
                       " Default=YES` and add Default=YES to its PartitionName line in "
                       "slurm.conf");
}

uint32_t gpus_in_gres(std::string_view gres)
{
    uint32_t total = 0;
    for (const std::string& item : split_list(gres)) {
        std::string g = item.substr(0, item.find('('));
        if (g.rfind("gpu:", 0) != 0) continue;
        std::string count = g.substr(g.rfind(':') + 1);
        if (!count.empty() && count.find_first_not_of("0123456789") == std::string::npos &&
            count.size() < 6)
            total += static_cast<uint32_t>(std::stoul(count));
    }
    return total;
}

namespace {

// A number of slurmctld's report, 0 when unset or UNLIMITED.
uint64_t number_of(const SlurmConf& conf, const std::string& key)
{
    std::string v = value_of(conf, key);
    if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos || v.size() > 18)
        return 0;
    return std::stoull(v);
}

// DefMemPerGPU / DefCpuPerGPU as slurmctld reports them, inside JobDefaults.
uint64_t job_default(const SlurmConf& conf, const std::string& key)
{
    for (const std::string& item : split_list(value_of(conf, "JobDefaults"))) {
        size_t eq = item.find('=');
        if (eq == std::string::npos || item.substr(0, eq) != lower(key)) continue;
        std::string v = item.substr(eq + 1);
        if (!v.empty() && v.find_first_not_of("0123456789") == std::string::npos && v.size() < 18)
            return std::stoull(v);
    }
    return 0;
}

}  // namespace

Finding check_mem_defaults(const SlurmConf& conf, const Config& config)
{
    const char* id = "slurm.mem_defaults";
    uint64_t mem = config.cluster.mem_per_gpu_mb;
    uint32_t cpus = config.cluster.cpus_per_gpu;
    uint64_t max_per_cpu = number_of(conf, "MaxMemPerCPU");
    if (mem && cpus && max_per_cpu && mem > max_per_cpu * cpus) {
        uint64_t need = (mem + cpus - 1) / cpus;
        return problem(Severity::Fail, id,
                       "MaxMemPerCPU=" + std::to_string(max_per_cpu) + " is below allot's " +
                           std::to_string(mem) + " MB per GPU over " + std::to_string(cpus) +
                           " CPUs per GPU",
                       "Slurm raises every GPU job's CPU count to honour MaxMemPerCPU, so jobs "
                       "take more CPUs than allot gives them and whole-node jobs never fit.",
                       conf_fix("MaxMemPerCPU=" + std::to_string(need)));
    }
    uint64_t def_mem_gpu = job_default(conf, "DefMemPerGPU");
    if (mem && def_mem_gpu && def_mem_gpu != mem)
        return problem(Severity::Warn, id,
                       "DefMemPerGPU=" + std::to_string(def_mem_gpu) + " differs from allot's " +
                           std::to_string(mem) + " MB per GPU",
                       "GPU jobs get one memory default through allot and another where "
                       "job_submit/allot does not apply, so a team's share means different "
                       "memory on different paths.",
                       conf_fix("DefMemPerGPU=" + std::to_string(mem)));
    uint64_t def_cpu_gpu = job_default(conf, "DefCpuPerGPU");
    if (cpus && def_cpu_gpu && def_cpu_gpu != cpus)
        return problem(Severity::Warn, id,
                       "DefCpuPerGPU=" + std::to_string(def_cpu_gpu) + " differs from allot's " +
                           std::to_string(cpus) + " CPUs per GPU",
                       "GPU jobs get one CPU default through allot and another where "
                       "job_submit/allot does not apply.",
                       conf_fix("DefCpuPerGPU=" + std::to_string(cpus)));
    return ok(id, "Slurm's memory and CPU defaults agree with allot's per-GPU defaults");
}

Finding check_gpu_defaults_fit(const std::vector<NodeShape>& nodes, const Config& config)
{
    const char* id = "slurm.gpu_defaults_fit";
    uint64_t mem = config.cluster.mem_per_gpu_mb;
    uint32_t cpus = config.cluster.cpus_per_gpu;
    std::string short_mem, short_cpu;
    uint64_t need_mem = 0, fit_mem = UINT64_MAX;
    uint32_t need_cpu = 0, fit_cpu = UINT32_MAX;
    for (const NodeShape& n : nodes) {
        if (!n.gpus) continue;
        if (mem && n.gpus * mem > n.real_memory_mb) {
            short_mem += (short_mem.empty() ? "" : ",") + n.name;
            need_mem = std::max<uint64_t>(need_mem, n.gpus * mem);
            fit_mem = std::min<uint64_t>(fit_mem, n.real_memory_mb / n.gpus);
        }
        if (cpus && n.gpus * cpus > n.cpus) {
            short_cpu += (short_cpu.empty() ? "" : ",") + n.name;
            need_cpu = std::max<uint32_t>(need_cpu, n.gpus * cpus);
            fit_cpu = std::min<uint32_t>(fit_cpu, n.cpus / n.gpus);
        }
    }
    if (!short_mem.empty())
        return problem(
            Severity::Warn, id,
            "all GPUs of " + short_mem + " at " + std::to_string(mem) + " MB each need " +
                std::to_string(need_mem) + " MB, more than the node's RealMemory",
            "job_submit/allot then gives GPU jobs only the node's memory per GPU, "
            "less than allot.yaml says, and the teams' QOS count memory the nodes "
            "do not have.",
            "set `RealMemory=" + std::to_string(need_mem) + "` on NodeName=" + short_mem +
                " in slurm.conf if the nodes have it, then restart slurmctld and "
                "slurmd (or lower `cluster.mem_per_gpu: " +
                std::to_string(fit_mem) + "M` in allot.yaml)");
    if (!short_cpu.empty())
        return problem(Severity::Warn, id,
                       "all GPUs of " + short_cpu + " at " + std::to_string(cpus) +
                           " CPUs each need " + std::to_string(need_cpu) +
                           " CPUs, more than the node has",
                       "job_submit/allot then gives GPU jobs only the node's CPUs per GPU, "
                       "fewer than allot.yaml says.",
                       "set `cluster.cpus_per_gpu: " + std::to_string(fit_cpu) +
                           "` in allot.yaml (what the smallest of these nodes has per GPU)");
    return ok(id, "allot's per-GPU defaults fit every GPU node");
}

Findings check_slurm(const SlurmInputs& in, const Config& config)
{
    return {check_accounting_tres(in.conf),
            check_accounting_enforce(in.conf),
            check_preempt_type(in.conf),
            check_preempt_mode(in.conf, in.spot_preempt_mode, config),
            check_preempt_signal(in.conf, in.signal_in_preempt_parameters),
            check_job_submit(in.conf),
            check_partition(in.partitions, config),
            check_mem_defaults(in.conf, config),
            check_gpu_defaults_fit(in.nodes, config)};
}

}  // namespace allot::doctor
