#!/bin/bash
# doctor-node.sh - allot-doctor --role compute on this machine's real sshd and files, seen
# through a private mount namespace: scratch sshd_config (read by a real `sshd -T`), PAM
# stack, nsswitch.conf, /etc/passwd and /etc/group in an overlay on /etc, a scratch
# token, identity caches and software tree. The correct node reports no problem; then each
# node check in turn: break exactly that thing, show the finding with its fix, apply the
# printed fix and show the check passes again. Needs root (skips with 77 otherwise); no
# Slurm lab: the Slurm, accounting and controller identity checks are in doctor-lab.sh.
set -u
SRC=${ALLOT_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${ALLOT_TOP_BUILDDIR:-$SRC}
D=${DOCTOR_BIN:-$BUILD/doctor/allot-doctor}
# shellcheck disable=SC1091
. "$SRC/tests/lib/harness.sh"
[ "$(id -u)" = 0 ] || skip "needs root (a mount namespace, the walk as nobody)"
for c in unshare jq ssh-keygen /usr/sbin/sshd; do command -v "$c" >/dev/null || skip "$c missing"; done
[ -f /etc/pam.d/sshd ] || skip "no /etc/pam.d/sshd (openssh-server)"
[ -n "${DOCTOR_NS:-}" ] || unshare -m true 2>/dev/null || skip "no mount namespace here (unshare -m)"
# Everything below runs in a mount namespace of its own: its mounts vanish with it.
[ -n "${DOCTOR_NS:-}" ] || exec unshare -m --propagation private env DOCTOR_NS=1 "$0" "$@"

harness_tmpdir doctor-node
T=$HARNESS_TMP
chmod 755 "$T"
mkdir -p "$T/slurm" "$T/cache" "$T/sw/bin" "$T/sw/lib" "$T/sw/share"
# sshd -T needs its privilege separation directory; /run of this namespace only.
mount -t tmpfs tmpfs /run && mkdir -p /run/sshd
ssh-keygen -q -t ed25519 -N '' -f "$T/hostkey"

# put FILE: stdin into FILE (through a scratch file: FILE may be among the input).
put() { cat >"$T/new" && cat "$T/new" >"$1"; }
# set_line FILE KEY LINE: the line starting with KEY replaced by LINE (appended if none).
set_line() { { grep -v "^$2[ :]" "$1"; echo "$3"; } | put "$1"; }

# /etc is this namespace's own from here (sshd_config, the PAM stack, nsswitch.conf, passwd).
private_etc "$T" || abort "no overlay on /etc"
mkdir -p /etc/ssh /etc/pam.d
put /etc/ssh/sshd_config <<CONF
HostKey $T/hostkey
AuthorizedKeysCommand /usr/libexec/allot/allot-keys %u
AuthorizedKeysCommandUser nobody
UsePAM yes
$(sshd_has_penalties && echo "PerSourcePenaltyExemptList 127.0.0.1")
CONF
printf 'account required pam_allot.so\n@include common-account\n' | put /etc/pam.d/sshd
printf 'passwd: files allot\ngroup: files allot\nhosts: files\n' | put /etc/nsswitch.conf

export SLURM_CONF=$T/slurm/slurm.conf
echo "ClusterName=node" >"$SLURM_CONF"
echo "required spank_allot.so" >"$T/slurm/plugstack.conf"
echo "secret" >"$T/token" && chmod 0400 "$T/token"
for f in passwd.cache group.cache; do echo x >"$T/cache/$f" && chmod 0644 "$T/cache/$f"; done
echo x >"$T/cache/keys.cache" && chmod 0640 "$T/cache/keys.cache"
echo tool >"$T/sw/bin/tool" && chmod 0755 "$T/sw/bin/tool"
echo lib >"$T/sw/lib/libx.so" && chmod 0644 "$T/sw/lib/libx.so"
echo doc >"$T/sw/share/README" && chmod 0644 "$T/sw/share/README"
CONFIG=$T/allot.yaml
cat >"$CONFIG" <<YAML
node:
  role: compute
identity:
  scim_url: https://scim.example/scim/v2
  token_file: $T/token
  cache_dir: $T/cache
  uid_min: 70000
  uid_max: 80000
  gid_min: 70000
  gid_max: 80000
doctor:
  software_roots:
    - $T/sw
  software_user: nobody
  software_limit: 1000
YAML

# The software root, its user and limit come from allot.yaml's doctor section; ARGS
# (command-line options) override them for the cases that say so.
ARGS=()
doctor() { "$D" -c "$CONFIG" --role compute "${ARGS[@]}" --json; }
finding() { doctor | jq -r --arg id "$1" ".findings[] | select(.id == \$id) | .$2"; }
# fix_part FIX N: the Nth `backquoted` part of a fix.
# shellcheck disable=SC2016 # backquotes, not an expansion
fix_part() { grep -o '`[^`]*`' <<<"$1" | sed -n "${2}p" | tr -d '`'; }

# broken_then_fixed ID SEVERITY NEEDLE APPLY: ID reports SEVERITY with NEEDLE in its fix;
# APPLY (a function given the fix) carries it out; then ID passes.
broken_then_fixed() {
    local fix
    expect_eq "$1 reports $2" "$(finding "$1" severity)" "$2"
    fix=$(finding "$1" fix)
    expect_contains "$1 fix" "$fix" "$3"
    expect_match "$1 says why" "$(finding "$1" why)" '.+\.$'
    "$4" "$fix" || fail "$1 fix applied" "$fix"
    expect_eq "$1 passes after the fix" "$(finding "$1" severity)" ok
}
run_commands() { local i cmd; for i in 1 2; do cmd=$(fix_part "$1" "$i"); [ -n "$cmd" ] && eval "$cmd"; done; true; }
sshd_lines() { local i l; for i in 1 2; do l=$(fix_part "$1" "$i"); set_line /etc/ssh/sshd_config "${l%% *}" "$l"; done; }
sshd_line() { local l; l=$(fix_part "$1" 1); set_line /etc/ssh/sshd_config "${l%% *}" "$l"; }
pam_first() { local l; l=$(fix_part "$1" 1); { echo "$l"; cat /etc/pam.d/sshd; } | put /etc/pam.d/sshd; }
nss_line() { local l; l=$(fix_part "$1" 1); set_line /etc/nsswitch.conf "${l%%:*}" "$l"; }
plugstack_line() { fix_part "$1" 1 >>"$T/slurm/plugstack.conf"; }
yaml_key() { local l; l=$(fix_part "$1" 1); l=${l#*.}; sed -i "s/^  ${l%%:*}:.*/  $l/" "$CONFIG"; }
role_back() { printf 'node:\n  role: compute\n' >>"$CONFIG"; }
no_args() { ARGS=(); }
# yaml_limit FIX: raises the key the fix names (back to the suite's 1000).
yaml_limit() { local k; k=$(fix_part "$1" 1); sed -i "s/^  ${k#doctor.}: .*/  ${k#doctor.}: 1000/" "$CONFIG"; }

# --------------------------------------------------------------- the correct node
out=$(doctor); rc=$?
expect_eq "correct node: exit 0" "$rc" 0
expect_eq "correct node: no problem" \
    "$(jq -r '[.findings[] | select(.severity != "ok") | .id + ": " + .what] | join("; ")' <<<"$out")" ""
expect_eq "correct node: the software root was walked" \
    "$(jq -r '.findings[] | select(.id == "software.'"$T"'/sw") | .what' <<<"$out")" "6 entries readable by nobody"

# --------------------------------------------------------------- sshd, as sshd -T says
set_line /etc/ssh/sshd_config AuthorizedKeysCommand "AuthorizedKeysCommand /usr/bin/sss_ssh_authorizedkeys %u"
broken_then_fixed node.sshd_keys_command fail "AuthorizedKeysCommand /usr/libexec/allot/allot-keys %u" sshd_lines
set_line /etc/ssh/sshd_config UsePAM "UsePAM no"
broken_then_fixed node.sshd_use_pam fail "UsePAM yes" sshd_line
if sshd_has_penalties; then # OpenSSH 9.8+
    grep -v '^PerSourcePenaltyExemptList' /etc/ssh/sshd_config | put /etc/ssh/sshd_config
    sshd_exempt() { set_line /etc/ssh/sshd_config PerSourcePenaltyExemptList "PerSourcePenaltyExemptList 10.0.0.0/8"; }
    broken_then_fixed node.sshd_penalties warn "PerSourcePenaltyExemptList" sshd_exempt
else
    expect_eq "node.sshd_penalties: none before OpenSSH 9.8" "$(finding node.sshd_penalties severity)" ok
fi
echo "Port 22 22 bogus" >>/etc/ssh/sshd_config
expect_contains "sshd -T's own error is reported" "$(finding node.sshd_keys_command what)" "sshd -T"
set_line /etc/ssh/sshd_config Port "Port 22"

# --------------------------------------------------------------- PAM, nsswitch, plugstack, role
printf 'account sufficient pam_permit.so\naccount required pam_allot.so\n' | put /etc/pam.d/sshd
broken_then_fixed node.pam_account fail "account  required  pam_allot.so" pam_first
printf 'account [success=done default=ignore] pam_permit.so\naccount required pam_allot.so\n' | put /etc/pam.d/sshd
expect_contains "success=done named" "$(finding node.pam_account what)" "success=done"
broken_then_fixed node.pam_account fail "account  required  pam_allot.so" pam_first
printf 'passwd: files systemd\ngroup: files allot\n' | put /etc/nsswitch.conf
broken_then_fixed node.nsswitch.passwd fail "passwd: files systemd allot" nss_line
: >"$T/slurm/plugstack.conf"
broken_then_fixed node.plugstack fail "required spank_allot.so" plugstack_line
sed -i '/^node:/d;/^  role:/d' "$CONFIG"
broken_then_fixed node.role fail "role: compute" role_back

# --------------------------------------------------------------- token, caches, id ranges
chmod 0644 "$T/token"
broken_then_fixed identity.token_file fail "chmod g-w,o-rwx $T/token" run_commands
chmod 0644 "$T/cache/keys.cache"
broken_then_fixed identity.cache_mode.keys.cache warn "chmod o-r $T/cache/keys.cache" run_commands
chmod 0777 "$T/cache"
broken_then_fixed identity.cache_mode.cache fail "chmod go-w $T/cache" run_commands
chown nobody "$T/cache/passwd.cache"
broken_then_fixed identity.cache_mode.passwd.cache fail "chown root $T/cache/passwd.cache" run_commands
chown nobody "$T/cache/group.cache"
broken_then_fixed identity.cache_mode.group.cache fail "chown root $T/cache/group.cache" run_commands
chmod 0666 "$T/cache/group.cache"
broken_then_fixed identity.cache_mode.group.cache fail "chmod go-w $T/cache/group.cache" run_commands
echo "clash:x:75000:75000::/nonexistent:/usr/sbin/nologin" >>/etc/passwd
broken_then_fixed identity.users_range warn "identity.uid_min: 75001" yaml_key
echo "clashgrp:x:76000:" >>/etc/group
broken_then_fixed identity.groups_range warn "identity.gid_min: 76001" yaml_key

# --------------------------------------------------------------- the software tree and allot's files
chmod 0600 "$T/sw/lib/libx.so"
broken_then_fixed "software.$T/sw" warn "chmod o+r $T/sw/lib/libx.so" run_commands
chmod 0700 "$T/sw/share"
broken_then_fixed "software.$T/sw" warn "chmod o+rx $T/sw/share" run_commands
chown nobody "$T/sw/bin/tool"
broken_then_fixed "software.$T/sw" fail "chown root $T/sw/bin/tool" run_commands
chmod o+w "$T/sw/lib"
broken_then_fixed "software.$T/sw" fail "chmod go-w $T/sw/lib" run_commands
sed -i 's/^  software_limit: .*/  software_limit: 2/' "$CONFIG"
broken_then_fixed "software.$T/sw" warn "doctor.software_limit" yaml_limit
# The command line overrides allot.yaml: a smaller limit, then another root.
ARGS=(--software-limit 2)
broken_then_fixed "software.$T/sw" warn "--software-limit" no_args
ARGS=(--software-root "$T/sw/lib")
out=$(doctor)
expect_eq "--software-root replaces doctor.software_roots" \
    "$(jq -r '[.findings[] | select(.id | startswith("software.")) | .id] | join(" ")' <<<"$out")" "software.$T/sw/lib"
ARGS=()
sed -e '/^    - /d' -e "s|^  software_roots:\$|  software_roots: $T/sw|" "$CONFIG" >"$T/bad.yaml"
expect_contains "a bad doctor section is a config finding" \
    "$("$D" -c "$T/bad.yaml" --role compute --json | jq -r '.findings[] | select(.id == "config.load") | .what')" \
    "doctor.software_roots: must be a list"
chmod o+w "$T/slurm/plugstack.conf"
broken_then_fixed node.tamper fail "chmod go-w $T/slurm/plugstack.conf" run_commands
chmod o+w "$T"
broken_then_fixed node.tamper fail "chmod go-w $T" run_commands

out=$(doctor); rc=$?
expect_eq "every fix applied: exit 0" "$rc" 0
finish
