// filter.cpp - recursive-descent parser for SCIM filters (see filter.hpp).
#include "filter.hpp"

#include <cctype>
#include <cstdlib>

namespace allot::scimd {
namespace {

std::string lower(std::string_view s)
{
    std::string out(s);
    for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

bool iequals(std::string_view a, std::string_view b)
{
    return lower(a) == lower(b);
}

bool is_name_char(char c)
{
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '$' ||
           c == ':' || c == '.';
}

bool valid_name(std::string_view s)
{
    if (s.empty() || (!std::isalpha(static_cast<unsigned char>(s[0])) && s[0] != '$')) return false;
    for (char c : s)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '$')
            return false;
    return true;
}

Result<AttrPath> split_attr(std::string_view token)
{
    AttrPath p;
    std::string_view rest = token;
    if (token.size() > 4 && iequals(token.substr(0, 4), "urn:")) {
        const size_t colon = token.rfind(':');
        p.schema = lower(token.substr(0, colon));
        rest = token.substr(colon + 1);
    }
    const size_t dot = rest.find('.');
    p.attr = lower(rest.substr(0, dot));
    if (dot != std::string_view::npos) p.sub = lower(rest.substr(dot + 1));
    if (!valid_name(p.attr) || (dot != std::string_view::npos && !valid_name(p.sub)))
        return make_error("invalid attribute name '" + std::string(token) + "'");
    return p;
}

class Parser {
public:
    Parser(std::string_view text, FilterLimits limits) : s_(text), limits_(limits) {}

    Result<std::unique_ptr<Filter>> parse_all()
    {
        auto f = parse_or(0);
        if (!f) return f;
        skip_ws();
        if (pos_ != s_.size()) return fail("unexpected '" + std::string(1, s_[pos_]) + "'");
        return f;
    }

    Result<std::unique_ptr<Filter>> parse_or(size_t depth)
    {
        if (depth > limits_.max_depth) return fail("filter nested too deeply");
        return parse_chain(depth, "or", Filter::Kind::Or, &Parser::parse_and);
    }

    Result<std::unique_ptr<Filter>> parse_and(size_t depth)
    {
        return parse_chain(depth, "and", Filter::Kind::And, &Parser::parse_atom);
    }

    // operand (word operand)*, left-associative: `or` over `and` over atoms.
    using Step = Result<std::unique_ptr<Filter>> (Parser::*)(size_t);
    Result<std::unique_ptr<Filter>> parse_chain(size_t depth, const char* word, Filter::Kind kind,
                                                Step operand)
    {
        auto left = (this->*operand)(depth);
        if (!left) return left;
        std::unique_ptr<Filter> node = std::move(left.value());
        while (keyword(word)) {
            auto right = (this->*operand)(depth);
            if (!right) return right;
            node = combine(kind, std::move(node), std::move(right.value()));
            if (too_many()) return fail("filter has too many terms");
        }
        return node;
    }

    // "(" filter ")", one level deeper.
    Result<std::unique_ptr<Filter>> parse_group(size_t depth)
    {
        ++pos_;
        auto inner = parse_or(depth + 1);
        if (!inner) return inner;
        skip_ws();
        if (!peek(')')) return fail("expected ')'");
        ++pos_;
        return inner;
    }

    Result<std::unique_ptr<Filter>> parse_atom(size_t depth)
    {
        if (++nodes_ > limits_.max_nodes) return fail("filter has too many terms");
        skip_ws();
        if (peek('(')) return parse_group(depth);
        const size_t save = pos_;
        if (keyword("not")) {
            skip_ws();
            if (peek('(')) {
                auto inner = parse_group(depth);
                if (!inner) return inner;
                auto node = std::make_unique<Filter>();
                node->kind = Filter::Kind::Not;
                node->left = std::move(inner.value());
                return node;
            }
            pos_ = save;  // an attribute that happens to be called "not"
        }
        return parse_attr_expr(depth);
    }

