// main.cpp - the mylimits program: real passwd, Slurm and quota backends into run().
#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <iostream>

#include "app.hpp"

namespace {

std::optional<allot::mylimits::PasswdEntry> from_passwd(const passwd* pw)
{
    if (!pw || !pw->pw_name) return std::nullopt;
    return allot::mylimits::PasswdEntry{pw->pw_name, static_cast<uint32_t>(pw->pw_uid),
                                        pw->pw_dir ? pw->pw_dir : ""};
}

}  // namespace

int main(int argc, char** argv)
{
    using namespace allot::mylimits;
    std::vector<std::string> args(argv, argv + argc);
    auto options = parse_options(args);
    if (!options.ok()) {
        std::cerr << "mylimits: " << options.error().describe() << "\n"
                  << "Try 'mylimits --help'.\n";
        return exit_code(options.error());
    }
    Environment env;
    env.caller_uid = static_cast<uint32_t>(getuid());
    env.stdout_is_tty = isatty(STDOUT_FILENO) == 1;
    const char* term = std::getenv("TERM");
    env.no_color_env = std::getenv("NO_COLOR") != nullptr || (term && std::string(term) == "dumb");
    if (const char* c = std::getenv("ALLOT_CONFIG")) env.env_config = c;
    if (const char* q = std::getenv("ALLOT_QUOTA_CONF")) env.env_quota_conf = q;
    env.now = static_cast<int64_t>(std::time(nullptr));
    env.user_by_name = [](const std::string& name) { return from_passwd(getpwnam(name.c_str())); };
    env.user_by_uid = [](uint32_t uid) { return from_passwd(getpwuid(static_cast<uid_t>(uid))); };

    try {
        // Help and version need neither Slurm nor quotas.
        if (print_help_or_version(options.value(), std::cout)) return kExitOk;
        // libslurm retries a missing SLURM_CONF for 60 s and then exits the
        // process; say it at once instead. (Unset SLURM_CONF: libslurm's default
        // path or configless mode, whose failure libslurm reports itself.)
        if (const char* conf = std::getenv("SLURM_CONF"); conf && access(conf, R_OK) != 0) {
            std::cerr << "mylimits: cannot reach Slurm: SLURM_CONF=" << conf << " cannot be read ("
                      << std::strerror(errno) << ")\n";
            return kExitSlurm;
        }
        auto quotas = make_real_quota_system();
        auto slurm = make_libslurm_query();
        return run(options.value(), env, *slurm, *quotas, std::cout, std::cerr);
    } catch (const std::exception& e) {
        std::cerr << "mylimits: internal error: " << e.what() << "\n";
        return kExitInternal;
    }
}
