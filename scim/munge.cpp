// munge.cpp - MungeDecoder on libmunge (see munge.hpp).
#include "munge.hpp"

#include "compat/munge.hpp"

#include <cstdlib>

namespace allot::scimd {
namespace {

using munge_compat::CtxPtr;

Result<CtxPtr> make_ctx(const std::string& socket)
{
    CtxPtr ctx(munge_ctx_create());
    if (!ctx) return make_error("munge_ctx_create failed");
    if (!socket.empty() &&
        munge_ctx_set(ctx.get(), MUNGE_OPT_SOCKET, socket.c_str()) != EMUNGE_SUCCESS)
        return make_error("munge: cannot set socket " + socket);
    return ctx;
}

cred::Errc code_of(munge_err_t rc)
{
    switch (rc) {
        case EMUNGE_CRED_REPLAYED: return cred::Errc::Replayed;
        case EMUNGE_CRED_EXPIRED:
        case EMUNGE_CRED_REWOUND: return cred::Errc::Expired;
        case EMUNGE_SOCKET: return cred::Errc::Unavailable;
        default: return cred::Errc::Invalid;
    }
}

class LibmungeDecoder final : public MungeDecoder {
public:
    explicit LibmungeDecoder(std::string socket) : socket_(std::move(socket)) {}

    Result<MungeCredential> decode(const std::string& cred) override
    {
        auto ctx = make_ctx(socket_);
        if (!ctx) return ctx.error();
        void* buf = nullptr;
        int len = 0;
        uid_t uid = 0;
        gid_t gid = 0;
        const munge_err_t rc =
            munge_decode(cred.c_str(), ctx.value().get(), &buf, &len, &uid, &gid);
        std::string payload;
        if (buf) {
            payload.assign(static_cast<const char*>(buf), static_cast<size_t>(len));
            std::free(buf);
        }
        if (rc != EMUNGE_SUCCESS)
            return make_error(code_of(rc), std::string("munge: ") + munge_strerror(rc));
        MungeCredential c;
        c.uid = uid;
        c.gid = gid;
        c.payload = std::move(payload);
        time_t encoded = 0;
        int ttl = 0;
        munge_ctx_get(ctx.value().get(), MUNGE_OPT_ENCODE_TIME, &encoded);
        munge_ctx_get(ctx.value().get(), MUNGE_OPT_TTL, &ttl);
        c.encode_time = encoded;
        c.ttl = ttl;
        return c;
    }

private:
    std::string socket_;
};

}  // namespace

std::unique_ptr<MungeDecoder> make_libmunge_decoder(const std::string& socket_path)
{
    return std::make_unique<LibmungeDecoder>(socket_path);
}

namespace cred {
namespace {
constexpr const char* kTexts[] = {
    "success",
    "credential rejected",
    "credential already used",
    "credential expired",
    "munged unavailable",
};
}  // namespace

const std::error_category& category() noexcept
{
    static const ErrorArea area("munge-credential", kTexts);
    return area;
}
}  // namespace cred

}  // namespace allot::scimd