    Result<std::unique_ptr<Filter>> parse_attr_expr(size_t depth)
    {
        const size_t start = pos_;
        while (pos_ < s_.size() && is_name_char(s_[pos_])) ++pos_;
        if (pos_ == start) return fail("expected an attribute name");
        auto path = split_attr(s_.substr(start, pos_ - start));
        if (!path) return fail(path.error().message);
        if (peek('[')) {
            if (in_value_path_) return fail("nested '[' is not allowed");
            ++pos_;
            in_value_path_ = true;
            auto inner = parse_or(depth + 1);
            in_value_path_ = false;
            if (!inner) return inner;
            skip_ws();
            if (!peek(']')) return fail("expected ']'");
            ++pos_;
            if (!path.value().sub.empty()) return fail("sub-attribute before '['");
            auto node = std::make_unique<Filter>();
            node->kind = Filter::Kind::ValuePath;
            node->path = std::move(path.value());
            node->left = std::move(inner.value());
            return node;
        }
        if (!skip_ws()) return fail("expected an operator after the attribute");
        const size_t op_start = pos_;
        while (pos_ < s_.size() && std::isalpha(static_cast<unsigned char>(s_[pos_]))) ++pos_;
        const std::string op = lower(s_.substr(op_start, pos_ - op_start));
        auto node = std::make_unique<Filter>();
        node->path = std::move(path.value());
        static const std::pair<const char*, CompareOp> ops[] = {
            {"eq", CompareOp::Eq}, {"ne", CompareOp::Ne}, {"co", CompareOp::Co},
            {"sw", CompareOp::Sw}, {"ew", CompareOp::Ew}, {"gt", CompareOp::Gt},
            {"ge", CompareOp::Ge}, {"lt", CompareOp::Lt}, {"le", CompareOp::Le},
            {"pr", CompareOp::Pr}};
        bool found = false;
        for (const auto& [name, value] : ops)
            if (op == name) node->op = value, found = true;
        if (!found) {
            pos_ = op_start;
            return fail("unknown operator '" + op + "'");
        }
        if (node->op == CompareOp::Pr) return node;
        if (!skip_ws()) return fail("expected a value after '" + op + "'");
        auto value = parse_value();
        if (!value) return fail(value.error().message);
        node->value = std::move(value.value());
        return node;
    }

    Result<FilterValue> parse_value()
    {
        FilterValue v;
        if (peek('"')) {
            v.kind = FilterValue::Kind::String;
            ++pos_;
            while (true) {
                if (pos_ >= s_.size()) return make_error("unterminated string");
                const char c = s_[pos_++];
                if (c == '"') break;
                if (static_cast<unsigned char>(c) < 0x20)
                    return make_error("control character in string");
                if (c != '\\') {
                    v.text += c;
                    continue;
                }
                if (pos_ >= s_.size()) return make_error("unterminated escape");
                const char e = s_[pos_++];
                switch (e) {
                    case '"': v.text += '"'; break;
                    case '\\': v.text += '\\'; break;
                    case '/': v.text += '/'; break;
                    case 'b': v.text += '\b'; break;
                    case 'f': v.text += '\f'; break;
                    case 'n': v.text += '\n'; break;
                    case 'r': v.text += '\r'; break;
                    case 't': v.text += '\t'; break;
                    case 'u': {
                        if (pos_ + 4 > s_.size()) return make_error("bad \\u escape");
                        unsigned cp = 0;
                        for (int i = 0; i < 4; ++i) {
                            const char h = s_[pos_++];
                            if (!std::isxdigit(static_cast<unsigned char>(h)))
                                return make_error("bad \\u escape");
                            cp = cp * 16 +
                                 static_cast<unsigned>(std::isdigit(static_cast<unsigned char>(h))
                                                           ? h - '0'
                                                           : (std::tolower(h) - 'a' + 10));
                        }
                        if (cp == 0 || (cp >= 0xD800 && cp <= 0xDFFF))
                            return make_error("unsupported \\u escape");
                        if (cp < 0x80) {
                            v.text += static_cast<char>(cp);
                        } else if (cp < 0x800) {
                            v.text += static_cast<char>(0xC0 | (cp >> 6));
                            v.text += static_cast<char>(0x80 | (cp & 0x3F));
                        } else {
                            v.text += static_cast<char>(0xE0 | (cp >> 12));
                            v.text += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
                            v.text += static_cast<char>(0x80 | (cp & 0x3F));
                        }
                        break;
                    }
                    default: return make_error("bad escape '\\" + std::string(1, e) + "'");
                }
            }
            return v;
        }
        const size_t start = pos_;
        while (pos_ < s_.size() && !std::isspace(static_cast<unsigned char>(s_[pos_])) &&
               s_[pos_] != ')' && s_[pos_] != ']')
            ++pos_;
        const std::string word(s_.substr(start, pos_ - start));
        const std::string lw = lower(word);
        if (lw == "true" || lw == "false") {
            v.kind = FilterValue::Kind::Bool;
            v.boolean = lw == "true";
            return v;
        }
        if (lw == "null") return v;
        if (word.empty() || word.size() > 32) return make_error("expected a value");
        char* end = nullptr;
        const double d = std::strtod(word.c_str(), &end);
        if (end != word.c_str() + word.size() || !(d == d) || d > 1e300 || d < -1e300 ||
            !(std::isdigit(static_cast<unsigned char>(word[0])) || word[0] == '-'))
            return make_error("expected a value, got '" + word + "'");
        v.kind = FilterValue::Kind::Number;
        v.number = d;
        return v;
    }

private:
    static std::unique_ptr<Filter> combine(Filter::Kind kind, std::unique_ptr<Filter> l,
                                           std::unique_ptr<Filter> r)
    {
        auto node = std::make_unique<Filter>();
        node->kind = kind;
        node->left = std::move(l);
        node->right = std::move(r);
        return node;
    }
    bool too_many() const { return nodes_ > limits_.max_nodes; }
    bool peek(char c) const { return pos_ < s_.size() && s_[pos_] == c; }
    bool skip_ws()
    {
        const size_t start = pos_;
        while (pos_ < s_.size() && s_[pos_] == ' ') ++pos_;
        return pos_ > start;
    }
    // Consumes " <word> " (surrounded by spaces, case-insensitive) if present.
    bool keyword(const char* word)
    {
        const size_t save = pos_;
        skip_ws();
        const size_t n = std::char_traits<char>::length(word);
        if (pos_ + n <= s_.size() && iequals(s_.substr(pos_, n), word) &&
            (pos_ + n == s_.size() || s_[pos_ + n] == ' ' || s_[pos_ + n] == '(')) {
            if (pos_ != 0 && s_[pos_ - 1] != ' ' && s_[pos_ - 1] != '(') {  // a word of its own
                pos_ = save;
                return false;
            }
            pos_ += n;
            return true;
        }
        pos_ = save;
        return false;
    }
    Error fail(const std::string& what) const
    {
        return make_error(what + " at offset " + std::to_string(pos_));
    }

