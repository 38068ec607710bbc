// curl_http_test.cpp - the real libcurl HttpClient against a cpp-httplib
// server on loopback: paging end to end, bearer token, 10 MiB cap, timeouts,
// scheme policy, token file permissions.
#include <gtest/gtest.h>
#include <httplib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <thread>

#include "curl_http.hpp"

using namespace allot;

namespace {

const std::string kExt = "urn:ietf:params:scim:schemas:extension:allot:2.0:PosixUser";

std::string user(int i)
{
    return "{\"id\":\"u" + std::to_string(i) + "\",\"userName\":\"user" + std::to_string(i) +
           "\",\"" + kExt + "\":{\"uidNumber\":" + std::to_string(20000 + i) +
           ",\"gidNumber\":" + std::to_string(20000 + i) + ",\"homeDirectory\":\"/home/user" +
           std::to_string(i) + "\",\"loginShell\":\"/bin/bash\"}}";
}

class Server {
public:
    httplib::Server srv;
    int port = 0;
    std::thread th;
    std::string last_auth;
    Server()
    {
        srv.Get("/scim/v2/Users", [this](const httplib::Request& req, httplib::Response& res) {
            last_auth = req.get_header_value("Authorization");
            if (last_auth != "Bearer s3cret") {
                res.status = 401;
                res.set_content(R"({"detail":"bad token","status":"401"})",
                                "application/scim+json");
                return;
            }
            const int start = std::stoi(req.get_param_value("startIndex").empty()
                                            ? "1"
                                            : req.get_param_value("startIndex"));
            const int count = std::stoi(req.get_param_value("count"));
            std::string r;
            for (int i = start; i < start + count && i <= 25; ++i)
                r += (r.empty() ? "" : ",") + user(i);
            res.set_content("{\"totalResults\":25,\"startIndex\":" + std::to_string(start) +
                                ",\"itemsPerPage\":" + std::to_string(count) + ",\"Resources\":[" +
                                r + "]}",
                            "application/scim+json");
        });
        srv.Get("/scim/v2/Groups", [](const httplib::Request&, httplib::Response& res) {
            res.set_content(
                R"({"totalResults":1,"Resources":[{"id":"g","displayName":"team-a","members":[{"value":"u1"}]}]})",
                "application/scim+json");
        });
        srv.Get("/huge", [](const httplib::Request&, httplib::Response& res) {
            res.set_content(std::string((10u << 20) + 1, 'x'), "application/json");
        });
        srv.Get("/slow", [](const httplib::Request&, httplib::Response& res) {
            std::this_thread::sleep_for(std::chrono::milliseconds(1500));
            res.set_content("{}", "application/json");
        });
        srv.Get("/busy", [](const httplib::Request&, httplib::Response& res) {
            res.status = 429;
            res.set_header("Retry-After", "7");
        });
        port = srv.bind_to_any_port("127.0.0.1");
        th = std::thread([this] { srv.listen_after_bind(); });
        while (!srv.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ~Server()
    {
        srv.stop();
        th.join();
    }
    std::string url(const std::string& path)
    {
        return "http://127.0.0.1:" + std::to_string(port) + path;
    }
};

}  // namespace

TEST(CurlHttp, PagesThroughARealServerWithToken)
{
    Server s;
    CurlOptions o;
    o.bearer_token = "s3cret";
    CurlHttpClient http(o);
    ScimFetchOptions fo;
    fo.base_url = s.url("/scim/v2");
    fo.ext_schema = kExt;
    fo.page_size = 10;
    auto d = fetch_directory(http, fo);
    ASSERT_TRUE(d.ok()) << d.error().message;
    EXPECT_EQ(d.value().users.size(), 25u);
    EXPECT_EQ(d.value().requests, 4u);  // 3 user pages + 1 group page
    EXPECT_EQ(s.last_auth, "Bearer s3cret");
}

TEST(CurlHttp, WrongTokenIsNotRetried)
{
    Server s;
    CurlOptions o;
    o.bearer_token = "nope";
    CurlHttpClient http(o);
    ScimFetchOptions fo;
    fo.base_url = s.url("/scim/v2");
    fo.ext_schema = kExt;
    auto d = fetch_directory(http, fo);
    ASSERT_FALSE(d.ok());
    EXPECT_NE(d.error().message.find("401"), std::string::npos);
    EXPECT_NE(d.error().message.find("bad token"), std::string::npos);
}

TEST(CurlHttp, BodyOverTenMiBIsAnError)
{
    Server s;
    CurlHttpClient http(CurlOptions{});
    auto r = http.get(s.url("/huge"));
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("10 MiB"), std::string::npos);
}

TEST(CurlHttp, TimeoutAndRetryAfter)
{
    Server s;
    CurlOptions o;
    o.timeout_ms = 300;
    CurlHttpClient http(o);
    auto r = http.get(s.url("/slow"));
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("transport"), std::string::npos);
    auto b = http.get(s.url("/busy"));
    ASSERT_TRUE(b.ok());
    EXPECT_EQ(b.value().status, 429);
    EXPECT_EQ(b.value().retry_after_seconds, 7u);
}

