#!/bin/bash
# nsscache-consumer.sh - allot-scimd read as SUNK's nsscache reads it (issue 13).
#
# CoreWeave's fork of nsscache (nss_cache/sources/scimsource.py) ignores
# `active`, sends the query string of its example config verbatim
# (`filter=active eq "true"`, URL-encoded, the boolean quoted) and pages by
# startIndex: next = startIndex + itemsPerPage, stopping at a short or empty
# page or when totalResults is reached. A later page that fails is silently
# dropped, so every page must answer. The client below makes those requests
# and builds the passwd, group and sshkey maps with the fork's path rules
# (slash-separated paths into the resource, members by `display`); the same
# maps are also read with bare `cursor` paging. A real allot-scimd on loopback
# with a `read` token (what the docs give nsscache) serves 23 active users in
# pages of 10 and 3 deactivated ones: the maps hold every active user, group
# and key, and nothing of the deactivated users. Served again with
# --private-groups, the group map also resolves every user's primary gid; so
# with scim_server.private_groups: true in allot.yaml, unless
# --no-private-groups says otherwise.
set -u
. "$(dirname "$0")/scimd-lib.sh"
scimd_setup nsscache python3
KEY=AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl
for i in $(seq -w 1 23); do
    S user add "user$i" --key "ssh-ed25519 $KEY user$i@laptop" >/dev/null || abort "user add user$i"
done
for u in gone1 gone2 gone3; do
    S user add "$u" --key "ssh-ed25519 $KEY $u@laptop" --inactive >/dev/null || abort "user add $u"
done
S group add team-a --member user01 --member gone1 --member user17 >/dev/null || abort "group add"
S group add leavers --member gone2 --member gone3 >/dev/null || abort "group add"
TOKEN=$(S token create nsscache --scope read) || abort "token create failed"
scimd_start

# The fork's requests and map building; prints the maps as nsscache's files
# cache would write them, one "map<TAB>line" per entry. $1: startIndex|cursor.
cat >"$T/nsscache.py" <<'PY'
import json, sys, urllib.parse, urllib.request
mode, base, token = sys.argv[1], sys.argv[2], sys.argv[3]
EXT = "urn:ietf:params:scim:schemas:extension:allot:2.0:PosixUser"
GEXT = "urn:ietf:params:scim:schemas:extension:allot:2.0:PosixGroup"
# scim_users_parameters / scim_groups_parameters as in docs/scimd.md; the fork
# URL-encodes special characters (spaces, quotes) itself.
USERS = 'filter=active eq "true"&count=10'
GROUPS = "count=1"
def encode(params):
    return "&".join(k + "=" + urllib.parse.quote(v, safe="") for k, v in
                    (p.split("=", 1) for p in params.split("&")))
def fetch(url):
    req = urllib.request.Request(url, headers={
        "Authorization": "Bearer " + token,
        "Content-Type": "application/scim+json", "Accept": "application/scim+json",
        "User-Agent": "nsscache"})
    with urllib.request.urlopen(req, timeout=20) as r:
        return json.loads(r.read().decode())
def pages_by_index(url):  # scimsource.py UpdateGetter.GetUpdates
    start = 1
    while True:
        page = fetch(f"{url}&startIndex={start}")
        resources = page.get("Resources", [])
        yield resources
        if len(resources) < page.get("itemsPerPage", 0) or not resources:
            return
        total, cur = page.get("totalResults", 0), page.get("startIndex", 1)
        if total > 0 and cur + len(resources) - 1 >= total:
            return
        start = cur + page.get("itemsPerPage", 0)
def pages_by_cursor(url):  # bare `cursor` first, then cursor=nextCursor
    page = fetch(url + "&cursor")
    while True:
        yield page.get("Resources", [])
        if not page.get("nextCursor"):
            return
        page = fetch(url + "&cursor=" + urllib.parse.quote(page["nextCursor"], safe=""))
def path(data, p):  # _ExtractFromPath: "/"-separated
    for part in p.split("/"):
        data = data.get(part) if isinstance(data, dict) else None
        if data is None:
            return None
    return data
pages = pages_by_index if mode == "startIndex" else pages_by_cursor
users = f"{base}/Users?{encode(USERS)}"
groups = f"{base}/Groups?{encode(GROUPS)}"
out = []
for res in pages(users):
    for u in res:
        name = path(u, "userName")
        out.append("passwd\t%s:x:%d:%d:%s:%s:%s" % (
            name, path(u, EXT + "/uidNumber"), path(u, EXT + "/gidNumber"),
            u.get("displayName", ""), path(u, EXT + "/homeDirectory"),
            path(u, EXT + "/loginShell") or "/bin/bash"))
for res in pages(users):
    for u in res:
        for k in path(u, EXT + "/sshPublicKeys") or []:
            out.append("sshkey\t%s:%s" % (path(u, "userName"), k))
