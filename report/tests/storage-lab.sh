#!/bin/bash
# storage-lab.sh - allot-report record-storage with the real quota tools on a loop ext4
# filesystem (as mylimits' lab test does): usrquota, quotacheck, setquota, files written
# as alice, read by quota(1) as a quota.conf command source. Records twice with more
# written between, then checks the store and the storage view (--csv storage, names and
# teams resolved at report time) against `quota -w -p -u alice`. Needs no Slurm.
# Skips (77) unless ALLOT_LAB=1, root, the quota tools and the user alice.
set -u
SRC=${ALLOT_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${ALLOT_TOP_BUILDDIR:-$SRC}
R=${REPORT_BIN:-$BUILD/report/allot-report}
# shellcheck disable=SC1091
. "$SRC/tests/lib/harness.sh"
[ "${ALLOT_LAB:-0}" = 1 ] || skip "set ALLOT_LAB=1 to run lab tests (needs root)"
[ "$(id -u)" = 0 ] || skip "lab tests need root"
for t in quota setquota quotacheck mkfs.ext4; do command -v $t >/dev/null || skip "$t missing (apt-get install quota)"; done
id alice >/dev/null 2>&1 || skip "no user alice (tests/lab creates the lab's users)"

harness_tmpdir storage
T=$HARNESS_TMP
MNT=$T/mnt
cleanup() { mountpoint -q "$MNT" && umount "$MNT"; rm -rf "$T"; }
on_exit cleanup
UID_A=$(id -u alice)

# The loop filesystem: quota(1) reads aquota.user itself where the kernel has no quotas.
mkdir -p "$MNT"
if ! { truncate -s 32M "$T/q.img" && mkfs.ext4 -q -F "$T/q.img" &&
    mount -o loop,usrquota "$T/q.img" "$MNT"; }; then
    skip "cannot mount a loop filesystem here"
fi
quotacheck -cumf "$MNT" 2>/dev/null
setquota -u alice 1000 2000 10 20 "$MNT"
write_as_alice() { # write_as_alice FILE KiB, then recount
    dd if=/dev/zero of="$MNT/$1" bs=1k count="$2" 2>/dev/null; chown alice "$MNT/$1"; sync
    quotacheck -umf "$MNT" 2>/dev/null; chmod 644 "$MNT/aquota.user"
}
real_used() { quota -w -p -u alice 2>/dev/null | awk -v d="$(findmnt -no SOURCE "$MNT")" '$1==d{sub(/\*/,"",$2); print $2*1024}'; }

printf 'loop command /usr/bin/quota -w -p -u {user}\n' >"$T/quota.conf"
# Teams by POSIX group: alice's own group stands for team-a here.
sed "s/group: team-a/group: $(id -gn alice)/" "$SRC/mylimits/tests/fixtures/allot.yaml" >"$T/allot.yaml"
rec() { "$R" record-storage --quota-conf "$T/quota.conf" --store "$T/store/storage.csv" --min-uid "$UID_A" 2>"$T/rec.err"; }
view() { ALLOT_CONFIG=$T/allot.yaml "$R" --csv storage --store "$T/store/storage.csv" 2>"$T/view.err"; }

echo "# first record: 1500 KiB, over the 1000 KiB soft limit"
write_as_alice big 1500
first=$(real_used)
out=$(rec); rc=$?
expect_eq "record-storage exits 0" "$rc" 0
expect_contains "says what it recorded" "$out" "samples of"
expect_eq "the store directory is created" "$(test -d "$T/store" && echo yes)" yes
sleep 1 # the second sample gets its own second
echo "# second record: 300 KiB more"
write_as_alice more 300
second=$(real_used)
rec >/dev/null
expect_eq "the two records differ as quota(1) says" "$((second > first))" 1
store=$(grep -c ",loop,$UID_A," "$T/store/storage.csv")
expect_eq "two samples of alice in the store, keyed by UID" "$store" 2
expect_eq "the store names no user" "$(grep -c alice "$T/store/storage.csv")" 0

V=$(view); rc=$?
expect_eq "--csv storage exits 0 without slurmdbd" "$rc" 0
expect_eq "header" "$(head -1 <<<"$V")" "time,scope,name,team,source,filesystem,bytes_used,bytes_soft,bytes_hard,grace_expires"
alice_rows=$(awk -F, '$2=="user" && $3=="alice" && $5=="loop"' <<<"$V")
expect_eq "alice named at report time, two samples" "$(wc -l <<<"$alice_rows")" 2
expect_eq "used bytes of both samples = quota -w -p -u alice" "$(cut -d, -f7 <<<"$alice_rows" | paste -sd' ')" "$first $second"
expect_eq "soft and hard limits = setquota's" "$(tail -1 <<<"$alice_rows" | cut -d, -f8,9)" "$((1000 * 1024)),$((2000 * 1024))"
expect_match "over the soft limit: a grace time" "$(tail -1 <<<"$alice_rows" | cut -d, -f10)" '^20[0-9][0-9]-.*Z$'
team_rows=$(awk -F, -v t="$(id -gn alice)" '$2=="team" && $3==t && $5=="loop"' <<<"$V")
expect_eq "alice's team has a row per sample" "$(wc -l <<<"$team_rows")" 2
expect_eq "team usage = its users' usage" "$(tail -1 <<<"$team_rows" | cut -d, -f7)" "$second"

echo "# a line cut short and garbage in the store"
printf 'garbage\n1764806400,loop,%s,/x,1' "$UID_A" >>"$T/store/storage.csv"
V2=$(view)
expect_eq "the history still reads" "$(awk -F, '$2=="user" && $3=="alice"' <<<"$V2" | wc -l)" 2
expect_contains "unreadable lines are counted" "$(cat "$T/view.err")" "2 unreadable lines skipped"
sleep 1
rec >/dev/null
V3=$(view)
expect_eq "the next record starts on a new line: a third sample" "$(awk -F, '$2=="user" && $3=="alice"' <<<"$V3" | wc -l)" 3
expect_contains "and only the two bad lines are lost" "$(cat "$T/view.err")" "2 unreadable lines skipped"

finish
