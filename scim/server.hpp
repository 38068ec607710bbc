// server.hpp - the HTTP(S) front end of allot-scimd on cpp-httplib.
//
// It only moves bytes between sockets and Service::handle(). Limits that keep
// one client from hurting the others are set here: body size (413 before the
// body is read), per-read/per-write timeouts so a stalled or dripping client
// is cut off, a bounded keep-alive, and a pool of connection threads much
// larger than the CPU count so slow clients occupy idle threads, not the
// ones serving others.
#pragma once

#include <memory>
#include <string>

#include "allot/result.hpp"
#include "service.hpp"

namespace httplib {
class Server;
}

namespace allot::scimd {

struct ServerOptions {
    std::string host = "127.0.0.1";
    int port = 8443;
    std::string tls_cert;  // both empty: plain HTTP
    std::string tls_key;
    size_t connection_threads = 128;
    size_t max_body = 1 << 20;
    int read_timeout_seconds = 5;
    int write_timeout_seconds = 5;
    int keep_alive_seconds = 5;
    size_t keep_alive_max = 1000;
    bool access_log = false;
    // TLS only: all header bytes of one request, and the time from the end of the
    // previous request to the end of reading this one (see server.cpp).
    size_t max_header_bytes = 64 * 1024;
    int request_deadline_seconds = 30;
};

// Connections cut for exceeding the per-request byte or time budget.
uint64_t cut_connections();

// "host:port", "[v6]:port"; port 0 means any.
Result<std::pair<std::string, int>> parse_listen(const std::string& listen);

class HttpServer {
public:
    HttpServer(Service& service, ServerOptions options);
    ~HttpServer();
    Result<int> bind();  // the bound port
    bool run();          // blocks until stop()
    void stop();
    bool running() const;

private:
    Service& service_;
    ServerOptions o_;
    std::unique_ptr<httplib::Server> svr_;
};

}  // namespace allot::scimd
