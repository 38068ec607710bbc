// software_walker.cpp - walk_as_user() of software_walk.hpp: a child process
// that drops to an ordinary user and reports, one line per item, what that
// user cannot reach or read, or can write (parse_walk_report reads it).
#include <dirent.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <set>

#include "software_walk.hpp"

namespace allot::doctor {

namespace {

struct Fd {
    int fd = -1;
    explicit Fd(int f) : fd(f) {}
    ~Fd()
    {
        if (fd >= 0) close(fd);
    }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
};

struct DirCloser {
    void operator()(DIR* d) const { closedir(d); }
};

// The child's side: everything it learns goes down `out` as "K\tpath\n".
class Reporter {
public:
    explicit Reporter(int fd) : fd_(fd) {}
    void line(char kind, std::string text)
    {
        for (char& c : text)
            if (c == '\n') c = '?';
        buf_ += kind;
        buf_ += '\t';
        buf_ += text;
        buf_ += '\n';
        if (buf_.size() > 65536) flush();
    }
    void flush()
    {
        const char* p = buf_.data();
        size_t left = buf_.size();
        while (left) {
            ssize_t n = write(fd_, p, left);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            p += n;
            left -= size_t(n);
        }
        buf_.clear();
    }

private:
    int fd_;
    std::string buf_;
};

// W (and O when the user owns it) for a path the user may write.
// A sticky directory (as /tmp) lets nobody replace what others own in it.
void report_writable(const std::string& path, const struct stat& st, Reporter& r)
{
    if (S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX)) return;
    if (access(path.c_str(), W_OK) != 0) return;
    r.line('W', path);
    if (st.st_uid == getuid()) r.line('O', path);
}

// Every directory above `path`, nearest last.
std::vector<std::string> parents_of(const std::string& path)
{
    std::vector<std::string> out;
    for (size_t at = path.find('/', 1); at != std::string::npos; at = path.find('/', at + 1))
        out.push_back(path.substr(0, at));
    out.insert(out.begin(), "/");
    return out;
}

void check_parents(const std::string& path, std::set<std::string>& seen, Reporter& r)
{
    for (const std::string& p : parents_of(path)) {
        struct stat st;
        if (!seen.insert(p).second || lstat(p.c_str(), &st) != 0) continue;
        report_writable(p, st, r);
    }
}

// One entry below a root: count it, report it, and queue directories.
void visit(const std::string& path, std::vector<std::string>& dirs, Reporter& r)
{
    struct stat st;
    if (lstat(path.c_str(), &st) != 0) return;
    if (S_ISLNK(st.st_mode)) {
        // A link is as good as its target; links are never followed into directories.
        struct stat target;
        if (stat(path.c_str(), &target) == 0 && S_ISREG(target.st_mode) &&
            access(path.c_str(), R_OK) != 0)
            r.line('R', path);
        return;
    }
    if (S_ISDIR(st.st_mode)) {
        report_writable(path, st, r);
        if (access(path.c_str(), R_OK | X_OK) != 0)
            r.line('U', path);
        else
            dirs.push_back(path);
        return;
    }
    if (!S_ISREG(st.st_mode)) return;
    report_writable(path, st, r);
    if (access(path.c_str(), R_OK) != 0) r.line('R', path);
}

void walk_root(const std::string& root, const WalkLimits& limits, Reporter& r)
{
    r.line('S', root);
    std::set<std::string> seen;
    check_parents(root, seen, r);
    struct stat st;
    if (stat(root.c_str(), &st) != 0) return r.line('E', strerror(errno));
    if (!S_ISDIR(st.st_mode)) return r.line('E', "not a directory");
    size_t entries = 0;
    report_writable(root, st, r);
    std::vector<std::string> dirs;
    if (access(root.c_str(), R_OK | X_OK) != 0)
        r.line('U', root);
    else
        dirs.push_back(root);
    while (!dirs.empty()) {
        std::string dir = dirs.back();
        dirs.pop_back();
        std::unique_ptr<DIR, DirCloser> d(opendir(dir.c_str()));
        if (!d) {
            r.line('U', dir);
            continue;
        }
        while (struct dirent* e = readdir(d.get())) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            if (++entries > limits.max_entries) {
                r.line('N', std::to_string(entries - 1));
                return r.line('T', "");
            }
            visit(dir == "/" ? "/" + std::string(e->d_name) : dir + "/" + e->d_name, dirs, r);
        }
    }
    r.line('N', std::to_string(entries));
}

void check_protected(const std::vector<std::string>& paths, Reporter& r)
{
    r.line('S', "(allot files)");
    std::set<std::string> seen;
    for (const std::string& p : paths) {
        check_parents(p, seen, r);
        struct stat st;
        if (seen.insert(p).second && lstat(p.c_str(), &st) == 0) report_writable(p, st, r);
    }
}

[[noreturn]] void child(int fd, const struct passwd& pw, const std::vector<std::string>& roots,
                        const std::vector<std::string>& protect, const WalkLimits& limits)
{
    Reporter r(fd);
    if (initgroups(pw.pw_name, pw.pw_gid) != 0 || setgid(pw.pw_gid) != 0 ||
        setuid(pw.pw_uid) != 0 || getuid() == 0) {
        r.line('X', std::string("cannot become the user: ") + strerror(errno));
        r.flush();
        _exit(1);
    }
    for (const std::string& root : roots) walk_root(root, limits, r);
    check_protected(protect, r);
    r.flush();
    _exit(0);
}

}  // namespace

Result<std::vector<WalkResult>> walk_as_user(const std::vector<std::string>& roots,
                                             const std::vector<std::string>& protect,
                                             const std::string& user, const WalkLimits& limits)
{
    if (geteuid() != 0) return make_error("the walk as an ordinary user needs root");
    struct passwd* found = getpwnam(user.c_str());
    if (!found || found->pw_uid == 0) return make_error("no ordinary user \"" + user + "\"");
    struct passwd pw = *found;
    std::string name = pw.pw_name;
    pw.pw_name = name.data();
    int fds[2];
    if (pipe(fds) != 0) return make_error(std::string("pipe: ") + strerror(errno));
    Fd in(fds[0]);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[1]);
        return make_error(std::string("fork: ") + strerror(errno));
    }
    if (pid == 0) {
        close(fds[0]);
        child(fds[1], pw, roots, protect, limits);
    }
    close(fds[1]);
    std::string text;
    char buf[65536];
    for (ssize_t n; (n = read(in.fd, buf, sizeof buf)) != 0;) {
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) break;
        text.append(buf, size_t(n));
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        size_t x = text.find("X\t");
        return make_error(x == std::string::npos ? "the walk as " + user + " did not finish"
                                                 : text.substr(x + 2, text.find('\n', x) - x - 2));
    }
    return parse_walk_report(text, limits.max_listed);
}

}  // namespace allot::doctor
