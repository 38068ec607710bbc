#!/bin/bash
# validate_http.sh - allot-scimd refuses over HTTP what allot-syncd would reject
# (a real daemon on loopback, curl as the SCIM client).
#
# A valid user and group are created (201); then every hostile value is
# refused with 400 invalidValue and the attribute named in the detail, through
# POST, PUT and PATCH: reserved or local-account names (root, daemon, sshd,
# nobody, bin, the group sudo), ids 65534 or outside [uid_min, uid_max],
# unclean or non-ASCII homes. JSON with a NUL in a string, bytes after the
# document or a repeated key is refused (400 invalidSyntax), never truncated.
# `allot-scimd apply` refuses the same entries.
set -u
. "$(dirname "$0")/scimd-lib.sh"
scimd_setup validate jq
TOKEN=$(S token create writer --scope write) || abort "token create failed"
scimd_start

EXT=urn:ietf:params:scim:schemas:extension:allot:2.0:PosixUser
# call METHOD PATH BODY: prints "STATUS SCIMTYPE DETAIL"
call() {
    local out
    out=$(curl -sS --max-time 20 -w '\n%{http_code}' -X "$1" -H "Authorization: Bearer $TOKEN" \
        -H 'Content-Type: application/scim+json' "$URL/scim/v2$2" --data-binary "$3")
    local code=${out##*$'\n'} body=${out%$'\n'*}
    echo "$code $(echo "$body" | jq -r '(.scimType // "-") + " " + (.detail // .id // "-")' 2>/dev/null)"
}
# refused NAME ATTRIBUTE METHOD PATH BODY: 400 invalidValue naming ATTRIBUTE
refused() {
    local name=$1 attr=$2 got
    got=$(call "$3" "$4" "$5")
    expect_refused "$name" "$got" "400 invalidValue "
    expect_contains "$name: the detail names $attr" "$got" "$attr"
}
user() { echo "{\"userName\":\"$1\"${2:-}}"; }
GEXT=urn:ietf:params:scim:schemas:extension:allot:2.0:PosixGroup

# ------------------------------------------------------------------ valid writes
got=$(call POST /Users "$(user alice ",\"$EXT\":{\"uidNumber\":1500}")")
expect_match "a valid user is created" "$got" '^201 '
ALICE=$(echo "$got" | awk '{print $3}')
got=$(call POST /Groups '{"displayName":"team-a"}')
expect_match "a valid group is created" "$got" '^201 '

# ------------------------------------------------------------------ names
for n in root daemon sshd nobody bin; do
    refused "userName $n is refused" userName POST /Users "$(user $n)"
done
refused "group sudo is refused" displayName POST /Groups '{"displayName":"sudo"}'
refused "group wheel is refused" displayName POST /Groups '{"displayName":"wheel"}'
refused "PUT cannot rename alice to root" userName PUT "/Users/$ALICE" "$(user root)"
refused "PATCH cannot rename alice to daemon" userName PATCH "/Users/$ALICE" \
    '{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"replace","path":"userName","value":"daemon"}]}'

# ------------------------------------------------------------------ ids
refused "uidNumber 65534 is refused" uidNumber POST /Users "$(user mallory ",\"$EXT\":{\"uidNumber\":65534}")"
refused "uidNumber below uid_min is refused" uidNumber POST /Users "$(user mallory ",\"$EXT\":{\"uidNumber\":999}")"
refused "uidNumber above uid_max is refused" uidNumber POST /Users "$(user mallory ",\"$EXT\":{\"uidNumber\":60001}")"
refused "uidNumber 0 is refused" uidNumber POST /Users "$(user mallory ",\"$EXT\":{\"uidNumber\":0}")"
refused "gidNumber 65534 is refused for a user" gidNumber POST /Users "$(user mallory ",\"$EXT\":{\"gidNumber\":65534}")"
refused "gidNumber 65534 is refused for a group" gidNumber POST /Groups "{\"displayName\":\"team-b\",\"$GEXT\":{\"gidNumber\":65534}}"

# ------------------------------------------------------------------ homes
for h in /home/./x /home//x /home/ /home/x/. /home/x/.. '/home/j\u00fcrgen' /etc/x; do
    refused "homeDirectory $h is refused" homeDirectory POST /Users "$(user mallory ",\"$EXT\":{\"homeDirectory\":\"$h\"}")"
done
refused "PATCH cannot move alice's home to /home//alice" homeDirectory PATCH "/Users/$ALICE" \
    "{\"schemas\":[\"urn:ietf:params:scim:api:messages:2.0:PatchOp\"],\"Operations\":[{\"op\":\"replace\",\"path\":\"$EXT:homeDirectory\",\"value\":\"/home//alice\"}]}"

# ------------------------------------------------------------------ JSON
got=$(call POST /Users '{"userName":"nul\u0000x"}')
expect_refused "a userName with a NUL is refused, not truncated" "$got" \
    '400 invalidSyntax body is not valid JSON: "userName" holds a NUL character'
expect_eq "no truncated user 'nul' was created" "$(S user list | grep -c '^nul:')" 0
got=$(call POST /Users '{"userName":"carol"} {"userName":"root"}')
expect_refused "bytes after the document are refused" "$got" "400 invalidSyntax body is not valid JSON: bytes follow"
got=$(call POST /Users '{"userName":"carol","userName":"root"}')
expect_refused "a key given twice is refused" "$got" "400 invalidSyntax body is not valid JSON: an object names a key twice"

# ------------------------------------------------------------------ nothing hostile was stored
expect_eq "the store holds alice only" "$(S user list | cut -d: -f1 | tr '\n' ' ')" "alice "

# ------------------------------------------------------------------ apply refuses the same
printf 'users:\n  - name: root\n' >"$T/root.yaml"
check_fails "apply refuses a user named root" S apply "$T/root.yaml"
printf 'users:\n  - name: dave\n    uid: 65534\n' >"$T/nobody.yaml"
check_fails "apply refuses uid 65534" S apply "$T/nobody.yaml"
printf 'users:\n  - name: dave\n    home: /home/./dave\n' >"$T/home.yaml"
check_fails "apply refuses home /home/./dave" S apply "$T/home.yaml"
printf 'groups:\n  - name: sudo\n' >"$T/sudo.yaml"
check_fails "apply refuses a group named sudo" S apply "$T/sudo.yaml"
printf 'users:\n  - name: dave\n' >"$T/dave.yaml"
check "apply accepts a valid user" S apply "$T/dave.yaml"
stop_service scimd
finish
