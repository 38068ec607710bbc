#!/bin/bash
# demo-lib.sh - the whole allot system on one machine, for `./dev.sh demo` and
# tests/demo/walkthrough.sh. Source it, then:
#
#   demo_up      allot-scimd (TLS) loaded with `allot-scimd apply etc/demo/directory.yaml`,
#                the lab's Slurm (tests/lab/lab-up.sh) with job_submit/allot and spank_allot,
#                allot-syncd creating the accounting and the identity caches from allot-scimd,
#                a compute-node sshd gated by pam_allot and fed by allot-keys, allot-exporter,
#                one allot-doctor run; then the first GPU job, and allot-report's page
#                rewritten every minute in $DEMO/report (demo_report). Sets T_START,
#                T_UP, T_SYNC, T_JOB (epoch seconds) for the timing line.
#   in_demo CMD  runs CMD (as root) in the demo's mount namespace
#   as_user U CMD  runs CMD as directory user U there, in U's home, with the demo's environment
#   demo_down    stops everything demo_up started, by PID (tests/lab/lab-down.sh for Slurm)
#
# The demo users (etc/demo/directory.yaml) exist only in allot's caches: every daemon runs in
# one mount namespace, held by a sleeping process, where /etc/nsswitch.conf says
# "files allot", libnss_allot.so.2 is in the system library directory, /var/lib/allot (the
# caches allot-syncd writes) and /home are overlays and /etc/pam.d stacks pam_allot for sshd.
# The host's files are never edited. Needs root. Knobs: DEMO (default /run/allot-demo; not
# under /tmp: sshd refuses an AuthorizedKeysCommand below a world-writable directory),
# DEMO_KEEP=1 (demo_down keeps $DEMO and its logs),
# ALLOT_TOP_BUILDDIR (default: the source tree), ALLOT_SCIMD (default: the built allot-scimd).
# shellcheck disable=SC2034 # T_* and FIRST_JOB are read by the scripts that source this
DEMO_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
DEMO_BUILD=${ALLOT_TOP_BUILDDIR:-$DEMO_SRC}
DEMO=${DEMO:-/run/allot-demo}
# shellcheck disable=SC1091
. "$DEMO_SRC/tests/lib/harness.sh"

now() { date +%s.%N; }
say() { printf '  %s\n' "$*"; }
demo_die() { echo "demo: $*" >&2; return 1; }
_ns_pid() { cat "$DEMO/run/ns.pid" 2>/dev/null; }
# -r -w: setns() into a mount namespace moves root and cwd to the namespace's root, which
# in a chroot (the matrix legs) is the host's: keep the namespace process's own.
in_demo() { nsenter -t "$(_ns_pid)" -m -r -w -- env SLURM_CONF="$DEMO/lab/etc/slurm.conf" "$@"; }
as_user() {
    local u=$1
    shift
    in_demo runuser -u "$u" -- env -C "/home/$u" HOME="/home/$u" USER="$u" \
        PATH="$DEMO/bin:/usr/local/bin:/usr/bin:/bin" SLURM_CONF="$DEMO/lab/etc/slurm.conf" \
        ALLOT_CONFIG="$DEMO/lab/etc/allot.yaml" TEMPLATES="$DEMO_SRC/etc/templates" \
        REPORT="$DEMO/report" "$@"
}
# start_bg NAME CMD...: a daemon inside the namespace, its PID in $DEMO/run/NAME.pid.
start_bg() {
    local name=$1
    shift
    setsid nsenter -t "$(_ns_pid)" -m -r -w -- "$@" </dev/null >"$DEMO/log/$name.log" 2>&1 &
    echo $! >"$DEMO/run/$name.pid"
}

demo_config() { # the policy of etc/demo/allot.yaml and this machine's sections
    cat "$DEMO_SRC/etc/demo/allot.yaml"
    cat <<YAML
identity:
  scim_url: https://127.0.0.1:$SCIM_PORT/scim/v2
  token_file: $DEMO/secrets/syncd.token
  ca_file: $DEMO/tls/cert.pem
  uid_min: 46000
  uid_max: 46999
  gid_min: 46000
  gid_max: 46999
  home_prefix: /home
  cache_dir: /var/lib/allot
node:
  role: compute
  admin_group: hpc-admins
  run_dir: $DEMO/registry
scim_server:
  listen: 127.0.0.1:$SCIM_PORT
  tls_cert: $DEMO/tls/cert.pem
  tls_key: $DEMO/tls/key.pem
  store: $DEMO/scimd/directory.db
  threads: 1
oidc:
  issuer: https://127.0.0.1:$SCIM_PORT
  audience: demo
  keys_dir: $DEMO/scimd/oidc
YAML
}

