// main.cpp - allot-scimd: the identity service and its admin commands.
//
//   allot-scimd [-c allot.yaml] serve [--listen H:P] [--store F] [--munge-socket S] ...
//   allot-scimd user add|set|del|list, group add|del|list|member, key add|del|list,
//   token create|revoke|list, keys rotate|list, oidc mint, apply FILE [--plan],
//   render-kube --out DIR
//
// Exit codes: 0 success, 1 operation failed, 2 usage error, 3 configuration invalid.
// See allot-scimd(8) and docs/scimd.md.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <thread>

#include "allot/config.hpp"
#include "apply.hpp"
#include "kube.hpp"
#include "scimd_config.hpp"
#include "server.hpp"
#include "service.hpp"
#include "util.hpp"

using namespace allot;
using namespace allot::scimd;

namespace {

constexpr int kOk = 0, kFailed = 1, kUsage = 2, kBadConfig = 3;

const char* kUsageText =
    "usage: allot-scimd [-c CONFIG] COMMAND ...\n"
    "  serve [--listen HOST:PORT] [--store FILE] [--keys-dir DIR] [--munge-socket PATH]\n"
    "        [--alg ES256|RS256] [--munge-max-age S] [--port-file FILE] [--access-log]\n"
    "        [--insecure-http] [--jwks-max-age S] [--private-groups | --no-private-groups]\n"
    "  user add NAME [--display-name S] [--email E] [--uid N] [--gid N] [--shell S] [--home H]\n"
    "                [--key 'TYPE BASE64 [COMMENT]']... [--external-id X] [--inactive]\n"
    "  user set NAME [--display-name S] [--email E] [--shell S] [--home H] [--active yes|no]\n"
    "  user del NAME | user list [--filter SCIM-FILTER] [--json]\n"
    "  group add NAME [--gid N] [--member USER]... | group del NAME | group list\n"
    "  group member add|del GROUP USER...\n"
    "  key add USER 'KEYLINE' | key del USER (KEYLINE | --all) | key list USER\n"
    "  token create NAME --scope read|read-inactive|write [--expires-days N] | token revoke NAME | "
    "token list\n"
    "  keys rotate [--alg ES256|RS256] [--overlap S] [--jwks-max-age S]\n"
    "              [--activate | --activate-after S] | keys activate | keys list\n"
    "  oidc mint USER [--lifetime S] [--audience A] [--now-offset S]  (admin: print an ID token)\n"
    "  apply DIRECTORY.yaml [--plan] [--prune]\n"
    "  render-kube --out DIR\n";

class Args {
public:
    Args(int argc, char** argv) : v_(argv + 1, argv + argc) {}
    std::optional<std::string> opt(const char* name)
    {
        for (size_t i = 0; i < v_.size(); ++i)
            if (v_[i] == name) {
                if (i + 1 >= v_.size())
                    throw std::invalid_argument(std::string(name) + " needs a value");
                std::string value = v_[i + 1];
                v_.erase(v_.begin() + static_cast<long>(i), v_.begin() + static_cast<long>(i) + 2);
                return value;
            }
        return std::nullopt;
    }
    std::vector<std::string> multi(const char* name)
    {
        std::vector<std::string> out;
        while (auto v = opt(name)) out.push_back(*v);
        return out;
    }
    bool flag(const char* name)
    {
        for (size_t i = 0; i < v_.size(); ++i)
            if (v_[i] == name) {
                v_.erase(v_.begin() + static_cast<long>(i));
                return true;
            }
        return false;
    }
    // Positional arguments; any leftover --option is a usage error.
    std::vector<std::string> rest()
    {
        for (const auto& a : v_)
            if (a.size() > 1 && a[0] == '-') throw std::invalid_argument("unknown option " + a);
        return v_;
    }

private:
    std::vector<std::string> v_;
};

uint32_t parse_u32(const std::string& s, const char* what)
{
    if (s.empty() || s.size() > 10 || s.find_first_not_of("0123456789") != std::string::npos)
        throw std::invalid_argument(std::string(what) + " must be a number");
    const unsigned long v = std::stoul(s);
    if (v > 4294967294UL) throw std::invalid_argument(std::string(what) + " out of range");
    return static_cast<uint32_t>(v);
}

// A duration flag, bounded as its allot.yaml key is (allot/config.hpp).
int64_t parse_seconds(const std::string& s, const char* what, int64_t max)
{
    const int64_t v = parse_u32(s, what);
    if (v > max)
        throw std::invalid_argument(std::string(what) + " must be at most " + std::to_string(max) +
                                    " seconds");
    return v;
}

int fail(const std::string& msg)
{
    std::cerr << "allot-scimd: " << msg << "\n";
    return kFailed;
}

int store_fail(const Error& e)
{
    return fail(e.message);
}

struct Context {
    Config config;
    Overrides over;
    std::unique_ptr<DirectoryStore> store;
};

std::unique_ptr<DirectoryStore> open_store(const Context& ctx, std::string* err)
{
    const std::string path = ctx.over.store.empty() ? ctx.config.scim_server.store : ctx.over.store;
    return open_sqlite_store(path, id_range(ctx.config), ctx.config.identity.extension_schema, err,
                             private_groups(ctx.config, ctx.over));
}

void print_user(const scim::User& u)
{
    std::string groups;
    for (const auto& g : u.groups) groups += (groups.empty() ? "" : ",") + g.name;
    std::printf("%s:%lld:%lld:%s:%s:%s:%s:keys=%zu:groups=%s\n", u.user_name.c_str(),
                static_cast<long long>(u.uid.value_or(0)),
                static_cast<long long>(u.gid.value_or(0)), u.display_name.c_str(), u.home.c_str(),
                u.shell.c_str(), u.active ? "active" : "inactive", u.ssh_keys.size(),
                groups.c_str());
}

int list_users(Context& ctx, Args& args)
{
    {
        const auto filter_text = args.opt("--filter");
        const bool json = args.flag("--json");
        args.rest();
        std::unique_ptr<Filter> filter;
        if (filter_text) {
            auto f = parse_filter(*filter_text);
            if (!f) return fail("filter: " + f.error().message);
            filter = std::move(f.value());
        }
        ListQuery q;
        q.filter = filter.get();
        q.count = 1000;
        q.cursor = "";
        scim::RenderOptions ro;
        ro.user_extension = ctx.config.identity.extension_schema;
        while (true) {
            auto page = ctx.store->list_users(q);
            if (!page) return store_fail(page.error());
            for (const auto& u : page.value().items) {
                if (json)
                    std::printf("%s\n", json_print(scim::user_to_json(u, ro).get()).c_str());
                else
                    print_user(u);
            }
            if (page.value().next_cursor.empty()) break;
            q.cursor = page.value().next_cursor;
        }
        return kOk;
    }
}

int user_command(Context& ctx, Args& args, const std::string& sub)
{
    const DirectoryPolicy policy = directory_policy(ctx.config);
    if (sub == "list") return list_users(ctx, args);
    if (sub == "add") {
        scim::User u;
        if (auto v = args.opt("--display-name")) u.display_name = *v;
        if (auto v = args.opt("--email")) u.emails.push_back({*v, "work", true});
        if (auto v = args.opt("--uid")) u.uid = parse_u32(*v, "--uid");
        if (auto v = args.opt("--gid")) u.gid = parse_u32(*v, "--gid");
        if (auto v = args.opt("--shell")) u.shell = *v;
        if (auto v = args.opt("--home")) u.home = *v;
        if (auto v = args.opt("--external-id")) u.external_id = *v;
        u.ssh_keys = args.multi("--key");
        u.active = !args.flag("--inactive");
        auto pos = args.rest();
        if (pos.size() != 1) return kUsage;
        u.user_name = pos[0];
        auto ok = normalize_user(u, policy);
        if (!ok) return fail(ok.error().message);
        auto made = ctx.store->create_user(u);
        if (!made) return store_fail(made.error());
        print_user(made.value());
        return kOk;
    }
    if (sub == "set" || sub == "del") {
        const auto display = args.opt("--display-name"), email = args.opt("--email"),
                   shell = args.opt("--shell"), home = args.opt("--home"),
                   active = args.opt("--active");
        auto pos = args.rest();
        if (pos.size() != 1) return kUsage;
        auto u = ctx.store->get_user_by_name(pos[0]);
        if (!u) return store_fail(u.error());
        if (sub == "del") {
            auto d = ctx.store->delete_user(u.value().id);
            if (!d) return store_fail(d.error());
            std::printf("deleted %s (uid %lld stays allocated)\n", pos[0].c_str(),
                        static_cast<long long>(u.value().uid.value_or(0)));
            return kOk;
        }
        scim::User next = u.value();
        if (display) next.display_name = *display;
        if (email) next.emails = {{*email, "work", true}};
        if (shell) next.shell = *shell;
        if (home) next.home = *home;
        if (active) {
            if (*active != "yes" && *active != "no") return kUsage;
            next.active = *active == "yes";
        }
        auto ok = normalize_user(next, policy);
        if (!ok) return fail(ok.error().message);
        auto saved = ctx.store->replace_user(next.id, next, u.value().version);
        if (!saved) return store_fail(saved.error());
        print_user(saved.value());
        return kOk;
    }
    return kUsage;
}

int group_command(Context& ctx, Args& args, const std::string& sub)
{
    if (sub == "list") {
        args.rest();
        ListQuery q;
        q.count = 1000;
        q.cursor = "";
        while (true) {
            auto page = ctx.store->list_groups(q);
            if (!page) return store_fail(page.error());
            for (const auto& g : page.value().items) {
                std::string members;
                for (const auto& m : g.members) members += (members.empty() ? "" : ",") + m.display;
                std::printf("%s:%lld:%s\n", g.display_name.c_str(),
                            static_cast<long long>(g.gid.value_or(0)), members.c_str());
            }
            if (page.value().next_cursor.empty()) break;
            q.cursor = page.value().next_cursor;
        }
        return kOk;
    }
    auto resolve = [&](const std::vector<std::string>& names,
                       std::vector<scim::Member>& out) -> std::optional<int> {
        for (const auto& n : names) {
            auto u = ctx.store->get_user_by_name(n);
            if (!u) return fail("no user '" + n + "'");
            out.push_back({u.value().id, "User", n});
        }
        return std::nullopt;
    };
    if (sub == "add") {
        scim::Group g;
        if (auto v = args.opt("--gid")) g.gid = parse_u32(*v, "--gid");
        const auto members = args.multi("--member");
        auto pos = args.rest();
        if (pos.size() != 1) return kUsage;
        g.display_name = pos[0];
        if (auto rc = resolve(members, g.members)) return *rc;
        auto ok = normalize_group(g, directory_policy(ctx.config));
        if (!ok) return fail(ok.error().message);
        auto made = ctx.store->create_group(g);
        if (!made) return store_fail(made.error());
        std::printf("%s:%lld\n", made.value().display_name.c_str(),
                    static_cast<long long>(made.value().gid.value_or(0)));
        return kOk;
    }
    if (sub == "del") {
        auto pos = args.rest();
        if (pos.size() != 1) return kUsage;
        auto g = ctx.store->get_group_by_name(pos[0]);
        if (!g) return store_fail(g.error());
        auto d = ctx.store->delete_group(g.value().id);
        if (!d) return store_fail(d.error());
        return kOk;
    }
    if (sub == "member") {
        auto pos = args.rest();
        if (pos.size() < 3 || (pos[0] != "add" && pos[0] != "del")) return kUsage;
        auto g = ctx.store->get_group_by_name(pos[1]);
        if (!g) return store_fail(g.error());
        std::vector<scim::Member> ms;
        if (auto rc = resolve({pos.begin() + 2, pos.end()}, ms)) return *rc;
        scim::Group next = g.value();
        for (const auto& m : ms) {
            auto it = std::find_if(next.members.begin(), next.members.end(),
                                   [&](const scim::Member& x) { return x.value == m.value; });
            if (pos[0] == "add" && it == next.members.end()) next.members.push_back(m);
            if (pos[0] == "del" && it != next.members.end()) next.members.erase(it);
        }
        auto saved = ctx.store->replace_group(next.id, next, g.value().version);
        if (!saved) return store_fail(saved.error());
        return kOk;
    }
    return kUsage;
}

int key_command(Context& ctx, Args& args, const std::string& sub)
{
    const bool all = sub == "del" && args.flag("--all");
    auto pos = args.rest();
    if (pos.empty()) return kUsage;
    auto u = ctx.store->get_user_by_name(pos[0]);
    if (!u) return store_fail(u.error());
    if (sub == "list") {
        for (const auto& k : u.value().ssh_keys) std::printf("%s\n", k.c_str());
        return kOk;
    }
    scim::User next = u.value();
    if (sub == "add" && pos.size() == 2) {
        next.ssh_keys.push_back(pos[1]);
    } else if (sub == "del" && (all || pos.size() == 2)) {
        const size_t before = next.ssh_keys.size();
        if (all)
            next.ssh_keys.clear();
        else
            next.ssh_keys.erase(std::remove(next.ssh_keys.begin(), next.ssh_keys.end(), pos[1]),
                                next.ssh_keys.end());
        if (before == next.ssh_keys.size() && !all) return fail("no such key");
    } else {
        return kUsage;
    }
    auto ok = normalize_user(next, directory_policy(ctx.config));
    if (!ok) return fail(ok.error().message);
    auto saved = ctx.store->replace_user(next.id, next, u.value().version);
    if (!saved) return store_fail(saved.error());
    return kOk;
}

int token_command(Context& ctx, Args& args, const std::string& sub)
{
    if (sub == "create") {
        const auto scope = args.opt("--scope");
        const auto days = args.opt("--expires-days");
        auto pos = args.rest();
        if (pos.size() != 1 || !scope ||
            (*scope != "read" && *scope != "read-inactive" && *scope != "write"))
            return kUsage;
        const std::string secret = "allot_" + base64url_encode(random_bytes(32));
        const int64_t expires = days ? static_cast<int64_t>(time(nullptr)) +
                                           86400LL * parse_u32(*days, "--expires-days")
                                     : 0;
        auto t = ctx.store->create_token(pos[0], {"scim:" + *scope}, expires, hex(sha256(secret)));
        if (!t) return store_fail(t.error());
        // Shown once: only its hash is stored.
        std::printf("%s\n", secret.c_str());
        return kOk;
    }
    if (sub == "revoke") {
        auto pos = args.rest();
        if (pos.size() != 1) return kUsage;
        auto r = ctx.store->revoke_token(pos[0]);
        if (!r) return store_fail(r.error());
        return kOk;
    }
    if (sub == "list") {
        args.rest();
        auto list = ctx.store->list_tokens();
        if (!list) return store_fail(list.error());
        for (const auto& t : list.value()) {
            std::string scopes;
            for (const auto& s : t.scopes) scopes += (scopes.empty() ? "" : " ") + s;
            std::printf("%s\t%s\tcreated=%s\texpires=%s\t%s\n", t.name.c_str(), scopes.c_str(),
                        scim::format_time(t.created).c_str(),
                        t.expires ? scim::format_time(t.expires).c_str() : "never",
                        t.revoked ? "REVOKED" : "active");
        }
        return kOk;
    }
    return kUsage;
}

Result<KeyActivations> key_activations(Context& ctx)
{
    auto a = ctx.store->key_activations();
    if (!a) return make_error("store: " + a.error().message);
    return a.value();
}

int rotate_command(Context& ctx, const ServiceOptions& so, int64_t now, int64_t activate_after)
{
    auto activations = key_activations(ctx);
    if (!activations) return fail(activations.error().message);
    // Scheduled before the key file exists: a key file without a schedule signs at once.
    const std::string file = key_file_name(now, so.alg);
    const int64_t activates = now + activate_after;
    auto saved = ctx.store->set_key_activation(file, activates);
    if (!saved) return store_fail(saved.error());
    activations.value()[file] = activates;
    auto key = rotate_keys(so.keys_dir, so.alg, now, so.key_overlap, activations.value());
    if (!key) {
        ctx.store->forget_key_activation(file);
        return fail(key.error().message);
    }
    for (const auto& gone : key.value().removed) ctx.store->forget_key_activation(gone);
    if (activate_after == 0)
        std::printf("new signing key %s, signing now\n", key.value().kid.c_str());
    else
        std::printf("new key %s published; it signs from %s (in %llds)\n", key.value().kid.c_str(),
                    scim::format_time(activates).c_str(), static_cast<long long>(activate_after));
    return kOk;
}

// `keys activate`: the newest key signs from now on (the operator knows every
// relying party has fetched the JWKS since it was published).
int activate_command(Context& ctx, const ServiceOptions& so, int64_t now)
{
    auto file = newest_key_file(so.keys_dir);
    if (!file) return fail(file.error().message);
    auto activations = key_activations(ctx);
    if (!activations) return fail(activations.error().message);
    auto it = activations.value().find(file.value());
    if (it == activations.value().end() || it->second <= now) {
        std::printf("%s already signs\n", file.value().c_str());
        return kOk;
    }
    auto saved = ctx.store->set_key_activation(file.value(), now);
    if (!saved) return store_fail(saved.error());
    std::printf("%s signs from now\n", file.value().c_str());
    return kOk;
}

int keys_command(Context& ctx, Args& args, const std::string& sub)
{
    if (auto a = args.opt("--alg")) ctx.over.alg = *a;
    if (auto o = args.opt("--overlap")) ctx.over.key_overlap = parse_u32(*o, "--overlap");
    if (auto m = args.opt("--jwks-max-age"))
        ctx.over.jwks_max_age = parse_seconds(*m, "--jwks-max-age", kMaxJwksMaxAgeSeconds);
    if (auto a = args.opt("--activate-after"))
        ctx.over.activate_after = parse_seconds(*a, "--activate-after", kMaxActivateAfterSeconds);
    const bool activate_now = args.flag("--activate");
    args.rest();
    auto so = service_options(ctx.config, ctx.over);
    if (!so) return fail(so.error().message);
    const int64_t now = static_cast<int64_t>(time(nullptr));
    if (sub == "rotate") {
        if (activate_now && ctx.over.activate_after) return kUsage;
        const int64_t delay = activate_now ? 0 : activation_delay(ctx.config, ctx.over, so.value());
        // The first key of a directory has no predecessor to keep signing: it signs at once.
        const bool first = !newest_key_file(so.value().keys_dir);
        return rotate_command(ctx, so.value(), now, first ? 0 : delay);
    }
    if (sub == "activate") return activate_command(ctx, so.value(), now);
    if (sub == "list") {
        auto activations = key_activations(ctx);
        if (!activations) return fail(activations.error().message);
        auto set = load_keys(so.value().keys_dir, now, so.value().key_overlap, false,
                             so.value().alg, activations.value());
        if (!set) return fail(set.error().message);
        const KeySet& ks = *set.value();
        const size_t signer = ks.signer_index(now);
        for (size_t i = 0; i < ks.keys.size(); ++i) {
            const std::string state =
                i == signer ? "signing"
                : ks.activates[i] > now
                    ? "published, signs from " + scim::format_time(ks.activates[i])
                : i < signer ? "published, superseded"
                             : "published (overlap)";
            std::printf("%s\t%s\tcreated=%s\t%s\n", ks.keys[i].kid().c_str(),
                        alg_name(ks.keys[i].alg()), scim::format_time(ks.created[i]).c_str(),
                        state.c_str());
        }
        return kOk;
    }
    return kUsage;
}

int oidc_command(Context& ctx, Args& args, const std::string& sub)
{
    const auto lifetime = args.opt("--lifetime");
    const auto audience = args.opt("--audience");
    const auto at = args.opt("--now-offset");  // for tests of expired tokens: signed as if earlier
    auto pos = args.rest();
    if (sub != "mint" || pos.size() != 1) return kUsage;
    auto so = service_options(ctx.config, ctx.over);
    if (!so) return fail(so.error().message);
    if (audience) so.value().token.audience = *audience;
    auto u = ctx.store->get_user_by_name(pos[0]);
    if (!u) return store_fail(u.error());
    const int64_t now =
        static_cast<int64_t>(time(nullptr)) - (at ? parse_u32(*at, "--now-offset") : 0);
    auto activations = key_activations(ctx);
    if (!activations) return fail(activations.error().message);
    auto keys = load_keys(so.value().keys_dir, now, so.value().key_overlap, false, so.value().alg,
                          activations.value());
    if (!keys) return fail(keys.error().message);
    auto t =
        mint_id_token(keys.value()->signer(now), so.value().token, u.value(), now,
                      lifetime ? parse_u32(*lifetime, "--lifetime") : so.value().token.lifetime);
    if (!t) return fail(t.error().message);
    std::printf("%s\n", t.value().c_str());
    return kOk;
}

int serve(Context& ctx, Args& args)
{
    if (auto v = args.opt("--listen")) ctx.over.listen = *v;
    if (auto v = args.opt("--munge-socket")) ctx.over.munge_socket = *v;
    if (auto v = args.opt("--alg")) ctx.over.alg = *v;
    if (auto v = args.opt("--jwks-max-age"))
        ctx.over.jwks_max_age = parse_seconds(*v, "--jwks-max-age", kMaxJwksMaxAgeSeconds);
    const auto port_file = args.opt("--port-file");
    const auto max_age = args.opt("--munge-max-age");
    ctx.over.access_log = args.flag("--access-log");
    ctx.over.insecure_http = args.flag("--insecure-http");
    args.rest();
    auto so = service_options(ctx.config, ctx.over);
    if (!so) return fail(so.error().message);
    auto sv = server_options(ctx.config, ctx.over);
    if (!sv) return fail(sv.error().message);
    if (max_age) so.value().munge_max_age = parse_u32(*max_age, "--munge-max-age");
    if (so.value().token.audience.empty())
        std::cerr
            << "allot-scimd: oidc.audience is empty; token exchange will refuse every request\n";
    SystemClock clock;
    Service service(so.value(), *ctx.store, make_libmunge_decoder(ctx.over.munge_socket), clock);
    auto init = service.init();
    if (!init) return fail("oidc keys: " + init.error().message);
    // Signals are taken by one thread with sigwait, so no handler runs inside httplib.
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    signal(SIGPIPE, SIG_IGN);
    HttpServer server(service, sv.value());
    service.add_metrics([&server] { return server_metrics(server.counters()); });
    auto port = server.bind();
    if (!port) return fail(port.error().message);
    if (port_file) {
        std::ofstream(*port_file + ".tmp") << port.value() << "\n";
        std::rename((*port_file + ".tmp").c_str(), port_file->c_str());
    }
    std::cerr << "allot-scimd: serving on " << sv.value().host << ":" << port.value()
              << (sv.value().tls_cert.empty() ? " (plain HTTP)" : " (TLS)") << ", issuer "
              << so.value().token.issuer << "\n";
    std::thread waiter([&] {
        for (;;) {
            int sig = 0;
            sigwait(&set, &sig);
            if (sig == SIGHUP) {
                auto r = service.reload_keys();
                std::cerr << "allot-scimd: SIGHUP: "
                          << (r ? "reloaded OIDC keys" : "keeping old keys: " + r.error().message)
                          << "\n";
                continue;
            }
            std::cerr << "allot-scimd: signal " << sig << ", stopping\n";
            server.stop();
            return;
        }
    });
    const bool ok = server.run();
    // Unblock the waiter if run() ended on its own.
    pthread_kill(waiter.native_handle(), SIGTERM);
    waiter.join();
    return ok ? kOk : kFailed;
}

// `render-kube --out DIR`: one file per Kubernetes team, printed.
int render_kube_command(const Context& ctx, Args& args)
{
    const auto out = args.opt("--out");
    args.rest();
    if (!out) return kUsage;
    auto r = render_kube_files(ctx.config, *out);
    if (!r) return fail(r.error().message);
    for (const auto& f : r.value()) std::printf("%s\n", f.c_str());
    return kOk;
}

// `apply DIRECTORY.yaml [--plan] [--prune]`.
int apply_command(Context& ctx, Args& args)
{
    const bool plan = args.flag("--plan");
    const bool prune = args.flag("--prune");
    auto pos = args.rest();
    if (pos.size() != 1) return kUsage;
    auto r = apply_directory_file(*ctx.store, directory_policy(ctx.config), pos[0], plan, prune,
                                  std::cout);
    if (!r) return fail(r.error().message);
    return kOk;
}

// The commands that need the store open.
int store_command(Context& ctx, Args& args, const std::string& cmd, const std::string& sub)
{
    std::string err;
    // Listing private groups is the store's behaviour, so it is read before the store opens.
    // It changes what `serve` answers only: the admin commands see the real groups.
    if (cmd == "serve") {
        const bool on = args.flag("--private-groups"), off = args.flag("--no-private-groups");
        if (on && off) return kUsage;
        if (on || off) ctx.over.private_groups = on;
    } else {
        ctx.over.private_groups = false;
    }
    ctx.store = open_store(ctx, &err);
    if (!ctx.store) return fail(err);
    if (cmd == "serve") return serve(ctx, args);
    if (cmd == "user") return user_command(ctx, args, sub);
    if (cmd == "group") return group_command(ctx, args, sub);
    if (cmd == "key") return key_command(ctx, args, sub);
    if (cmd == "token") return token_command(ctx, args, sub);
    if (cmd == "oidc") return oidc_command(ctx, args, sub);
    if (cmd == "keys") return keys_command(ctx, args, sub);  // activations live in the store
    if (cmd == "apply") return apply_command(ctx, args);
    return kUsage;
}

struct Command {
    std::string config_path = kDefaultConfigPath;
    Overrides over;
    std::string cmd, sub;
    std::vector<char*> tail;  // argv[0], then what follows the (sub)command
    bool help = false;
};

// [global options] COMMAND [SUBCOMMAND] [options and positionals]; nullopt on
// a usage error (unknown options throw std::invalid_argument).
std::optional<Command> parse_command_line(int argc, char** argv)
{
    Command c;
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
            return argv[++i];
        };
        if (a == "-c" || a == "--config") {
            c.config_path = value();
        } else if (a == "--store") {
            c.over.store = value();
        } else if (a == "--keys-dir") {
            c.over.keys_dir = value();
        } else if (a == "-h" || a == "--help") {
            c.help = true;
            return c;
        } else {
            throw std::invalid_argument("unknown option " + a);
        }
    }
    if (i >= argc) return std::nullopt;
    c.cmd = argv[i++];
    if (c.cmd != "serve" && c.cmd != "apply" && c.cmd != "render-kube") {
        if (i >= argc) return std::nullopt;
        c.sub = argv[i++];
    }
    c.tail.push_back(argv[0]);
    for (; i < argc; ++i) c.tail.push_back(argv[i]);
    return c;
}

int run(Command& c)
{
    Args args(static_cast<int>(c.tail.size()), c.tail.data());
    auto load = load_config(c.config_path);
    if (!load.ok()) {
        std::cerr << load.errors.joined() << "\n";
        return kBadConfig;
    }
    Context ctx;
    ctx.config = *load.config;
    ctx.over = c.over;
    if (c.cmd == "render-kube") return render_kube_command(ctx, args);
    const int rc = store_command(ctx, args, c.cmd, c.sub);
    if (rc == kUsage) std::cerr << kUsageText;
    return rc;
}

}  // namespace

int main(int argc, char** argv)
{
    try {
        auto c = parse_command_line(argc, argv);
        if (!c) {
            std::cerr << kUsageText;
            return kUsage;
        }
        if (c->help) {
            std::cout << kUsageText;
            return kOk;
        }
        return run(*c);
    } catch (const std::invalid_argument& e) {
        std::cerr << "allot-scimd: " << e.what() << "\n" << kUsageText;
        return kUsage;
    } catch (const std::exception& e) {
        std::cerr << "allot-scimd: " << e.what() << "\n";
        return kFailed;
    }
}
