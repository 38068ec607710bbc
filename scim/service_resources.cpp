// service_resources.cpp - SCIM CRUD on /Users and /Groups through one generic
// path: list (filter, paging, projection), POST, GET, PUT, PATCH and DELETE
// with If-Match. UserKind and GroupKind say only what differs.
#include <algorithm>
#include <cstdlib>
#include <memory>
#include <set>
#include <type_traits>

#include "patch.hpp"
#include "service.hpp"
#include "service_http.hpp"
#include "service_projection.hpp"
#include "user_snapshot.hpp"
#include "util.hpp"

namespace allot::scimd {

namespace {

struct UserKind {
    using T = scim::User;
    static constexpr const char* kPath = "/Users";
    static constexpr const char* kSortKey = "username";
    static std::string extension(const ServiceOptions& o) { return o.user_extension; }
    static Result<Page<T>> list(DirectoryStore& s, const ListQuery& q) { return s.list_users(q); }
    static Result<T> get(DirectoryStore& s, const std::string& id) { return s.get_user(id); }
    static Result<T> create(DirectoryStore& s, T u) { return s.create_user(std::move(u)); }
    static Result<T> replace(DirectoryStore& s, const std::string& id, T u, int64_t version)
    {
        return s.replace_user(id, std::move(u), version);
    }
    static Status remove(DirectoryStore& s, const std::string& id) { return s.delete_user(id); }
    static JsonPtr render(const T& u, const scim::RenderOptions& ro)
    {
        return scim::user_to_json(u, ro);
    }
    static Result<T> parse(const cJSON* body, const ServiceOptions& o)
    {
        return scim::user_from_json(body, o.user_extension);
    }
    static Result<bool> normalize(T& u, const ServiceOptions& o)
    {
        return normalize_user(u, o.policy);
    }
    static Status patch(T& u, const cJSON* body, const ServiceOptions& o)
    {
        return apply_user_patch(u, body, o.user_extension);
    }
    // PUT replaces the user, but a home or shell it leaves out stays as stored.
    static void keep_on_put(T& next, const T& cur)
    {
        if (next.home.empty()) next.home = cur.home;
        if (next.shell.empty()) next.shell = cur.shell;
    }
};

struct GroupKind {
    using T = scim::Group;
    static constexpr const char* kPath = "/Groups";
    static constexpr const char* kSortKey = "displayname";
    static std::string extension(const ServiceOptions&) { return scim::kPosixGroup; }
    static Result<Page<T>> list(DirectoryStore& s, const ListQuery& q) { return s.list_groups(q); }
    static Result<T> get(DirectoryStore& s, const std::string& id) { return s.get_group(id); }
    static Result<T> create(DirectoryStore& s, T g) { return s.create_group(std::move(g)); }
    static Result<T> replace(DirectoryStore& s, const std::string& id, T g, int64_t version)
    {
        return s.replace_group(id, std::move(g), version);
    }
    static Status remove(DirectoryStore& s, const std::string& id) { return s.delete_group(id); }
    static JsonPtr render(const T& g, const scim::RenderOptions& ro)
    {
        return scim::group_to_json(g, ro);
    }
    static Result<T> parse(const cJSON* body, const ServiceOptions&)
    {
        return scim::group_from_json(body);
    }
    static Result<bool> normalize(T& g, const ServiceOptions& o)
    {
        return normalize_group(g, o.policy);
    }
    static Status patch(T& g, const cJSON* body, const ServiceOptions&)
    {
        return apply_group_patch(g, body);
    }
    static void keep_on_put(T&, const T&) {}
};

// `inner and active eq true`, or `active eq true` alone: a hidden user is
// left out by the query itself, so totalResults and paging stay consistent.
std::unique_ptr<Filter> and_active(std::unique_ptr<Filter> inner)
{
    auto leaf = std::make_unique<Filter>();
    leaf->kind = Filter::Kind::Compare;
    leaf->path.attr = "active";
    leaf->op = CompareOp::Eq;
    leaf->value.kind = FilterValue::Kind::Bool;
    leaf->value.boolean = true;
    if (!inner) return leaf;
    auto both = std::make_unique<Filter>();
    both->kind = Filter::Kind::And;
    both->left = std::move(inner);
    both->right = std::move(leaf);
    return both;
}

// The ids of all deactivated users, read page by page.
Result<std::set<std::string>> inactive_user_ids(DirectoryStore& store)
{
    auto inactive = and_active(nullptr);
    inactive->value.boolean = false;
    ListQuery q;
    q.filter = inactive.get();
    q.count = 1000;
    q.cursor = "";
    std::set<std::string> ids;
    for (;;) {
        auto page = store.list_users(q);
        if (!page) return page.error();
        for (const auto& u : page.value().items) ids.insert(u.id);
        if (page.value().next_cursor.empty()) return ids;
        q.cursor = page.value().next_cursor;
    }
}

// startIndex, count, cursor and sorting (RFC 7644 §3.4.2.3-4). A negative
// startIndex is 1 and a negative count is 0, as the RFC says.
Result<ListQuery> list_query(const HttpRequest& r, const char* key_attr)
{
    ListQuery q;
    auto number = [&](const char* name, size_t& out, size_t lo) -> bool {
        const std::string* v = query(r, name);
        if (!v) return true;
        if (v->empty() || v->size() > 9 || !std::all_of(v->begin(), v->end(), ::isdigit)) {
            // RFC 7644: negative/absent startIndex is 1, negative count is 0.
            if (!v->empty() && (*v)[0] == '-' && v->size() < 12 &&
                std::all_of(v->begin() + 1, v->end(), ::isdigit)) {
                out = lo;
                return true;
            }
            return false;
        }
        out = std::max<size_t>(std::strtoul(v->c_str(), nullptr, 10), lo);
        return true;
    };
    if (!number("startIndex", q.start_index, 1) || !number("count", q.count, 0))
        return make_error(Errc::InvalidValue, "startIndex/count must be integers");
    if (const auto* c = query(r, "cursor")) q.cursor = *c;
    if (const auto* s = query(r, "sortBy"); s && to_lower(*s) != key_attr)
        return make_error(Errc::InvalidValue, std::string("sortBy supports only ") + key_attr);
    if (const auto* o = query(r, "sortOrder")) {
        const std::string l = to_lower(*o);
        if (l == "descending")
            q.order = SortOrder::Descending;
        else if (l != "ascending")
            return make_error(Errc::InvalidValue, "sortOrder: ascending|descending");
    }
    return q;
}

// A ListResponse with an empty Resources array (filled by the caller).
JsonPtr list_envelope(size_t total, bool cursor_mode, size_t start_index, size_t items)
{
    JsonPtr root(cJSON_CreateObject());
    cJSON* schemas = cJSON_AddArrayToObject(root.get(), "schemas");
    cJSON_AddItemToArray(schemas, cJSON_CreateString(scim::kListResponse));
    cJSON_AddNumberToObject(root.get(), "totalResults", static_cast<double>(total));
    if (!cursor_mode)
        cJSON_AddNumberToObject(root.get(), "startIndex", static_cast<double>(start_index));
    cJSON_AddNumberToObject(root.get(), "itemsPerPage", static_cast<double>(items));
    cJSON_AddArrayToObject(root.get(), "Resources");
    return root;
}

template <typename T, typename Render>
HttpResponse list_response(const Page<T>& page, bool cursor_mode, const Projection& proj,
                           Render render)
{
    JsonPtr root = list_envelope(page.total, cursor_mode, page.start_index, page.items.size());
    cJSON* resources = cJSON_GetObjectItem(root.get(), "Resources");
    for (const auto& item : page.items) {
        JsonPtr json = render(item);
        project(json.get(), proj.include, proj.exclude);
        cJSON_AddItemToArray(resources, json.release());
    }
    if (cursor_mode && !page.next_cursor.empty())
        cJSON_AddStringToObject(root.get(), "nextCursor", page.next_cursor.c_str());
    return json_response(200, root.get());
}

// The same document from users rendered beforehand: their JSON goes into the
// printed envelope's empty Resources array, byte for byte what cJSON prints.
HttpResponse rendered_list_response(size_t total, size_t start_index,
                                    const std::vector<const RenderedUser*>& items)
{
    JsonPtr root = list_envelope(total, false, start_index, items.size());
    HttpResponse r = json_response(200, root.get());
    static const std::string kEmpty = "\"Resources\":[]";
    const size_t at = r.body.find(kEmpty);
    if (at == std::string::npos) return scim_error(Errc::Internal, "list envelope");
    std::string joined;
    for (const auto* u : items) {
        if (!joined.empty()) joined += ',';
        joined += u->json;
    }
    r.body.insert(at + kEmpty.size() - 1, joined);
    return r;
}

// `userName eq "x"`: the one filter the pre-rendered users answer.
const std::string* user_name_eq(const Filter* f)
{
    if (!f || f->kind != Filter::Kind::Compare || f->op != CompareOp::Eq ||
        f->value.kind != FilterValue::Kind::String || f->path.attr != "username" ||
        !f->path.sub.empty() ||
        !(f->path.schema.empty() || f->path.schema == to_lower(scim::kUserSchema)))
        return nullptr;
    return &f->value.text;
}

// One resource type's endpoint for one request.
template <typename Kind>
class Endpoint {
public:
    using T = typename Kind::T;