for res in pages(groups):
    for g in res:
        members = [m["display"] for m in g.get("members", []) if m.get("display")]
        out.append("group\t%s:x:%d:%s" % (g["displayName"], path(g, GEXT + "/gidNumber"),
                                          ",".join(members)))
print("\n".join(out))
PY

for mode in startIndex cursor; do
    maps=$(python3 "$T/nsscache.py" "$mode" "$URL/scim/v2" "$TOKEN" 2>"$T/$mode.err") ||
        { fail "$mode: the nsscache client failed: $(tail -1 "$T/$mode.err")"; continue; }
    expect_eq "$mode: passwd map holds every active user" \
        "$(echo "$maps" | grep -c '^passwd	user[0-9][0-9]:x:')" 23
    expect_eq "$mode: passwd map entries are unique" \
        "$(echo "$maps" | grep '^passwd' | sort -u | wc -l)" 23
    expect_eq "$mode: sshkey map holds every active user's key" \
        "$(echo "$maps" | grep -c "^sshkey	user[0-9][0-9]:ssh-ed25519 $KEY user")" 23
    expect_not_contains "$mode: no deactivated user in any map" "$maps" "gone"
    expect_contains "$mode: group map lists team-a's active members" "$maps" \
        "$(printf 'group\tteam-a:x:')"
    expect_match "$mode: team-a has exactly user01 and user17" \
        "$(echo "$maps" | grep '^group	team-a')" ':user01,user17$'
    expect_match "$mode: a group of only deactivated users is listed empty" \
        "$(echo "$maps" | grep '^group	leavers')" ':x:[0-9]+:$'
done

# The example's filter as sent (quoted boolean) is answered, not 400.
code=$(curl -s -o "$T/f.json" -w '%{http_code}' -H "Authorization: Bearer $TOKEN" \
    "$URL/scim/v2/Users?filter=active%20eq%20%22true%22")
expect_eq 'filter=active eq "true" is answered 200' "$code" 200
expect_eq 'and totalResults counts active users only' \
    "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["totalResults"])' "$T/f.json")" 23
# Asking for the deactivated ones with a read token finds none.
code=$(curl -s -o "$T/g.json" -w '%{http_code}' -H "Authorization: Bearer $TOKEN" \
    "$URL/scim/v2/Users?filter=active%20eq%20%22false%22")
expect_eq 'filter=active eq "false" with a read token: 200, nobody' "$code $(
    python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["totalResults"])' "$T/g.json")" "200 0"
# With --private-groups the group map also holds each user's private group, so
# every passwd entry's primary gid resolves (the fork synthesises none), and a
# deactivated user's private group is left out with the user.
stop_service scimd
start_service scimd-pg "$SCIMD" -c "$T/allot.yaml" serve --private-groups
wait_port "$PORT" 30 || abort "allot-scimd --private-groups did not start: $(cat "$T/scimd-pg.log")"
for mode in startIndex cursor; do
    maps=$(python3 "$T/nsscache.py" "$mode" "$URL/scim/v2" "$TOKEN" 2>"$T/$mode-pg.err") ||
        { fail "$mode --private-groups: the nsscache client failed: $(tail -1 "$T/$mode-pg.err")"; continue; }
    # name of the group with each gid, and its members; then each user's primary gid.
    unresolved=$(echo "$maps" | awk -F'[\t:]' '
        $1 == "group" { name[$4] = $2; members[$4] = $5 }
        $1 == "passwd" { want[$2] = $5 }
        END { for (u in want) if (name[want[u]] != u || members[want[u]] != u) print u }')
    expect_eq "$mode --private-groups: every user's primary gid is its own group" "$unresolved" ""
    expect_eq "$mode --private-groups: 23 private groups, team-a and leavers" \
        "$(echo "$maps" | grep -c '^group	')" 25
    expect_not_contains "$mode --private-groups: no deactivated user's group" "$maps" "gone"
    expect_match "$mode --private-groups: team-a unchanged" \
        "$(echo "$maps" | grep '^group	team-a')" ':user01,user17$'
done
# The same from allot.yaml (scim_server.private_groups, what a unit's fixed
# ExecStart reads), and --no-private-groups over the file.
stop_service scimd-pg
sed -i 's/^  threads: 1$/&\n  private_groups: true/' "$T/allot.yaml"
for flag in "" --no-private-groups; do
    start_service scimd-file "$SCIMD" -c "$T/allot.yaml" serve $flag
    wait_port "$PORT" 30 || abort "allot-scimd $flag did not start: $(cat "$T/scimd-file.log")"
    maps=$(python3 "$T/nsscache.py" startIndex "$URL/scim/v2" "$TOKEN" 2>"$T/file.err") ||
        fail "private_groups: true $flag: the nsscache client failed: $(tail -1 "$T/file.err")"
    expect_eq "private_groups: true ${flag:-alone}: $([ -n "$flag" ] && echo 2 || echo 25) groups" \
        "$(echo "$maps" | grep -c '^group	')" "$([ -n "$flag" ] && echo 2 || echo 25)"
    stop_service scimd-file
done
finish
