// yaml_tree.cpp - libyaml document loader into YamlNode (see yaml_tree.hpp).
#include "allot/yaml_tree.hpp"

#include <yaml.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>

namespace allot {

const YamlNode* YamlNode::find(std::string_view key) const
{
    for (const auto& [k, v] : map)
        if (k == key) return &v;
    return nullptr;
}

namespace {

// libyaml's parser and document are C structs with init/delete pairs; these
// owners make sure every exit path releases them.
class ParserHandle {
public:
    ParserHandle() { ok_ = yaml_parser_initialize(&parser_) != 0; }
    ~ParserHandle()
    {
        if (ok_) yaml_parser_delete(&parser_);
    }
    ParserHandle(const ParserHandle&) = delete;
    ParserHandle& operator=(const ParserHandle&) = delete;
    bool ok() const { return ok_; }
    yaml_parser_t* get() { return &parser_; }

private:
    yaml_parser_t parser_{};
    bool ok_ = false;
};

class DocumentHandle {
public:
    DocumentHandle() = default;
    ~DocumentHandle()
    {
        if (loaded_) yaml_document_delete(&doc_);
    }
    DocumentHandle(const DocumentHandle&) = delete;
    DocumentHandle& operator=(const DocumentHandle&) = delete;
    yaml_document_t* get() { return &doc_; }
    void set_loaded() { loaded_ = true; }

private:
    yaml_document_t doc_{};
    bool loaded_ = false;
};

struct Converter {
    yaml_document_t* doc;
    const YamlLimits& limits;
    size_t nodes = 0;

    Result<YamlNode> convert(yaml_node_t* node, size_t depth)
    {
        if (!node) return YamlNode{};
        if (++nodes > limits.max_nodes)
            return make_error("document has more than " + std::to_string(limits.max_nodes) +
                              " nodes (aliases expanding?)");
        if (depth > limits.max_depth)
            return make_error("nesting deeper than " + std::to_string(limits.max_depth) +
                              " levels (line " + std::to_string(node->start_mark.line + 1) + ")");
        YamlNode out;
        out.line = static_cast<int>(node->start_mark.line) + 1;
        switch (node->type) {
            case YAML_SCALAR_NODE: {
                out.scalar.assign(reinterpret_cast<const char*>(node->data.scalar.value),
                                  node->data.scalar.length);
                const auto style = node->data.scalar.style;
                out.quoted = style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
                             style == YAML_DOUBLE_QUOTED_SCALAR_STYLE;
                const bool plain_null =
                    !out.quoted &&
                    (out.scalar.empty() || out.scalar == "~" || out.scalar == "null" ||
                     out.scalar == "Null" || out.scalar == "NULL");
                out.kind = plain_null ? YamlNode::Kind::Null : YamlNode::Kind::Scalar;
                return out;
            }
            case YAML_SEQUENCE_NODE:
                out.kind = YamlNode::Kind::Seq;
                for (auto* item = node->data.sequence.items.start;
                     item < node->data.sequence.items.top; ++item) {
                    auto child = convert(yaml_document_get_node(doc, *item), depth + 1);
                    if (!child) return child.error();
                    out.seq.push_back(std::move(child).value());
                }
                return out;
            case YAML_MAPPING_NODE:
                out.kind = YamlNode::Kind::Map;
                for (auto* pair = node->data.mapping.pairs.start;
                     pair < node->data.mapping.pairs.top; ++pair) {
                    yaml_node_t* key = yaml_document_get_node(doc, pair->key);
                    if (!key || key->type != YAML_SCALAR_NODE)
                        return make_error("line " + std::to_string(out.line) +
                                          ": mapping keys must be plain words");
                    std::string name(reinterpret_cast<const char*>(key->data.scalar.value),
                                     key->data.scalar.length);
                    for (const auto& existing : out.map)
                        if (existing.first == name)
                            return make_error("line " + std::to_string(key->start_mark.line + 1) +
                                              ": key '" + name + "' appears twice");
                    auto value = convert(yaml_document_get_node(doc, pair->value), depth + 1);
                    if (!value) return value.error();
                    out.map.emplace_back(std::move(name), std::move(value).value());
                }
                return out;
            default: return out;
        }
    }
};

}  // namespace

Result<YamlNode> parse_yaml(std::string_view text, const YamlLimits& limits)
{
    if (text.size() > limits.max_bytes)
        return make_error("document is larger than " + std::to_string(limits.max_bytes) + " bytes");
    ParserHandle parser;
    if (!parser.ok()) return make_error("out of memory initialising the YAML parser");
    yaml_parser_set_input_string(parser.get(), reinterpret_cast<const unsigned char*>(text.data()),
                                 text.size());
    DocumentHandle doc;
    if (!yaml_parser_load(parser.get(), doc.get())) {
        const auto* p = parser.get();
        std::string what = p->problem ? p->problem : "malformed YAML";
        if (p->context) what = std::string(p->context) + ": " + what;
        return make_error("YAML syntax error: " + what + " (line " +
                          std::to_string(p->problem_mark.line + 1) + ")");
    }
    doc.set_loaded();
    Converter converter{doc.get(), limits};
    return converter.convert(yaml_document_get_root_node(doc.get()), 0);
}

Result<std::string> read_file_bounded(const std::string& path, size_t max_bytes)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) return make_error(path + ": cannot open: " + std::strerror(errno));
    std::string data;
    char buf[8192];
    while (in.read(buf, sizeof buf) || in.gcount() > 0) {
        data.append(buf, static_cast<size_t>(in.gcount()));
        if (data.size() > max_bytes)
            return make_error(path + ": larger than " + std::to_string(max_bytes) + " bytes");
    }
    if (in.bad()) return make_error(path + ": read error");
    return data;
}

}  // namespace allot
