// scim_fetch.cpp - SCIM listing: paging (index and cursor), retries, and the
// bounds that keep a broken or hostile source from holding allot-syncd for
// ever or growing it without limit (see allot/scim_client.hpp).
#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "allot/json.hpp"
#include "allot/scim_client.hpp"

namespace allot {

namespace scim_source {
namespace {
constexpr const char* kTexts[] = {
    "success",
    "identity source unreachable",
    "identity source answered an error status",
    "identity source sent a malformed response",
    "identity source response too large",
    "identity source sent more bytes than one cycle allows",
    "identity source reads passed the cycle deadline",
    "identity source listing does not end",
    "identity source lists too many resources",
    "identity source users lack the POSIX extension",
    "identity source listing ended before its totalResults",
};
}  // namespace

const std::error_category& category() noexcept
{
    static const ErrorArea area("scim-source", kTexts);
    return area;
}
}  // namespace scim_source

using SourceErrc = scim_source::Errc;

RetryDecision retry_decision(const RetryPolicy& policy, uint32_t attempt, long status,
                             uint32_t retry_after_seconds, uint32_t jitter_seed)
{
    RetryDecision d;
    const bool transient = status == 0 || status == 408 || status == 429 || status >= 500;
    if (!transient || attempt >= policy.max_attempts) return d;
    d.retry = true;
    uint64_t delay = policy.base_delay_ms;
    for (uint32_t i = 1; i < attempt && delay < policy.max_delay_ms; ++i) delay *= 2;
    delay = std::min<uint64_t>(delay, policy.max_delay_ms);
    delay += delay * (jitter_seed % 1000) / 4000;  // up to +25 %
    if (retry_after_seconds)
        delay = std::max<uint64_t>(delay, uint64_t(retry_after_seconds) * 1000);
    d.delay_ms = static_cast<uint32_t>(std::min<uint64_t>(delay, 10u * 60 * 1000));
    return d;
}

std::string url_encode(std::string_view value)
{
    static const char* hex = "0123456789ABCDEF";
    std::string out;
    for (char c : value) {
        const auto u = static_cast<unsigned char>(c);
        if (std::isalnum(u) || c == '-' || c == '_' || c == '.' || c == '~') {
            out.push_back(c);
        } else {
            out.push_back('%');
            out.push_back(hex[u >> 4]);
            out.push_back(hex[u & 15]);
        }
    }
    return out;
}

namespace {

// What one fetch may still spend: bytes and time, shared by every request.
class Budget {
public:
    explicit Budget(const ScimFetchOptions& o) : o_(o) {}

    Status check_deadline(uint64_t extra_ms = 0) const
    {
        if (!o_.deadline_ms || !o_.now_ms || o_.now_ms() + extra_ms < o_.deadline_ms)
            return ok_status();
        return make_error(SourceErrc::DeadlinePassed,
                          "reads from the identity source passed the cycle deadline "
                          "(identity.source_deadline_seconds)");
    }

