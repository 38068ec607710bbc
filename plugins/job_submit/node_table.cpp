// node_table.cpp - NodeName/PartitionName lines of slurm.conf to a NodeShape (see node_table.hpp).
#include "node_table.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace allot::job_submit {

namespace {

struct NodeLine {
    std::map<std::string, std::string> keys;  // lower-case key -> value
};

// "NodeName=n[1-2] CPUs=16 Gres=gpu:8" -> keys; values never contain spaces here.
NodeLine split_line(std::string_view line)
{
    NodeLine out;
    std::istringstream in{std::string(line)};
    std::string word;
    while (in >> word) {
        const size_t eq = word.find('=');
        if (eq == std::string::npos) continue;
        std::string key = word.substr(0, eq);
        for (char& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        out.keys[key] = word.substr(eq + 1);
    }
    return out;
}

uint64_t number(const NodeLine& line, const char* key, uint64_t fallback)
{
    const auto it = line.keys.find(key);
    if (it == line.keys.end()) return fallback;
    char* end = nullptr;
    const unsigned long long v = std::strtoull(it->second.c_str(), &end, 10);
    return end && end != it->second.c_str() ? v : fallback;
}

// Gres=gpu:8, gpu:h100:4(S:0-1),gpu:a100:4, mps:100 -> GPUs on the node.
uint64_t node_gpus(const NodeLine& line)
{
    const auto it = line.keys.find("gres");
    if (it == line.keys.end()) return 0;
    std::string gres;
    int depth = 0;
    for (char c : it->second) {  // drop socket bindings "(S:0-1)"
        if (c == '(') ++depth;
        if (!depth) gres += c;
        if (c == ')' && depth) --depth;
    }
    const auto n = gpus_in_tres(gres);
    return n ? n.value() : 0;
}

uint64_t node_cpus(const NodeLine& line)
{
    const uint64_t boards = number(line, "boards", 1);
    const uint64_t sockets = number(line, "sockets", number(line, "socketsperboard", 1) * boards);
    const uint64_t cores = number(line, "corespersocket", 1);
    const uint64_t threads = number(line, "threadspercore", 1);
    return number(line, "cpus", number(line, "procs", sockets * cores * threads));
}

struct Node {
    uint64_t cpus = 1, mem_mb = 1, gpus = 0;
};

}  // namespace

std::vector<std::string> expand_hostlist(const std::string& expression)
{
    std::vector<std::string> out;
    // Split on commas outside brackets: "n[1-2,4],gpu7" -> "n[1-2,4]", "gpu7".
    std::vector<std::string> parts(1);
    int depth = 0;
    for (char c : expression) {
        if (c == '[') ++depth;
        if (c == ']' && depth) --depth;
        if (c == ',' && !depth)
            parts.emplace_back();
        else
            parts.back() += c;
    }
    for (const auto& part : parts) {
        const size_t open = part.find('['), close = part.find(']');
        if (open == std::string::npos || close == std::string::npos || close < open) {
            if (!part.empty()) out.push_back(part);
            continue;
        }
        const std::string prefix = part.substr(0, open), suffix = part.substr(close + 1);
        std::istringstream ranges(part.substr(open + 1, close - open - 1));
        std::string range;
        while (std::getline(ranges, range, ',')) {
            const size_t dash = range.find('-');
            const std::string first = range.substr(0, dash);
            const std::string last = dash == std::string::npos ? first : range.substr(dash + 1);
            const unsigned long lo = std::strtoul(first.c_str(), nullptr, 10);
            const unsigned long hi = std::strtoul(last.c_str(), nullptr, 10);
            for (unsigned long i = lo; i <= hi && out.size() < 100000; ++i) {
                std::string digits = std::to_string(i);
                if (digits.size() < first.size())  // zero padding: n[01-16]
                    digits.insert(0, first.size() - digits.size(), '0');
                out.push_back(prefix + digits + suffix);
            }
        }
    }
    return out;
}

NodeShape node_shape_from_conf(std::string_view conf, const std::string& partition,
                               const HostlistExpander& expand)
{
    std::map<std::string, Node> nodes;
    NodeLine defaults;
    std::set<std::string> members;
    bool partition_found = false, all_nodes = false;
    std::istringstream in{std::string(conf)};
    std::string line;
    while (std::getline(in, line)) {
        line = line.substr(0, line.find('#'));
        const NodeLine parsed = split_line(line);
        if (auto it = parsed.keys.find("nodename"); it != parsed.keys.end()) {
            if (it->second == "DEFAULT") {
                for (const auto& kv : parsed.keys) defaults.keys[kv.first] = kv.second;
                continue;
            }
            NodeLine merged = defaults;
            for (const auto& kv : parsed.keys) merged.keys[kv.first] = kv.second;
            Node node{node_cpus(merged), number(merged, "realmemory", 1), node_gpus(merged)};
            for (const auto& name : expand(it->second)) nodes[name] = node;
        } else if (auto p = parsed.keys.find("partitionname");
                   p != parsed.keys.end() && p->second == partition) {
            partition_found = true;
            const auto list = parsed.keys.find("nodes");
            if (list == parsed.keys.end()) continue;
            if (list->second == "ALL") all_nodes = true;
            for (const auto& name : expand(list->second)) members.insert(name);
        }
    }
    NodeShape shape;
    for (const auto& [name, node] : nodes) {
        if (partition_found && !all_nodes && !members.count(name)) continue;
        shape.cpus = static_cast<uint32_t>(std::max<uint64_t>(shape.cpus, node.cpus));
        if (!node.gpus) continue;
        shape.gpus = static_cast<uint32_t>(std::max<uint64_t>(shape.gpus, node.gpus));
        const auto cpus_per_gpu =
            static_cast<uint32_t>(std::max<uint64_t>(node.cpus / node.gpus, 1));
        const uint64_t mem_per_gpu = std::max<uint64_t>(node.mem_mb / node.gpus, 1);
        if (!shape.cpus_per_gpu || cpus_per_gpu < shape.cpus_per_gpu)
            shape.cpus_per_gpu = cpus_per_gpu;
        if (!shape.mem_per_gpu_mb || mem_per_gpu < shape.mem_per_gpu_mb)
            shape.mem_per_gpu_mb = mem_per_gpu;
    }
    return shape;
}

NodeShape read_node_shape(const std::string& path, const std::string& partition)
{
    std::ifstream file(path);
    if (!file) return {};
    std::stringstream text;
    text << file.rdbuf();
    return node_shape_from_conf(text.str(), partition, expand_hostlist);
}

}  // namespace allot::job_submit
