// server.cpp - see server.hpp.
#include "server.hpp"

#include <httplib.h>

#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <cstdio>

#include "util.hpp"

namespace allot::scimd {
namespace {

// cpp-httplib 0.11 bounds each header line and the body, but not the number of
// header lines nor the total time a request may take: a client could stream
// headers forever (memory) or drip bytes to hold a thread. On TLS connections we
// watch every received record (SSL msg callback, on the reading thread) and cut
// the socket when the bytes or the time spent on the current request exceed
// the budget; the handler resets the budget after each request.
struct RequestBudget {
    size_t bytes = 0;
    std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
    bool cut = false;
};

std::atomic<int> g_budget_index{-1};
size_t g_max_request_bytes = 0;
std::chrono::seconds g_request_deadline{30};
std::atomic<uint64_t> g_cut_connections{0};
thread_local SSL* t_ssl = nullptr;

void free_budget(void*, void* ptr, CRYPTO_EX_DATA*, int, long, void*)
{
    delete static_cast<RequestBudget*>(ptr);
}

void on_tls_record(int write_p, int, int content_type, const void* buf, size_t len, SSL* ssl, void*)
{
    if (write_p || content_type != SSL3_RT_HEADER || len < 5) return;
    t_ssl = ssl;
    const int index = g_budget_index.load();
    auto* b = static_cast<RequestBudget*>(SSL_get_ex_data(ssl, index));
    if (!b) {
        b = new RequestBudget;
        if (SSL_set_ex_data(ssl, index, b) != 1) {
            delete b;
            return;
        }
    }
    const auto* h = static_cast<const unsigned char*>(buf);
    b->bytes += 5 + ((static_cast<size_t>(h[3]) << 8) | h[4]);
    if (!b->cut && (b->bytes > g_max_request_bytes ||
                    std::chrono::steady_clock::now() - b->start > g_request_deadline)) {
        b->cut = true;
        ++g_cut_connections;
        shutdown(SSL_get_fd(ssl), SHUT_RDWR);  // the pending read fails; httplib closes
    }
}

void reset_budget()
{
    if (!t_ssl || g_budget_index.load() < 0) return;
    if (auto* b = static_cast<RequestBudget*>(SSL_get_ex_data(t_ssl, g_budget_index.load()))) {
        b->bytes = 0;
        b->start = std::chrono::steady_clock::now();
    }
}

}  // namespace

uint64_t cut_connections()
{
    return g_cut_connections.load();
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
    : service_(service), o_(std::move(options))
{
}

HttpServer::~HttpServer()
{
    stop();
}

Result<int> HttpServer::bind()
{
    if (!o_.tls_cert.empty() || !o_.tls_key.empty()) {
        auto tls = std::make_unique<httplib::SSLServer>(o_.tls_cert.c_str(), o_.tls_key.c_str());
        if (!tls->is_valid())
            return make_error("TLS: cannot load certificate " + o_.tls_cert + " / key " +
                              o_.tls_key);
        // TLS 1.2+ only.
        SSL_CTX_set_min_proto_version(tls->ssl_context(), TLS1_2_VERSION);
        if (g_budget_index.load() < 0)
            g_budget_index = SSL_get_ex_new_index(0, nullptr, nullptr, nullptr, free_budget);
        // httplib drains an over-long body to answer 413 on a live connection; allow
        // a few times the limit for that before cutting the connection instead.
        g_max_request_bytes = 4 * o_.max_body + o_.max_header_bytes;
        g_request_deadline = std::chrono::seconds(o_.request_deadline_seconds);
        SSL_CTX_set_msg_callback(tls->ssl_context(), on_tls_record);
        svr_ = std::move(tls);
    } else {
        svr_ = std::make_unique<httplib::Server>();
    }
    const size_t threads = o_.connection_threads;
    svr_->new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
    svr_->set_payload_max_length(o_.max_body);
    // Headers and body go out in separate writes; without this, Nagle + delayed ACK add ~40 ms.
    svr_->set_tcp_nodelay(true);
    svr_->set_read_timeout(o_.read_timeout_seconds, 0);
    svr_->set_write_timeout(o_.write_timeout_seconds, 0);
    svr_->set_keep_alive_timeout(o_.keep_alive_seconds);
    svr_->set_keep_alive_max_count(o_.keep_alive_max);
    auto handler = [this](const httplib::Request& req, httplib::Response& res) {
        HttpRequest r;
        r.method = req.method;
        r.path = req.path;
        for (const auto& [k, v] : req.params) r.query.emplace_back(k, v);
        for (const auto& [k, v] : req.headers) {
            const std::string key = to_lower(k);
            if (!r.headers.count(key)) r.headers[key] = v;
        }
        r.body = req.body;
        r.remote = req.remote_addr;
        HttpResponse out = service_.handle(r);
        reset_budget();  // the next request on this connection gets a fresh budget
        res.status = out.status;
        for (const auto& [k, v] : out.headers) res.set_header(k.c_str(), v);
        if (out.status != 204 && out.status != 304)
            res.set_content(out.body, out.content_type.c_str());
        if (o_.access_log)
            std::fprintf(stderr, "allot-scimd: %s %s %s %d\n", r.remote.c_str(), r.method.c_str(),
                         r.path.c_str(), out.status);
    };
    for (const char* pattern : {".*"}) {
        svr_->Get(pattern, handler);
        svr_->Post(pattern, handler);
        svr_->Put(pattern, handler);
        svr_->Patch(pattern, handler);
        svr_->Delete(pattern, handler);
    }
    svr_->set_exception_handler(
        [](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
            res.status = 500;
            res.set_content(scim::error_body(500, "", "internal error"), "application/scim+json");
        });
    // httplib's own refusals (413, 400, unknown method) get a SCIM body too.
    svr_->set_error_handler([](const httplib::Request&, httplib::Response& res) {
        if (res.body.empty())
            res.set_content(scim::error_body(res.status, res.status == 413 ? "tooLarge" : "",
                                             "request refused by the HTTP layer"),
                            "application/scim+json");
    });
    const int port = o_.port == 0 ? svr_->bind_to_any_port(o_.host.c_str())
                                  : (svr_->bind_to_port(o_.host.c_str(), o_.port) ? o_.port : -1);
    if (port < 0) return make_error("cannot listen on " + o_.host + ":" + std::to_string(o_.port));
    return port;
}

bool HttpServer::run()
{
    return svr_ && svr_->listen_after_bind();
}

void HttpServer::stop()
{
    if (svr_ && svr_->is_running()) svr_->stop();
}

bool HttpServer::running() const
{
    return svr_ && svr_->is_running();
}

}  // namespace allot::scimd
