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
    std::string type;
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
        out.type = std::string(tail.substr(0, second));
        count_text = tail.substr(second + 1);
        if (!is_type_name(out.type) || count_text.find(':') != std::string_view::npos)
            return make_error("cannot read '" + preview(entry) + "'");
    }
    auto count = parse_count(count_text, kMaxGpuCount);
    if (!count) {
        if (second == std::string_view::npos && !count_text.empty() && is_type_name(count_text)) {
            out.type = std::string(count_text);  // "gpu:h100" means one h100
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

}  // namespace

Result<uint64_t> gpus_in_tres(std::string_view tres)
{
    if (tres.size() > 4096) return make_error("GPU request is longer than 4096 characters");
    uint64_t total = 0;
    size_t start = 0;
    while (start <= tres.size()) {
        size_t end = tres.find(',', start);
        if (end == std::string_view::npos) end = tres.size();
        const auto piece = tres.substr(start, end - start);
        if (!piece.empty()) {
            auto entry = parse_entry(piece);
            if (!entry) return entry.error();
            if (entry.value().is_gpu) total += entry.value().count;
            if (total > kMaxGpuCount) return make_error("GPU count is out of range");
        }
        start = end + 1;
    }
    return total;
}

Result<GpuCount> count_gpus(const GpuFields& f)
{
    GpuCount result;
    const uint64_t nodes = f.nodes.value_or(1) ? f.nodes.value_or(1) : 1;
    uint64_t tasks = 1;
    if (f.tasks && *f.tasks)
        tasks = *f.tasks;
    else if (f.tasks_per_node && *f.tasks_per_node)
        tasks = saturating_mul(*f.tasks_per_node, nodes);
    const uint64_t sockets = f.sockets_per_node.value_or(1) ? f.sockets_per_node.value_or(1) : 1;

    struct Field {
        const std::string& text;
        uint64_t multiplier;
    } fields[] = {{f.per_job, 1},
                  {f.per_node, nodes},
                  {f.per_task, tasks},
                  {f.per_socket, saturating_mul(sockets, nodes)}};
    for (const auto& field : fields) {
        if (field.text.empty()) continue;
        auto n = gpus_in_tres(field.text);
        if (!n) return n.error();
        result.total = std::max(result.total, saturating_mul(n.value(), field.multiplier));
        if (result.type.empty()) {
            const auto pos = field.text.find("gpu:");
            if (pos != std::string::npos) {
                auto rest = std::string_view(field.text).substr(pos + 4);
                auto colon = rest.find(':');
                if (colon != std::string_view::npos && colon > 0)
                    result.type = std::string(rest.substr(0, colon));
            }
        }
    }
    return result;
}

}  // namespace allot
