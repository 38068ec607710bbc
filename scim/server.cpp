// server.cpp - see server.hpp.
#include "server.hpp"

#include "compat/httplib.hpp"

extern "C" {
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>
}

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <string_view>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "store_changes.hpp"
#include "util.hpp"

namespace allot::scimd {
namespace {

using SteadyClock = std::chrono::steady_clock;
using TimePoint = SteadyClock::time_point;

class UniqueFd {
public:
    UniqueFd() = default;
    explicit UniqueFd(int fd) : fd_(fd) {}
    UniqueFd(UniqueFd&& o) noexcept : fd_(o.release()) {}
    UniqueFd& operator=(UniqueFd&& o) noexcept
    {
        if (this != &o) reset(o.release());
        return *this;
    }
    UniqueFd(const UniqueFd&) = delete;
    UniqueFd& operator=(const UniqueFd&) = delete;
    ~UniqueFd() { reset(); }
    int get() const { return fd_; }
    int release() { return std::exchange(fd_, -1); }
    void reset(int fd = -1)
    {
        if (fd_ >= 0) ::close(fd_);
        fd_ = fd;
    }

private:
    int fd_ = -1;
};

struct SslFree {
    void operator()(SSL* s) const { SSL_free(s); }
};
struct SslCtxFree {
    void operator()(SSL_CTX* c) const { SSL_CTX_free(c); }
};
using SslPtr = std::unique_ptr<SSL, SslFree>;
using SslCtxPtr = std::unique_ptr<SSL_CTX, SslCtxFree>;

// Ids in the epoll data: the listening socket, the wake-up eventfd, then connections.
constexpr uint64_t kListenId = 0;
constexpr uint64_t kWakeId = 1;

enum class Phase {
    Handshake,  // TLS handshake in progress
    Headers,    // waiting for the end of the header block
    Body,       // waiting for Content-Length bytes
    Busy,       // a worker owns it
    Write,      // the loop answered; sending what the socket did not take at once
    Drain,      // an error was answered; discard what the client still sends, then close
};

struct Conn {
    uint64_t id = 0;
    UniqueFd fd;
    SslPtr ssl;
    std::string peer;  // client address, the key of the per-address cap
    int peer_port = 0;
    std::string local;
    int local_port = 0;
    Phase phase = Phase::Headers;
    std::string in;        // received, not yet served
    size_t scanned = 0;    // bytes of `in` searched for the end of the headers
    size_t need = 0;       // header block + body of the current request
    size_t drained = 0;    // bytes discarded in Phase::Drain
    size_t served = 0;     // requests answered on this connection
    TimePoint deadline{};  // of the current phase
    TimePoint idle_deadline = TimePoint::max();  // keep-alive: first byte of the next request
    uint32_t events = 0;                         // current epoll interest (0: not registered)
    std::string out;                             // Phase::Write: the answer made on the loop...
    size_t out_done = 0;                         // ...and how much of it went
    bool keep = false;        // set with an answer: the connection may serve another request
    bool read_ahead = false;  // the worker read from it after its last response
};

// What the loop needs from a request head before it lets a worker parse it.
struct HeadFacts {
    int status = 0;  // nonzero: refuse with this status
    std::string detail;
    size_t content_length = 0;
    bool expect_continue = false;
    size_t expect_line_begin = 0, expect_line_end = 0;  // the Expect header line, to remove it
};

bool iequals(std::string_view a, std::string_view b)
{
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) ==
                      std::tolower(static_cast<unsigned char>(y));
           });
}

std::string_view trim(std::string_view v)
{
    while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
    while (!v.empty() && (v.back() == ' ' || v.back() == '\t' || v.back() == '\r'))
        v.remove_suffix(1);
    return v;
}

// Reads only the framing headers; everything else is httplib's to parse.
HeadFacts inspect_head(std::string_view head, size_t max_body)
{
    HeadFacts f;
    bool have_length = false;
    size_t pos = head.find("\r\n");  // skip the request line
    while (pos != std::string_view::npos && pos + 2 < head.size()) {
        const size_t begin = pos + 2;
        const size_t end = head.find("\r\n", begin);
        if (end == std::string_view::npos || end == begin) break;
        const std::string_view line = head.substr(begin, end - begin);
        pos = end;
        const size_t colon = line.find(':');
        if (colon == std::string_view::npos) continue;  // httplib answers 400
        const std::string_view name = line.substr(0, colon);
        const std::string_view value = trim(line.substr(colon + 1));
        if (iequals(name, "transfer-encoding")) {
            f.status = 411;
            f.detail = "chunked request bodies are not accepted; send Content-Length";
            return f;
        }
        if (iequals(name, "content-length")) {
            if (value.empty() || value.size() > 12 ||
                value.find_first_not_of("0123456789") != std::string_view::npos) {
                f.status = 400;
                f.detail = "malformed Content-Length";
                return f;
            }
            const size_t n = std::stoull(std::string(value));
            if (have_length && n != f.content_length) {
                f.status = 400;
                f.detail = "conflicting Content-Length headers";
                return f;
            }
            have_length = true;
            f.content_length = n;
        }
        if (iequals(name, "expect") && iequals(value, "100-continue")) {
            f.expect_continue = true;
            f.expect_line_begin = begin;
            f.expect_line_end = end + 2;
        }
    }
    if (f.content_length > max_body) {
        f.status = 413;
        f.detail = "request body larger than " + std::to_string(max_body) + " bytes";
    }
    return f;
}

