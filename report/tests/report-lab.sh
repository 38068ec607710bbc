#!/bin/bash
# report-lab.sh - allot-report on a real Slurm cluster (tests/lab) and its page in a real
# browser (Debian's chromium, headless).
#
# A scripted workload with fixed GPU counts: a project job (2 GPUs), a general job (1 GPU)
# running across several 1-minute periods, a spot job (8 GPUs) preempted by a project job
# (6 GPUs) and requeued, then cancelled while pending; then a node drained and resumed.
# The report (--period 1m) must give, per period and in total, exactly the GPUs asked for
# times the seconds each run overlapped each period (run times as slurmctld saw them, the
# spot run's from sacct -D), per tier and team, spot time lost to preemption, capacity of
# 16 GPUs over the window and the drained node's GPU-seconds as unavailable; its total
# equals `sacct -D -T -X` summed over the same window, and the reconciliation line says so.
# The HTML page, rendered by chromium, has every chart, logs no console error, shows the
# CSV's numbers, and its screenshot is kept in the build dir (report/report-lab.png).
# Skips (77) unless ALLOT_LAB=1 and root.
set -u
SRC=${ALLOT_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${ALLOT_TOP_BUILDDIR:-$SRC}
X=${REPORT_BIN:-$BUILD/report/allot-report}
# shellcheck disable=SC1091
. "$SRC/tests/lab/lab-lib.sh"
skip_unless_lab
for c in chromium jq python3; do command -v $c >/dev/null || skip "$c missing"; done
[ -x "$X" ] || skip "allot-report not built at $X"

export LAB_JOB_SUBMIT="" # the report reads what slurmdbd holds; no job_submit plugin needed
lab_test_start report
harness_tmpdir report
T=$HARNESS_TMP
export TZ=UTC

# Finished jobs stay in slurmctld long enough to read their times.
conf_set MinJobAge 900
ctld_reconfigure

# secs JOB FIELD: a time field of scontrol show job as Unix seconds.
secs() { date -u -d "$(job_field "$1" "$2")" +%s; }
# overlap S E A B: seconds of [S,E) inside [A,B).
overlap() {
    local s=$(($1 > $3 ? $1 : $3)) e=$(($2 < $4 ? $2 : $4))
    echo $((e > s ? e - s : 0))
}
gsub() { as "$1" sbatch --parsable -o /dev/null "${@:3}" -c 1 --mem-per-gpu=1G --time=10 --wrap "sleep $2"; }

echo "# the workload"
t0=$(date +%s)
spot=$(gsub alice 600 --qos=spot --gpus=8 --requeue)
check "spot job runs" wait_job_state "$spot" RUNNING 60
A=$(gsub alice 40 --qos=team-a --gpus=2)
B=$(gsub dave 125 --qos=general --gpus=1) # over 120 s: always three 1-minute periods
check "project job A runs" wait_job_state "$A" RUNNING 60
check "general job B runs" wait_job_state "$B" RUNNING 60
P=$(gsub carol 30 --qos=team-a --gpus=6)
check "project job P runs by preempting the spot job" wait_job_state "$P" RUNNING 120
check "the spot job is requeued (pending again)" wait_job_state "$spot" PENDING 120
scancel "$spot"
for j in $A $B $P; do check "job $j completes" wait_job_state "$j" COMPLETED 300; done
declare -A GPUS=([$A]=2 [$B]=1 [$P]=6) START END
for j in $A $B $P; do START[$j]=$(secs "$j" StartTime) END[$j]=$(secs "$j" EndTime); done
# The spot job's only run, as sacct -D has it (slurmctld keeps no earlier run).
_spot_run() { sacct -D -X -n -P -j "$spot" -o Start,End,State | grep -E 'PREEMPTED|REQUEUED' | head -1; }
_have_spot_run() { [ -n "$(_spot_run)" ]; }
check "sacct -D shows the spot job's preempted run" wait_for 60 "the spot run" _have_spot_run
IFS='|' read -r s e _ <<<"$(_spot_run)"
START[$spot]=$(date -u -d "$s" +%s) END[$spot]=$(date -u -d "$e" +%s) GPUS[$spot]=8

echo "# a node drained and resumed"
scontrol update nodename=n2 state=drain reason=report-lab
_drained() { sinfo -h -n n2 -o %T | grep -q drain; }
check "n2 drained" wait_for 60 "n2 drained" _drained
_event() { sacctmgr -n -P show event nodes=n2 start="$(date -u -d @"$t0" +%FT%T)" format=start,end | tail -1; }
_have_event() { [ -n "$(_event)" ]; }
check "slurmdbd records n2's drain" wait_for 60 "n2's event" _have_event
scontrol update nodename=n2 state=resume
_event_closed() { _event | grep -vq Unknown; }
check "slurmdbd closes n2's drain event" wait_for 60 "n2's event closed" _event_closed
IFS='|' read -r ds de <<<"$(_event)"
dstart=$(date -u -d "$ds" +%s) dend=$(date -u -d "$de" +%s)

until=$(date +%s)
n=$(((until - t0) / 60 + 2))
args=(--config "$ALLOT_CONFIG" --period 1m --periods "$n" --until "@$until")
"$X" "${args[@]}" --json >"$T/report.json" 2>"$T/err" || fail "allot-report --json" "$(cat "$T/err")"
"$X" "${args[@]}" --csv periods >"$T/periods.csv" 2>/dev/null
from=$(jq -r '.periods[0].start' "$T/report.json" | xargs -I{} date -u -d {} +%s)

echo "# GPU-seconds known by construction"
ok=1 want_total=0 detail=""
declare -A TIER=([$A]=project [$B]=general [$P]=project [$spot]=spot)
declare -A want_tier=()
while read -r ps pe used; do
    want=0
    for j in "${!GPUS[@]}"; do
        o=$(overlap "${START[$j]}" "${END[$j]}" "$ps" "$pe")
        want=$((want + GPUS[$j] * o))
        want_tier[${TIER[$j]}]=$((${want_tier[${TIER[$j]}]:-0} + GPUS[$j] * o))
    done
    want_total=$((want_total + want))
    [ "$want" = "$used" ] || { ok=0; detail+="period $ps: report $used, known $want; "; }
done < <(jq -r '.periods[] | "\(.start) \(.end) \(.used_gpu_seconds)"' "$T/report.json" |
    while read -r s e u; do echo "$(date -u -d "$s" +%s) $(date -u -d "$e" +%s) $u"; done)
if [ $ok = 1 ]; then pass "every 1-minute period's GPU-seconds as constructed"; else fail "every 1-minute period's GPU-seconds as constructed" "$detail"; fi
crossing=$(jq '[.periods[] | select(.used_gpu_seconds > 0)] | length' "$T/report.json")
check "the workload spans several periods (runs split at boundaries)" test "$crossing" -ge 3
total=$(jq '[.periods[].used_gpu_seconds] | add' "$T/report.json")
expect_eq "total GPU-seconds as constructed" "$total" "$want_total"
for tier in project general spot; do
    got=$(jq "[.periods[].by_tier.$tier // 0] | add" "$T/report.json")
    expect_eq "tier $tier GPU-seconds" "$got" "${want_tier[$tier]:-0}"
done
got=$(jq '[.periods[].by_team["team-b"] // 0] | add' "$T/report.json")
expect_eq "team-b (dave's general job) GPU-seconds" "$got" "$((GPUS[$B] * (END[$B] - START[$B])))"
got=$(jq '[.periods[].spot_lost_gpu_seconds] | add' "$T/report.json")
expect_eq "spot GPU-seconds lost to preemption" "$got" "$((8 * (END[$spot] - START[$spot])))"
# Capacity as sacctmgr lists the cluster's TRES history (the lab's 16 GPUs from the moment
# slurmctld registered them, which may be inside the window).
want=0
while IFS='|' read -r cs ce tres; do
    g=$(tr ',' '\n' <<<"$tres" | sed -n 's/^gres\/gpu=//p')
    cs=$(date -u -d "$cs" +%s)
    if [ "$ce" = Unknown ]; then ce=$until; else ce=$(date -u -d "$ce" +%s); fi
    want=$((want + ${g:-0} * $(overlap "$cs" "$ce" "$from" "$until")))
done < <(sacctmgr -n -P show event event=cluster start="$(date -u -d @"$from" +%FT%T)" format=start,end,tres)
got=$(jq '[.periods[].capacity_gpu_seconds] | add' "$T/report.json")
expect_eq "capacity: the cluster's GPU TRES history over the window" "$got" "$want"
check "capacity is the lab's 16 GPUs at the end of the window" \
    test "$(jq '.periods[-1].capacity_gpu_seconds' "$T/report.json")" = \
    "$((16 * (until - $(jq -r '.periods[-1].start' "$T/report.json" | xargs -I{} date -u -d {} +%s))))"
got=$(jq '[.periods[].unavailable_gpu_seconds] | add' "$T/report.json")
expect_eq "unavailable: n2's 8 GPUs while drained" "$got" "$((8 * (dend - dstart)))"

echo "# against sacct -D -T -X"
sacct_total=$(sacct -D -T -X -a -n -P -S "$(date -u -d @"$from" +%FT%T)" -E "$(date -u -d @"$until" +%FT%T)" \
    -o Start,End,AllocTRES | awk -F'|' -v now="$until" '
    { if ($1 == "Unknown") next
      cmd = "date -u -d " $1 " +%s"; cmd | getline s; close(cmd)
      e = now; if ($2 != "Unknown") { cmd = "date -u -d " $2 " +%s"; cmd | getline e; close(cmd) }
      g = 0; n = split($3, kv, ","); for (i = 1; i <= n; i++) if (kv[i] ~ /^gres\/gpu=/) { sub(/.*=/, "", kv[i]); g = kv[i] }
      t += g * (e - s) }
    END { print t + 0 }')
expect_eq "report total equals sacct -D -T -X over the window" "$total" "$sacct_total"
recon=$(jq -r .reconciliation "$T/report.json")
expect_contains "the reconciliation line shows sacct and no difference" "$recon" "difference 0 GPU-s"
text=$("$X" "${args[@]}" 2>&1)
expect_contains "the terminal table ends with the reconciliation" "$text" "reconciliation: allot-report"
expect_eq "--csv periods has the JSON's per-period seconds" \
    "$(tail -n +2 "$T/periods.csv" | cut -d, -f5 | paste -sd+ | bc)" "$total"

echo "# the HTML page in headless chromium"
H=$BUILD/report/report-lab-html
rm -rf "$H"
check "allot-report --html writes the page" "$X" "${args[@]}" --html "$H"
shot=$BUILD/report/report-lab.png
chrome=(chromium --headless --no-sandbox --disable-gpu --user-data-dir="$T/chrome" --no-first-run
    --enable-logging=stderr --v=0 --window-size=1000,2400)
"${chrome[@]}" --dump-dom "file://$H/index.html" >"$T/dom.html" 2>"$T/chrome.log"
check "chromium rendered the page" test -s "$T/dom.html"
"${chrome[@]}" --screenshot="$shot" "file://$H/index.html" >/dev/null 2>>"$T/chrome.log"
check "the screenshot is kept ($shot)" test -s "$shot"
console=$(grep -E 'CONSOLE|Uncaught|Refused to' "$T/chrome.log" || true)
expect_eq "no console errors" "$console" ""
out=$(python3 "$SRC/report/tests/html-check.py" "$T/dom.html" "$H" 2>&1)
rc=$?
echo "$out" | sed 's/^/    /'
expect_eq "charts present and page numbers equal the CSV (html-check.py)" "$rc" 0
finish
