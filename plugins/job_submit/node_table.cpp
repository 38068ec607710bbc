// node_table.cpp - NodeName/PartitionName lines of slurm.conf (and its Includes) to a NodeShape
// (see node_table.hpp).
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

bool iequals(std::string_view a, std::string_view b)
{
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) ==
                      std::tolower(static_cast<unsigned char>(y));
           });
}

std::string lowered(std::string text)
{
    for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return text;
}

std::string directory_of(const std::string& path)
{
    const size_t slash = path.rfind('/');
    return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

// "key = value" is "key=value": blanks and tabs on either side of each '=' dropped.
std::string join_spaced_equals(const std::string& line)
{
    std::string out;
    for (size_t i = 0; i < line.size(); ++i) {
        if (line[i] != '=') {
            out += line[i];
            continue;
        }
        while (!out.empty() && (out.back() == ' ' || out.back() == '\t')) out.pop_back();
        out += '=';
        while (i + 1 < line.size() && (line[i + 1] == ' ' || line[i + 1] == '\t')) ++i;
    }
    return out;
}

// Slurm's line reading: '#' starts a comment unless escaped ("\#"), a trailing backslash
// continues the line, and "key = value" is "key=value".
std::vector<std::string> logical_lines(const std::string& text)
{
    std::vector<std::string> out;
    std::istringstream in(text);
    std::string raw, pending;
    while (std::getline(in, raw)) {
        std::string line;
        for (size_t i = 0; i < raw.size(); ++i) {
            if (raw[i] == '\\' && i + 1 < raw.size() && raw[i + 1] == '#') {
                line += '#';
                ++i;
            } else if (raw[i] == '#') {
                break;
            } else {
                line += raw[i];
            }
        }
        while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back())))
            line.pop_back();
        if (!line.empty() && line.back() == '\\') {
            line.pop_back();
            pending += line;
            continue;
        }
        out.push_back(join_spaced_equals(pending + line));
        pending.clear();
    }
    if (!pending.empty()) out.push_back(join_spaced_equals(pending));
    return out;
}

// "Include NAME ..." -> NAME; empty when the line is no Include directive.
std::string include_name(const std::string& line)
{
    constexpr std::string_view keyword = "include";
    if (line.size() <= keyword.size() || !iequals(line.substr(0, keyword.size()), keyword) ||
        !std::isspace(static_cast<unsigned char>(line[keyword.size()])))
        return {};
    std::istringstream words(line.substr(keyword.size()));
    std::string name;
    words >> name;
    return name;
}

// NAME of an Include line to the path slurmctld opens; empty when slurmctld skips it.
std::string include_path(std::string name, const std::string& cluster, const std::string& dir)
{
    if (name.find('*') != std::string::npos) return {};
    for (size_t at = name.find("%c"); at != std::string::npos; at = name.find("%c")) {
        if (cluster.empty()) return {};  // slurmctld: "Did not get ClusterName for include path"
        name.replace(at, 2, cluster);
    }
    return name[0] == '/' ? name : dir + name;
}

struct IncludeWalk {
    IncludeBase base;
    const FileReader& read;
    std::string conf_dir;  // slurm.conf's directory, with its trailing '/'
    std::string cluster;   // the ClusterName set so far, lower-cased
    std::string out;
};

void append_conf_file(IncludeWalk& walk, const std::string& path, int depth)
{
    const auto text = walk.read(path);
    if (!text || depth > 16) return;
    const std::string dir =
        walk.base == IncludeBase::SlurmConfDir ? walk.conf_dir : directory_of(path);
    for (const auto& line : logical_lines(*text)) {
        if (const std::string name = include_name(line); !name.empty()) {
            if (const std::string file = include_path(name, walk.cluster, dir); !file.empty())
                append_conf_file(walk, file, depth + 1);
            continue;
        }
        for (const auto& [key, value] : split_line(line).keys)
            if (key == "clustername") walk.cluster = lowered(value);
        walk.out += line;
        walk.out += '\n';
    }
}

std::optional<std::string> read_whole_file(const std::string& path)
{
    std::ifstream file(path);
    if (!file) return std::nullopt;
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
}

}  // namespace

std::string conf_text_with_includes(const std::string& conf_path, IncludeBase base,
                                    const FileReader& read)
{
    IncludeWalk walk{base, read, directory_of(conf_path), {}, {}};
    append_conf_file(walk, conf_path, 0);
    return walk.out;
}

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