const char* reason(int status)
{
    switch (status) {
        case 400: return "Bad Request";
        case 411: return "Length Required";
        case 413: return "Payload Too Large";
        case 431: return "Request Header Fields Too Large";
        default: return "Error";
    }
}

std::string error_response(int status, const std::string& detail)
{
    const std::string body = scim::error_body(status, status == 413 ? "tooLarge" : "", detail);
    return "HTTP/1.1 " + std::to_string(status) + " " + reason(status) +
           "\r\nContent-Type: application/scim+json\r\nContent-Length: " +
           std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
}

std::pair<std::string, int> address_of(const sockaddr_storage& ss)
{
    char buf[INET6_ADDRSTRLEN] = {0};
    if (ss.ss_family == AF_INET) {
        const auto* a = reinterpret_cast<const sockaddr_in*>(&ss);
        inet_ntop(AF_INET, &a->sin_addr, buf, sizeof buf);
        return {buf, ntohs(a->sin_port)};
    }
    if (ss.ss_family == AF_INET6) {
        const auto* a = reinterpret_cast<const sockaddr_in6*>(&ss);
        inet_ntop(AF_INET6, &a->sin6_addr, buf, sizeof buf);
        return {buf, ntohs(a->sin6_port)};
    }
    return {"unknown", 0};
}

int millis_until(TimePoint t, TimePoint now)
{
    if (t <= now) return 0;
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t - now).count() + 1;
    return static_cast<int>(std::min<int64_t>(ms, 60000));
}

// Waits until fd is ready for `events` or the deadline passes.
bool wait_ready(int fd, short events, TimePoint deadline)
{
    for (;;) {
        const int ms = millis_until(deadline, SteadyClock::now());
        if (ms == 0) return false;
        pollfd p{fd, events, 0};
        const int n = ::poll(&p, 1, ms);
        if (n > 0) return true;
        if (n < 0 && errno != EINTR) return false;
    }
}

// One write without waiting: bytes written (>0); 0 when the socket cannot take
// any now (wait_for: the poll event to wait for); -1 when it failed.
ssize_t write_at_hand(Conn& c, const char* p, size_t n, short& wait_for)
{
    if (c.ssl) {
        ERR_clear_error();
        const int w = SSL_write(c.ssl.get(), p, static_cast<int>(std::min<size_t>(n, 1 << 30)));
        if (w > 0) return w;
        const int e = SSL_get_error(c.ssl.get(), w);
        if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) return -1;
        wait_for = e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT;
        return 0;
    }
    const ssize_t w = ::send(c.fd.get(), p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w > 0) return w;
    if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return -1;
    wait_for = POLLOUT;
    return 0;
}

// The stream handed to httplib: reads come from the request bytes the loop
// collected; writes (httplib writes the head and the body separately) are
// collected, and go out in one piece, one TLS record and one TCP send where
// two would make the client wake twice: by flush() on a worker, under one
// deadline for the whole response, or by the loop after take_output().
class RequestStream final : public httplib_compat::ReadyStream {
public:
    RequestStream(Conn& c, std::string request, std::chrono::seconds write_budget)
        : c_(c), request_(std::move(request)), write_budget_(write_budget)
    {
    }
    bool failed() const { return failed_; }
    std::string take_output() { return std::move(out_); }

    bool is_readable() const override { return pos_ < request_.size(); }
    bool writable() const override { return !failed_; }
    ssize_t read(char* ptr, size_t size) override
    {
        const size_t n = std::min(size, request_.size() - pos_);
        std::memcpy(ptr, request_.data() + pos_, n);
        pos_ += n;
        return static_cast<ssize_t>(n);
    }
    ssize_t write(const char* ptr, size_t size) override
    {
        if (failed_) return -1;
        out_.append(ptr, size);
        return static_cast<ssize_t>(size);
    }
    // Sends what was written; false when the socket failed or the deadline passed.
    bool flush()
    {
        const TimePoint deadline = SteadyClock::now() + write_budget_;
        for (size_t done = 0; !failed_ && done < out_.size();) {
            const ssize_t n = write_some(out_.data() + done, out_.size() - done, deadline);
            if (n < 0)
                failed_ = true;
            else
                done += static_cast<size_t>(n);
        }
        out_.clear();
        return !failed_;
    }
    void get_remote_ip_and_port(std::string& ip, int& port) const override
    {
        ip = c_.peer;
        port = c_.peer_port;
    }
    void get_local_ip_and_port(std::string& ip, int& port) const override
    {
        ip = c_.local;
        port = c_.local_port;
    }
    socket_t socket() const override { return c_.fd.get(); }

private:
    // Some bytes written (>0), or -1 when the socket failed or the deadline passed.
    ssize_t write_some(const char* p, size_t n, TimePoint deadline)
    {
        for (;;) {
            short wait_for = 0;
            const ssize_t w = write_at_hand(c_, p, n, wait_for);
            if (w != 0) return w;
            if (!wait_ready(c_.fd.get(), wait_for, deadline)) return -1;
        }
    }

    Conn& c_;
    std::string request_;
    size_t pos_ = 0;
    std::chrono::seconds write_budget_;
    std::string out_;  // the response, until flush()
    bool failed_ = false;
};

// How one pass of reading into c.in ended.
enum class ReadEnd { Limit, WantRead, WantWrite, Gone };

