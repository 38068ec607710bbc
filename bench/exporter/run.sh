#!/bin/bash
# run.sh - allot-exporter's cost with 10,000 queued jobs, next to the squeue+sinfo-per-scrape
# approach an operator writes without it (peer-scrape.sh), in one lab run.
#
# Both sides are scraped by SCRAPERS scrapers (an HA Prometheus pair by default) every
# INTERVAL seconds on a fixed schedule for WINDOW seconds, in ROUNDS rounds of alternating
# order. The exporter takes one snapshot per INTERVAL (its --interval) however many scrape
# it; the peer runs squeue and sinfo on every scrape. Figures per phase:
#   - RPCs slurmctld served (sdiag, reset before each phase): the information requests
#     (REQUEST_*INFO*, sdiag's own excluded), their count and their total time inside slurmctld;
#   - wall time per scrape as the scraper sees it (curl; the peer script's run);
#   - the exporter's own snapshot duration (allot_snapshot_duration_seconds): the cost the
#     peer pays on every scrape, paid once per interval.
# The closing ratios are per minute at the default 30 s interval, from the per-cycle
# figures measured here: RPCs (and slurmctld time) per exporter snapshot x 2 snapshots a
# minute, against RPCs per peer scrape x SCRAPERS x 2 scrapes a minute (the exporter waits
# INTERVAL after each snapshot, so in a window it takes fewer than WINDOW/INTERVAL; the
# raw window counts are printed too). Needs root (the lab).
# Usage: bench/exporter/run.sh [BUILD_DIR]   (JOBS=10000 ROUNDS=3 SCRAPERS=2 INTERVAL=5 WINDOW=30)
set -eu
# shellcheck disable=SC1091
. "$(cd "$(dirname "$0")" && pwd)/../bench-lib.sh" "$@"
[ "$(id -u)" = 0 ] || { echo "needs root (the lab)"; exit 77; }
HERE=$TOP/bench/exporter
X=${EXPORTER_BIN:-$BUILD/exporter/allot-exporter}
JOBS=${JOBS:-10000} ROUNDS=${ROUNDS:-3} SCRAPERS=${SCRAPERS:-2} INTERVAL=${INTERVAL:-5} WINDOW=${WINDOW:-30}
export LAB=/tmp/allot-bench-exporter.$$
unset LAB_PORT_BASE
export ALLOT_CONFIG=$TOP/tests/lab/allot-lab.yaml LAB_JOB_SUBMIT=""
[ -x "$X" ] || { echo "build allot-exporter first ($X)"; exit 1; }
for c in curl sdiag; do command -v $c >/dev/null || { echo "$c missing"; exit 1; }; done
cleanup() {
    # Running jobs first and waited for (as bench/mylimits): with a full queue lab-down's
    # own cancel can come too late for slurmstepd to reap the batch scripts.
    if [ -n "${SLURM_CONF:-}" ]; then
        scancel -t RUNNING 2>/dev/null || true
        for _ in $(seq 1 60); do [ -z "$(squeue -h -t R,CG 2>/dev/null)" ] && break; sleep 0.5; done
    fi
    "$TOP/tests/lab/lab-down.sh" >/dev/null 2>&1
}
on_exit cleanup
"$TOP/tests/lab/lab-up.sh" >/dev/null
# shellcheck disable=SC1091
. "$TOP/tests/lab/lab-lib.sh"
"$TOP/tests/lab/lab-accounts.sh"
export ALLOT_CONFIG=$LAB/etc/allot.yaml
harness_tmpdir bench-exporter
T=$HARNESS_TMP
g++ -std=c++17 -O2 -pthread -I"$TOP" -I"$BUILD" -o "$LAB/submit_held" "$TOP/bench/mylimits/submit_held.cpp" -lslurm
chmod 755 "$LAB/submit_held"