TEST(CurlHttp, ConnectionRefusedIsTransportError)
{
    CurlHttpClient http(CurlOptions{});
    auto r = http.get("http://127.0.0.1:1/scim/v2/Users");
    ASSERT_FALSE(r.ok());
}

TEST(CurlHttp, SchemePolicy)
{
    EXPECT_TRUE(url_allowed("https://id.example.org/scim/v2"));
    EXPECT_TRUE(url_allowed("http://127.0.0.1:17050/scim"));
    EXPECT_TRUE(url_allowed("http://localhost/scim"));
    EXPECT_TRUE(url_allowed("http://[::1]:80/"));
    EXPECT_FALSE(url_allowed("http://id.example.org/scim"));
    EXPECT_FALSE(url_allowed("http://127.0.0.1@evil.example/"));
    EXPECT_FALSE(url_allowed("http://localhost.evil.example/"));
    EXPECT_FALSE(url_allowed("file:///etc/passwd"));
    EXPECT_FALSE(url_allowed("ftp://x"));
    CurlHttpClient http(CurlOptions{});
    auto r = http.get("http://example.org/");
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("non-HTTPS"), std::string::npos);
}

TEST(CurlHttp, HttpsVerifiesCertificates)
{
    // A plain-HTTP server spoken to over TLS fails the handshake: TLS is
    // really attempted and its failure is an error, never a fallback.
    Server s;
    CurlOptions o;
    o.timeout_ms = 2000;
    CurlHttpClient http(o);
    auto r = http.get("https://127.0.0.1:" + std::to_string(s.port) + "/scim/v2/Users");
    ASSERT_FALSE(r.ok());
}

TEST(TokenFile, PermissionsAndContent)
{
    char dir[] = "/tmp/allot-token-XXXXXX";
    ASSERT_TRUE(mkdtemp(dir));
    const std::string p = std::string(dir) + "/token";
    std::ofstream(p) << "  abc.def-123  \nignored\n";
    chmod(p.c_str(), 0600);
    auto t = read_token_file(p);
    ASSERT_TRUE(t.ok()) << t.error().message;
    EXPECT_EQ(t.value(), "abc.def-123");
    chmod(p.c_str(), 0644);
    EXPECT_FALSE(read_token_file(p).ok());
    chmod(p.c_str(), 0600);
    std::ofstream(p) << "a b\n";
    EXPECT_FALSE(read_token_file(p).ok());
    std::ofstream(p) << "\n";
    EXPECT_FALSE(read_token_file(p).ok());
    EXPECT_FALSE(read_token_file(std::string(dir) + "/missing").ok());
    EXPECT_FALSE(read_token_file(dir).ok());
    unlink(p.c_str());
    rmdir(dir);
}
