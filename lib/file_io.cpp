// file_io.cpp - atomic file replacement (see allot/file_io.hpp).
#include "allot/file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace allot {
namespace {

constexpr std::string_view kTemplate = "XXXXXX";

std::string temporary_template(const std::string& path)
{
    const auto slash = path.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
    const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
    return dir + "/." + name + "." + std::string(kTemplate);
}

// The failed step and errno, for the caller's "writing <path>: " prefix.
Error step_failed(const char* step)
{
    return make_error(Errc::Io, std::string(step) + ": " + std::strerror(errno));
}

Status write_all(int fd, std::string_view bytes)
{
    size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n == 0) errno = EIO;  // no progress and no reason: do not spin
        if (n <= 0) return step_failed("write");
        done += static_cast<size_t>(n);
    }
    return ok_status();
}

Status set_group(int fd, gid_t gid)
{
    struct stat st {};
    if (fstat(fd, &st) != 0) return step_failed("stat");
    if (st.st_gid != gid && fchown(fd, static_cast<uid_t>(-1), gid) != 0)
        return step_failed("chown");
    return ok_status();
}

// Everything but the rename: the temporary's content, mode, group and durability.
Status fill_temporary(int fd, std::string_view bytes, const AtomicWrite& how)
{
    if (auto s = write_all(fd, bytes); !s) return s;
    if (fchmod(fd, how.mode) != 0) return step_failed("chmod");
    if (how.gid != static_cast<gid_t>(-1))
        if (auto s = set_group(fd, how.gid); !s) return s;
    if (how.fsync && fsync(fd) != 0) return step_failed("fsync");
    return ok_status();
}

}  // namespace

Status write_file_atomically(const std::string& path, std::string_view bytes,
                             const AtomicWrite& how)
{
    std::string tmp = temporary_template(path);
    const int fd = mkostemp(tmp.data(), O_CLOEXEC);
    if (fd < 0)
        return make_error(Errc::Io,
                          "creating a temporary file for " + path + ": " + std::strerror(errno));
    auto filled = fill_temporary(fd, bytes, how);
    if (close(fd) != 0 && filled) filled = step_failed("close");
    if (filled && rename(tmp.c_str(), path.c_str()) != 0) filled = step_failed("rename");
    if (!filled) {
        unlink(tmp.c_str());
        return make_error(Errc::Io, "writing " + path + ": " + filled.error().message);
    }
    return ok_status();
}

bool is_temporary_of(std::string_view name, std::string_view entry)
{
    const size_t prefix = 1 + name.size() + 1;  // "." name "."
    return entry.size() == prefix + kTemplate.size() && entry[0] == '.' &&
           entry.substr(1, name.size()) == name && entry[prefix - 1] == '.';
}

}  // namespace allot
