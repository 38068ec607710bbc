// store_schema.cpp - see store_schema.hpp.
#include "store_schema.hpp"

namespace allot::scimd {

namespace {

// Each entry moves the schema from version i to i+1; never edit a shipped one.
const char* const kMigrations[] = {
    R"SQL(
CREATE TABLE users(
  rowid INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  user_name TEXT NOT NULL UNIQUE,
  external_id TEXT,
  display_name TEXT,
  active INTEGER NOT NULL DEFAULT 1,
  emails TEXT NOT NULL DEFAULT '[]',
  uid INTEGER NOT NULL UNIQUE,
  gid INTEGER NOT NULL,
  home TEXT NOT NULL,
  shell TEXT NOT NULL,
  ssh_keys TEXT NOT NULL DEFAULT '[]',
  created INTEGER NOT NULL,
  modified INTEGER NOT NULL,
  version INTEGER NOT NULL);
CREATE INDEX users_external ON users(external_id);
CREATE TABLE grp(
  rowid INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  display_name TEXT NOT NULL UNIQUE,
  external_id TEXT,
  gid INTEGER NOT NULL UNIQUE,
  created INTEGER NOT NULL,
  modified INTEGER NOT NULL,
  version INTEGER NOT NULL);
CREATE TABLE members(
  group_rowid INTEGER NOT NULL REFERENCES grp(rowid) ON DELETE CASCADE,
  user_rowid INTEGER NOT NULL REFERENCES users(rowid) ON DELETE CASCADE,
  PRIMARY KEY(group_rowid, user_rowid)) WITHOUT ROWID;
CREATE INDEX members_user ON members(user_rowid);
CREATE TABLE id_alloc(
  kind TEXT NOT NULL,
  number INTEGER NOT NULL,
  owner TEXT NOT NULL,
  allocated INTEGER NOT NULL,
  PRIMARY KEY(kind, number)) WITHOUT ROWID;
CREATE TABLE sequences(kind TEXT PRIMARY KEY, next INTEGER NOT NULL);
CREATE TABLE api_tokens(
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  hash TEXT NOT NULL UNIQUE,
  scopes TEXT NOT NULL,
  created INTEGER NOT NULL,
  expires INTEGER NOT NULL,
  revoked INTEGER NOT NULL DEFAULT 0);
)SQL",
    // When each OIDC signing key (a file in oidc.keys_dir) starts signing: `keys rotate`
    // publishes a key first and schedules its activation here (see oidc.hpp).
    R"SQL(
CREATE TABLE signing_keys(
  file TEXT PRIMARY KEY,
  activates INTEGER NOT NULL) WITHOUT ROWID;
)SQL",
    // A counter every write of users, groups, members or API tokens bumps, in the
    // writer's own transaction (triggers, so the CLI's writes count too): the read
    // caches (user_snapshot.hpp, token_cache.hpp) are current while it has not moved.
    R"SQL(
CREATE TABLE generation(n INTEGER NOT NULL);
INSERT INTO generation VALUES(0);
CREATE TRIGGER users_ins AFTER INSERT ON users BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER users_upd AFTER UPDATE ON users BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER users_del AFTER DELETE ON users BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER grp_ins AFTER INSERT ON grp BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER grp_upd AFTER UPDATE ON grp BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER grp_del AFTER DELETE ON grp BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER members_ins AFTER INSERT ON members BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER members_del AFTER DELETE ON members BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER tokens_ins AFTER INSERT ON api_tokens BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER tokens_upd AFTER UPDATE ON api_tokens BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER tokens_del AFTER DELETE ON api_tokens BEGIN UPDATE generation SET n = n + 1; END;
)SQL",
};
constexpr int kSchemaVersion = sizeof kMigrations / sizeof kMigrations[0];

}  // namespace

bool migrate(Conn& c, const std::string& path, std::string* error)
{
    int version = 0;
    {
        auto st = c.prepare("PRAGMA user_version");
        if (st && st.step() == SQLITE_ROW) version = static_cast<int>(st.col_int(0));
    }
    if (version > kSchemaVersion) {
        if (error)
            *error = path + ": schema version " + std::to_string(version) +
                     " is newer than this allot-scimd (" + std::to_string(kSchemaVersion) + ")";
        return false;
    }
    for (int v = version; v < kSchemaVersion; ++v) {
        Txn t(c);
        const std::string sql =
            std::string(kMigrations[v]) + "PRAGMA user_version = " + std::to_string(v + 1) + ";";
        if (!t.ok() || !c.exec(sql.c_str()) || !t.commit()) {
            if (error) *error = path + ": migration " + std::to_string(v + 1) + ": " + c.errmsg();
            return false;
        }
    }
    return true;
}

}  // namespace allot::scimd
