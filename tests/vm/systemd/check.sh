#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Checks of the systemd guest, run as pmbpf-vmtest.service after pmbpf.service
# (which `make install` put in /usr/local and `systemctl enable` hooked into
# multi-user.target). Prints the result lines of ../guest/lib.sh:
#   VMTEST PASS|FAIL|SKIP|INFO name detail, then VMTEST DONE pass=N fail=N skip=N
# and powers the guest off.
set -u
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
cd /tmp || exit 1

# Where pmbpf was installed: make install (/usr/local, the default) or the
# Debian package (run.sh -d writes /etc/pmbpf-vmtest.env).
PMBPF_UNIT=/usr/local/lib/systemd/system/pmbpf.service
PMBPF_BIN=/usr/local/bin/pmbpf
PMBPF_SYSCTL=/usr/local/share/pmbpf/50-pmbpf.conf
PMBPF_SYSUSERS=/usr/local/lib/sysusers.d/pmbpf.conf
PMBPF_HOW="make install"
# make install and the package leave the level alone (PMBPF_SYSCTL_ACTIVE=0:
# the file is inactive) and the admin runs the command the service logs;
# make install PERF_EVENT_PARANOID=2 (PMBPF_SYSCTL_ACTIVE=1) applies it.
PMBPF_SYSCTL_ACTIVE=0
# shellcheck disable=SC1091
[ -r /etc/pmbpf-vmtest.env ] && . /etc/pmbpf-vmtest.env

npass=0
nfail=0
nskip=0
pass() { npass=$((npass + 1)); echo "VMTEST PASS $*"; }
fail() { nfail=$((nfail + 1)); echo "VMTEST FAIL $*"; }
skip() { nskip=$((nskip + 1)); echo "VMTEST SKIP $*"; }
info() { echo "VMTEST INFO $*"; }
# show FILE...: evidence for a failure, as "  | " lines.
show() {
	for f in "$@"; do
		[ -f "$f" ] || continue
		echo "  | == $f"
		tail -n 40 "$f" | sed 's/^/  | /'
	done
}
uptime_s() { cut -d' ' -f1 /proc/uptime; }
prop() { systemctl show -p "$1" --value pmbpf; }

# wait_running: until pmbpf.service is active/running or has failed for good
# (failed, or restarted 3 times: Restart=on-failure never lets it stay failed).
# No fixed guest-time bound: systemd bounds a start (TimeoutStartSec, the
# restart limit), and under a loaded host the BPF load under TCG can take
# longer than the 60 s this waited before; 20 minutes only against a hang.
wait_running() {
	tries=12000
	while st="$(prop ActiveState)/$(prop SubState)" && [ "$st" != active/running ] &&
		[ "${st%%/*}" != failed ] && [ "$tries" -gt 0 ] &&
		[ "$(prop NRestarts)" -lt 3 ]; do
		tries=$((tries - 1))
		sleep 0.1
	done
}
# ms since boot, from /proc/uptime
now_ms() { awk '{ printf "%d", $1 * 1000 }' /proc/uptime; }

# journal FILE: pmbpf's journal (and its unit's state) into FILE, to show.
journal() {
	{
		systemctl status --no-pager -l pmbpf
		journalctl -b --no-pager -o short-monotonic -u pmbpf
	} >"$1" 2>&1
}

info boot "uptime_s=$(uptime_s) kernel=$(uname -r) systemd=$(systemctl --version | sed -n '1s/^systemd \([0-9]*\).*/\1/p') pid1=$(cat /proc/1/comm)"

# --- installed and enabled (make install + systemctl enable, or the package) --
frag=$(prop FragmentPath)
enabled=$(systemctl is-enabled pmbpf 2>&1)
if [ "$frag" = "$PMBPF_UNIT" ] && [ "$enabled" = enabled ] &&
	grep -q "^ExecStart=$PMBPF_BIN serve " "$frag"; then
	pass unit-installed "$frag, $enabled ($PMBPF_HOW)"
else
	fail unit-installed "FragmentPath=$frag is-enabled=$enabled"
	systemctl cat pmbpf >unit.txt 2>&1
	show unit.txt
fi