    Status charge(const std::string& body)
    {
        if (body.size() > o_.max_response_bytes)
            return make_error(SourceErrc::ResponseTooLarge,
                              "response of " + std::to_string(body.size()) +
                                  " bytes, more than identity.source_max_response_bytes=" +
                                  std::to_string(o_.max_response_bytes));
        bytes_ += body.size();
        if (bytes_ > o_.max_cycle_bytes)
            return make_error(SourceErrc::CycleTooLarge,
                              "more than identity.source_max_cycle_bytes=" +
                                  std::to_string(o_.max_cycle_bytes) + " bytes in one cycle");
        return ok_status();
    }

private:
    const ScimFetchOptions& o_;
    uint64_t bytes_ = 0;
};

std::string http_problem(const HttpResponse& r)
{
    std::string problem = "HTTP " + std::to_string(r.status);
    if (r.status == 401 || r.status == 403) problem += " (the bearer token was refused)";
    JsonPtr err = json_parse(r.body, 64 * 1024);
    if (err && json_string(err.get(), "detail"))
        problem += ": " + log_safe(*json_string(err.get(), "detail"));
    return problem;
}

Result<std::string> get_with_retry(HttpClient& http, const ScimFetchOptions& o,
                                   const std::string& url, ScimDirectory& stats,
                                   const Budget& budget)
{
    for (uint32_t attempt = 1;; ++attempt) {
        if (auto s = budget.check_deadline(); !s) return s.error();
        ++stats.requests;
        auto r = http.get(url);
        long status = 0;
        uint32_t retry_after = 0;
        Error problem;
        if (!r) {
            // A body over the limit is the source's answer, not a glitch: no retry.
            if (r.error().is(SourceErrc::ResponseTooLarge)) return r.error();
            problem = Error(SourceErrc::Transport, r.error().message);
        } else {
            status = r.value().status;
            retry_after = r.value().retry_after_seconds;
            if (status == 200) return std::move(r.value().body);
            problem = Error(SourceErrc::HttpStatus, http_problem(r.value()));
        }
        const RetryDecision d =
            retry_decision(o.retry, attempt, status, retry_after, o.jitter ? o.jitter() : 0);
        if (!d.retry || !budget.check_deadline(d.delay_ms)) {
            problem.message += " after " + std::to_string(attempt) + " attempt(s)";
            return problem;
        }
        ++stats.retries;
        if (o.sleep) o.sleep(d.delay_ms);
    }
}

// Groups carry gidNumber in a PosixGroup extension named like the user one.
std::string group_attributes(const std::string& user_ext, const ScimAttributeMap& map)
{
    std::string attrs = "displayName,members,gidNumber";
    for (const std::string* p : {&map.group_name, &map.group_gid}) {
        const size_t colon = p->rfind(':');
        const std::string a = colon == std::string::npos ? *p : p->substr(0, colon);
        if (attrs.find(a) == std::string::npos) attrs += "," + a;
    }
    const std::string suffix = "PosixUser";
    if (user_ext.size() > suffix.size() &&
        user_ext.compare(user_ext.size() - suffix.size(), suffix.size(), suffix) == 0)
        attrs += "," + user_ext.substr(0, user_ext.size() - suffix.size()) + "PosixGroup";
    return attrs;
}

std::string trimmed_base(const std::string& base)
{
    std::string b = base;
    while (!b.empty() && b.back() == '/') b.pop_back();
    return b;
}

// Where one listing is, and whether the source has gone past what it
// announced: the first page's totalResults and size fix how many pages and
// resources the listing may have (plus identity.source_extra_pages), so an
// endless cursor or an index listing that never runs out stops.
class Listing {
public:
    explicit Listing(const ScimFetchOptions& o) : o_(o) {}

    std::string next_query() const
    {
        std::string q = "&count=" + std::to_string(o_.page_size);
        return q + (use_cursor_ ? "&cursor=" + url_encode(cursor_)
                                : "&startIndex=" + std::to_string(start_));
    }

    // Records a page; Error when the listing went past its bounds.
    template <typename T>
    Status record(const ScimPage<T>& p)
    {
        const size_t n = p.resources.size();
        ++pages_;
        resources_ += n;
        if (pages_ == 1) {
            announced_ = uint64_t(std::max<int64_t>(p.total_results, 0));
            first_size_ = std::max<uint64_t>(n, 1);
        }
        const uint64_t allowed_pages =
            (announced_ + first_size_ - 1) / first_size_ + std::max<uint64_t>(o_.extra_pages, 1);
        const uint64_t allowed_resources = announced_ + uint64_t(o_.extra_pages) * first_size_;
        if (pages_ > allowed_pages || resources_ > allowed_resources || pages_ > o_.max_pages)
            return make_error(SourceErrc::Endless,
                              "the listing went on past the " + std::to_string(announced_) +
                                  " resources its totalResults announced (" +
                                  std::to_string(pages_) + " pages, " + std::to_string(resources_) +
                                  " resources); stopping");
        return advance(p, n);
    }

    bool done() const { return done_; }

private:
    const ScimFetchOptions& o_;
    int64_t start_ = 1;
    std::string cursor_;
    bool use_cursor_ = false;
    bool done_ = false;
    std::set<std::string> seen_cursors_;
    uint64_t pages_ = 0, resources_ = 0, announced_ = 0, first_size_ = 1;