// Reads what is at hand into c.in, up to `limit` bytes.
ReadEnd read_into(Conn& c, size_t limit)
{
    char buf[16384];
    while (c.in.size() < limit) {
        const size_t want = std::min(sizeof buf, limit - c.in.size());
        if (c.ssl) {
            ERR_clear_error();
            const int n = SSL_read(c.ssl.get(), buf, static_cast<int>(want));
            if (n <= 0) {
                const int e = SSL_get_error(c.ssl.get(), n);
                if (e == SSL_ERROR_WANT_READ) return ReadEnd::WantRead;
                return e == SSL_ERROR_WANT_WRITE ? ReadEnd::WantWrite : ReadEnd::Gone;
            }
            c.in.append(buf, static_cast<size_t>(n));
        } else {
            const ssize_t n = ::recv(c.fd.get(), buf, want, 0);
            if (n <= 0)
                return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
                           ? ReadEnd::WantRead
                           : ReadEnd::Gone;
            c.in.append(buf, static_cast<size_t>(n));
        }
    }
    return ReadEnd::Limit;
}

// The same on a worker (no epoll, no close: the loop does both once it has the
// connection back). false when reading cannot go on here (end of stream, error,
// or TLS wants to write).
bool read_at_hand(Conn& c, size_t limit)
{
    const ReadEnd end = read_into(c, limit);
    return end == ReadEnd::Limit || end == ReadEnd::WantRead;
}

// One event loop: a thread with its own epoll set and the connections it
// accepted. There is one per CPU (at most scim_server.threads), so the reads
// answered on a loop (serve_here) use every core, as a process per CPU would.
// A worker touches only the Conn it was handed; everything else here belongs
// to the loop's thread.
struct Loop {
    explicit Loop(HttpServer::Impl& server) : s(server) {}
    HttpServer::Impl& s;
    UniqueFd epoll;
    UniqueFd wake;  // workers giving connections back, and stop()
    std::map<uint64_t, std::unique_ptr<Conn>> conns;
    uint64_t next_id = 2;
    TimePoint next_sweep = TimePoint::max();
    bool listener_paused = false;
    httplib_compat::Router router;                // answers at hand only (serve_here)
    bool declined = false;                        // the router's last request needs a worker
    int64_t generation = -1;                      // the store's, as last read (-1: read it again)
    std::unique_ptr<StoreChanges> store_changes;  // null: read the generation per request

    std::mutex returned_mu;  // connections workers are done with
    std::vector<uint64_t> returned;

    Result<bool> open();
    bool run();
    void accept_some();
    void on_event(Conn& c, uint32_t events);
    void advance(Conn& c);
    bool step(Conn& c);
    bool handshake(Conn& c);
    bool fill(Conn& c, size_t limit);
    bool take_request(Conn& c);
    bool serve_here(Conn& c);
    bool write_out(Conn& c);
    bool next_request(Conn& c, TimePoint now);
    void dispatch(Conn& c);
    void give_back(uint64_t id);
    void take_back();
    void refuse(Conn& c, int status, const std::string& detail);
    void drain(Conn& c);
    void sweep(TimePoint now);
    void watch(Conn& c, uint32_t events);
    void close(Conn& c);
    void poke();
    bool listen_again();
    bool store_may_have_changed();
    void schedule(TimePoint t) { next_sweep = std::min(next_sweep, t); }
};

}  // namespace

struct HttpServer::Impl {
    Impl(Service& service, ServerOptions options) : service(service), o(std::move(options)) {}

    Service& service;
    ServerOptions o;
    ServerCounters counters;
    httplib_compat::Router router;  // the workers'
    SslCtxPtr tls;
    UniqueFd listener;
    std::atomic<bool> running{false};
    std::atomic<bool> stopping{false};
    std::vector<std::unique_ptr<Loop>> loops;
    std::unique_ptr<httplib::ThreadPool> workers;
    std::atomic<size_t> lingering{0};  // workers waiting for a next request (at most half)

    // The connection caps, shared by the loops.
    std::mutex caps_mu;
    size_t open_connections = 0;
    std::map<std::string, size_t> per_address;
    std::map<std::string, TimePoint> refusal_logged;  // last log line per address (or "*")

    Result<bool> setup_tls();
    void install_handlers(httplib_compat::Router& on, Loop* loop);
    void raise_fd_limit();
    bool admit(const std::string& peer);
    void release(const std::string& peer);
    void log_refusal(const std::string& who, const char* limit, size_t value);
    void serve(Conn& c);
    void serve_one(Conn& c);
    bool next_request_here(Conn& c);
    bool answer(httplib_compat::Router& on, Conn& c, RequestStream& strm);
    void stop_loops();
    std::chrono::seconds secs(int s) const { return std::chrono::seconds(std::max(1, s)); }
};

Result<bool> HttpServer::Impl::setup_tls()
{
    tls.reset(SSL_CTX_new(TLS_server_method()));
    if (!tls) return make_error("TLS: cannot create a context");
    SSL_CTX* ctx = tls.get();
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_options(
        ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION | SSL_OP_CIPHER_SERVER_PREFERENCE);
    // Partial writes and a moving buffer suit the write loops (worker and
    // loop); idle connections give their buffers back.
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
                              SSL_MODE_RELEASE_BUFFERS);
    if (SSL_CTX_use_certificate_chain_file(ctx, o.tls_cert.c_str()) != 1 ||
        SSL_CTX_use_PrivateKey_file(ctx, o.tls_key.c_str(), SSL_FILETYPE_PEM) != 1 ||
        SSL_CTX_check_private_key(ctx) != 1) {
        ERR_clear_error();
        return make_error("TLS: cannot load certificate " + o.tls_cert + " / key " + o.tls_key);
    }
    return true;
}

