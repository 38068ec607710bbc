#!/bin/bash
# walkthrough.sh - `./dev.sh demo` as a test: one bring-up of the whole system
# (tests/demo/demo-lib.sh: allot-scimd over TLS, allot-syncd, Slurm with job_submit/allot
# and spank_allot, sshd with pam_allot and allot-keys, libnss_allot in a mount namespace),
# then every step of etc/demo/walkthrough.txt with its expected output (the last one:
# allot-report's page), then each job template of etc/templates submitted and checked
# against what its comment says.
# Root and ALLOT_LAB=1 only.
set -u
S=${ALLOT_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
export ALLOT_TOP_BUILDDIR=${ALLOT_TOP_BUILDDIR:-$S}
# shellcheck disable=SC1091
. "$S/tests/lib/harness.sh"
[ "${ALLOT_LAB:-0}" = 1 ] || skip "set ALLOT_LAB=1 to run lab tests (needs root)"
[ "$(id -u)" = 0 ] || skip "lab tests need root"
for id in 46001 46002 46003 46004 46100 46101 46200; do
    if getent passwd "$id" >/dev/null || getent group "$id" >/dev/null; then
        skip "id $id is a local account or group of this host"
    fi
done
export DEMO=/run/allot-demo-test.$$
# shellcheck disable=SC1091
. "$S/tests/demo/demo-lib.sh"
on_exit demo_down
demo_up || abort "the demo did not come up (logs in $DEMO/log)"
pass "the demo came up and accepted its first GPU job ($FIRST_JOB)"
note "$(awk -v d="$T_START" -v u="$T_UP" -v e="$T_SYNC" -v f="$T_JOB" 'BEGIN {
    printf "start %.0f s, first sync %.0f s, first GPU job %.0f s: %.0f s from start to the first policy-enforced job", u - d, e - u, f - e, f - d }')"
expect_eq "the demo users resolve through libnss_allot in the namespace" \
    "$(in_demo getent passwd ada | cut -d: -f1,3)" "ada:46001"
expect_eq "... and not on the host" "$(getent passwd ada | cut -d: -f1)" ""
expect_contains "allot-syncd made team vision's project QOS" \
    "$(in_demo sacctmgr -n -P show assoc where user=ada format=account,qos)" "vision|"
expect_contains "allot-exporter serves the policy" \
    "$(curl -sS --max-time 20 "http://127.0.0.1:$EXPORTER_PORT/metrics")" "allot_"
check "allot-doctor finds nothing wrong on the controller" demo_doctor

walk_run

# Step 10's page itself: written, GPU-seconds used, the directory's teams on it.
R=$DEMO/report
check "allot-report's page is written ($R/index.html)" test -s "$R/index.html"
expect_match "its periods.csv counts the demo's GPU-seconds" \
    "$(awk -F, 'NR > 1 { s += $5 } END { print s + 0 }' "$R/periods.csv" 2>&1)" '^[1-9][0-9]*$'
for t in vision nlp; do
    expect_contains "the page shows team $t" "$(cat "$R/index.html")" "<td>$t</td>"
done

# ------------------------------------------------------------------ job templates
note "job templates (etc/templates), submitted by ben (team vision, 8 GPUs)"
for u in ada cleo; do in_demo scancel -u "$u" >/dev/null 2>&1; done
_idle() { [ "$(in_demo sinfo -h -N -o %T | grep -vc idle)" = 0 ]; }
wait_for 120 "every node idle" _idle
as_user ben sh -c 'cat >train.py <<PY
import os
print("train.py rank %s on %s GPUs %s" % (os.environ.get("SLURM_PROCID"), os.environ.get("SLURMD_NODENAME"), os.environ.get("CUDA_VISIBLE_DEVICES")))
PY
printf "a\nb\nc\nd\n" >inputs.txt'
T=$S/etc/templates
# submit NAME SBATCH-ARGS...: as ben, from his home; the job id in J
submit() { J=$(as_user ben sbatch --parsable "$@" 2>&1); [[ $J =~ ^[0-9]+$ ]]; }
# out_has FILE-GLOB REGEX: once the job's output (in ben's home) has it
_has() { as_user ben sh -c "cat $1 2>/dev/null" | grep -Eq -- "$2"; }
out_has() { wait_for 120 "$2 in $1" _has "$1" "$2"; }
_ended() { [ -z "$(in_demo squeue -h -j "$1" 2>/dev/null)" ]; }

