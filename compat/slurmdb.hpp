// compat/slurmdb.hpp - slurmdbd through libslurm's slurmdb API, as allot-report and
// allot-syncd use it: a connection without Nagle's delay, one owned connection, and the
// few libslurm globals the installed headers leave undeclared.
#pragma once

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "compat/slurm.hpp"

extern "C" {
// src/common/read_config.c: the parsed slurm.conf after slurm_init(), exported by libslurm
// in every release since 20.11 and never declared in the installed headers. Read-only here
// (the cluster name allot-report asks slurmdbd about).
extern slurm_conf_t slurm_conf;
}

namespace allot::slurm_compat {

// This process's open TCP sockets.
inline std::set<int> tcp_sockets()
{
    std::set<int> out;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd", ec)) {
        const int fd = atoi(e.path().filename().c_str());
        int proto = 0;
        socklen_t len = sizeof proto;
        if (getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &len) == 0 && proto == IPPROTO_TCP)
            out.insert(fd);
    }
    return out;
}

// slurmdb_connection_get(), with TCP_NODELAY on the socket it opens. libslurm sends each
// request as a 4-byte length and then the body on a socket without it, so the body waits
// for slurmdbd's delayed ACK: ~40 ms a call whatever its size (bench/sync-scale/README.md).
// libslurm gives no handle on its socket: the TCP sockets that appear during the call get it.
inline void* connection_get_without_nagle(uint16_t* flags)
{
    const std::set<int> before = tcp_sockets();
    void* conn = slurmdb_connection_get(flags);
    const int one = 1;
    for (int fd : tcp_sockets())
        if (!before.count(fd)) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return conn;
}

// One persistent slurmdbd connection, closed once.
class DbConnection {
public:
    DbConnection()
    {
        uint16_t flags = 0;
        conn_ = connection_get_without_nagle(&flags);
    }
    ~DbConnection()
    {
        if (conn_) slurmdb_connection_close(&conn_);
    }
    DbConnection(const DbConnection&) = delete;
    DbConnection& operator=(const DbConnection&) = delete;
    void* get() const { return conn_; }

private:
    void* conn_ = nullptr;
};

// The cluster this host's slurm.conf names (ClusterName); empty before slurm_init().
inline const char* local_cluster_name()
{
    return slurm_conf.cluster_name ? slurm_conf.cluster_name : "";
}

// Ask slurmdbd for deleted QOS too (old runs name QOS removed since).
inline void include_deleted(slurmdb_qos_cond_t& cond)
{
#ifdef HAVE_QOS_COND_FLAGS
    cond.flags |= QOS_COND_FLAG_WITH_DELETED;
#else
    cond.with_deleted = 1;
#endif
}

// Job query flags: every run record of a requeued job (JOBCOND_FLAG_DUP), without steps
// (a job's allocation is counted once, never again per step), times as slurmdbd stored
// them (the report cuts them to its window itself).
inline constexpr uint32_t kEveryRunNoSteps =
    JOBCOND_FLAG_DUP | JOBCOND_FLAG_NO_STEP | JOBCOND_FLAG_NO_TRUNC;

}  // namespace allot::slurm_compat
