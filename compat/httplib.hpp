// compat/httplib.hpp - the two cpp-httplib internals allot-scimd's front end drives,
// the same for every release Debian ships (bookworm 0.11, trixie 0.18, sid 0.41).
//
// The front end reads each request whole itself (scim/server.hpp), then lets httplib
// route and answer it: through Server::process_request, protected and called from a
// subclass, on a Stream of its own. Both changed upstream; configure decides how
// (m4/allot_httplib.m4) and only this header reads those defines.
#pragma once

#include "config.h"

#include <httplib.h>

#include <ctime>
#include <string>

namespace allot::httplib_compat {

// A Stream over a request already read: the subclass says whether the response can
// still be written (writable()); reading never waits, as every byte is at hand.
class ReadyStream : public httplib::Stream {
public:
    virtual bool writable() const = 0;
#ifdef HAVE_HTTPLIB_STREAM_IS_WRITABLE
    bool is_writable() const override
    {
        return writable();
    }
#endif
#ifdef HAVE_HTTPLIB_STREAM_WAIT_WRITABLE
    bool wait_readable() const override
    {
        return is_readable();
    }
    bool wait_writable() const override
    {
        return writable();
    }
#endif
#ifdef HAVE_HTTPLIB_STREAM_DURATION
    // Time spent on this request so far, for httplib's own overall timeout: none, as
    // the front end keeps its own deadlines.
    time_t duration() const override
    {
        return 0;
    }
#endif
};

// httplib::Server whose request processing is driven one request at a time.
class Router : public httplib::Server {
public:
    struct Peer {
        std::string remote;
        int remote_port = 0;
        std::string local;
        int local_port = 0;
    };
    bool serve(httplib::Stream& strm, const Peer& peer, bool close_connection,
               bool& connection_closed)
    {
#ifdef HAVE_HTTPLIB_PROCESS_REQUEST_ADDRESSES
        return process_request(strm, peer.remote, peer.remote_port, peer.local, peer.local_port,
                               close_connection, connection_closed, nullptr);
#else
        (void)peer;  // 0.11 asks the stream (get_remote_ip_and_port)
        return process_request(strm, close_connection, connection_closed, nullptr);
#endif
    }
};

}  // namespace allot::httplib_compat
