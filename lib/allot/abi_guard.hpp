// abi_guard.hpp - the one way C entry points call into C++.
//
// Every function a host (slurmctld, slurmstepd, sshd, glibc's NSS) calls is
// `extern "C" ... noexcept` and runs its body through abi_guard(): any
// exception is caught, reported through the host's logger, and turned into the
// host's failure code, so nothing ever unwinds into C frames.
#pragma once

#include <exception>

namespace allot {

using GuardLogger = void (*)(const char* what);

template <typename Rc, typename Body>
Rc abi_guard(GuardLogger log, Rc fail_rc, Body&& body) noexcept
{
    try {
        return body();
    } catch (const std::exception& e) {
        if (log) log(e.what());
    } catch (...) {
        if (log) log("unknown exception");
    }
    return fail_rc;
}

}  // namespace allot

// Marks the few symbols a host looks up; everything else is built hidden and
// the linker version script of each .so lists exactly these.
#define ALLOT_EXPORT __attribute__((visibility("default")))
