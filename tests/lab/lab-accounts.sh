#!/bin/bash
# lab-accounts.sh - the accounts and QOS of allot-lab.yaml, made with sacctmgr.
#
# Stands in for allot-syncd in tests of other components: the same objects syncd
# creates from allot-lab.yaml (project QOS per team, general, spot, zero-GPU default
# account). Users: alice, carol -> team-a; dave -> team-b; bob -> default only.
set -eu
LAB=${LAB:-/tmp/allot-lab}
export SLURM_CONF=$LAB/etc/slurm.conf
GRACE=${SPOT_GRACE:-10}
S="sacctmgr -i"
{
$S add qos spot MaxWall=1-00:00:00 PreemptMode=requeue GraceTime="$GRACE" Priority=0
$S add qos general GrpTRES=gres/gpu=8 MaxTRESPerAccount=gres/gpu=4 MaxWall=3-00:00:00 Priority=50 Preempt=spot
$S add qos team-a GrpTRES=gres/gpu=8,cpu=16,mem=65536 Priority=100 Preempt=spot
$S add qos team-b GrpTRES=gres/gpu=4,cpu=8,mem=32768 Priority=100 Preempt=spot
$S add account default Description=allot-managed Organization=allot GrpTRES=gres/gpu=0
$S add account team-a Description=allot-managed Organization=allot
$S add account team-b Description=allot-managed Organization=allot
$S add user bob Account=default QOS=normal DefaultQOS=normal
$S add user alice,carol Account=team-a QOS=team-a,general,spot DefaultQOS=team-a
$S add user dave Account=team-b QOS=team-b,general,spot DefaultQOS=team-b
} >/dev/null
# Make sure slurmctld's cache has everything before tests submit.
for _ in $(seq 1 50); do
    scontrol show assoc_mgr users=alice flags=users 2>/dev/null | grep -q 'DefAccount=team-a' && break
    sleep 0.2
done