    std::string_view s_;
    FilterLimits limits_;
    size_t pos_ = 0;
    size_t nodes_ = 0;
    bool in_value_path_ = false;
};

}  // namespace

std::string AttrPath::display() const
{
    std::string out = schema.empty() ? attr : schema + ":" + attr;
    if (!sub.empty()) out += "." + sub;
    return out;
}

const char* op_name(CompareOp op)
{
    static const char* names[] = {"eq", "ne", "co", "sw", "ew", "gt", "ge", "lt", "le", "pr"};
    return names[static_cast<int>(op)];
}

Result<std::unique_ptr<Filter>> parse_filter(std::string_view text, FilterLimits limits)
{
    if (text.size() > limits.max_length)
        return make_error("filter longer than " + std::to_string(limits.max_length) + " bytes");
    for (char c : text)
        if (c == '\0') return make_error("NUL byte in filter");
    Parser p(text, limits);
    return p.parse_all();
}

Result<PatchPath> parse_patch_path(std::string_view text)
{
    if (text.empty() || text.size() > 1024) return make_error("path: empty or too long");
    PatchPath out;
    const size_t bracket = text.find('[');
    if (bracket == std::string_view::npos) {
        auto p = split_attr(text);
        if (!p) return make_error("path: " + p.error().message);
        out.path = std::move(p.value());
        return out;
    }
    auto p = split_attr(text.substr(0, bracket));
    if (!p) return make_error("path: " + p.error().message);
    if (!p.value().sub.empty()) return make_error("path: sub-attribute before '['");
    const size_t close = text.rfind(']');
    if (close == std::string_view::npos || close < bracket) return make_error("path: missing ']'");
    auto inner = parse_filter(text.substr(bracket + 1, close - bracket - 1));
    if (!inner) return make_error("path: " + inner.error().message);
    std::string_view after = text.substr(close + 1);
    if (!after.empty()) {
        if (after[0] != '.' || !valid_name(after.substr(1)))
            return make_error("path: bad text after ']'");
        out.sub_after = lower(after.substr(1));
    }
    out.path = std::move(p.value());
    out.filter = std::move(inner.value());
    return out;
}

AttrPath parse_attribute_name(std::string_view text)
{
    AttrPath p;
    // A bare extension URN names the whole extension object.
    if (text.size() > 4 && iequals(text.substr(0, 4), "urn:")) {
        const size_t colon = text.rfind(':');
        const std::string_view last = text.substr(colon + 1);
        // "…:PosixUser" vs "…:PosixUser:uidNumber": a schema's last segment starts upper-case.
        if (!last.empty() && std::isupper(static_cast<unsigned char>(last[0])) &&
            last.find('.') == std::string_view::npos) {
            p.schema = lower(text);
            return p;
        }
        p.schema = lower(text.substr(0, colon));
        text = last;
    }
    const size_t dot = text.find('.');
    p.attr = lower(text.substr(0, dot));
    if (dot != std::string_view::npos) p.sub = lower(text.substr(dot + 1));
    return p;
}

}  // namespace allot::scimd