// The workers' router (loop null) serves anything; a loop's only what the
// service answers at hand, with the generation the loop read for this turn.
void HttpServer::Impl::install_handlers(httplib_compat::Router& on, Loop* loop)
{
    on.set_payload_max_length(o.max_body);
    on.set_keep_alive_timeout(o.keep_alive_seconds);
    on.set_keep_alive_max_count(o.keep_alive_max);
    auto handler = [this, loop](const httplib::Request& req, httplib::Response& res) {
        HttpRequest r;
        if (loop) {
            r.at_hand_only = true;
            r.generation = loop->generation;
        }
        r.method = req.method;
        r.path = req.path;
        for (const auto& [k, v] : req.params) r.query.emplace_back(k, v);
        for (const auto& [k, v] : req.headers) {
            const std::string key = to_lower(k);
            if (!r.headers.count(key)) r.headers[key] = v;
        }
        r.body = req.body;
        r.remote = req.remote_addr;
        HttpResponse out = service.handle(r);
        if (out.status == kNotAtHand) {
            loop->declined = true;  // only a loop's request can be declined
            return;
        }
        res.status = out.status;
        for (const auto& [k, v] : out.headers) res.set_header(k.c_str(), v);
        if (out.status != 204 && out.status != 304)
            res.set_content(out.body, out.content_type.c_str());
        if (o.access_log)
            std::fprintf(stderr, "allot-scimd: %s %s %s %d\n", r.remote.c_str(), r.method.c_str(),
                         r.path.c_str(), out.status);
    };
    on.Get(".*", handler);
    on.Post(".*", handler);
    on.Put(".*", handler);
    on.Patch(".*", handler);
    on.Delete(".*", handler);
    on.set_exception_handler(
        [](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
            res.status = 500;
            res.set_content(scim::error_body(500, "", "internal error"), "application/scim+json");
        });
    // httplib's own refusals (400, 414, unknown method) get a SCIM body too.
    on.set_error_handler([](const httplib::Request&, httplib::Response& res) {
        if (res.body.empty())
            res.set_content(scim::error_body(res.status, res.status == 413 ? "tooLarge" : "",
                                             "request refused by the HTTP layer"),
                            "application/scim+json");
    });
}

// Every connection is a descriptor: take the hard limit, and keep the cap below it.
void HttpServer::Impl::raise_fd_limit()
{
    rlimit rl{};
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return;
    if (rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
        getrlimit(RLIMIT_NOFILE, &rl);
    }
    const size_t usable = rl.rlim_cur > 128 ? static_cast<size_t>(rl.rlim_cur) - 64 : 64;
    o.max_connections = std::min(o.max_connections, usable);
}

// Counts a new connection from `peer` against both caps; false (counted and
// logged as refused) when either is reached.
bool HttpServer::Impl::admit(const std::string& peer)
{
    std::lock_guard<std::mutex> lock(caps_mu);
    if (open_connections >= o.max_connections) {
        ++counters.refused_total_cap;
        log_refusal("*", "max_connections", o.max_connections);
        return false;
    }
    size_t& from_peer = per_address[peer];
    if (from_peer >= o.max_connections_per_address) {
        ++counters.refused_address_cap;
        log_refusal(peer, "max_connections_per_address", o.max_connections_per_address);
        return false;
    }
    ++from_peer;
    ++open_connections;
    return true;
}

void HttpServer::Impl::release(const std::string& peer)
{
    std::lock_guard<std::mutex> lock(caps_mu);
    --open_connections;
    if (auto it = per_address.find(peer); it != per_address.end() && --it->second == 0)
        per_address.erase(it);
}

// One line per address and minute, so a flood cannot flood the log too (caps_mu held).
void HttpServer::Impl::log_refusal(const std::string& who, const char* limit, size_t value)
{
    const TimePoint now = SteadyClock::now();
    if (refusal_logged.size() > 4096) refusal_logged.clear();
    auto [it, fresh] = refusal_logged.emplace(who, now);
    if (!fresh && now - it->second < std::chrono::minutes(1)) return;
    it->second = now;
    std::fprintf(stderr,
                 "allot-scimd: refusing connections from %s: scim_server.%s (%zu) reached\n",
                 who == "*" ? "all clients" : who.c_str(), limit, value);
}

