#!/bin/bash
# peer-scrape.sh - the peer of bench/exporter: what an operator writes for GPU metrics
# without allot-exporter, run on every Prometheus scrape (a textfile/script collector):
# jobs from squeue (account, QOS, state, reason, GPUs asked/allocated), nodes from sinfo
# (GPUs configured and in use, state), summed into the same families by awk. It talks to
# slurmctld on each call: one squeue, one sinfo per scrape, for every scraper.
set -eu
squeue -h -a -t all -O 'Account:|,QOS:|,StateCompact:|,Reason:|,tres-alloc:' |
    awk -F'|' '
    { gsub(/ /, "") }
    { g = 0; n = split($5, t, ","); for (i = 1; i <= n; i++) if (t[i] ~ /^gres\/gpu=/) { sub(/^gres\/gpu=/, "", t[i]); g = t[i] } }
    $3 == "R"  { alloc[$1 "|" $2] += g }
    $3 == "PD" { pend[$1 "|" $2 "|" $4]++; pendg[$1 "|" $2 "|" $4] += g }
    END {
        for (k in alloc) { split(k, a, "|"); printf "slurm_gpus_allocated{account=\"%s\",qos=\"%s\"} %d\n", a[1], a[2], alloc[k] }
        for (k in pend) { split(k, a, "|"); printf "slurm_jobs_pending{account=\"%s\",qos=\"%s\",reason=\"%s\"} %d\n", a[1], a[2], a[3], pend[k]
                          printf "slurm_gpus_pending{account=\"%s\",qos=\"%s\",reason=\"%s\"} %d\n", a[1], a[2], a[3], pendg[k] }
    }'
sinfo -h -N -O 'NodeHost:|,Gres:|,GresUsed:|,StateCompact:' |
    awk -F'|' '
    { gsub(/ /, ""); if (seen[$1]++) next
      g = $2; sub(/\(.*/, "", g); n = split(g, p, ":"); total += p[n]
      u = $3; sub(/\(.*/, "", u); n = split(u, q, ":"); used += q[n]
      if ($4 ~ /down|drain|fail/) down += p[n] - q[n] }
    END { printf "slurm_gpus_total %d\nslurm_gpus_allocated_total %d\nslurm_gpus_down %d\n", total, used, down }'