    Endpoint(const ServiceOptions& o, DirectoryStore& store, UserSnapshot& rendered,
             const HttpRequest& r, bool hide_inactive, int64_t generation)
        : o_(o),
          store_(store),
          rendered_(rendered),
          r_(r),
          proj_(projection(r, o, Kind::extension(o))),
          hide_inactive_(hide_inactive),
          generation_(generation)
    {
        ro_.base_url = o.public_url + o.scim_base;
        ro_.user_extension = o.user_extension;
        ro_.include_extension = proj_.extension;
    }

    HttpResponse collection()
    {
        if (r_.method == "GET") return list();
        if (r_.method == "POST") return create();
        return scim_error(Errc::MethodNotAllowed, "method not allowed");
    }

    HttpResponse member(const std::string& id)
    {
        if (r_.method == "GET") {
            auto cur = Kind::get(store_, id);
            if (!cur) return scim_error(cur.error());
            auto hide = hidden(cur.value());
            if (!hide) return scim_error(hide.error());
            if (hide.value()) return scim_error(Errc::NotFound, "no such resource");
            return rendered(cur.value());
        }
        const int64_t want = if_match_version(r_);
        if (want < 0) return scim_error(Errc::InvalidValue, "If-Match must be an ETag");
        if (r_.method == "DELETE") return remove(id, want);
        if (r_.method == "PUT" || r_.method == "PATCH") return modify(id, want);
        return scim_error(Errc::MethodNotAllowed, "method not allowed");
    }

private:
    // A deactivated user is hidden from such a token, and so is the user's
    // private group (the list leaves both out in its query).
    Result<bool> hidden(const T& item)
    {
        if constexpr (std::is_same_v<Kind, UserKind>) {
            return hide_inactive_ && !item.active;
        } else {
            if (!hide_inactive_ || !is_private_group_id(item.id)) return false;
            auto shown = visible(item);
            if (!shown) return shown.error();
            return shown.value().members.empty();
        }
    }

