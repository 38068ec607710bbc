#!/bin/bash
# run.sh - allot-report's wall time over a year of a 1,000-GPU cluster's records in a real
# slurmdbd, next to the sacct-and-awk recipe a site would write for the same weekly
# GPU-hours (sacct -D -T -X over the year, awk splitting each run at week boundaries), in
# one lab run, interleaved, medians compared.
#
# Loading: slurmdbd's job table is filled directly in the lab's MariaDB (INSERT ... SELECT
# over MariaDB's seq_1_to_N table: JOBS candidate runs spread over the last 365 days, 1-8
# GPUs, 10 min to 12 h, team-a/team-b accounts in every tier, one spot run in 20 preempted;
# three quarters are kept, about 70% of capacity), and the cluster's registered TRES set to
# 1,000 GPUs since a year ago. Submitting that many jobs
# through slurmctld would take hours on this VM; slurmdbd serves the rows exactly as it
# serves records it wrote itself (the lab's own jobs show the same columns).
# Usage: bench/report/run.sh [BUILD_DIR]      (JOBS=300000 ROUNDS=3). Needs root.
set -eu
# shellcheck disable=SC1091
. "$(cd "$(dirname "$0")" && pwd)/../bench-lib.sh" "$@"
R=${REPORT_BIN:-$BUILD/report/allot-report}
JOBS=${JOBS:-300000} ROUNDS=${ROUNDS:-3}
export LAB=/tmp/allot-bench-report.$$
unset LAB_PORT_BASE
export ALLOT_CONFIG=$TOP/tests/lab/allot-lab.yaml LAB_JOB_SUBMIT=""
[ -x "$R" ] || { echo "build allot-report first ($R)"; exit 1; }
on_exit "$TOP/tests/lab/lab-down.sh"
"$TOP/tests/lab/lab-up.sh" >/dev/null
# shellcheck disable=SC1091
. "$TOP/tests/lab/lab-lib.sh"
"$TOP/tests/lab/lab-accounts.sh"
export ALLOT_CONFIG=$LAB/etc/allot.yaml TZ=UTC

sql() { mysql -S "$LAB/mysql/mysqld.sock" -u root slurm_acct_db -N -e "$1"; }
now=$(date +%s)
year=$((now - 365 * 86400))
qos() { sql "select id from qos_table where name='$1'"; }
assoc() { sql "select id_assoc from lab_assoc_table where acct='$1' and user='$2'"; }
QA=$(qos team-a) QB=$(qos team-b) QG=$(qos general) QS=$(qos spot)
AA=$(assoc team-a alice) AC=$(assoc team-a carol) AD=$(assoc team-b dave)
GPU=$(sql "select id from tres_table where type='gres' and name='gpu'")
echo "# loading $JOBS runs over a year into slurmdbd's job table"
t0=$(date +%s)
sql "update lab_event_table set time_start=$year, tres='1=4000,2=32000000,4=125,5=4000,$GPU=1000' where node_name=''"
sql "insert into lab_job_table (account, cpus_req, job_name, id_assoc, id_job, id_qos, id_resv,
  id_wckey, id_user, id_group, het_job_id, het_job_offset, state_reason_prev, nodelist,
  nodes_alloc, \`partition\`, priority, state, time_submit, time_eligible, time_start, time_end,
  tres_alloc, tres_req, work_dir)
  select if(k = 2, 'team-b', 'team-a'), 8, 'bench', elt(k + 1, $AA, $AC, $AD), 100000 + seq, q, 0,
    0, elt(k + 1, 42001, 42003, 42004), elt(k + 1, 42001, 42003, 42004), 0, 4294967294, 0, 'n1',
    1, 'main', 1, if(q = $QS and seq % 20 = 0, 8, 3), s, s, s, s + d,
    concat('1=8,2=65536,4=1,5=8,$GPU=', g), concat('1=8,$GPU=', g), '/tmp'
  from (select seq, seq % 3 as k, elt(seq % 4 + 1, $QA, $QB, $QG, $QS) as q,
          $year + floor(seq * (365 * 86400 - 2 * 86400) / $JOBS) as s,
          600 + (seq * 7919) % (12 * 3600) as d, 1 + seq % 8 as g
        from seq_1_to_$JOBS) x
  where not (k = 2 and q = $QA) and not (k < 2 and q = $QB)"
loaded=$(sql "select count(*) from lab_job_table where job_name='bench'")
echo "# $loaded runs loaded in $(($(date +%s) - t0)) s"

S=$(date -u -d @"$year" +%FT%T) E=$(date -u -d @"$now" +%FT%T)
# The recipe: every run cut to the window, split at ISO week boundaries (Monday 00:00 UTC),
# untyped gres/gpu only.
recipe() {
    sacct -D -T -X -a -n -P -S "$S" -E "$E" -o Start,End,AllocTRES | awk -F'|' -v now="$now" '
    function t(x) { gsub(/[-:T]/, " ", x); return mktime(x) }  # TZ=UTC
    $1 != "Unknown" { s = t($1); e = ($2 == "Unknown") ? now : t($2); g = 0
      n = split($3, kv, ","); for (i = 1; i <= n; i++) if (kv[i] ~ /^gres\/gpu=/) { sub(/.*=/, "", kv[i]); g = kv[i] }
      while (s < e) { w = s - (s + 259200) % 604800; b = w + 604800; if (b > e) b = e; u[w] += g * (b - s); s = b } }
    END { for (w in u) print w, u[w] }' >/dev/null
}
report() { "$R" --config "$ALLOT_CONFIG" --periods 53 --until "@$now" --csv periods --no-reconcile >/dev/null 2>&1; }
secs() { local a b; a=$(date +%s%N); "$@"; b=$(date +%s%N); echo "scale=3; ($b - $a) / 1000000000" | bc; }
rs=() ps=()
for i in $(seq 1 "$ROUNDS"); do
    rs+=("$(secs report)")
    ps+=("$(secs recipe)")
    echo "round $i: allot-report ${rs[-1]} s, recipe ${ps[-1]} s"
done
rm_=$(printf '%s\n' "${rs[@]}" | median) pm=$(printf '%s\n' "${ps[@]}" | median)
echo "# medians: allot-report $rm_ s, sacct+awk recipe $pm s ($loaded runs)"
"$R" --config "$ALLOT_CONFIG" --periods 53 --until "@$now" | tail -1
result report "recipe_over_report=$(ratio "$pm" "$rm_")" "report_s=$rm_"
