#!/bin/bash
# lab-up.sh - bring up a throw-away Slurm cluster on loopback for allot's tests.
#
# From nothing: installs the Debian packages it needs if they are missing, then starts
# munged, MariaDB, slurmdbd, slurmctld and N slurmd (8 fake GPUs each) in $LAB, all as
# root, with accounting enforcement and QOS preemption as allot's policy needs. Every PID
# is recorded so lab-down.sh stops exactly what this started. Several labs can run at once
# with different LAB: ports are picked free at start unless LAB_PORT_BASE is given.
#
# Knobs (environment):
#   LAB=/tmp/allot-lab        lab directory (wiped first)
#   LAB_PORT_BASE=<free>      mysql=B+6, slurmctld=B+17, slurmdbd=B+19, slurmd nK=B+20+K
#                             (unset: a block of 21+LAB_NODES ports free right now)
#   LAB_NODES=2 LAB_GPUS=8    nodes n1..nN, fake gres/gpu per node
#   LAB_GPU_TYPE=<type>       the GPUs have that type (Gres=gpu:<type>:N); unset: untyped
#   LAB_JOB_SUBMIT=allot      JobSubmitPlugins (empty: none)
#   LAB_PLUGINS="a.so ..."    copied (new inode) into $LAB/plugins, which is on PluginDir
#   ALLOT_CONFIG=<file>       allot.yaml used by slurmctld's job_submit/allot (copied into $LAB/etc)
#   LAB_EXTRA_CONF="..."      extra slurm.conf lines
#   LAB_DEBUG=info            daemon log level
#   LAB_USERS_FILE=<file>     Unix users to create (default lab-directory.txt; /dev/null: none)
# Afterwards: source "$LAB/env.sh" (exports LAB, SLURM_CONF) or tests/lab/lab-lib.sh.
set -euo pipefail

LAB=${LAB:-/tmp/allot-lab}
NODES=${LAB_NODES:-2}
GPUS=${LAB_GPUS:-8}
GPU_TYPE=${LAB_GPU_TYPE:-}
JS=${LAB_JOB_SUBMIT-allot}
DBG=${LAB_DEBUG:-info}
HERE=$(cd "$(dirname "$0")" && pwd)
if [ -n "${LAB_PORT_BASE:-}" ]; then
    B=$LAB_PORT_BASE
else
    # shellcheck disable=SC1091
    . "$HERE/../lib/harness.sh"
    B=$(free_port_block $((21 + NODES)))
fi
MYSQL_PORT=$((B + 6)) CTLD_PORT=$((B + 17)) DBD_PORT=$((B + 19))

t0=$(date +%s%N)
say() { printf '[%5.1fs] %s\n' "$(( ($(date +%s%N) - t0) / 100000000 ))e-1" "$*"; }
die() { echo "lab-up: $*" >&2; exit 1; }
waitfor() { # waitfor <seconds> <what> <cmd...>
    local end=$(( $(date +%s) + $1 )) what=$2; shift 2
    while [ "$(date +%s)" -lt "$end" ]; do timeout 10 "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
    timeout 10 "$@" || true
    die "timed out waiting for $what (logs in $LAB/log)"
}

[ "$(id -u)" = 0 ] || die "must run as root (the lab starts Slurm's daemons as root)"

# ------------------------------------------------------------------ packages
need=()
for bin in munged mungekey mariadbd mariadb-install-db slurmdbd slurmctld slurmd sbatch sacctmgr; do
    command -v "$bin" >/dev/null 2>&1 || need+=("$bin")