    // A group read by a token that may not see deactivated users lists only
    // its other members.
    Result<T> visible(const T& item)
    {
        if constexpr (std::is_same_v<Kind, GroupKind>) {
            if (!hide_inactive_) return item;
            if (!inactive_) {
                auto ids = inactive_user_ids(store_);
                if (!ids) return ids.error();
                inactive_ = std::move(ids.value());
            }
            T shown = item;
            auto& m = shown.members;
            m.erase(std::remove_if(m.begin(), m.end(),
                                   [&](const scim::Member& x) {
                                       return x.type != "Group" && inactive_->count(x.value);
                                   }),
                    m.end());
            return shown;
        } else {
            return item;
        }
    }

    HttpResponse rendered(const T& item)
    {
        auto shown = visible(item);
        if (!shown) return scim_error(shown.error());
        return one(200, shown.value());
    }

    HttpResponse one(int status, const T& item)
    {
        JsonPtr json = Kind::render(item, ro_);
        project(json.get(), proj_.include, proj_.exclude);
        HttpResponse resp = json_response(status, json.get());
        resp.headers.push_back({"ETag", scim::etag(item.version)});
        if (status == 201)
            resp.headers.push_back({"Location", ro_.base_url + Kind::kPath + "/" + item.id});
        return resp;
    }

    HttpResponse list()
    {
        auto q = list_query(r_, Kind::kSortKey);
        if (!q) return scim_error(q.error());
        std::unique_ptr<Filter> filter;
        if (const auto* f = query(r_, "filter")) {
            auto parsed = parse_filter(*f);
            if (!parsed)
                return scim_error(Errc::InvalidFilter, "filter: " + parsed.error().message);
            filter = std::move(parsed.value());
        }
        if constexpr (std::is_same_v<Kind, UserKind>) {
            if (auto fast = from_rendered(q.value(), filter.get())) return *fast;
            if (r_.at_hand_only) return not_at_hand();
            if (hide_inactive_) filter = and_active(std::move(filter));
        }
        q.value().hide_inactive = hide_inactive_;
        q.value().filter = filter.get();
        auto page = Kind::list(store_, q.value());
        if (!page) return scim_error(page.error());
        for (auto& item : page.value().items) {
            auto shown = visible(item);
            if (!shown) return scim_error(shown.error());
            item = std::move(shown.value());
        }
        return list_response(page.value(), q.value().cursor.has_value(), proj_,
                             [&](const T& item) { return Kind::render(item, ro_); });
    }

