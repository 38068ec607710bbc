// gpu_request.cpp - GPU counting over Slurm TRES strings (see gpu_request.hpp).
#include "allot/gpu_request.hpp"

#include <algorithm>

#include "allot/units.hpp"

namespace allot {

namespace {

std::string preview(std::string_view s)
{
    std::string out(s.substr(0, 80));
    for (char& c : out)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
    return out;
}

// GPU type names (h100, a100_80g, tesla-v100): a letter, then letters, digits, - _ .
bool is_type_name(std::string_view s)
{
    if (s.empty() || s.size() > 64) return false;
    const auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
    if (!alpha(s.front())) return false;
    for (char c : s)
        if (!alpha(c) && !(c >= '0' && c <= '9') && c != '-' && c != '_' && c != '.') return false;
    return true;
}

struct Entry {
    bool is_gpu = false;
    uint64_t count = 0;
    std::string_view type;  // points into the parsed TRES string
};

// One comma-separated entry: [gres:|gres/]name[:type][:count]
Result<Entry> parse_entry(std::string_view entry)
{
    Entry out;
    std::string_view rest = entry;
    if (rest.rfind("gres:", 0) == 0 || rest.rfind("gres/", 0) == 0) rest.remove_prefix(5);
    const size_t colon = rest.find(':');
    const std::string_view name = rest.substr(0, colon);
    if (name.empty()) return make_error("empty resource name in '" + preview(entry) + "'");
    out.is_gpu = name == "gpu";
    if (colon == std::string_view::npos) {
        out.count = 1;
        return out;
    }
    std::string_view tail = rest.substr(colon + 1);
    const size_t second = tail.find(':');
    std::string_view count_text = tail;
    if (second != std::string_view::npos) {
        out.type = tail.substr(0, second);
        count_text = tail.substr(second + 1);
        if (!is_type_name(out.type) || count_text.find(':') != std::string_view::npos)
            return make_error("cannot read '" + preview(entry) + "'");
    }
    auto count = parse_count(count_text, kMaxGpuCount);
    if (!count) {
        if (second == std::string_view::npos && !count_text.empty() && is_type_name(count_text)) {
            out.type = count_text;  // "gpu:h100" means one h100
            out.count = 1;
            return out;
        }
        return make_error("cannot read the count in '" + preview(entry) + "'");
    }
    out.count = *count;
    return out;
}

uint64_t saturating_mul(uint64_t a, uint64_t b)
{
    if (a && b > UINT64_MAX / a) return UINT64_MAX;
    return a * b;
}

uint64_t ceil_div(uint64_t a, uint64_t b)
{
    return b ? (a + b - 1) / b : a;
}

// Per GPU type in one field: slurmctld keeps one record per (gres, type) and
// its TRES count for a repeated entry is the largest (total_gres = MAX(...)).
struct TypedCounts {
    uint64_t untyped = 0;
    std::string_view types[16];
    uint64_t counts[16] = {};
    size_t size = 0;

