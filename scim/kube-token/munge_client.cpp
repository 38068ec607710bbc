// munge_client.cpp - see munge_client.hpp.
#include "munge_client.hpp"

#include "compat/munge.hpp"

#include <cstdlib>
#include <memory>
#include <type_traits>

namespace allot::kubetoken {

namespace {

using munge_compat::CtxPtr;

struct CredFree {
    void operator()(char* p) const { std::free(p); }
};

}  // namespace

Result<std::string> munge_encode(const std::string& socket_path, const std::string& payload)
{
    CtxPtr ctx(munge_ctx_create());
    if (!ctx) return make_error(Errc::Unavailable, "munge_ctx_create failed");
    if (!socket_path.empty() &&
        munge_ctx_set(ctx.get(), MUNGE_OPT_SOCKET, socket_path.c_str()) != EMUNGE_SUCCESS)
        return make_error(Errc::Invalid, "munge: cannot set socket " + socket_path);
    char* raw = nullptr;
    const munge_err_t rc =
        munge_encode(&raw, ctx.get(), payload.data(), static_cast<int>(payload.size()));
    std::unique_ptr<char, CredFree> cred(raw);
    if (rc != EMUNGE_SUCCESS)
        return make_error(Errc::Unavailable, std::string("munge: ") + munge_strerror(rc));
    return std::string(cred.get());
}

}  // namespace allot::kubetoken