    // The common Users reads from the pre-rendered users (user_snapshot.hpp):
    // no projection, no cursor, ascending, no filter or `userName eq`. The
    // same page as the store's, sliced from the same order.
    std::optional<HttpResponse> from_rendered(const ListQuery& q, const Filter* filter)
    {
        const std::string* name = user_name_eq(filter);
        if (!proj_.include.empty() || !proj_.exclude.empty() || q.cursor ||
            q.order != SortOrder::Ascending || (filter && !name))
            return std::nullopt;
        auto set = r_.at_hand_only ? rendered_.at_hand(generation_)
                   : name          ? rendered_.for_lookup(store_, ro_, generation_)
                                   : rendered_.current(store_, ro_, generation_);
        if (!set) return std::nullopt;
        std::vector<const RenderedUser*> named;
        if (name) {
            const RenderedUser* u = set->find(*name);
            if (u && (u->active || !hide_inactive_)) named.push_back(u);
        }
        const auto& matched = name ? named : hide_inactive_ ? set->active : set->everyone;
        const size_t start = std::max<size_t>(q.start_index, 1);
        const size_t from = std::min(start - 1, matched.size());
        const size_t to = std::min(matched.size(), from + std::min(q.count, kMaxPage));
        return rendered_list_response(matched.size(), start,
                                      {matched.begin() + from, matched.begin() + to});
    }

    HttpResponse create()
    {
        JsonPtr body;
        if (auto bad = check_body(r_, o_.max_body, body)) return *bad;
        auto draft = Kind::parse(body.get(), o_);
        if (!draft) return scim_error(Errc::InvalidValue, draft.error().message);
        auto ok = Kind::normalize(draft.value(), o_);
        if (!ok) return scim_error(Errc::InvalidValue, ok.error().message);
        auto made = Kind::create(store_, std::move(draft.value()));
        if (!made) return scim_error(made.error());
        return one(201, made.value());
    }

    // DELETE: with If-Match, 412 unless the stored version is the one pinned.
    HttpResponse remove(const std::string& id, int64_t want)
    {
        if (want) {
            auto cur = Kind::get(store_, id);
            if (!cur) return scim_error(cur.error());
            if (cur.value().version != want)
                return scim_error(Errc::VersionMismatch, "version mismatch");
        }
        auto d = Kind::remove(store_, id);
        if (!d) return scim_error(d.error());
        HttpResponse gone;
        gone.status = 204;
        gone.content_type.clear();
        return gone;
    }

    // The stored resource after this PUT or PATCH, or the error to answer.
    Result<T> next_of(const T& cur, const cJSON* body)
    {
        if (r_.method == "PATCH") {
            T next = cur;
            auto p = Kind::patch(next, body, o_);
            if (!p) return p.error();
            return next;
        }
        auto parsed = Kind::parse(body, o_);
        if (!parsed) return make_error(Errc::InvalidValue, parsed.error().message);
        Kind::keep_on_put(parsed.value(), cur);
        return parsed;
    }

    // PUT / PATCH. Without If-Match a lost race with another writer is redone
    // on the fresh version (three times); with it, the pinned version decides.
    HttpResponse modify(const std::string& id, int64_t want)
    {
        JsonPtr body;
        if (auto bad = check_body(r_, o_.max_body, body)) return *bad;
        for (int attempt = 0; attempt < 3; ++attempt) {
            auto cur = Kind::get(store_, id);
            if (!cur) return scim_error(cur.error());
            auto next = next_of(cur.value(), body.get());
            if (!next) return scim_error(next.error());
            auto ok = Kind::normalize(next.value(), o_);
            if (!ok) return scim_error(Errc::InvalidValue, ok.error().message);
            auto saved = Kind::replace(store_, id, next.value(), want ? want : cur.value().version);
            if (saved) return one(200, saved.value());
            if (!saved.error().is(Errc::VersionMismatch) || want) return scim_error(saved.error());
        }
        return scim_error(Errc::Conflict, "resource is being modified concurrently; retry");
    }

    const ServiceOptions& o_;
    DirectoryStore& store_;
    UserSnapshot& rendered_;
    const HttpRequest& r_;
    const Projection proj_;
    const bool hide_inactive_;
    const int64_t generation_;                       // the store's when the request began
    std::optional<std::set<std::string>> inactive_;  // loaded on first use
    scim::RenderOptions ro_;
};

template <typename Kind>
HttpResponse serve(const ServiceOptions& o, DirectoryStore& store, UserSnapshot& rendered,
                   const HttpRequest& r, const std::string& id, bool hide_inactive,
                   int64_t generation)
{
    Endpoint<Kind> e(o, store, rendered, r, hide_inactive, generation);
    return id.empty() ? e.collection() : e.member(id);
}

}  // namespace

HttpResponse Service::resources(const HttpRequest& r, const std::string& resource,
                                const std::string& id, bool hide_inactive, int64_t generation)
{
    return resource == "Users"
               ? serve<UserKind>(o_, store_, rendered_users_, r, id, hide_inactive, generation)
               : serve<GroupKind>(o_, store_, rendered_users_, r, id, hide_inactive, generation);
}

}  // namespace allot::scimd
