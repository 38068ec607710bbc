// oidc.cpp - see oidc.hpp.
#include "oidc.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace allot::scimd {
namespace {

struct KeyFile {
    int64_t created;
    std::string name;
    JwsAlg alg;
};

Result<std::vector<KeyFile>> list_key_files(const std::string& dir)
{
    std::vector<KeyFile> out;
    DIR* d = opendir(dir.c_str());
    if (!d) return make_error(dir + ": " + std::strerror(errno));
    while (dirent* e = readdir(d)) {
        const std::string name = e->d_name;
        int64_t created = 0;
        char alg[8] = {0};
        int used = 0;
        if (std::sscanf(name.c_str(), "%ld-%5[A-Z0-9].pem%n", &created, alg, &used) != 2 ||
            used != static_cast<int>(name.size()))
            continue;
        auto a = alg_from_name(alg);
        if (!a) continue;
        out.push_back({created, name, *a});
    }
    closedir(d);
    std::sort(out.begin(), out.end(), [](const KeyFile& a, const KeyFile& b) {
        return a.created != b.created ? a.created > b.created : a.name > b.name;
    });
    return out;
}

Result<bool> ensure_dir(const std::string& dir)
{
    if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
        return make_error(dir + ": " + std::strerror(errno));
    struct stat st {};
    if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
        return make_error(dir + ": not a directory");
    if (st.st_mode & 022) return make_error(dir + ": group/other writable; refusing to use it");
    return true;
}

Result<bool> write_key(const std::string& dir, const SigningKey& key, int64_t now)
{
    const std::string path = dir + "/" + key_file_name(now, key.alg());
    const std::string tmp = path + ".tmp";
    const std::string pem = key.private_pem();
    const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) return make_error(tmp + ": " + std::strerror(errno));
    const bool ok =
        write(fd, pem.data(), pem.size()) == static_cast<ssize_t>(pem.size()) && fsync(fd) == 0;
    close(fd);
    if (!ok || rename(tmp.c_str(), path.c_str()) != 0) {
        unlink(tmp.c_str());
        return make_error(path + ": cannot write key");
    }
    return true;
}

int64_t activation_of(const KeyFile& f, const KeyActivations& activations)
{
    auto it = activations.find(f.name);
    return it == activations.end() ? f.created : it->second;
}

// Files newest first: file i (older) is still published while its successor i-1
// is not yet signing or has signed for less than `overlap`.
bool still_published(const std::vector<KeyFile>& files, size_t i, int64_t now, int64_t overlap,
                     const KeyActivations& activations)
{
    if (i == 0) return true;
    return activation_of(files[i - 1], activations) + overlap > now;
}

}  // namespace

std::string key_file_name(int64_t created, JwsAlg alg)
{
    return std::to_string(created) + "-" + alg_name(alg) + ".pem";
}

Result<std::string> newest_key_file(const std::string& dir)
{
    auto files = list_key_files(dir);
    if (!files) return files.error();
    if (files.value().empty()) return make_error(dir + ": no signing keys");
    return files.value().front().name;
}

size_t KeySet::signer_index(int64_t now) const
{
    for (size_t i = 0; i < keys.size(); ++i)
        if (activates[i] <= now) return i;
    return keys.size() - 1;
}

Result<std::shared_ptr<const KeySet>> load_keys(const std::string& dir, int64_t now,
                                                int64_t overlap, bool create_if_empty, JwsAlg alg,
                                                const KeyActivations& activations)
{
    if (create_if_empty) {
        auto d = ensure_dir(dir);
        if (!d) return d.error();
    }
    auto files = list_key_files(dir);
    if (!files) return files.error();
    if (files.value().empty()) {
        if (!create_if_empty)
            return make_error(dir + ": no signing keys (run allot-scimd keys rotate)");
        auto key = SigningKey::generate(alg);
        if (!key) return key.error();
        auto w = write_key(dir, key.value(), now);
        if (!w) return w.error();
        files = list_key_files(dir);
        if (!files) return files.error();
    }
    auto set = std::make_shared<KeySet>();
    JsonPtr jwks(cJSON_CreateObject());
    cJSON* arr = cJSON_AddArrayToObject(jwks.get(), "keys");
    const auto& list = files.value();
    for (size_t i = 0; i < list.size() && still_published(list, i, now, overlap, activations);
         ++i) {
        const std::string path = dir + "/" + list[i].name;
        struct stat st {};
        if (stat(path.c_str(), &st) != 0) return make_error(path + ": " + std::strerror(errno));
        if (st.st_mode & 077)
            return make_error(path + ": private key readable by group/other (chmod 600)");
        std::ifstream in(path);
        std::stringstream text;
        text << in.rdbuf();
        auto key = SigningKey::from_pem(text.str());
        if (!key) return make_error(path + ": " + key.error().message);
        if (key.value().alg() != list[i].alg)
            return make_error(path + ": key type does not match name");
        JsonPtr jwk = key.value().public_jwk();
        cJSON_AddItemToArray(arr, jwk.release());
        set->keys.push_back(std::move(key.value()));
        set->created.push_back(list[i].created);
        set->activates.push_back(activation_of(list[i], activations));
    }
    set->jwks = json_print(jwks.get());
    return std::shared_ptr<const KeySet>(std::move(set));
}