# --- kernel.perf_event_paranoid -----------------------------------------
# Debian's kernel starts at kernel.perf_event_paranoid=3, where
# perf_event_open needs CAP_SYS_ADMIN and CAP_PERFMON is not enough.
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
if [ "$PMBPF_SYSCTL_ACTIVE" = 1 ]; then
	# make install PERF_EVENT_PARANOID=2's sysctl.d drop-in, applied at boot
	if [ -f "$PMBPF_SYSCTL" ] && [ "$paranoid" -le 2 ]; then
		pass sysctl "kernel.perf_event_paranoid=$paranoid ($PMBPF_SYSCTL)"
	else
		fail sysctl "kernel.perf_event_paranoid=$paranoid: perf events need CAP_SYS_ADMIN at 3"
	fi
else
	# make install and the package left the kernel's 3 alone (the sysctl file
	# is inactive, in share/pmbpf); the service says what is missing and the command.
	active=$(ls /etc/sysctl.d/*pmbpf* /usr/lib/sysctl.d/*pmbpf* /lib/sysctl.d/*pmbpf* \
		/usr/local/lib/sysctl.d/*pmbpf* 2>/dev/null | tr '\n' ' ')
	if [ "$paranoid" = 3 ] && [ -z "$active" ] && [ -f "$PMBPF_SYSCTL" ]; then
		pass sysctl-untouched "kernel.perf_event_paranoid=$paranoid, as Debian's kernel set it; no pmbpf sysctl.d file (inactive copy: $PMBPF_SYSCTL)"
	else
		fail sysctl-untouched "kernel.perf_event_paranoid=$paranoid, active sysctl.d files: ${active:-none}, $PMBPF_SYSCTL $([ -f "$PMBPF_SYSCTL" ] || echo missing)"
	fi
	wait_running
	line=$(journalctl -b -q --no-pager -o cat -u pmbpf | grep -m 1 'kernel.perf_event_paranoid is 3')
	cmd=$(echo "$line" | sed -n 's/.* as root: //p')
	doc=$(pmbpf_doctor=$("$PMBPF_BIN" doctor 2>&1); echo "$pmbpf_doctor" | grep -m 1 'perf_event_paranoid  ')
	if [ "$cmd" = "sysctl -w kernel.perf_event_paranoid=2 | tee /etc/sysctl.d/50-pmbpf.conf" ] &&
		echo "$doc" | grep -q '^ *warn .*3: above 2.*pmbpf.service.*fix, as root: sysctl -w kernel.perf_event_paranoid=2 | tee /etc/sysctl.d/50-pmbpf.conf$'; then
		pass paranoid-notice "the service's journal: '$line'; pmbpf doctor (root): '$(echo "$doc" | sed 's/  */ /g')'"
	else
		fail paranoid-notice "journal: '${line:-no line}'; doctor: '${doc:-no line}'"
		journal notice.journal
		show notice.journal
	fi
	# the admin runs the command as given, then restarts the service: it must
	# count from then on (checked below: event-states, perf-events)
	out=$(sh -c "${cmd:-false}" 2>&1)
	now=$(cat /proc/sys/kernel/perf_event_paranoid)
	if [ "$now" = 2 ] && [ "$(cat /etc/sysctl.d/50-pmbpf.conf 2>/dev/null)" = "kernel.perf_event_paranoid = 2" ] &&
		systemctl restart pmbpf; then
		pass paranoid-fix "'$cmd' printed '$out': kernel.perf_event_paranoid=$now, /etc/sysctl.d/50-pmbpf.conf written; pmbpf restarted"
	else
		fail paranoid-fix "'$cmd': '$out', kernel.perf_event_paranoid=$now, /etc/sysctl.d/50-pmbpf.conf: '$(cat /etc/sysctl.d/50-pmbpf.conf 2>&1)'"
	fi
fi

# --- started at boot, ready (Type=notify: active only after READY=1) -----
state() { echo "$(prop ActiveState)/$(prop SubState)"; }
# After=pmbpf.service: with Type=notify this starts once pmbpf is ready or
# has failed; wait anyway (a restart after a failure, say).
wait_running
pid=$(prop MainPID)
type=$(prop Type)
status_text=$(prop StatusText)
# From fork to READY=1, as systemd saw it.
t_start=$(prop ExecMainStartTimestampMonotonic)
t_active=$(prop ActiveEnterTimestampMonotonic)
ready_ms=$(( (t_active - t_start) / 1000 ))
info started "uptime_s=$(uptime_s) $(systemctl show -p ActiveState,SubState,MainPID,User,NRestarts pmbpf | tr '\n' ' ')"
if [ "$st" = active/running ] && [ "$type" = notify ] && [ "$pid" -gt 0 ] && [ "$t_active" -gt "$t_start" ]; then
	pass ready "Type=$type ActiveState/SubState=$st MainPID=$pid, READY=1 ${ready_ms} ms after exec, StatusText='$status_text'"
else
	fail ready "Type=$type state=$st MainPID=$pid StatusText='$status_text'"
	journal ready.journal
	show ready.journal
fi
if [ -z "$status_text" ]; then
	fail status-text "no STATUS= from pmbpf"
else
	pass status-text "$status_text"
fi

if [ "$st" != active/running ] || [ "$pid" -le 0 ] || [ ! -r "/proc/$pid/status" ]; then
	fail service "pmbpf.service is not running ($st): the remaining checks need it"
	echo "VMTEST DONE pass=$npass fail=$nfail skip=$nskip"
	sync
	systemctl --force poweroff
	exit 1
fi
cp "/proc/$pid/status" main.status

# --- its own user, not root ----------------------------------------------
user=$(prop User)
uid=$(awk '$1 == "Uid:" { print $2, $3, $4, $5 }' main.status)
gid=$(awk '$1 == "Gid:" { print $2, $3, $4, $5 }' main.status)
ruid=${uid%% *}
pw=$(getent passwd pmbpf || true)
static_uid=$(echo "$pw" | cut -d: -f3)
kind=dynamic
[ -z "$static_uid" ] || kind="static (systemd-sysusers from $PMBPF_SYSUSERS)"
if [ "$user" = pmbpf ] && [ "$ruid" -ne 0 ] && [ "$uid" = "$ruid $ruid $ruid $ruid" ] &&
	{ [ -z "$static_uid" ] || [ "$static_uid" = "$ruid" ]; } && [ "$(echo "$gid" | cut -d' ' -f1)" -ne 0 ]; then
	pass user "User=$user uid=$ruid ($kind) Uid: $uid Gid: $gid"
else
	fail user "User=$user Uid: $uid Gid: $gid passwd: '$pw'"
	show main.status
fi

# --- exactly CAP_BPF (39) and CAP_PERFMON (38) ----------------------------
want=000000c000000000
caps_ok=1
caps=
for c in CapPrm CapEff CapAmb CapBnd; do
	v=$(awk -v k="$c:" '$1 == k { print $2 }' main.status)
	caps="$caps $c=$v"
	[ "$v" = "$want" ] || caps_ok=0
done
capinh=$(awk '$1 == "CapInh:" { print $2 }' main.status)
if [ "$caps_ok" = 1 ]; then
	pass caps "exactly CAP_BPF+CAP_PERFMON:$caps (CapInh=$capinh)"
else
	fail caps "want $want (CAP_BPF, CAP_PERFMON) in each:$caps CapInh=$capinh"
	show main.status
fi

# --- the sandbox: no new privileges, seccomp, own mount namespace --------
nnp=$(awk '$1 == "NoNewPrivs:" { print $2 }' main.status)
seccomp=$(awk '$1 == "Seccomp:" { print $2 }' main.status)
mnt_self=$(readlink /proc/1/ns/mnt)
mnt_pmbpf=$(readlink "/proc/$pid/ns/mnt")
# ProtectSystem=strict: / is read-only in its namespace.
root_opts=$(awk '$5 == "/" { print $6 }' "/proc/$pid/mountinfo" | tail -n 1)
if [ "$nnp" = 1 ] && [ "$seccomp" = 2 ] && [ "$mnt_self" != "$mnt_pmbpf" ] && [ "${root_opts%%,*}" = ro ]; then
	pass sandbox "NoNewPrivs=$nnp Seccomp=$seccomp (filter), own mount namespace, / mounted $root_opts"
else
	fail sandbox "NoNewPrivs=$nnp Seccomp=$seccomp mnt $mnt_self vs $mnt_pmbpf, / $root_opts"
fi

# --- /metrics --------------------------------------------------------------
# scrape FILE: GET /metrics into FILE, headers into FILE.hdr.
scrape() { wget -q -S -T 10 -O "$1" http://127.0.0.1:9465/metrics 2>"$1.hdr"; }
# sample FILE NAME: the value of the first sample of NAME (any labels).
sample() { awk -v n="$2" '$1 == n || index($1, n "{") == 1 { print $NF; exit }' "$1"; }

if scrape m1; then
	ctype=$(sed -n 's/^ *Content-Type: *//Ip' m1.hdr | tr -d '\r' | head -n 1)
	nseries=$(grep -vc '^#' m1)
	missing=
	for n in pmbpf_cgroup_cpu_seconds_total pmbpf_info pmbpf_collections_total \
		pmbpf_event_supported pmbpf_idle_cpu_seconds_total process_resident_memory_bytes; do
		grep -q "^${n}[{ ]" m1 || missing="$missing $n"
	done
	root_cpu=$(grep '^pmbpf_cgroup_cpu_seconds_total{cgroup="/"' m1 | awk '{ print $NF; exit }')
	# promtool-free sanity: every sample line is NAME{LABELS} VALUE, every
	# family has a TYPE, no name is typed twice.
	bad=$(awk '
		/^# TYPE / { if (typed[$3]++) print "typed twice: " $3; next }
		/^#/ || /^$/ { next }
		!/^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*",?)*\})? [-+]?([0-9.]+([eE][-+]?[0-9]+)?|NaN|Inf)( [0-9]+)?$/ { print "malformed: " $0; next }
		{ name = $1; sub(/\{.*/, "", name); base = name; sub(/_(bucket|sum|count)$/, "", base)
		  if (!(name in typed) && !(base in typed)) print "untyped: " name }
	' m1 | head -n 5)
	if [ -z "$missing" ] && [ -z "$bad" ] && [ -n "$root_cpu" ] && echo "$ctype" | grep -q 'text/plain.*version=0.0.4'; then
		pass metrics "$nseries samples, pmbpf_cgroup_cpu_seconds_total{cgroup=\"/\"} $root_cpu, Content-Type: $ctype"
	else
		fail metrics "missing:${missing:- none} root cpu '${root_cpu}' Content-Type '$ctype' ${bad:+problems: $bad}"
		show m1.hdr m1
	fi
	info metrics "$(grep -E '^pmbpf_(info|pmu_available|cpus|exported_cgroups)[{ ]' m1 | tr '\n' ' ')"
	# No PMU under TCG: the default (hardware) events must read
	# not-supported, never permission-denied (the sysctl check says why).
	states=$(sed -n 's/^pmbpf_event_supported{event="\([^"]*\)".*state="\([^"]*\)".*/\1=\2/p' m1 | tr '\n' ' ')
	if [ -n "$states" ] && ! echo "$states" | grep -q permission-denied; then
		pass event-states "$states"
	else
		fail event-states "${states:-no pmbpf_event_supported series}"
	fi
	info metrics-pmbpf-cgroup "$(grep '^pmbpf_cgroup_cpu_seconds_total{cgroup="/system.slice/pmbpf.service"' m1 | head -n 1)"
	# Collection goes on under the sandbox (seccomp, read-only mounts):
	# pmbpf_collections_total grows between two scrapes an interval apart.
	c1=$(sample m1 pmbpf_collections_total)
	c2=$c1
	for _ in $(seq 1 30); do
		sleep 1
		scrape m2 || continue
		c2=$(sample m2 pmbpf_collections_total)
		[ "$c2" = "$c1" ] || break
	done
	errs=$(sample m2 pmbpf_collection_errors_total)
	interval=$(sample m2 pmbpf_interval_seconds)
	if [ "$c2" != "$c1" ] && [ "${errs:-0}" = 0 ]; then
		pass collecting "pmbpf_collections_total $c1 -> $c2 (last interval ${interval} s), collection errors ${errs:-0}"
	else
		fail collecting "pmbpf_collections_total $c1 -> $c2 in 30 s, collection errors ${errs:-?}"
		journal collect.journal
		show collect.journal
	fi
else
	fail metrics "GET http://127.0.0.1:9465/metrics failed"
	show m1.hdr
	journal metrics.journal
	show metrics.journal
	skip collecting "no metrics"
fi
if [ "$(prop NRestarts)" != 0 ] || [ "$(prop MainPID)" != "$pid" ]; then
	fail no-restart "pmbpf restarted: NRestarts=$(prop NRestarts) MainPID=$(prop MainPID) (was $pid)"
fi
journal run.journal
info journal "$(grep -c . run.journal) lines; warnings and errors: $(journalctl -b -q --no-pager -u pmbpf -p warning | wc -l)"

# --- systemctl stop: SIGTERM, clean exit within a second ------------------
# stop_check NAME: stops pmbpf and judges how (systemd's own timestamps: from
# leaving active, when SIGTERM is sent, to inactive).
stop_check() {
	name=$1
	t0=$(now_ms)
	systemctl stop pmbpf
	t1=$(now_ms)
	exit_at=$(prop InactiveEnterTimestampMonotonic)
	stop_at=$(prop ActiveExitTimestampMonotonic)
	stop_ms=$(( (exit_at - stop_at) / 1000 ))
	st=$(state)
	result=$(prop Result)
	code=$(prop ExecMainCode)
	status=$(prop ExecMainStatus)
	# ExecMainCode 1 is CLD_EXITED (an exit status, not a signal).
	if [ "$st" = inactive/dead ] && [ "$result" = success ] && [ "$code" = 1 ] &&
		[ "$status" = 0 ] && [ "$stop_ms" -lt 1000 ] && [ "$exit_at" -gt 0 ]; then
		pass "$name" "stopped in $stop_ms ms (systemctl stop took $((t1 - t0)) ms), Result=$result, exit status $status"
	else
		fail "$name" "state=$st Result=$result ExecMainCode=$code ExecMainStatus=$status stop took $stop_ms ms (systemctl $((t1 - t0)) ms)"
		journal "$name.journal"
		show "$name.journal"
	fi
}
stop_check stop

# --- options from /etc/default/pmbpf, systemctl start by hand ------------
# Other options through the EnvironmentFile: another port, a 1 s interval and
# software events, which must count CPU-wide with CAP_PERFMON alone.
cp /etc/default/pmbpf default.orig
echo 'PMBPF_OPTS="--listen 127.0.0.1:9466 --interval 1s --events cycles,page-faults,task-clock"' >/etc/default/pmbpf
t0=$(now_ms)
if systemctl start pmbpf; then
	t1=$(now_ms)
	pid2=$(prop MainPID)
	st=$(state)
	status_text=$(prop StatusText)
	if [ "$st" = active/running ] && [ "$pid2" -gt 0 ] && [ "$pid2" != "$pid" ] &&
		[ "$(awk '$1 == "CapEff:" { print $2 }' "/proc/$pid2/status")" = "$want" ]; then
		pass start "systemctl start returned in $((t1 - t0)) ms (after READY=1), $st, MainPID=$pid2"
	else
		fail start "state=$st MainPID=$pid2"
		journal start.journal
		show start.journal
	fi
	if wget -q -T 10 -O m3 http://127.0.0.1:9466/metrics &&
		echo "$status_text" | grep -q '127.0.0.1:9466.*every 1s'; then
		pass environment-file "/etc/default/pmbpf applied: StatusText='$status_text'"
	else
		fail environment-file "StatusText='$status_text', GET :9466 $([ -s m3 ] && echo ok || echo failed)"
		journal env.journal
		show env.journal
	fi
	states=$(sed -n 's/^pmbpf_event_supported{event="\([^"]*\)".*state="\([^"]*\)".*/\1=\2/p' m3 | tr '\n' ' ')
	if echo "$states" | grep -q 'page-faults=counting' && echo "$states" | grep -q 'task-clock=counting'; then
		pass perf-events "CPU-wide software events open as the service user: $states"
	else
		fail perf-events "event states: ${states:-none}"
		show m3
	fi
	stop_check stop-again
else
	fail start "systemctl start pmbpf failed"
	journal start.journal
	show start.journal
	skip environment-file "not started"
	skip perf-events "not started"
	skip stop-again "not started"
fi
cp default.orig /etc/default/pmbpf

info end "uptime_s=$(uptime_s)"
echo "VMTEST DONE pass=$npass fail=$nfail skip=$nskip"
sync
systemctl --force poweroff
