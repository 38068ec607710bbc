// replay_test.cpp - the token exchange's replay cache under a flood: the
// ReplayCache alone, then Service::handle() with a fake munge
// decoder, where a uid outside the directory trades thousands of fresh
// credentials and alice's fresh credential is still accepted.
#include <gtest/gtest.h>

#include <map>

#include "allot/json.hpp"
#include "service.hpp"
#include "test_util.hpp"
#include "util.hpp"

using namespace allot;
using namespace allot::scimd;

namespace {

using Verdict = ReplayCache::Verdict;

TEST(ReplayCache, RefusesALiveKeyAndForgetsItWhenItExpires)
{
    ReplayCache c(4);
    EXPECT_EQ(c.insert(1000, "a", 160, 100), Verdict::Fresh);
    EXPECT_EQ(c.insert(1000, "a", 160, 159), Verdict::Replayed);
    // At `expires` the credential is stale anyway; the slot may be reused.
    EXPECT_EQ(c.insert(1000, "a", 220, 160), Verdict::Fresh);
}

TEST(ReplayCache, SlotsAreBoundedPerUid)
{
    ReplayCache c(3);
    for (const char* k : {"a", "b", "c"}) EXPECT_EQ(c.insert(1000, k, 160, 100), Verdict::Fresh);
    EXPECT_EQ(c.insert(1000, "d", 160, 100), Verdict::Full);
    // Another uid is untouched by the first one's flood.
    EXPECT_EQ(c.insert(1001, "a", 160, 100), Verdict::Fresh);
    // Expired slots of the full uid are reclaimed.
    EXPECT_EQ(c.insert(1000, "d", 260, 160), Verdict::Fresh);
}

TEST(ReplayCache, MemoryFollowsTheLiveEntries)
{
    ReplayCache c(8);
    for (uint32_t uid = 0; uid < 5000; ++uid)
        EXPECT_EQ(c.insert(uid, "k", 160, 100), Verdict::Fresh);
    EXPECT_EQ(c.size(), 5000u);
    // Later inserts sweep what expired, across all uids.
    for (int i = 0; i < 4096; ++i) c.insert(7, "x" + std::to_string(i % 8), 1000, 500);
    EXPECT_LE(c.size(), 8u);
}

class FakeClock final : public Clock {
public:
    int64_t t = 1800000000;
    int64_t now() const override { return t; }
};

// Every credential "MUNGE:<uid>:<n>" decodes to that uid, encoded `age` seconds
// before it was first decoded (a credential's encode time never changes).
class CountingMunge final : public MungeDecoder {
public:
    explicit CountingMunge(const FakeClock& clock) : clock_(clock) {}
    int64_t age = 1;
    int64_t ttl = 300;
    Result<MungeCredential> decode(const std::string& cred) override
    {
        const size_t colon = cred.find(':', 6);
        if (cred.rfind("MUNGE:", 0) != 0 || colon == std::string::npos)
            return make_error(cred::Errc::Invalid, "Invalid credential format");
        MungeCredential c;
        c.uid = static_cast<uint32_t>(std::stoul(cred.substr(6, colon - 6)));
        c.gid = c.uid;
        auto first = encoded_.emplace(cred, clock_.now() - age).first;
        c.encode_time = first->second;
        c.ttl = ttl;
        c.payload = std::string(kMungePayloadPrefix) + "kube";
        return c;
    }

private:
    const FakeClock& clock_;
    std::map<std::string, int64_t> encoded_;
};

class ReplayService : public ::testing::Test {
protected:
    void SetUp() override
    {
        std::string err;
        store = open_sqlite_store(dir.file("d.db"), IdRange{1000, 60000, 1000, 60000},
                                  scim::kDefaultPosixUser, &err);
        ASSERT_TRUE(store) << err;
        ServiceOptions o;
        o.public_url = "https://id.test";
        o.policy.rules.shells = {"/bin/bash"};
        o.token.issuer = "https://id.test";
        o.token.audience = "kube";
        o.keys_dir = dir.file("keys");
        o.munge_max_age = 60;
        auto m = std::make_unique<CountingMunge>(clock);
        munge = m.get();
        service = std::make_unique<Service>(o, *store, std::move(m), clock);
        ASSERT_TRUE(service->init());
        for (auto [name, uid] : {std::pair<const char*, uint32_t>{"alice", 1500}, {"bob", 1501}}) {
            scim::User u;
            u.user_name = name;
            u.uid = uid;
            u.shell = "/bin/bash";
            u.home = std::string("/home/") + name;
            ASSERT_TRUE(store->create_user(u));
        }
    }
    // "" when a token was issued, else the OAuth error description.
    std::string exchange(uint32_t uid, int n)
    {
        HttpRequest r;
        r.method = "POST";
        r.path = "/oidc/token";
        r.headers["content-type"] = "application/x-www-form-urlencoded";
        r.body =
            "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Atoken-exchange"
            "&subject_token_type=urn%3Aallot%3Aparams%3Aoauth%3Atoken-type%3Amunge"
            "&subject_token=MUNGE:" +
            std::to_string(uid) + ":" + std::to_string(n);
        HttpResponse resp = service->handle(r);
        if (resp.status == 200) return "";
        JsonPtr body = json_parse(resp.body);
        return json_string(body.get(), "error_description").value_or(resp.body);
    }

    test::ScratchDir dir;
    FakeClock clock;
    CountingMunge* munge = nullptr;
    std::unique_ptr<DirectoryStore> store;
    std::unique_ptr<Service> service;
};

TEST_F(ReplayService, AnOutsidersFloodTakesNoSlot)
{
    for (int i = 0; i <= 100000; ++i)
        ASSERT_EQ(exchange(4242, i), "uid 4242 is not in the directory");
    EXPECT_EQ(exchange(1500, 0), "");
    EXPECT_EQ(exchange(1500, 0), "credential already used");
}

TEST_F(ReplayService, OneUidsFloodNeverRefusesAnother)
{
    int accepted = 0;
    for (int i = 0; i < 2000; ++i) accepted += exchange(1501, i).empty();
    EXPECT_EQ(accepted, 256);  // bob's own slots, then bob is told to retry later
    EXPECT_EQ(exchange(1501, 5000), "too many token exchanges for this uid; retry later");
    EXPECT_EQ(exchange(1500, 1), "");
}

TEST_F(ReplayService, SlotsLiveForTheAcceptedAgeNotMungesTtl)
{
    munge->ttl = 3600;  // a long MUNGE TTL must not keep slots taken
    for (int i = 0; i < 256; ++i) ASSERT_EQ(exchange(1501, i), "");
    EXPECT_EQ(exchange(1501, 256), "too many token exchanges for this uid; retry later");
    // Once the first credentials are older than --munge-max-age they are refused as
    // stale on their own, and their slots are free again.
    clock.t += 59;
    EXPECT_EQ(exchange(1501, 0), "credential already used");  // 60 s old: still accepted
    EXPECT_EQ(exchange(1501, 257), "too many token exchanges for this uid; retry later");
    clock.t += 1;
    EXPECT_EQ(exchange(1501, 0), "credential is stale");
    EXPECT_EQ(exchange(1501, 258), "");
}

}  // namespace