echo "# queue: $JOBS held GPU jobs of carol and dave, and running jobs in every tier"
as carol "$LAB/submit_held" $((JOBS / 2)) 2 team-a team-a 1
as dave "$LAB/submit_held" $((JOBS - JOBS / 2)) 2 team-b team-b 1
sub alice --qos=team-a --gpus=2 >/dev/null
sub alice --qos=general --gpus=1 >/dev/null
sub dave -A team-b --qos=team-b --gpus=2 >/dev/null
sub carol --qos=spot --gpus=1 >/dev/null
_queued() { [ "$(squeue -h | wc -l)" -ge "$JOBS" ]; }
wait_for 300 "$JOBS jobs in the queue" _queued
_some_running() { [ "$(squeue -h -t R | wc -l)" -ge 3 ]; }
wait_for 120 "the running jobs" _some_running
echo "# squeue: $(squeue -h | wc -l) jobs, $(squeue -h -t R | wc -l) running"

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# slurmctld's information requests since the last `sdiag -r`: "<count> <total_us> <job
# loads>" (one REQUEST_JOB_INFO per snapshot or scrape), per-type lines in $T/sdiag.<phase>.
ctld_rpcs() { # ctld_rpcs <phase>
    sdiag | awk '/^Remote Procedure Call statistics by message type/ { on = 1; next }
        /^Remote Procedure Call statistics by user/ { on = 0 }
        on && $1 ~ /^REQUEST_.*INFO/ && $1 != "REQUEST_STATS_INFO" { print }' >"$T/sdiag.$1"
    awk '{ for (i = 1; i <= NF; i++) { v = $i
              if (v ~ /^count:/) { sub(/count:/, "", v); c += v; if ($1 == "REQUEST_JOB_INFO") j = v }
              if (v ~ /^total_time:/) { sub(/total_time:/, "", v); t += v } } }
        END { printf "%d %d %d\n", c, t, j }' "$T/sdiag.$1"
}

# scrape_loop <out> <cmd...>: runs cmd every INTERVAL seconds (fixed schedule, as Prometheus
# does) until WINDOW is over; appends each run's wall time (ms) to <out>.
scrape_loop() {
    local out=$1 start k=0 t0 t1 next
    shift
    start=$(now_ms)
    while [ $((k * INTERVAL * 1000)) -lt $((WINDOW * 1000)) ]; do
        next=$((start + k * INTERVAL * 1000))
        t0=$(now_ms)
        [ "$t0" -lt "$next" ] && sleep "$(awk -v d=$((next - t0)) 'BEGIN { printf "%.3f", d / 1000 }')"
        t0=$(now_ms)
        "$@" >/dev/null 2>&1 || echo "scrape failed" >&2
        t1=$(now_ms)
        echo $((t1 - t0)) >>"$out"
        k=$((k + 1))
    done
}

exporter_scrape() { # one scrape, kept per scraper for the snapshot duration it reports
    curl -sf -o "$T/exp.metrics.$BASHPID" "http://127.0.0.1:$EP/metrics"
}

run_scrapers() { # run_scrapers <out> <cmd...>
    local pids=() out=$1
    shift
    for _ in $(seq 1 "$SCRAPERS"); do scrape_loop "$out" "$@" & pids+=($!); done
    wait "${pids[@]}"
}

