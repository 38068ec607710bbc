// node_reader.cpp - see node_reader.hpp.
#include "node_reader.hpp"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <pwd.h>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <memory>
#include <sstream>

#include "login_checks.hpp"

namespace allot::doctor {

namespace {

struct PipeCloser {
    void operator()(FILE* f) const
    {
        if (f) pclose(f);
    }
};

struct DirCloser {
    void operator()(DIR* d) const { closedir(d); }
};

// The entries of `dir` whose names start with `prefix`, as paths.
std::vector<std::string> entries_with_prefix(const std::string& dir, const std::string& prefix)
{
    std::vector<std::string> out;
    std::unique_ptr<DIR, DirCloser> d(opendir(dir.c_str()));
    if (!d) return out;
    while (struct dirent* e = readdir(d.get()))
        if (std::string(e->d_name).rfind(prefix, 0) == 0) out.push_back(dir + "/" + e->d_name);
    return out;
}

std::string dirname_of(const std::string& path)
{
    size_t slash = path.rfind('/');
    return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

std::string read_text(const std::string& path)
{
    std::ifstream in(path);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

std::string slurm_conf_path()
{
    const char* conf = std::getenv("SLURM_CONF");
    return conf ? conf : "/etc/slurm/slurm.conf";
}

std::string plugstack_path()
{
    std::string conf = slurm_conf_path();
    return conf.substr(0, conf.rfind('/') + 1) + "plugstack.conf";
}

// The fixed command line of sshd's own test mode: what sshd would run with.
Result<std::string> read_sshd_effective()
{
    const char* sshd =
        access("/usr/sbin/sshd", X_OK) == 0 ? "/usr/sbin/sshd -T 2>&1" : "sshd -T 2>&1";
    std::unique_ptr<FILE, PipeCloser> pipe(popen(sshd, "r"));
    if (!pipe) return make_error("cannot run sshd -T");
    std::string out;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, pipe.get())) > 0) out.append(buf, n);
    int status = pclose(pipe.release());
    if (status != 0) return make_error("`sshd -T` failed: " + out.substr(0, out.find('\n')));
    return out;
}

std::string read_pam_account()
{
    return expand_pam_account(read_text(kPamSshd), [](const std::string& name) {
        return read_text(name[0] == '/' ? name : "/etc/pam.d/" + name);
    });
}

FileFacts file_facts(const std::string& path)
{
    FileFacts f;
    f.path = path;
    struct stat st;
    if (stat(path.c_str(), &st) != 0) return f;
    f.exists = true;
    f.uid = st.st_uid;
    f.mode = st.st_mode & 07777;
    f.age_seconds = int64_t(time(nullptr)) - int64_t(st.st_mtime);
    return f;
}

std::vector<LocalId> read_local_ids(const std::string& path)
{
    std::vector<LocalId> out;
    std::istringstream in(read_text(path));
    std::string line;
    while (std::getline(in, line)) {
        // name:password:id:...
        size_t a = line.find(':');
        size_t b = a == std::string::npos ? a : line.find(':', a + 1);
        size_t c = b == std::string::npos ? b : line.find(':', b + 1);
        if (c == std::string::npos || line[0] == '#') continue;
        std::string id = line.substr(b + 1, c - b - 1);
        if (id.empty() || id.find_first_not_of("0123456789") != std::string::npos || id.size() > 10)
            continue;
        out.push_back({line.substr(0, a), uint32_t(std::stoul(id))});
    }
    return out;
}

uint32_t uid_of(const std::string& user)
{
    struct passwd* pw = getpwnam(user.c_str());
    return pw ? pw->pw_uid : 0;
}

std::vector<std::string> protected_paths(const Config& config, const std::string& sshd_t,
                                         const std::vector<std::string>& plugin_dirs)
{
    std::vector<std::string> out = {config.source,        slurm_conf_path(),      plugstack_path(),
                                    "/etc/nsswitch.conf", "/etc/ssh/sshd_config", kPamSshd};
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = 0;
        for (const std::string& p : entries_with_prefix(dirname_of(self), "allot-"))
            out.push_back(p);
    }
    std::string keys = sshd_value(sshd_t, "authorizedkeyscommand").value_or("none");
    if (keys[0] == '/') out.push_back(keys.substr(0, keys.find(' ')));
    for (const std::string& dir : plugin_dirs)
        for (const char* prefix : {"job_submit_allot", "spank_allot", "pam_allot", "libnss_allot"})
            for (const std::string& p : entries_with_prefix(dir, prefix)) out.push_back(p);
    std::vector<std::string> existing;
    for (const std::string& p : out)
        if (!p.empty() && access(p.c_str(), F_OK) == 0) existing.push_back(p);
    return existing;
}

}  // namespace allot::doctor