done
[ -e /usr/lib/x86_64-linux-gnu/slurm-wlm/accounting_storage_mysql.so ] || need+=(mysql-plugin)
if [ ${#need[@]} -gt 0 ]; then
    say "installing Slurm, munge and MariaDB (missing: ${need[*]})"
    export DEBIAN_FRONTEND=noninteractive
    apt-get -o DPkg::Lock::Timeout=900 update -q >/dev/null
    apt-get -o DPkg::Lock::Timeout=900 install -y -q --no-install-recommends \
        munge slurmctld slurmd slurmdbd slurm-client slurm-wlm-mysql-plugin \
        slurm-wlm-basic-plugins mariadb-server bc >/dev/null
fi

if ls "$LAB"/run/*.pid >/dev/null 2>&1; then die "$LAB has PID files: run lab-down.sh first"; fi
rm -rf "$LAB"
mkdir -p "$LAB"/{etc,munge,mysql,spool/ctld,log,run,tmp,plugins,dev}
chmod 755 "$LAB" "$LAB/munge"   # munged wants an o+x socket dir (gotcha G2)
chmod 1777 "$LAB/tmp"           # job output of every user

# ------------------------------------------------------------------ test users
# Jobs run as the users of the lab directory, with its uids (allot-syncd writes an
# association only for a user whose uid resolves the same here); created once and recorded
# so lab-down.sh can remove them.
# Labs start and stop at the same moment under make check -j: one lock orders every lab's
# user creation and removal, and each lab marks that it uses the users (lab-down.sh removes
# them only when no other lab's mark is left).
exec 8>/tmp/allot-lab-users.lock
flock 8
while read -r u uid _; do
    case $u in '#'* | '') continue ;; esac
    if ! id "$u" >/dev/null 2>&1; then
        # useradd gives up at once when anything else holds /etc/passwd's lock: try a while.
        for _ in 1 2 3 4 5 6 7 8 9 10; do
            if useradd -M -d /nonexistent -s /bin/bash -u "$uid" "$u" 2>"$LAB/log/useradd.log"; then
                echo "$u" >>/tmp/allot-lab-created-users
                break
            fi
            id "$u" >/dev/null 2>&1 && break
            sleep 0.5
        done
        id "$u" >/dev/null 2>&1 || die "cannot create user $u (uid $uid): $(cat "$LAB/log/useradd.log")"
    fi
done <"${LAB_USERS_FILE-$HERE/lab-directory.txt}"
: >"$LAB/run/uses-lab-users"
exec 8>&-

# ------------------------------------------------------------------ munge
mungekey -c -k "$LAB/munge/munge.key" -b 1024 >/dev/null 2>&1
chmod 600 "$LAB/munge/munge.key"
munged -S "$LAB/munge/munge.socket.2" --key-file="$LAB/munge/munge.key" \
    --pid-file="$LAB/run/munged.pid" --log-file="$LAB/log/munged.log" \
    --seed-file="$LAB/munge/munged.seed" --num-threads=4
waitfor 60 munged bash -c "munge -S $LAB/munge/munge.socket.2 -n | unmunge -S $LAB/munge/munge.socket.2"
say "munged up"

# ------------------------------------------------------------------ MariaDB
# A temporary directory of its own: labs bootstrapping at the same moment with the shared
# /tmp fail now and then ("Could not remove temporary table '/tmp/#sql-temptable-...'").
mkdir -p "$LAB/mysql/tmp"
TMPDIR=$LAB/mysql/tmp mariadb-install-db --no-defaults --datadir="$LAB/mysql/data" --user=root \
    --auth-root-authentication-method=normal --skip-test-db >"$LAB/log/mariadb-install.log" 2>&1 ||
    die "mariadb-install-db failed: $(grep -E 'ERROR|Warning' "$LAB/log/mariadb-install.log" | tail -5)"
setsid mariadbd --no-defaults --datadir="$LAB/mysql/data" --tmpdir="$LAB/mysql/tmp" --socket="$LAB/mysql/mysqld.sock" \
    --port=$MYSQL_PORT --bind-address=127.0.0.1 --user=root --pid-file="$LAB/run/mariadbd.pid" \
    --log-error="$LAB/log/mariadbd.log" --skip-name-resolve --skip-log-bin \
    --innodb-buffer-pool-size=256M --innodb-log-file-size=64M --innodb-lock-wait-timeout=900 \
    --innodb-flush-log-at-trx-commit=2 </dev/null >/dev/null 2>&1 &
MYSQL="mariadb --no-defaults -S $LAB/mysql/mysqld.sock -uroot"
waitfor 180 mariadbd $MYSQL -e 'select 1'
$MYSQL <<SQL
CREATE DATABASE slurm_acct_db;
CREATE USER 'slurm'@'127.0.0.1' IDENTIFIED BY 'slurmpw';
CREATE USER 'slurm'@'localhost' IDENTIFIED BY 'slurmpw';
GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';
GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost';
SQL
say "mariadbd up on port $MYSQL_PORT"

# ------------------------------------------------------------------ configuration
PLUGDIR=/usr/lib/x86_64-linux-gnu/slurm-wlm
# Names that differ between Slurm releases (docs/slurm-versions.md). 23.02 moved the
# preemption user signal to PreemptParameters; 22.05 knows only the SlurmctldParameters form.
SLURM_RELEASE=$(slurmctld -V | awk '{print $2}')
case $SLURM_RELEASE in
2[01].* | 22.*) PREEMPT_SIGNAL_CONF=SlurmctldParameters=preempt_send_user_signal ;;
*) PREEMPT_SIGNAL_CONF=PreemptParameters=send_user_signal ;;
esac
# From 24.05 slurmd sets up cgroups even with proctrack/linuxproc unless cgroup.conf says
# CgroupPlugin=disabled (known from 24.05); the lab's jobs are plain processes, and a chroot
# or container may have no /sys/fs/cgroup.
case $SLURM_RELEASE in
2[0-3].*) ;;
*) echo "CgroupPlugin=disabled" >"$LAB/etc/cgroup.conf" ;;
esac
HOST=$(hostname -s)
NODELIST="n[1-$NODES]"; [ "$NODES" = 1 ] && NODELIST=n1
cat >"$LAB/etc/slurm.conf" <<CONF
ClusterName=lab
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$LAB/munge/munge.socket.2
# Connections to slurmdbd take their munge options from here, not AuthInfo (gotcha G3).
AccountingStoragePass=socket=$LAB/munge/munge.socket.2
CredType=cred/munge
StateSaveLocation=$LAB/spool/ctld
SlurmdSpoolDir=$LAB/spool/d-%n
SlurmctldPidFile=$LAB/run/slurmctld.pid
SlurmdPidFile=$LAB/run/slurmd-%n.pid
SlurmctldLogFile=$LAB/log/slurmctld.log
SlurmdLogFile=$LAB/log/slurmd-%n.log
SlurmctldDebug=$DBG
SlurmdDebug=$DBG
PluginDir=$PLUGDIR:$LAB/plugins
PlugStackConfig=$LAB/etc/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
MpiDefault=none
SwitchType=switch/none
SlurmdParameters=config_overrides
ReturnToService=2
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=1024
GresTypes=gpu
SchedulerType=sched/backfill
SchedulerParameters=bf_interval=5,sched_min_interval=100000
PriorityType=priority/multifactor
PriorityWeightQOS=10000
PriorityWeightAge=100
PreemptType=preempt/qos
PreemptMode=REQUEUE
# The batch script of a preempted job gets its --signal=B:... at preemption (gotcha G9).
$PREEMPT_SIGNAL_CONF
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort=$DBD_PORT
AccountingStorageTRES=gres/gpu
AccountingStorageEnforce=associations,limits,qos,safe
JobCompType=jobcomp/none
MinJobAge=30
MaxJobCount=100000
KillWait=10
InactiveLimit=0
SlurmctldTimeout=30
SlurmdTimeout=60
MessageTimeout=20
TmpFS=$LAB/tmp
CONF
[ -n "$JS" ] && echo "JobSubmitPlugins=$JS" >>"$LAB/etc/slurm.conf"   # an empty line is a parse error (G1)
[ -n "${LAB_EXTRA_CONF:-}" ] && printf '%s\n' "$LAB_EXTRA_CONF" >>"$LAB/etc/slurm.conf"
for k in $(seq 1 "$NODES"); do
    echo "NodeName=n$k NodeHostName=n$k NodeAddr=127.0.0.1 Port=$((B + 20 + k)) CPUs=16 Boards=1 SocketsPerBoard=2 CoresPerSocket=8 ThreadsPerCore=1 RealMemory=64000 Gres=gpu:${GPU_TYPE:+$GPU_TYPE:}$GPUS State=UNKNOWN" >>"$LAB/etc/slurm.conf"
done
echo "PartitionName=main Nodes=$NODELIST Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO" >>"$LAB/etc/slurm.conf"

# 22.05 drops GPUs without File=, and File= must stat as a device (gotcha G5).
: >"$LAB/etc/gres.conf"
for k in $(seq 1 "$NODES"); do
    mkdir -p "$LAB/dev/n$k"
    for g in $(seq 0 $((GPUS - 1))); do ln -s /dev/null "$LAB/dev/n$k/gpu$g"; done
    echo "NodeName=n$k Name=gpu ${GPU_TYPE:+Type=$GPU_TYPE }File=$LAB/dev/n$k/gpu[0-$((GPUS - 1))]" >>"$LAB/etc/gres.conf"
done
echo "# plugstack.conf: tests append 'required /path/spank_x.so ...' lines" >"$LAB/etc/plugstack.conf"

cat >"$LAB/etc/slurmdbd.conf" <<CONF
AuthType=auth/munge
AuthInfo=socket=$LAB/munge/munge.socket.2
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=$DBD_PORT
SlurmUser=root
DebugLevel=$DBG
LogFile=$LAB/log/slurmdbd.log
PidFile=$LAB/run/slurmdbd.pid
PluginDir=$PLUGDIR
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$MYSQL_PORT
StorageUser=slurm
StoragePass=slurmpw
StorageLoc=slurm_acct_db
CONF
chmod 600 "$LAB/etc/slurmdbd.conf"   # slurmdbd refuses a readable one (G7)

for so in ${LAB_PLUGINS:-}; do install -m 0755 "$so" "$LAB/plugins/"; done   # new inode (G13)
if [ -n "${ALLOT_CONFIG:-}" ]; then
    install -m 0644 "$ALLOT_CONFIG" "$LAB/etc/allot.yaml"
fi
cat >"$LAB/env.sh" <<ENV
export LAB=$LAB
export SLURM_CONF=$LAB/etc/slurm.conf
export ALLOT_CONFIG=$LAB/etc/allot.yaml
export LAB_PORT_BASE=$B
ENV
# shellcheck disable=SC1091
. "$LAB/env.sh"

# ------------------------------------------------------------------ daemons
cd "$LAB"   # daemons inherit the cwd: keep any core file inside the lab
setsid slurmdbd -D </dev/null >"$LAB/log/slurmdbd.stdout" 2>&1 &
echo $! >"$LAB/run/slurmdbd.launch.pid"
waitfor 180 slurmdbd sacctmgr -n list cluster
sacctmgr -i add cluster lab >/dev/null
say "slurmdbd up on port $DBD_PORT"

# slurmctld runs as a daemon, as under systemd: from 23.11 `scontrol reconfigure` hands over
# to a new process only once that one has started, and a daemon keeps running when it cannot
# (gotcha G22). Its PID is then SlurmctldPidFile's, copied to slurmctld.launch.pid, which
# lab-down, the lab tests and lab-lib's ctld_* helpers read (ctld_reconfigure refreshes it).
setsid slurmctld -i </dev/null >"$LAB/log/slurmctld.stdout" 2>&1
waitfor 180 slurmctld scontrol ping
cp "$LAB/run/slurmctld.pid" "$LAB/run/slurmctld.launch.pid"
say "slurmctld up on port $CTLD_PORT"

for k in $(seq 1 "$NODES"); do
    mkdir -p "$LAB/spool/d-n$k"
    setsid slurmd -D -N "n$k" </dev/null >"$LAB/log/slurmd-n$k.stdout" 2>&1 &
    echo $! >"$LAB/run/slurmd-n$k.launch.pid"
done
waitfor 180 "$NODES idle nodes" bash -c "[ \$(sinfo -h -N -o '%N %T' | grep -c ' idle\$') -ge $NODES ]"
say "lab up in $LAB: $NODES nodes x $GPUS GPUs (source $LAB/env.sh)"
