#!/bin/bash
# lab-differential-typed.sh - lab-differential.sh on nodes whose GPUs have a type
# (Gres=gpu:a100:8): typed and untyped requests mixed, each counted once as slurmctld counts
# it. Its own lab (one per test file); fewer cases than the untyped run, other seed.
export LAB_GPU_TYPE=${LAB_GPU_TYPE:-a100}
export DIFF_SEED=${DIFF_SEED:-21}
export DIFF_CASES=${DIFF_CASES:-150}
exec "$(cd "$(dirname "$0")" && pwd)/lab-differential.sh"