Result<RotatedKey> rotate_keys(const std::string& dir, JwsAlg alg, int64_t now, int64_t overlap,
                               const KeyActivations& activations)
{
    auto d = ensure_dir(dir);
    if (!d) return d.error();
    auto before = list_key_files(dir);
    if (!before) return before.error();
    if (!before.value().empty() && before.value()[0].created >= now)
        return make_error("the newest key was created in this second; try again");
    auto key = SigningKey::generate(alg);
    if (!key) return key.error();
    auto w = write_key(dir, key.value(), now);
    if (!w) return w.error();
    RotatedKey out{key.value().kid(), key_file_name(now, alg), {}};
    // Delete keys no longer published: their successor has signed for `overlap`.
    auto files = list_key_files(dir);
    if (!files) return files.error();
    for (size_t i = 1; i < files.value().size(); ++i)
        if (!still_published(files.value(), i, now, overlap, activations)) {
            unlink((dir + "/" + files.value()[i].name).c_str());
            out.removed.push_back(files.value()[i].name);
        }
    return out;
}

std::vector<std::string> token_groups(const scim::User& user, const TokenPolicy& policy)
{
    std::vector<std::string> out;
    for (const auto& g : user.groups)
        if (policy.cluster_groups.count(g.name)) out.push_back(g.name);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    if (out.size() > policy.max_groups) out.resize(policy.max_groups);
    return out;
}

Result<std::string> mint_id_token(const SigningKey& key, const TokenPolicy& policy,
                                  const scim::User& user, int64_t now, int64_t lifetime)
{
    JsonPtr claims(cJSON_CreateObject());
    cJSON_AddStringToObject(claims.get(), "iss", policy.issuer.c_str());
    cJSON_AddStringToObject(claims.get(), "sub", user.id.c_str());
    cJSON_AddStringToObject(claims.get(), "aud", policy.audience.c_str());
    cJSON_AddNumberToObject(claims.get(), "iat", static_cast<double>(now));
    cJSON_AddNumberToObject(claims.get(), "nbf", static_cast<double>(now));
    cJSON_AddNumberToObject(claims.get(), "exp", static_cast<double>(now + lifetime));
    cJSON_AddStringToObject(claims.get(), "preferred_username", user.user_name.c_str());
    cJSON_AddNumberToObject(claims.get(), "uid_number", static_cast<double>(user.uid.value_or(0)));
    cJSON* groups = cJSON_AddArrayToObject(claims.get(), "groups");
    for (const auto& g : token_groups(user, policy))
        cJSON_AddItemToArray(groups, cJSON_CreateString(g.c_str()));
    return jwt_sign(key, claims.get());
}

namespace {

void drop_expired(std::map<std::string, int64_t>& slots, int64_t now)
{
    for (auto i = slots.begin(); i != slots.end();)
        i = i->second <= now ? slots.erase(i) : std::next(i);
}

}  // namespace

ReplayCache::Verdict ReplayCache::insert(uint32_t uid, const std::string& key, int64_t expires,
                                         int64_t now)
{
    std::lock_guard<std::mutex> lock(mu_);
    // Uids that stopped exchanging would keep their expired entries; every so
    // often drop them all, so memory follows the live entries.
    if (++inserts_ % 4096 == 0) sweep(now);
    Slots& slots = by_uid_[uid];
    auto it = slots.find(key);
    if (it != slots.end() && it->second > now) return Verdict::Replayed;
    if (slots.size() >= per_uid_) {
        drop_expired(slots, now);
        if (slots.size() >= per_uid_) return Verdict::Full;  // fail closed, for this uid only
    }
    slots[key] = expires;
    return Verdict::Fresh;
}

size_t ReplayCache::size() const
{
    std::lock_guard<std::mutex> lock(mu_);
    size_t n = 0;
    for (const auto& [uid, slots] : by_uid_) n += slots.size();
    return n;
}

void ReplayCache::sweep(int64_t now)
{
    for (auto u = by_uid_.begin(); u != by_uid_.end();) {
        drop_expired(u->second, now);
        u = u->second.empty() ? by_uid_.erase(u) : std::next(u);
    }
}

}  // namespace allot::scimd