    template <typename T>
    Status advance(const ScimPage<T>& p, size_t n)
    {
        if (!p.next_cursor.empty()) {
            if (!seen_cursors_.insert(p.next_cursor).second)
                return make_error(SourceErrc::Endless,
                                  "server repeated a nextCursor; paging would never end");
            use_cursor_ = true;
            cursor_ = p.next_cursor;
            return ok_status();
        }
        // An empty page short of totalResults is a truncated source, not a
        // smaller directory: publishing it would remove everyone not listed.
        if (!use_cursor_ && n == 0 && start_ <= p.total_results)
            return make_error(SourceErrc::Truncated,
                              "page at startIndex=" + std::to_string(start_) +
                                  " came back empty, but totalResults=" +
                                  std::to_string(p.total_results) + "; the listing is truncated");
        // A cursor listing ends at the page without nextCursor, empty or short:
        // fewer resources than that page's totalResults is truncation as well.
        if (use_cursor_ && resources_ < uint64_t(std::max<int64_t>(p.total_results, 0)))
            return make_error(SourceErrc::Truncated,
                              "the cursor listing ended after " + std::to_string(resources_) +
                                  " of the " + std::to_string(p.total_results) +
                                  " resources totalResults announced; the listing is truncated");
        start_ += static_cast<int64_t>(n);
        done_ = use_cursor_ || start_ > p.total_results;
        return ok_status();
    }
};

template <typename T, typename Parse>
Status fetch_all(HttpClient& http, const ScimFetchOptions& o, const std::string& base_query,
                 Parse parse, std::vector<T>& out, ScimDirectory& stats, Budget& budget)
{
    Listing listing(o);
    while (!listing.done()) {
        const std::string url = base_query + listing.next_query();
        auto body = get_with_retry(http, o, url, stats, budget);
        if (!body) return body.error();
        if (auto s = budget.charge(body.value()); !s) return s;
        auto page = parse(body.value());
        if (!page) return Error(page.error().code, url + ": " + page.error().message);
        if (auto s = listing.record(page.value()); !s) return s;
        for (auto& r : page.value().resources) out.push_back(std::move(r));
        if (out.size() > o.max_resources)
            return make_error(SourceErrc::TooManyResources, "more resources than max_resources");
    }
    return ok_status();
}

Error prefixed(const Error& e, const std::string& what)
{
    return Error(e.code, what + ": " + e.message);
}

}  // namespace

namespace {

// Members given by `display` name users (userName) or groups (displayName):
// each becomes the id it names, so validation resolves both forms alike.
void resolve_members_by_display(ScimDirectory& dir)
{
    std::map<std::string, std::string> id_of;
    for (const auto& g : dir.groups) id_of.emplace(g.display_name, g.id);
    for (const auto& u : dir.users) id_of[u.user_name] = u.id;
    for (auto& g : dir.groups)
        for (auto& m : g.members) {
            auto it = id_of.find(m.display);
            m.value = it != id_of.end() ? it->second : m.display;
        }
}

}  // namespace

Result<ScimDirectory> fetch_directory(HttpClient& http, const ScimFetchOptions& o)
{
    ScimDirectory dir;
    Budget budget(o);
    const ScimAttributeMap map = o.attributes ? *o.attributes : allot_attribute_map(o.ext_schema);
    const std::string base = trimmed_base(o.base_url);
    auto users = fetch_all<scim::User>(
        http, o, base + "/Users?attributes=" + url_encode(user_attribute_request(map)),
        [&](const std::string& b) { return parse_user_page(b, map); }, dir.users, dir, budget);
    if (!users) return prefixed(users.error(), "Users");
    auto groups = fetch_all<scim::Group>(
        http, o, base + "/Groups?attributes=" + url_encode(group_attributes(o.ext_schema, map)),
        [&](const std::string& b) { return parse_group_page(b, map); }, dir.groups, dir, budget);
    if (!groups) return prefixed(groups.error(), "Groups");
    if (map.members_by_display) resolve_members_by_display(dir);
    if (!dir.users.empty() && std::none_of(dir.users.begin(), dir.users.end(),
                                           [](const scim::User& u) { return u.uid.has_value(); }))
        return make_error(SourceErrc::NoExtension,
                          "no user of the SCIM server has a value at " + map.uid +
                              " (the uid path; its extension was requested in 'attributes'), so "
                              "nothing is synced (check identity.dialect, identity.attributes.uid "
                              "and the server's schema support)");
    return dir;
}

Result<std::optional<scim::User>> fetch_user(HttpClient& http, const ScimFetchOptions& o,
                                             const std::string& user_name)
{
    if (!valid_posix_name(user_name)) return std::optional<scim::User>();
    ScimDirectory stats;
    Budget budget(o);
    const std::string filter = (o.attributes ? o.attributes->user_name : std::string("userName")) +
                               " eq \"" + user_name + "\"";
    const ScimAttributeMap map = o.attributes ? *o.attributes : allot_attribute_map(o.ext_schema);
    const std::string url = trimmed_base(o.base_url) + "/Users?filter=" + url_encode(filter) +
                            "&attributes=" + url_encode(user_attribute_request(map));
    auto body = get_with_retry(http, o, url, stats, budget);
    if (!body) return body.error();
    if (auto s = budget.charge(body.value()); !s) return s.error();
    auto page = parse_user_page(body.value(), map);
    if (!page) return page.error();
    for (auto& u : page.value().resources)
        if (u.user_name == user_name) return std::optional<scim::User>(std::move(u));
    return std::optional<scim::User>();
}

}  // namespace allot
