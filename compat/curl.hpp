// compat/curl.hpp - owners for libcurl's handles, shared by every client of an
// HTTP service (allot-syncd's and allot-keys' SCIM client, allot-kube-token).
#pragma once

#include <curl/curl.h>

#include <memory>

namespace allot::curl_compat {

struct EasyDeleter {
    void operator()(CURL* c) const { curl_easy_cleanup(c); }
};
using EasyPtr = std::unique_ptr<CURL, EasyDeleter>;

struct SlistDeleter {
    void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};
using SlistPtr = std::unique_ptr<curl_slist, SlistDeleter>;

}  // namespace allot::curl_compat