    bool set(std::string_view type, uint64_t count)
    {
        if (type.empty()) {
            untyped = std::max(untyped, count);
            return true;
        }
        for (size_t i = 0; i < size; ++i)
            if (types[i] == type) {
                counts[i] = std::max(counts[i], count);
                return true;
            }
        if (size == 16) return false;
        types[size] = type;
        counts[size++] = count;
        return true;
    }
    uint64_t total() const
    {
        uint64_t typed = 0;
        for (size_t i = 0; i < size; ++i) typed += counts[i];
        return std::max(untyped, typed);  // typed and untyped name the same GPUs once
    }
};

}  // namespace

Result<uint64_t> gpus_in_tres(std::string_view tres)
{
    if (tres.size() > 4096) return make_error("GPU request is longer than 4096 characters");
    TypedCounts counts;
    size_t start = 0;
    while (start <= tres.size()) {
        size_t end = tres.find(',', start);
        if (end == std::string_view::npos) end = tres.size();
        const auto piece = tres.substr(start, end - start);
        if (!piece.empty()) {
            auto entry = parse_entry(piece);
            if (!entry) return entry.error();
            if (entry.value().is_gpu && !counts.set(entry.value().type, entry.value().count))
                return make_error("more than 16 GPU types in one request");
            if (counts.total() > kMaxGpuCount) return make_error("GPU count is out of range");
        }
        start = end + 1;
    }
    return counts.total();
}

namespace {

uint64_t positive(const std::optional<uint32_t>& v, uint64_t fallback)
{
    return v && *v ? *v : fallback;
}

// Nodes the job will hold: its -N (at the top of a min-max range), or more when
// its tasks cannot fit on that many (--ntasks-per-node, or the CPUs of the
// partition's largest node, as slurmctld's node-count estimate does).
uint64_t node_count(const GpuFields& f, const NodeShape& node)
{
    uint64_t nodes = std::max(positive(f.nodes, 1), positive(f.max_nodes, 1));
    if (f.tasks && *f.tasks) {
        if (f.tasks_per_node && *f.tasks_per_node)
            nodes = std::max(nodes, ceil_div(*f.tasks, *f.tasks_per_node));
        else if (node.cpus)
            nodes = std::max(
                nodes, ceil_div(saturating_mul(*f.tasks, positive(f.cpus_per_task, 1)), node.cpus));
    }
    return nodes;
}

// Tasks: -n, else --ntasks-per-node on every node, else one per node (slurmctld's default).
uint64_t task_count(const GpuFields& f, uint64_t nodes)
{
    if (f.tasks && *f.tasks) return *f.tasks;
    return saturating_mul(positive(f.tasks_per_node, 1), nodes);
}

uint64_t socket_multiplier(const GpuFields& f, uint64_t nodes, uint64_t tasks)
{
    if (f.sockets_per_node && *f.sockets_per_node)
        return saturating_mul(*f.sockets_per_node, nodes);
    if (f.tasks_per_socket && *f.tasks_per_socket) return ceil_div(tasks, *f.tasks_per_socket);
    return nodes;
}

std::string first_type(const std::string& text)
{
    const auto pos = text.find("gpu:");
    if (pos == std::string::npos) return {};
    auto rest = std::string_view(text).substr(pos + 4);
    auto colon = rest.find(':');
    if (colon != std::string_view::npos && colon > 0) return std::string(rest.substr(0, colon));
    return {};
}

}  // namespace

Result<GpuCount> count_gpus(const GpuFields& f)
{
    return count_gpus(f, f.node);
}

Result<GpuCount> count_gpus(const GpuFields& f, const NodeShape& node)
{
    GpuCount result;
    result.nodes = node_count(f, node);
    const uint64_t tasks = task_count(f, result.nodes);

    struct Field {
        const std::string& text;
        uint64_t multiplier;
    } fields[] = {{f.per_job, 1},
                  {f.per_node, result.nodes},
                  {f.per_task, tasks},
                  {f.per_socket, socket_multiplier(f, result.nodes, tasks)}};
    bool named = false;
    for (const auto& field : fields) {
        if (field.text.empty()) continue;
        auto n = gpus_in_tres(field.text);
        if (!n) return n.error();
        named = named || n.value() > 0;
        result.total = std::max(result.total, saturating_mul(n.value(), field.multiplier));
        if (result.type.empty()) result.type = first_type(field.text);
    }
    // --ntasks-per-gpu without a GPU option: slurmctld asks for tasks / ntasks-per-gpu GPUs.
    if (!named && f.tasks_per_gpu && *f.tasks_per_gpu && f.tasks && *f.tasks)
        result.total = *f.tasks / *f.tasks_per_gpu;
    // --exclusive: every GPU of every node it holds.
    if (f.exclusive && node.gpus)
        result.total = std::max(result.total, saturating_mul(node.gpus, result.nodes));
    return result;
}

}  // namespace allot