_start_namespace() {
    local libdir
    libdir=$(dirname "$(readlink -f "$(ldconfig -p | awk '/libc.so.6 .*x86-64/ {print $NF; exit}')")")
    mkdir -p "$DEMO"/{ns/lib,ns/libwk,ns/var,ns/varwk,ns/home,ns/homewk}
    install -m 0644 "$DEMO_BUILD/plugins/nss/.libs/libnss_allot.so.2" "$DEMO/ns/lib/"
    mkdir -p "$DEMO/ns/var/allot" && chmod 0755 "$DEMO/ns/var/allot"
    chgrp nogroup "$DEMO/ns/var/allot" # keys.cache takes this group: readable by sshd's AKC user
    sed 's/^passwd:.*/passwd:         files allot/; s/^group:.*/group:          files allot/' \
        /etc/nsswitch.conf >"$DEMO/ns/nsswitch.conf"
    cp -a /etc/pam.d "$DEMO/ns/pam.d"
    sed -i "0,/^@include common-account/s||account required $DEMO/bin/pam_allot.so config=$DEMO/lab/etc/allot.yaml\n@include common-account|" \
        "$DEMO/ns/pam.d/sshd"
    grep -q pam_allot "$DEMO/ns/pam.d/sshd" || demo_die "cannot stack pam_allot in a copy of /etc/pam.d/sshd" || return 1
    setsid unshare -m --propagation private sh -c '
        D=$1 LIBDIR=$2
        mount --bind "$D/ns/nsswitch.conf" /etc/nsswitch.conf &&
        mount --bind "$D/ns/pam.d" /etc/pam.d &&
        mount -t overlay overlay -o lowerdir=/var/lib,upperdir="$D/ns/var",workdir="$D/ns/varwk" /var/lib &&
        mount -t overlay overlay -o lowerdir=/home,upperdir="$D/ns/home",workdir="$D/ns/homewk" /home &&
        mount -t overlay overlay -o lowerdir="$LIBDIR",upperdir="$D/ns/lib",workdir="$D/ns/libwk" "$LIBDIR" &&
        touch "$D/run/ns.ready" && exec sleep infinity' sh "$DEMO" "$libdir" </dev/null >"$DEMO/log/ns.log" 2>&1 &
    echo $! >"$DEMO/run/ns.pid"
    wait_for 10 "the demo's mount namespace" test -e "$DEMO/run/ns.ready"
}

_tls_and_keys() {
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 30 \
        -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 \
        -keyout "$DEMO/tls/key.pem" -out "$DEMO/tls/cert.pem" 2>/dev/null || return 1
    chmod 600 "$DEMO/tls/key.pem"
    chmod 644 "$DEMO/tls/cert.pem"
    local u dir=$DEMO/secrets/directory.yaml
    cp "$DEMO_SRC/etc/demo/directory.yaml" "$dir"
    for u in ada ben cleo dan; do
        ssh-keygen -q -t ed25519 -N '' -C "$u@demo" -f "$DEMO/keys/$u" || return 1
        sed -i "s|DEMO-KEY-$u|$(cut -d' ' -f1-2 <"$DEMO/keys/$u.pub")|" "$dir"
    done
}

