#!/bin/bash
# interactive.sh - a shell on a GPU node, for debugging (not for long training runs).
#
# Runs in your project tier with 1 GPU for at most 2 hours; the GPU is yours until you
# exit the shell. While it runs you can also ssh to that node (only users with a job on a
# node may ssh to it). Add --qos=spot to borrow idle GPUs instead (may be preempted).
# Run:  interactive.sh              (a login shell on the node)
#       interactive.sh COMMAND...   (runs COMMAND there instead)
exec srun --job-name=interactive --gpus="${GPUS:-1}" --time="${TIME:-02:00:00}" \
    --pty "${@:-${SHELL:-/bin/bash}}"
