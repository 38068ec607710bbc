// server.hpp - the HTTP(S) front end of allot-scimd.
//
// Event loops (one per CPU, at most scim_server.threads) own the connections:
// each accepts from the shared listening socket, runs TLS handshakes without
// blocking, reads with per-connection deadlines, and counts connections
// against the caps (total and per client address, shared by the loops). Once
// a whole request (headers and body) has arrived:
//
// * a GET the service can answer from memory (a cached token and the
//   pre-rendered users: HttpRequest::at_hand_only) is answered on the loop,
//   which re-reads the store's generation only after a commit changed the
//   store's WAL index (store_changes.hpp); the answer is written without
//   blocking (the rest on EPOLLOUT, under the write deadline);
// * anything else goes to a worker thread, which runs cpp-httplib's request
//   processing and Service::handle(), writes the response under a deadline,
//   and gives a keep-alive connection back to its loop, unless the client's
//   next request arrives whole within a millisecond (then the same worker
//   serves it).
//
// So a slow or dripping client holds a file descriptor and a few kilobytes, a
// thread for that millisecond at most, and a normal request never queues
// behind it; and the common reads cost one wake-up, not a hand-off between
// threads.
//
// cpp-httplib 0.11 (Debian 12) cannot do this itself: its accept loop hands a
// socket to a pool thread that runs the TLS handshake and reads with a
// per-read timeout only, so N drippers hold N threads for as long as they
// keep dripping.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "allot/result.hpp"
#include "service.hpp"

namespace allot::scimd {

struct ServerOptions {
    std::string host = "127.0.0.1";
    int port = 8443;
    std::string tls_cert;  // both empty: plain HTTP
    std::string tls_key;
    size_t event_loops = 0;  // threads owning connections (0: one per CPU)
    // The SQLite file the service reads: the loops re-read the store's
    // generation only after its WAL index changed (store_changes.hpp). Empty:
    // they read it for every request they answer.
    std::string store_file;
    size_t worker_threads = 32;  // run handlers on requests that have fully arrived
    size_t max_body = 1 << 20;
    size_t max_header_bytes = 64 * 1024;
    // From accept (or the end of the previous response) to the end of the
    // headers, TLS handshake included; then from there to the end of the body;
    // then for writing the whole response.
    int header_timeout_seconds = 10;
    int body_timeout_seconds = 30;
    int write_timeout_seconds = 10;
    int keep_alive_seconds = 5;  // idle time allowed between requests
    size_t keep_alive_max = 1000;
    size_t max_connections = 1024;
    size_t max_connections_per_address = 64;
    bool access_log = false;
};

// What the front end refused or cut, for /metrics and tests.
struct ServerCounters {
    std::atomic<uint64_t> accepted{0};
    std::atomic<uint64_t> refused_total_cap{0};    // max_connections reached
    std::atomic<uint64_t> refused_address_cap{0};  // max_connections_per_address reached
    std::atomic<uint64_t> header_timeouts{0};      // handshake or headers too slow
    std::atomic<uint64_t> body_timeouts{0};
    std::atomic<uint64_t> idle_closed{0};        // keep-alive connections idle too long
    std::atomic<uint64_t> refused_requests{0};   // 400/411/413/431 from the front end
    std::atomic<uint64_t> answered_on_loops{0};  // reads answered at hand, without a worker
};

// The counters in Prometheus' text format, for the service's /metrics.
std::string server_metrics(const ServerCounters& c);

// "host:port", "[v6]:port"; port 0 means any.
Result<std::pair<std::string, int>> parse_listen(const std::string& listen);

class HttpServer {
public:
    HttpServer(Service& service, ServerOptions options);
    ~HttpServer();
    HttpServer(const HttpServer&) = delete;
    HttpServer& operator=(const HttpServer&) = delete;

    Result<int> bind();  // the bound port
    bool run();          // blocks until stop()
    void stop();         // from any thread
    bool running() const;
    const ServerCounters& counters() const;

    struct Impl;

private:
    std::unique_ptr<Impl> impl_;
};

}  // namespace allot::scimd