namespace {

// What slurm.conf says about nodes, node sets and the governed partition's node list.
struct ConfNodes {
    std::map<std::string, Node> nodes;
    std::map<std::string, std::set<std::string>> features;  // node -> its Features
    std::map<std::string, NodeLine> nodesets;               // NodeSet name -> its line
    std::optional<std::string> partition_nodes;             // the partition's Nodes=
    bool partition_found = false;
};

std::set<std::string> feature_list(const NodeLine& line)
{
    std::set<std::string> out;
    for (const char* key : {"features", "feature"}) {
        const auto it = line.keys.find(key);
        if (it == line.keys.end()) continue;
        std::istringstream list(it->second);
        for (std::string f; std::getline(list, f, ',');)
            if (!f.empty()) out.insert(f);
    }
    return out;
}

ConfNodes read_conf_nodes(std::string_view conf, const std::string& partition,
                          const HostlistExpander& expand)
{
    ConfNodes out;
    NodeLine node_defaults, partition_defaults;
    std::istringstream in{std::string(conf)};
    std::string line;
    while (std::getline(in, line)) {
        line = line.substr(0, line.find('#'));
        const NodeLine parsed = split_line(line);
        if (auto it = parsed.keys.find("nodename"); it != parsed.keys.end()) {
            NodeLine merged = node_defaults;  // a DEFAULT line adds to the defaults before it
            for (const auto& kv : parsed.keys) merged.keys[kv.first] = kv.second;
            if (iequals(it->second, "DEFAULT")) {
                node_defaults = merged;
                continue;
            }
            const Node node{node_cpus(merged), number(merged, "realmemory", 1), node_gpus(merged)};
            for (const auto& name : expand(it->second)) {
                out.nodes[name] = node;
                out.features[name] = feature_list(merged);
            }
        } else if (auto set = parsed.keys.find("nodeset"); set != parsed.keys.end()) {
            out.nodesets[set->second] = parsed;
        } else if (auto p = parsed.keys.find("partitionname"); p != parsed.keys.end()) {
            NodeLine merged = partition_defaults;
            for (const auto& kv : parsed.keys) merged.keys[kv.first] = kv.second;
            if (iequals(p->second, "DEFAULT")) {
                partition_defaults = merged;
            } else if (p->second == partition) {
                out.partition_found = true;
                const auto list = merged.keys.find("nodes");
                out.partition_nodes = list == merged.keys.end()
                                          ? std::nullopt
                                          : std::optional<std::string>(list->second);
            }
        }
    }
    return out;
}

// A partition's Nodes= as slurmctld resolves it: ALL (any case) is every node; a NodeSet's
// name is the nodes with its Feature plus its own Nodes= (ALL or a hostlist).
std::set<std::string> partition_members(const ConfNodes& conf, const std::string& list,
                                        const HostlistExpander& expand)
{
    std::set<std::string> out;
    const auto add_all = [&] {
        for (const auto& entry : conf.nodes) out.insert(entry.first);
    };
    if (iequals(list, "ALL")) {
        add_all();
        return out;
    }
    for (const auto& name : expand(list)) {
        const auto set = conf.nodesets.find(name);
        if (set == conf.nodesets.end()) {
            out.insert(name);
            continue;
        }
        if (const auto f = set->second.keys.find("feature"); f != set->second.keys.end())
            for (const auto& [node, features] : conf.features)
                if (features.count(f->second)) out.insert(node);
        if (const auto n = set->second.keys.find("nodes"); n != set->second.keys.end()) {
            if (iequals(n->second, "ALL"))
                add_all();
            else
                for (const auto& node : expand(n->second)) out.insert(node);
        }
    }
    return out;
}

}  // namespace

NodeShape node_shape_from_conf(std::string_view conf, const std::string& partition,
                               const HostlistExpander& expand)
{
    const ConfNodes parsed = read_conf_nodes(conf, partition, expand);
    const bool every_node = !parsed.partition_found;  // no such partition: the whole cluster
    const std::set<std::string> members =
        parsed.partition_nodes ? partition_members(parsed, *parsed.partition_nodes, expand)
                               : std::set<std::string>{};
    NodeShape shape;
    for (const auto& [name, node] : parsed.nodes) {
        if (!every_node && !members.count(name)) continue;
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

NodeShape read_node_shape(const std::string& path, const std::string& partition, IncludeBase base)
{
    return node_shape_from_conf(conf_text_with_includes(path, base, read_whole_file), partition,
                                expand_hostlist);
}

}  // namespace allot::job_submit
