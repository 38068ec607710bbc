// dlopen_check.cpp - load a shared object the strict way its host would.
//
// Usage: dlopen_check [-p preload.so]... target.so
// Each preload is opened RTLD_NOW|RTLD_GLOBAL (standing for what the host process
// already has: libslurmfull.so, slurmctld's own symbols), then the target with
// RTLD_NOW, so any symbol that would not resolve fails here instead of crashing
// slurmctld, slurmstepd, sshd or an NSS caller later.
#include <dlfcn.h>

#include <cstdio>
#include <cstring>

int main(int argc, char** argv)
{
    int i = 1;
    for (; i + 1 < argc && std::strcmp(argv[i], "-p") == 0; i += 2) {
        if (!dlopen(argv[i + 1], RTLD_NOW | RTLD_GLOBAL)) {
            std::fprintf(stderr, "dlopen_check: preload %s: %s\n", argv[i + 1], dlerror());
            return 2;
        }
    }
    if (i != argc - 1) {
        std::fprintf(stderr, "usage: dlopen_check [-p preload.so]... target.so\n");
        return 2;
    }
    if (!dlopen(argv[i], RTLD_NOW | RTLD_LOCAL)) {
        std::fprintf(stderr, "dlopen_check: %s\n", dlerror());
        return 1;
    }
    return 0;
}
