// scim_fakes.hpp - builders for SCIM JSON and a fake HttpClient, shared by the
// SCIM client's tests (lib/tests) and allot-syncd's (syncd/tests, through -I).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "allot/http_client.hpp"

namespace allot::scimtest {

inline const std::string kExt = "urn:ietf:params:scim:schemas:extension:allot:2.0:PosixUser";
// A well-formed ed25519 key (public key bytes 0..31).
inline const std::string kEd25519 =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4f alice@laptop";

inline std::string user_json(const std::string& id, const std::string& name, long uid,
                             const std::string& home = "", const std::string& shell = "/bin/bash",
                             const std::string& keys = "[]")
{
    const std::string h = home.empty() ? "/home/" + name : home;
    return R"({"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"id":")" + id +
           R"(","userName":")" + name + R"(","displayName":"User )" + name +
           R"(","active":true,")" + kExt + R"(":{"uidNumber":)" + std::to_string(uid) +
           R"(,"gidNumber":)" + std::to_string(uid) + R"(,"homeDirectory":")" + h +
           R"(","loginShell":")" + shell + R"(","sshPublicKeys":)" + keys + "}}";
}

inline std::string group_json(const std::string& id, const std::string& name, long gid,
                              const std::vector<std::string>& member_ids,
                              const std::string& type = "User")
{
    std::string m;
    for (const auto& v : member_ids)
        m += (m.empty() ? "" : ",") + std::string(R"({"value":")") + v + R"(","type":")" + type +
             "\"}";
    return R"({"id":")" + id + R"(","displayName":")" + name + R"(","gidNumber":)" +
           std::to_string(gid) + R"(,"members":[)" + m + "]}";
}

inline std::string list_json(const std::vector<std::string>& resources, long total, long start = 1,
                             const std::string& cursor = "")
{
    std::string r;
    for (const auto& x : resources) r += (r.empty() ? "" : ",") + x;
    std::string s =
        R"({"schemas":["urn:ietf:params:scim:api:messages:2.0:ListResponse"],"totalResults":)" +
        std::to_string(total) + R"(,"startIndex":)" + std::to_string(start) +
        R"(,"itemsPerPage":)" + std::to_string(resources.size());
    if (!cursor.empty()) s += R"(,"nextCursor":")" + cursor + "\"";
    return s + R"(,"Resources":[)" + r + "]}";
}

// Answers by URL prefix match; records every request.
class FakeHttp : public HttpClient {
public:
    std::vector<std::pair<std::string, Result<HttpResponse>>> routes;  // substring → answer
    std::vector<std::string> requests;
    Result<HttpResponse> get(const std::string& url) override
    {
        requests.push_back(url);
        for (auto& [needle, answer] : routes)
            if (url.find(needle) != std::string::npos) return answer;
        return HttpResponse{404, R"({"detail":"not found"})", 0};
    }
    void on(const std::string& needle, long status, std::string body)
    {
        routes.emplace_back(needle, HttpResponse{status, std::move(body), 0});
    }
};

}  // namespace allot::scimtest