submit "$T/single-gpu.sbatch" && pass "single-gpu: accepted ($J)" || fail "single-gpu: accepted" "$J"
check "single-gpu: 1 GPU in team vision's project QOS, train.py ran" \
    out_has "single-gpu-$J.out" "QOS vision, GPUs 0\$"
check "single-gpu: its program ran" out_has "single-gpu-$J.out" "train.py rank [^ ]+ on n[12] GPUs 0"

submit "$T/whole-node.sbatch" && pass "whole-node: accepted ($J)" || fail "whole-node: accepted" "$J"
check "whole-node: all 8 GPUs of one node" out_has "whole-node-$J.out" "GPUs 0,1,2,3,4,5,6,7\$"
check "whole-node: stops at torchrun and says it needs PyTorch" \
    out_has "whole-node-$J.out" "torchrun not found: this template needs PyTorch"

out=$(as_user ben sbatch "$T/multi-node.sbatch" 2>&1)
expect_contains "multi-node: 16 GPUs in the project tier exceed vision's share, rejected with the fix" \
    "$out" "could never start"
submit --qos=spot "$T/multi-node.sbatch" && pass "multi-node --qos=spot (as its comment says): accepted" ||
    fail "multi-node --qos=spot: accepted" "$J"
check "multi-node: srun started 16 tasks on 2 nodes" out_has "multi-node-$J.out" "on n\[1-2\].*16 tasks"
check "multi-node: rank 15 ran train.py" out_has "multi-node-$J.out" "train.py rank 15 on n2"

submit "$T/array.sbatch" && pass "array: accepted ($J)" || fail "array: accepted" "$J"
for t in 0 1 2 3; do
    check "array: task $t got its input" out_has "array-${J}_$t.out" "task $t of job $J .*input '$(printf 'abcd' | cut -c$((t + 1)))'"
done

submit "$T/burst-general.sbatch" && pass "burst-general: accepted ($J)" || fail "burst-general: accepted" "$J"
check "burst-general: 4 GPUs in the general QOS" out_has "burst-general-$J.out" "QOS general, GPUs 0,1,2,3\$"

out=$(as_user ben "$T/interactive.sh" sh -c 'echo "on $SLURMD_NODENAME with GPUs $CUDA_VISIBLE_DEVICES"' 2>&1)
expect_match "interactive: a command on a GPU node through srun" "$out" "on n[12] with GPUs 0"

submit "$T/jupyter.sbatch" && pass "jupyter: accepted ($J)" || fail "jupyter: accepted" "$J"
check "jupyter: prints the tunnel command" out_has "jupyter-$J.out" "ssh -N -L [0-9]+:[^: ]+:[0-9]+ ben@"
check "jupyter: stops at jupyter and says it needs JupyterLab" \
    out_has "jupyter-$J.out" "jupyter not found: this template needs JupyterLab"

submit --qos=spot "$T/ray.sbatch" && pass "ray --qos=spot: accepted ($J)" || fail "ray: accepted" "$J"
check "ray: the head on the first node, a worker on the other" out_has "ray-$J.out" "head n1 .*workers n2"
check "ray: stops at ray and says it needs Ray" out_has "ray-$J.out" "ray not found: this template needs Ray"

submit "$T/container.sbatch" && pass "container: accepted ($J)" || fail "container: accepted" "$J"
check "container: stops at srun --container-image and says it needs Pyxis and enroot" \
    out_has "container-$J.out" "this template needs the Pyxis plugin and enroot"
# spot-checkpoint.sbatch (preempted, requeued, resumed) is step 5-7 of the walkthrough.
finish
