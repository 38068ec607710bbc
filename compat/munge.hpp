// compat/munge.hpp - the owner of a libmunge context, shared by allot-scimd's
// decoder and allot-kube-token's encoder.
#pragma once

extern "C" {
#include <munge.h>
}

#include <memory>
#include <type_traits>

namespace allot::munge_compat {

struct CtxDeleter {
    void operator()(munge_ctx_t c) const { munge_ctx_destroy(c); }
};
using CtxPtr = std::unique_ptr<std::remove_pointer_t<munge_ctx_t>, CtxDeleter>;

}  // namespace allot::munge_compat