declare -A rpc ctld_us scrape_ms rpc_cycle us_cycle
per() { LC_ALL=C awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f\n", b ? a / b : 0 }'; }
phase_exporter() {
    rm -f "$T/port"
    start_service exporter env SLURM_CONF="$SLURM_CONF" "$X" --config="$ALLOT_CONFIG" \
        --listen=127.0.0.1:0 --port-file="$T/port" --interval="$INTERVAL"
    wait_for 30 "the exporter's port" test -s "$T/port"
    EP=$(cat "$T/port")
    _first_snapshot() { curl -s "http://127.0.0.1:$EP/metrics" | grep -q '^allot_slurmctld_up 1$'; }
    wait_for 120 "the exporter's first snapshot" _first_snapshot
    sdiag -r >/dev/null
    : >"$T/scrape.exporter"
    run_scrapers "$T/scrape.exporter" exporter_scrape
    read -r n us snaps < <(ctld_rpcs exporter)
    stop_service exporter
    cat "$T"/exp.metrics.* | awk '$1 == "allot_snapshot_duration_seconds" { printf "%.1f\n", $2 * 1000 }' >>"$T/snapshot_ms"
    rm -f "$T"/exp.metrics.*
    rpc_cycle[exporter]="${rpc_cycle[exporter]:-} $(per "$n" "$snaps")"
    us_cycle[exporter]="${us_cycle[exporter]:-} $(per "$us" "$snaps")"
    rpc[exporter]="${rpc[exporter]:-} $n"
    ctld_us[exporter]="${ctld_us[exporter]:-} $us"
    scrape_ms[exporter]="${scrape_ms[exporter]:-} $(median <"$T/scrape.exporter")"
    printf '  exporter: %4d RPCs in %d snapshots, %8.1f ms in slurmctld, scrape %s ms (median of %d), snapshot %s ms\n' \
        "$n" "$snaps" "$(awk -v u="$us" 'BEGIN { print u / 1000 }')" "$(median <"$T/scrape.exporter")" \
        "$(wc -l <"$T/scrape.exporter")" "$(tail -"$SCRAPERS" "$T/snapshot_ms" | median)"
    sed 's/^/    /' "$T/sdiag.exporter"
}
phase_peer() {
    sdiag -r >/dev/null
    : >"$T/scrape.peer"
    run_scrapers "$T/scrape.peer" env SLURM_CONF="$SLURM_CONF" "$HERE/peer-scrape.sh"
    read -r n us _ < <(ctld_rpcs peer)
    local scrapes
    scrapes=$(wc -l <"$T/scrape.peer")
    rpc_cycle[peer]="${rpc_cycle[peer]:-} $(per "$n" "$scrapes")"
    us_cycle[peer]="${us_cycle[peer]:-} $(per "$us" "$scrapes")"
    rpc[peer]="${rpc[peer]:-} $n"
    ctld_us[peer]="${ctld_us[peer]:-} $us"
    scrape_ms[peer]="${scrape_ms[peer]:-} $(median <"$T/scrape.peer")"
    printf '  peer:     %4d RPCs, %8.1f ms in slurmctld, scrape %s ms (median of %d)\n' \
        "$n" "$(awk -v u="$us" 'BEGIN { print u / 1000 }')" "$(median <"$T/scrape.peer")" "$(wc -l <"$T/scrape.peer")"
    sed 's/^/    /' "$T/sdiag.peer"
}

# Both sides must work before they are timed: a failing command is fast.
if ! env SLURM_CONF="$SLURM_CONF" "$HERE/peer-scrape.sh" >"$T/peer.metrics" ||
    ! grep -q '^slurm_jobs_pending' "$T/peer.metrics"; then
    echo "the peer script fails: nothing to measure"
    exit 1
fi
sed 's/^/  peer: /' "$T/peer.metrics" | head -8
: >"$T/snapshot_ms"
echo "# $ROUNDS rounds: $SCRAPERS scrapers every ${INTERVAL}s for ${WINDOW}s per side"
for round in $(seq 1 "$ROUNDS"); do
    echo "round $round"
    if [ $((round % 2)) = 1 ]; then phase_exporter; phase_peer; else phase_peer; phase_exporter; fi
done

rpc_e=$(echo "${rpc[exporter]}" | median) rpc_p=$(echo "${rpc[peer]}" | median)
us_e=$(echo "${ctld_us[exporter]}" | median) us_p=$(echo "${ctld_us[peer]}" | median)
sc_e=$(echo "${scrape_ms[exporter]}" | median) sc_p=$(echo "${scrape_ms[peer]}" | median)
snap=$(median <"$T/snapshot_ms")
# Per minute at a 30 s interval: 2 snapshots, or 2 scrapes by each scraper.
min_e=$(LC_ALL=C awk -v c="$(echo "${rpc_cycle[exporter]}" | median)" 'BEGIN { printf "%.1f\n", c * 2 }')
min_p=$(LC_ALL=C awk -v c="$(echo "${rpc_cycle[peer]}" | median)" -v s="$SCRAPERS" 'BEGIN { printf "%.1f\n", c * 2 * s }')
ms_e=$(LC_ALL=C awk -v c="$(echo "${us_cycle[exporter]}" | median)" 'BEGIN { printf "%.1f\n", c * 2 / 1000 }')
ms_p=$(LC_ALL=C awk -v c="$(echo "${us_cycle[peer]}" | median)" -v s="$SCRAPERS" 'BEGIN { printf "%.1f\n", c * 2 * s / 1000 }')
ms() { LC_ALL=C awk -v u="$1" 'BEGIN { printf "%.1f\n", u / 1000 }'; }
echo
printf 'medians over %s rounds, %s jobs queued, %s scrapers:\n' "$ROUNDS" "$(squeue -h | wc -l)" "$SCRAPERS"
printf '  slurmctld RPCs in %ss (every %ss): exporter %s, peer %s; time inside slurmctld %s ms vs %s ms\n' \
    "$WINDOW" "$INTERVAL" "$rpc_e" "$rpc_p" "$(ms "$us_e")" "$(ms "$us_p")"
printf '  per minute at a 30 s interval: exporter %s RPCs (%s ms in slurmctld), peer %s RPCs (%s ms)\n' \
    "$min_e" "$ms_e" "$min_p" "$ms_p"
printf '  wall time per scrape: exporter %s ms, peer %s ms; exporter snapshot %s ms (once per interval)\n' \
    "$sc_e" "$sc_p" "$snap"
result exporter rpcs_peer_over_exporter="$(ratio "$min_p" "$min_e")" snapshot_ms_10k="$snap" \
    ctld_time_peer_over_exporter="$(ratio "$ms_p" "$ms_e")" \
    scrape_ms_peer_over_exporter="$(ratio "$sc_p" "$sc_e")" scrape_ms_exporter="$sc_e" \
    scrape_ms_peer="$sc_p" rpcs_per_min_exporter="$min_e" rpcs_per_min_peer="$min_p" \
    scrapers="$SCRAPERS" jobs="$JOBS"