Result<bool> Loop::open()
{
    epoll.reset(epoll_create1(EPOLL_CLOEXEC));
    wake.reset(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
    if (epoll.get() < 0 || wake.get() < 0) return make_error("epoll/eventfd failed");
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = kWakeId;
    epoll_ctl(epoll.get(), EPOLL_CTL_ADD, wake.get(), &ev);
    if (!listen_again()) return make_error("epoll: cannot watch the listening socket");
    s.install_handlers(router, this);
    if (!s.o.store_file.empty()) store_changes = std::make_unique<StoreChanges>(s.o.store_file);
    return true;
}

bool Loop::store_may_have_changed()
{
    return !store_changes || store_changes->changed();
}

// Watches the listening socket; EPOLLEXCLUSIVE wakes one waiting loop per
// connection rather than all of them.
bool Loop::listen_again()
{
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLEXCLUSIVE;
    ev.data.u64 = kListenId;
    listener_paused = epoll_ctl(epoll.get(), EPOLL_CTL_ADD, s.listener.get(), &ev) != 0;
    return !listener_paused;
}

void Loop::poke()
{
    const uint64_t one = 1;
    [[maybe_unused]] ssize_t w = ::write(wake.get(), &one, sizeof one);
}

void Loop::watch(Conn& c, uint32_t events)
{
    if (c.events == events) return;
    epoll_event ev{};
    ev.events = events;
    ev.data.u64 = c.id;
    if (events == 0)
        epoll_ctl(epoll.get(), EPOLL_CTL_DEL, c.fd.get(), nullptr);
    else
        epoll_ctl(epoll.get(), c.events == 0 ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, c.fd.get(), &ev);
    c.events = events;
}

void Loop::close(Conn& c)
{
    watch(c, 0);
    s.release(c.peer);
    conns.erase(c.id);  // closes the socket and frees the TLS state
}

// Takes a few waiting connections: the other loops, woken for the rest, take
// theirs, so a burst of connections spreads over the loops.
void Loop::accept_some()
{
    static constexpr int kPerTurn = 4;
    for (int taken = 0; taken < kPerTurn; ++taken) {
        sockaddr_storage ss{};
        socklen_t len = sizeof ss;
        UniqueFd fd(accept4(s.listener.get(), reinterpret_cast<sockaddr*>(&ss), &len,
                            SOCK_NONBLOCK | SOCK_CLOEXEC));
        if (fd.get() < 0) {
            // Out of descriptors: stop accepting until a connection closes (the
            // next sweep re-arms the listener) instead of spinning on it.
            if (errno == EMFILE || errno == ENFILE) {
                epoll_ctl(epoll.get(), EPOLL_CTL_DEL, s.listener.get(), nullptr);
                listener_paused = true;
                schedule(SteadyClock::now() + std::chrono::milliseconds(100));
            }
            return;  // EAGAIN: all taken
        }
        ++s.counters.accepted;
        auto [peer, peer_port] = address_of(ss);
        if (!s.admit(peer)) continue;  // closed by UniqueFd
        auto c = std::make_unique<Conn>();
        c->id = next_id++;
        c->peer = peer;
        c->peer_port = peer_port;
        sockaddr_storage local{};
        socklen_t local_len = sizeof local;
        if (getsockname(fd.get(), reinterpret_cast<sockaddr*>(&local), &local_len) == 0)
            std::tie(c->local, c->local_port) = address_of(local);
        const int one = 1;
        setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        c->fd = std::move(fd);
        if (s.tls) {
            c->ssl.reset(SSL_new(s.tls.get()));
            if (!c->ssl || SSL_set_fd(c->ssl.get(), c->fd.get()) != 1) {
                s.release(peer);
                continue;
            }
            SSL_set_accept_state(c->ssl.get());
            c->phase = Phase::Handshake;
        }
        c->deadline = SteadyClock::now() + s.secs(s.o.header_timeout_seconds);
        schedule(c->deadline);
        Conn& ref = *c;
        conns.emplace(ref.id, std::move(c));
        watch(ref, EPOLLIN);
    }
}

// false: the connection failed or the handshake needs more I/O (watch set).
bool Loop::handshake(Conn& c)
{
    ERR_clear_error();
    const int r = SSL_do_handshake(c.ssl.get());
    if (r == 1) {
        c.phase = Phase::Headers;
        watch(c, EPOLLIN);
        return true;
    }
    const int e = SSL_get_error(c.ssl.get(), r);
    if (e == SSL_ERROR_WANT_READ)
        watch(c, EPOLLIN);
    else if (e == SSL_ERROR_WANT_WRITE)
        watch(c, EPOLLOUT);
    else
        close(c);
    return false;
}

// Reads what is available, up to `limit` bytes in c.in. false: the connection is gone.
bool Loop::fill(Conn& c, size_t limit)
{
    switch (read_into(c, limit)) {
        case ReadEnd::Limit: return true;
        case ReadEnd::WantRead: watch(c, EPOLLIN); return true;
        case ReadEnd::WantWrite: watch(c, EPOLLOUT); return true;
        case ReadEnd::Gone: break;
    }
    close(c);  // EOF or error
    return false;
}

void Loop::refuse(Conn& c, int status, const std::string& detail)
{
    ++s.counters.refused_requests;
    const std::string resp = error_response(status, detail);
    // One best-effort write: the response is small and the socket buffer empty.
    if (c.ssl) {
        ERR_clear_error();
        SSL_write(c.ssl.get(), resp.data(), static_cast<int>(resp.size()));
        SSL_shutdown(c.ssl.get());
    } else {
        ::send(c.fd.get(), resp.data(), resp.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    // Closing with unread input would reset the connection before the client
    // reads our answer: half-close, then discard what it still sends, bounded.
    ::shutdown(c.fd.get(), SHUT_WR);
    c.phase = Phase::Drain;
    c.in.clear();
    c.drained = 0;
    c.deadline = SteadyClock::now() + s.secs(std::min(s.o.header_timeout_seconds, 5));
    schedule(c.deadline);
    watch(c, EPOLLIN);
}

void Loop::drain(Conn& c)
{
    const size_t budget = std::max<size_t>(1 << 20, 4 * s.o.max_body);
    char buf[16384];
    for (;;) {
        const ssize_t n = ::recv(c.fd.get(), buf, sizeof buf, 0);  // raw bytes; TLS is over
        if (n > 0) {
            c.drained += static_cast<size_t>(n);
            if (c.drained > budget) break;
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
        break;
    }
    close(c);
}

// The header block is complete in c.in: check the framing, then wait for the
// body. false: the request was refused or the connection is gone.
bool Loop::take_request(Conn& c)
{
    const size_t end = c.in.find("\r\n\r\n");
    const size_t head_len = end + 4;
    HeadFacts f = inspect_head(std::string_view(c.in).substr(0, head_len), s.o.max_body);
    if (f.status) {
        refuse(c, f.status, f.detail);
        return false;
    }
    if (f.expect_continue) {
        // Answer it here, so the client sends the body now; httplib must not answer it again.
        c.in.erase(f.expect_line_begin, f.expect_line_end - f.expect_line_begin);
        const size_t shorter = head_len - (f.expect_line_end - f.expect_line_begin);
        if (c.in.size() < shorter + f.content_length) {
            static const char kContinue[] = "HTTP/1.1 100 Continue\r\n\r\n";
            const bool sent = c.ssl ? SSL_write(c.ssl.get(), kContinue, sizeof kContinue - 1) ==
                                          static_cast<int>(sizeof kContinue - 1)
                                    : ::send(c.fd.get(), kContinue, sizeof kContinue - 1,
                                             MSG_NOSIGNAL | MSG_DONTWAIT) ==
                                          static_cast<ssize_t>(sizeof kContinue - 1);
            if (!sent) {
                close(c);
                return false;
            }
        }
        c.need = shorter + f.content_length;
    } else {
        c.need = head_len + f.content_length;
    }
    c.phase = Phase::Body;
    c.deadline = SteadyClock::now() + s.secs(s.o.body_timeout_seconds);
    schedule(c.deadline);
    return true;
}

// Moves a connection forward as far as the bytes at hand allow: a loop, not
// recursion, since a client may pipeline many requests in one read.
void Loop::advance(Conn& c)
{
    while (step(c)) {
    }
}

// One phase's worth of progress; true when the next phase can go on at once.
bool Loop::step(Conn& c)
{
    switch (c.phase) {
        case Phase::Drain: drain(c); return false;
        case Phase::Handshake: return handshake(c);
        case Phase::Write: return write_out(c);
        case Phase::Busy: return false;
        case Phase::Headers: {
            if (!fill(c, s.o.max_header_bytes + 1)) return false;
            if (!c.in.empty()) c.idle_deadline = TimePoint::max();
            const size_t from = c.scanned >= 3 ? c.scanned - 3 : 0;
            if (c.in.find("\r\n\r\n", from) != std::string::npos) return take_request(c);
            c.scanned = c.in.size();
            if (c.in.size() > s.o.max_header_bytes)
                refuse(c, 431,
                       "request headers larger than " + std::to_string(s.o.max_header_bytes) +
                           " bytes");
            return false;
        }
        case Phase::Body:
            if (c.in.size() < c.need && !fill(c, c.need)) return false;
            if (c.in.size() < c.need) return false;
            if (serve_here(c)) return true;
            dispatch(c);
            return false;
    }
    return false;
}

void Loop::on_event(Conn& c, uint32_t events)
{
    if (c.phase == Phase::Busy) return;
    if ((events & (EPOLLERR | EPOLLHUP)) && !(events & EPOLLIN)) return close(c);
    advance(c);
}

// A GET the service can answer from memory (HttpRequest::at_hand_only) is
// answered here on the loop: no hand-off to a worker thread and back, which
// cost more than the answer. false: a worker must serve it (nothing consumed).
bool Loop::serve_here(Conn& c)
{
    if (c.in.compare(0, 4, "GET ") != 0) return false;
    if (store_may_have_changed() || generation < 0) {
        auto g = s.service.store_generation();
        generation = g ? g.value() : -1;
        if (!g) return false;  // a worker meets the error and answers it
    }
    RequestStream strm(c, c.in.substr(0, c.need), s.secs(s.o.write_timeout_seconds));
    declined = false;
    const bool keep = s.answer(router, c, strm);
    if (declined) return false;
    c.in.erase(0, c.need);
    ++c.served;
    c.keep = keep;
    ++s.counters.answered_on_loops;
    c.out = strm.take_output();
    c.out_done = 0;
    c.phase = Phase::Write;
    c.deadline = SteadyClock::now() + s.secs(s.o.write_timeout_seconds);
    schedule(c.deadline);
    return true;
}

// Sends what the socket takes of an answer made on the loop. true: all of it
// went and the connection waits for its next request (see next_request()).
bool Loop::write_out(Conn& c)
{
    while (c.out_done < c.out.size()) {
        short wait_for = 0;
        const ssize_t n =
            write_at_hand(c, c.out.data() + c.out_done, c.out.size() - c.out_done, wait_for);
        if (n < 0) {
            close(c);
            return false;
        }
        if (n == 0) {
            watch(c, wait_for == POLLIN ? EPOLLIN : EPOLLOUT);
            return false;
        }
        c.out_done += static_cast<size_t>(n);
    }
    std::string().swap(c.out);  // an idle connection keeps no answer's buffer
    c.out_done = 0;
    return next_request(c, SteadyClock::now());
}

// After an answer: closes the connection, or waits for its next request.
// true when bytes of it may be at hand already (pipelined, or TLS records
// decrypted), which raise no event.
bool Loop::next_request(Conn& c, TimePoint now)
{
    if (!c.keep || s.stopping.load()) {
        close(c);
        return false;
    }
    c.phase = Phase::Headers;
    c.scanned = 0;
    c.need = 0;
    c.deadline = now + s.secs(s.o.header_timeout_seconds);
    c.idle_deadline = c.in.empty() ? now + s.secs(s.o.keep_alive_seconds) : TimePoint::max();
    schedule(std::min(c.deadline, c.idle_deadline));
    watch(c, EPOLLIN);
    return !c.in.empty() || (c.ssl && SSL_pending(c.ssl.get()) > 0);
}

void Loop::dispatch(Conn& c)
{
    watch(c, 0);
    c.phase = Phase::Busy;
    Conn* p = &c;
    s.workers->enqueue([this, p] {
        s.serve(*p);
        give_back(p->id);
    });
}

// On a worker thread: the connection is the loop's again.
void Loop::give_back(uint64_t id)
{
    {
        std::lock_guard<std::mutex> lock(returned_mu);
        returned.push_back(id);
    }
    poke();
}

// On the loop thread: connections whose request was answered.
void Loop::take_back()
{
    uint64_t count = 0;
    [[maybe_unused]] ssize_t r = ::read(wake.get(), &count, sizeof count);
    std::vector<uint64_t> ids;
    {
        std::lock_guard<std::mutex> lock(returned_mu);
        ids.swap(returned);
    }
    const TimePoint now = SteadyClock::now();
    for (uint64_t id : ids) {
        auto it = conns.find(id);
        if (it == conns.end()) continue;
        Conn& c = *it->second;
        const bool read_ahead = c.read_ahead;
        if (next_request(c, now) || (read_ahead && conns.count(id))) advance(c);
    }
}

void Loop::sweep(TimePoint now)
{
    next_sweep = TimePoint::max();
    std::vector<Conn*> late;
    for (auto& [id, c] : conns) {
        if (c->phase == Phase::Busy) continue;
        if (now >= c->deadline || now >= c->idle_deadline)
            late.push_back(c.get());
        else
            schedule(std::min(c->deadline, c->idle_deadline));
    }
    for (Conn* c : late) {
        if (c->phase == Phase::Body)
            ++s.counters.body_timeouts;
        else if (now >= c->idle_deadline)
            ++s.counters.idle_closed;
        else if (c->phase != Phase::Drain && c->phase != Phase::Write)
            ++s.counters.header_timeouts;
        close(*c);
    }
    if (listener_paused) listen_again();
    if (listener_paused) schedule(now + std::chrono::milliseconds(100));
}

bool Loop::run()
{
    std::vector<epoll_event> events(256);
    while (!s.stopping.load()) {
        const TimePoint now = SteadyClock::now();
        if (now >= next_sweep) sweep(now);
        const int timeout = next_sweep == TimePoint::max() ? -1 : millis_until(next_sweep, now);
        const int n =
            epoll_wait(epoll.get(), events.data(), static_cast<int>(events.size()), timeout);
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        for (int i = 0; i < n; ++i) {
            const uint64_t id = events[i].data.u64;
            if (id == kListenId) {
                accept_some();
            } else if (id == kWakeId) {
                take_back();
            } else if (auto it = conns.find(id); it != conns.end()) {
                on_event(*it->second, events[i].events);
            }
        }
    }
    return true;
}

void HttpServer::Impl::stop_loops()
{
    if (stopping.exchange(true)) return;
    for (auto& loop : loops) loop->poke();
}

// On a worker thread: the request is all in c.in; then the next ones while
// they come at once.
void HttpServer::Impl::serve(Conn& c)
{
    c.read_ahead = false;
    do serve_one(c);
    while (next_request_here(c));
}

// After a kept response: the client's next request, if it arrives within
// kLinger, whole and with a body (an IdP's writes come in bursts), is served
// by this worker. That saves handing the connection to the loop and back, two
// thread wake-ups. Anything else goes back to the loop with the bytes read:
// a GET, which the loop answers from memory when it can; partial, refused or
// Expect requests. So a slow client holds a thread kLinger at most; half the
// workers at most linger, so the others take what the loops dispatch meanwhile.
bool HttpServer::Impl::next_request_here(Conn& c)
{
    static constexpr auto kLinger = std::chrono::milliseconds(1);
    if (!c.keep || stopping.load()) return false;
    if (lingering.fetch_add(1) >= std::max<size_t>(1, o.worker_threads / 2)) {
        --lingering;
        return false;
    }
    struct Done {
        std::atomic<size_t>& n;
        ~Done() { --n; }
    } done{lingering};
    const TimePoint until = SteadyClock::now() + kLinger;
    for (;;) {
        c.read_ahead = true;
        if (!read_at_hand(c, o.max_header_bytes + 1)) return false;
        const size_t end = c.in.find("\r\n\r\n");
        if (end != std::string::npos) {
            if (c.in.compare(0, 4, "GET ") == 0) return false;
            const HeadFacts f = inspect_head(std::string_view(c.in).substr(0, end + 4), o.max_body);
            c.need = end + 4 + f.content_length;
            return !f.status && !f.expect_continue && c.in.size() >= c.need;
        }
        if (c.in.size() > o.max_header_bytes) return false;
        if (!(c.ssl && SSL_pending(c.ssl.get()) > 0) && !wait_ready(c.fd.get(), POLLIN, until))
            return false;
    }
}

void HttpServer::Impl::serve_one(Conn& c)
{
    RequestStream strm(c, c.in.substr(0, c.need), secs(o.write_timeout_seconds));
    c.in.erase(0, c.need);
    const bool keep = answer(router, c, strm);
    const bool sent = strm.flush();
    ++c.served;
    c.keep = keep && sent;
}

// Runs `on` over the request in `strm`, the answer collected there; true when
// the connection may serve another request (keep-alive bound, stopping, the
// client's or httplib's "Connection: close").
bool HttpServer::Impl::answer(httplib_compat::Router& on, Conn& c, RequestStream& strm)
{
    const bool last = c.served + 1 >= o.keep_alive_max || stopping.load();
    bool closed = false;
    const bool ok = on.serve(strm, {c.peer, c.peer_port, c.local, c.local_port}, last, closed);
    return ok && !closed && !last;
}

std::string server_metrics(const ServerCounters& c)
{
    std::string m;
    append_counter(m, "allot_scimd_connections_accepted_total", "connections accepted",
                   {{"", c.accepted}});
    append_counter(m, "allot_scimd_connections_refused_total",
                   "connections closed at once for a scim_server cap",
                   {{"{cap=\"max_connections\"}", c.refused_total_cap},
                    {"{cap=\"max_connections_per_address\"}", c.refused_address_cap}});
    append_counter(
        m, "allot_scimd_connections_cut_total",
        "connections closed for a deadline (TLS handshake and headers, body, keep-alive idle)",
        {{"{deadline=\"headers\"}", c.header_timeouts},
         {"{deadline=\"body\"}", c.body_timeouts},
         {"{deadline=\"idle\"}", c.idle_closed}});
    append_counter(m, "allot_scimd_requests_refused_by_front_end_total",
                   "requests refused before a handler saw them (400, 411, 413, 431)",
                   {{"", c.refused_requests}});
    append_counter(m, "allot_scimd_requests_answered_on_loops_total",
                   "reads answered on an event loop from memory, without a worker thread",
                   {{"", c.answered_on_loops}});
    return m;
}

Result<std::pair<std::string, int>> parse_listen(const std::string& listen)
{
    std::string host;
    std::string port;
    if (!listen.empty() && listen[0] == '[') {
        const size_t close = listen.find(']');
        if (close == std::string::npos || close + 1 >= listen.size() || listen[close + 1] != ':')
            return make_error("listen: expected [addr]:port");
        host = listen.substr(1, close - 1);
        port = listen.substr(close + 2);
    } else {
        const size_t colon = listen.rfind(':');
        if (colon == std::string::npos) return make_error("listen: expected host:port");
        host = listen.substr(0, colon);
        port = listen.substr(colon + 1);
    }
    if (port.empty() || port.size() > 5 ||
        port.find_first_not_of("0123456789") != std::string::npos || std::stoi(port) > 65535)
        return make_error("listen: bad port '" + port + "'");
    return std::make_pair(host, std::stoi(port));
}

HttpServer::HttpServer(Service& service, ServerOptions options)
    : impl_(std::make_unique<Impl>(service, std::move(options)))
{
}

HttpServer::~HttpServer()
{
    stop();
}

const ServerCounters& HttpServer::counters() const
{
    return impl_->counters;
}

Result<int> HttpServer::bind()
{
    Impl& s = *impl_;
    if (!s.o.tls_cert.empty() || !s.o.tls_key.empty()) {
        auto t = s.setup_tls();
        if (!t) return t.error();
    }
    s.install_handlers(s.router, nullptr);
    s.raise_fd_limit();
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    addrinfo* found = nullptr;
    const std::string port = std::to_string(s.o.port);
    const std::string where = s.o.host + ":" + port;
    if (getaddrinfo(s.o.host.c_str(), port.c_str(), &hints, &found) != 0 || !found)
        return make_error("cannot resolve " + where);
    std::unique_ptr<addrinfo, void (*)(addrinfo*)> list(found, freeaddrinfo);
    for (addrinfo* a = found; a; a = a->ai_next) {
        UniqueFd fd(
            ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol));
        if (fd.get() < 0) continue;
        const int one = 1;
        setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (::bind(fd.get(), a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd.get(), 1024) == 0) {
            s.listener = std::move(fd);
            break;
        }
    }
    if (s.listener.get() < 0) return make_error("cannot listen on " + where);
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    getsockname(s.listener.get(), reinterpret_cast<sockaddr*>(&ss), &len);
    const size_t loops = s.o.event_loops ? s.o.event_loops
                                         : std::max<size_t>(1, std::thread::hardware_concurrency());
    for (size_t i = 0; i < loops; ++i) {
        auto loop = std::make_unique<Loop>(s);
        auto opened = loop->open();
        if (!opened) return opened.error();
        s.loops.push_back(std::move(loop));
    }
    return address_of(ss).second;
}

bool HttpServer::run()
{
    Impl& s = *impl_;
    if (s.listener.get() < 0) return false;
    s.workers = std::make_unique<httplib::ThreadPool>(std::max<size_t>(1, s.o.worker_threads));
    s.running = true;
    // The first loop runs on this thread, the others on their own.
    std::vector<std::thread> others;
    std::atomic<bool> all_ok{true};
    auto run_loop = [&s, &all_ok](Loop& loop) {
        if (loop.run()) return;
        all_ok = false;
        s.stop_loops();  // one failed: all stop
    };
    for (size_t i = 1; i < s.loops.size(); ++i)
        others.emplace_back([&run_loop, &loop = *s.loops[i]] { run_loop(loop); });
    run_loop(*s.loops[0]);
    for (auto& t : others) t.join();
    // Workers finish the requests they hold (their writes are bounded by the
    // write timeout); then every connection closes.
    s.workers->shutdown();
    for (auto& loop : s.loops) loop->conns.clear();
    s.per_address.clear();
    s.open_connections = 0;
    s.running = false;
    return all_ok;
}

void HttpServer::stop()
{
    impl_->stop_loops();
}

bool HttpServer::running() const
{
    return impl_->running.load();
}

}  // namespace allot::scimd