# Homes, SSH client settings and keys of the directory users, in the namespace's /home.
_homes() {
    local u uid
    for u in ada ben cleo dan; do
        uid=$(in_demo id -u "$u") || return 1
        in_demo sh -c "mkdir -p /home/$u/.ssh && cp $DEMO/keys/$u /home/$u/.ssh/id_ed25519 &&
            printf 'Host node\n  HostName 127.0.0.1\n  Port $SSH_PORT\n  StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null\n  LogLevel ERROR\n  BatchMode yes\n  IdentitiesOnly yes\n' >/home/$u/.ssh/config &&
            chmod 700 /home/$u/.ssh && chmod 600 /home/$u/.ssh/* && chown -R $uid:$uid /home/$u"
    done
}

_sshd() {
    ssh-keygen -q -t ed25519 -N '' -f "$DEMO/node/hostkey"
    cat >"$DEMO/node/sshd_config" <<C
Port $SSH_PORT
ListenAddress 127.0.0.1
HostKey $DEMO/node/hostkey
PidFile $DEMO/node/sshd.pid
AuthorizedKeysFile none
AuthorizedKeysCommand $DEMO/bin/allot-keys --config $DEMO/lab/etc/allot.yaml %u
AuthorizedKeysCommandUser nobody
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM yes
PermitRootLogin prohibit-password
SetEnv SLURM_CONF=$DEMO/lab/etc/slurm.conf
# What docs/node.md tells sites on OpenSSH 9.8+: the login node (here 127.0.0.1) exempt.
$(sshd_has_penalties && echo "PerSourcePenaltyExemptList 127.0.0.1")
C
    [ -d /run/sshd ] || mkdir -m 0755 /run/sshd
    mkdir -p -m 0755 /run/sshd # what sshd's unit makes (RuntimeDirectory=sshd)
    start_bg sshd /usr/sbin/sshd -D -f "$DEMO/node/sshd_config" -E "$DEMO/log/sshd-auth.log"
    wait_port "$SSH_PORT" 20
}

_syncd_knows() { in_demo scontrol show assoc_mgr users="$1" flags=users 2>/dev/null | grep -q "DefAccount=$2"; }

demo_up() {
    [ "$(id -u)" = 0 ] || demo_die "the demo needs root (it starts Slurm's daemons)" || return 1
    [ ! -e "$DEMO/run/ns.pid" ] || demo_die "a demo runs in $DEMO: stop it first (./dev.sh demo-down)" || return 1
    T_START=$(now)
    rm -rf "$DEMO"
    mkdir -p "$DEMO"/{run,log,tls,secrets,keys,bin,scimd,node,registry}
    chmod 755 "$DEMO" "$DEMO/bin" "$DEMO/node"
    chmod 700 "$DEMO/secrets" "$DEMO/keys" "$DEMO/scimd"
    local b=$DEMO_BUILD
    install -m 0755 "$b/syncd/keys/allot-keys" "$b/plugins/pam/.libs/pam_allot.so" "$DEMO/bin/"
    ln -s "$b/mylimits/mylimits" "$DEMO/bin/mylimits"
    ln -s "$b/mylimits/mylimits" "$DEMO/bin/myquota" # installed as the same command
    SCIM_PORT=$(free_port) && SSH_PORT=$(free_port) && EXPORTER_PORT=$(free_port) || return 1
    demo_config >"$DEMO/allot.yaml"
    chmod 644 "$DEMO/allot.yaml"
    _tls_and_keys || demo_die "cannot make the TLS certificate and SSH keys" || return 1
    _start_namespace || return 1

    say "allot-scimd: apply etc/demo/directory.yaml, serve SCIM over TLS on 127.0.0.1:$SCIM_PORT"
    local scimd_bin=${ALLOT_SCIMD:-$b/scim/allot-scimd}
    local scimd=(in_demo "$scimd_bin" -c "$DEMO/allot.yaml")
    "${scimd[@]}" apply "$DEMO/secrets/directory.yaml" >"$DEMO/log/scimd-apply.log" 2>&1 ||
        { cat "$DEMO/log/scimd-apply.log"; demo_die "allot-scimd apply failed"; return 1; }
    "${scimd[@]}" token create syncd --scope read-inactive 2>"$DEMO/log/scimd-token.log" |
        grep -o 'allot_[A-Za-z0-9_-]*' | tail -1 >"$DEMO/secrets/syncd.token"
    [ -s "$DEMO/secrets/syncd.token" ] || { cat "$DEMO/log/scimd-token.log"; demo_die "no syncd token"; return 1; }
    # allot-keys reads the token as sshd's AuthorizedKeysCommandUser (nobody).
    chmod 711 "$DEMO/secrets"
    chown nobody "$DEMO/secrets/syncd.token"
    chmod 400 "$DEMO/secrets/syncd.token"
    start_bg scimd "$scimd_bin" -c "$DEMO/allot.yaml" serve
    wait_port "$SCIM_PORT" 30 || { cat "$DEMO/log/scimd.log"; demo_die "allot-scimd did not start"; return 1; }

    say "Slurm: munged, MariaDB, slurmdbd, slurmctld (job_submit/allot), 2 slurmd (spank_allot)"
    in_demo env LAB="$DEMO/lab" LAB_USERS_FILE=/dev/null ALLOT_CONFIG="$DEMO/allot.yaml" \
        LAB_PLUGINS="$b/plugins/job_submit/.libs/job_submit_allot.so $b/plugins/spank/.libs/spank_allot.so" \
        "$DEMO_SRC/tests/lab/lab-up.sh" >"$DEMO/log/lab-up.log" 2>&1 ||
        { tail -20 "$DEMO/log/lab-up.log"; demo_die "lab-up failed"; return 1; }
    echo "required $DEMO/lab/plugins/spank_allot.so config=$DEMO/lab/etc/allot.yaml run_dir=$DEMO/registry" \
        >>"$DEMO/lab/etc/plugstack.conf"
    # slurmd decides at start whether SPANK has a prolog to run: restart them in the namespace.
    in_demo env LAB="$DEMO/lab" bash -c ". '$DEMO_SRC/tests/lab/lab-lib.sh' && slurmd_restart" >"$DEMO/log/slurmd-restart.log" 2>&1 ||
        { cat "$DEMO/log/slurmd-restart.log"; demo_die "slurmd did not restart with spank_allot"; return 1; }

    T_UP=$(now)
    say "allot-syncd: accounts, QOS, associations and identity caches from allot-scimd"
    # One cycle publishes the caches; a user's association needs the uid to resolve through
    # them (libnss_allot), so the accounting converges in the cycle after; then the daemon.
    local _
    for _ in 1 2; do
        in_demo env SLURM_CONF="$DEMO/lab/etc/slurm.conf" "$b/syncd/allot-syncd" -c "$DEMO/lab/etc/allot.yaml" \
            --once >>"$DEMO/log/allot-syncd-once.log" 2>&1 ||
            { tail -20 "$DEMO/log/allot-syncd-once.log"; demo_die "allot-syncd failed"; return 1; }
    done
    local spec
    for spec in ada:vision ben:vision cleo:nlp dan:default; do
        wait_for 60 "slurmctld to know ${spec%%:*}" _syncd_knows "${spec%%:*}" "${spec#*:}" ||
            { tail -20 "$DEMO/log/allot-syncd-once.log"; return 1; }
    done
    T_SYNC=$(now)
    start_bg syncd env SLURM_CONF="$DEMO/lab/etc/slurm.conf" "$b/syncd/allot-syncd" -c "$DEMO/lab/etc/allot.yaml"

    _homes || demo_die "cannot make the users' homes" || return 1
    say "compute-node sshd on 127.0.0.1:$SSH_PORT: allot-keys and pam_allot"
    _sshd || { cat "$DEMO/log/sshd.log"; demo_die "sshd did not start"; return 1; }
    say "allot-exporter on 127.0.0.1:$EXPORTER_PORT"
    start_bg exporter env SLURM_CONF="$DEMO/lab/etc/slurm.conf" "$b/exporter/allot-exporter" \
        --config "$DEMO/lab/etc/allot.yaml" --listen "127.0.0.1:$EXPORTER_PORT"
    wait_port "$EXPORTER_PORT" 30 || say "(allot-exporter did not start: $DEMO/log/exporter.log)"

    # The first policy-enforced GPU job: accepted by job_submit/allot into ada's project QOS.
    local j
    j=$(as_user ada sbatch --parsable -J first --gpus=1 -o /dev/null --wrap true) ||
        demo_die "the first GPU job was not accepted" || return 1
    T_JOB=$(now)
    FIRST_JOB=$j
    say "allot-report's page in $DEMO/report, rewritten every minute"
    demo_report
    cat >"$DEMO/env.sh" <<ENV
export DEMO=$DEMO SLURM_CONF=$DEMO/lab/etc/slurm.conf ALLOT_CONFIG=$DEMO/lab/etc/allot.yaml
export SCIM_PORT=$SCIM_PORT SSH_PORT=$SSH_PORT EXPORTER_PORT=$EXPORTER_PORT
ENV
}

# allot-report's page (index.html and a CSV per view) in $DEMO/report, rewritten every minute
# as allot-report.timer does hourly on a site; 5-minute periods over the last hour, so the
# demo's minutes of jobs show up by team and tier. The loop is its own process group.
demo_report() {
    # shellcheck disable=SC2016 # $0 and $@ are the loop's own arguments
    start_bg report env SLURM_CONF="$DEMO/lab/etc/slurm.conf" sh -c 'while :; do "$0" "$@"; sleep 60; done' \
        "$DEMO_BUILD/report/allot-report" --config "$DEMO/lab/etc/allot.yaml" \
        --period 5m --periods 12 --html "$DEMO/report"
}

demo_doctor() { # allot-doctor's controller checks, one line per finding
    in_demo env SLURM_CONF="$DEMO/lab/etc/slurm.conf" "$DEMO_BUILD/doctor/allot-doctor" \
        -c "$DEMO/lab/etc/allot.yaml" --role controller
}

demo_down() {
    [ -d "$DEMO/run" ] || { echo "demo-down: no demo at $DEMO"; return 0; }
    local n pid
    for n in sshd exporter syncd scimd; do
        pid=$(cat "$DEMO/run/$n.pid" 2>/dev/null) || continue
        kill -TERM "$pid" 2>/dev/null
    done
    pid=$(cat "$DEMO/run/report.pid" 2>/dev/null) && kill -TERM -- "-$pid" 2>/dev/null # the loop and its sleep
    if [ -s "$DEMO/run/ns.pid" ] && [ -d "$DEMO/lab/run" ]; then
        in_demo env LAB="$DEMO/lab" "$DEMO_SRC/tests/lab/lab-down.sh" >"$DEMO/log/lab-down.log" 2>&1
    fi
    pid=$(cat "$DEMO/run/ns.pid" 2>/dev/null) && kill -TERM "$pid" 2>/dev/null
    for n in sshd exporter syncd scimd report ns; do
        pid=$(cat "$DEMO/run/$n.pid" 2>/dev/null) || continue
        wait_for 20 "$n to stop" _gone "$pid" || kill -KILL "$pid" 2>/dev/null
    done
    if [ "${DEMO_KEEP:-0}" = 1 ]; then echo "demo-down: stopped; kept $DEMO"; return 0; fi
    rm -rf "$DEMO"
    echo "demo-down: stopped and removed $DEMO"
}
_gone() { ! kill -0 "$1" 2>/dev/null; }

# The walkthrough (etc/demo/walkthrough.txt). walk_print: the steps as the demo prints them.
# walk_run: runs every step, each expectation a check (pass/fail of tests/lib/harness.sh).
walk_print() {
    local line
    while IFS= read -r line; do
        case $line in
        '## '*) printf '\n  %s\n' "${line#\#\# }" ;;
        '#'*) ;;
        *'$ '*) printf '    ./dev.sh demo-shell %s   then:  %s\n' "${line%%\$ *}" "${line#*\$ }" ;;
        '= '* | '~ '*) printf '        -> %s\n' "${line#? }" ;;
        esac
    done <"$DEMO_SRC/etc/demo/walkthrough.txt"
}

_walk_out() { WALK_OUT=$(as_user "$WALK_USER" bash -c "$WALK_CMD" </dev/null 2>&1); }
_walk_matches() { _walk_out; printf '%s' "$WALK_OUT" | grep -Ezq -- "$1" && return 0; sleep 1; return 1; }
walk_run() {
    local line title=""
    while IFS= read -r line; do
        case $line in
        '## '*) title=${line#\#\# }; note "$title" ;;
        '#'*) ;;
        *'$ '*) WALK_USER=${line%%\$ *} WALK_CMD=${line#*\$ }; _walk_out ;;
        '= '*)
            if printf '%s' "$WALK_OUT" | grep -Ezq -- "${line#= }"; then pass "$WALK_USER\$ $WALK_CMD: ${line#= }"
            else fail "$WALK_USER\$ $WALK_CMD: ${line#= }" "got: $WALK_OUT"; fi ;;
        '~ '*)
            if wait_for 240 "${line#\~ }" _walk_matches "${line#\~ }"; then pass "$WALK_USER\$ $WALK_CMD: ${line#\~ }"
            else fail "$WALK_USER\$ $WALK_CMD: ${line#\~ }" "got: $WALK_OUT"; fi ;;
        esac
    done <"$DEMO_SRC/etc/demo/walkthrough.txt"
}
