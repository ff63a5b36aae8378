# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Helpers for the guest checks (busybox sh; there is no python in the guest).
#
# Result lines, one per check, parsed by ../run.sh:
#   VMTEST PASS name detail
#   VMTEST FAIL name detail
#   VMTEST SKIP name reason
#   VMTEST INFO name detail      (figures worth recording, never a verdict)
#   VMTEST DONE pass=N fail=N skip=N
# A failing check prints the output it judged as "  | " lines after it.
#
# The host passes settings on the kernel command line:
#   pmbpf_vm.icount=N   QEMU runs with -icount shift=N (absent: no -icount)

npass=0
nfail=0
nskip=0

pass() { npass=$((npass + 1)); echo "VMTEST PASS $*"; }
skip() { nskip=$((nskip + 1)); echo "VMTEST SKIP $*"; }
info() { echo "VMTEST INFO $*"; }
fail() { nfail=$((nfail + 1)); echo "VMTEST FAIL $*"; }

# show FILE...: the evidence for a failure, indented so that it never reads as
# a result line.
show() {
	for f in "$@"; do
		[ -f "$f" ] || continue
		echo "  | == $f"
		tail -n 40 "$f" | sed 's/^/  | /'
	done
}

cmdline_arg() { tr ' ' '\n' </proc/cmdline | sed -n "s/^pmbpf_vm\.$1=//p"; }

vmtest_begin() {
	ICOUNT=$(cmdline_arg icount)
	info boot "uptime_s=$(cut -d' ' -f1 /proc/uptime) kernel=$(uname -r) machine=$(uname -m) icount=${ICOUNT:-off}"
}

vmtest_end() {
	info end "uptime_s=$(cut -d' ' -f1 /proc/uptime)"
	echo "VMTEST DONE pass=$npass fail=$nfail skip=$nskip"
}

# Arithmetic on decimals (busybox awk; sh has integers only).
calc() { awk "BEGIN { printf \"%.4f\", $* }"; }
# within VALUE EXPECTED TOLERANCE: |VALUE - EXPECTED| <= TOLERANCE
within() { awk -v v="$1" -v e="$2" -v t="$3" 'BEGIN { d = v - e; exit !(d <= t && -d <= t) }'; }
# within_pct VALUE EXPECTED PERCENT
within_pct() { awk -v v="$1" -v e="$2" -v p="$3" 'BEGIN { d = v - e; t = e * p / 100; exit !(d <= t && -d <= t) }'; }

# wait_for SECONDS COMMAND...: polls COMMAND every 0.1 s until it succeeds.
# For waits on something that cannot be slowed down by the host (none are
# left in the checks): see wait_on.
wait_for() {
	tries=$(($1 * 10))
	shift
	while ! "$@"; do
		tries=$((tries - 1))
		[ "$tries" -gt 0 ] || return 1
		sleep 0.1
	done
}

# Waits on conditions, not for fixed times. Under TCG on a loaded host the
# guest runs at a varying fraction of its idle speed (one run booted at full
# speed, then ran its checks 60 times slower), and fixed guest-side limits
# failed there: at load 20, arm64-icount2 gave up on pmbpf's BPF load after
# its 90 s (PMBPF_START_WAIT) in 4 of 15 checks, and its SIGINT cut the
# verifier (EAGAIN). So a wait gives up only when what it waits on is gone, or
# has made no progress (CPU time, bytes read or written) for STALL_S seconds
# of guest time, or, for pmbpf, after a number of its own intervals: a count
# of its reads, which slow down with the guest. A guest that truly hangs is
# stopped by run.sh, whose limit follows the host's load (scaled.sh).
STALL_S=60

uptime_s() { read -r _up _ </proc/uptime && echo "$_up"; }

# alive PID: PID runs (a zombie the shell has not reaped yet is not alive).
alive() {
	_st=
	read -r _st 2>/dev/null </proc/"$1"/stat || return 1
	case $_st in *") Z "*) return 1 ;; esac
}

# progress PID: what PID and its first children have done so far (user and
# system CPU ticks, bytes read and written); it changes while they work
# (pmbpf stat waits while its workload runs). Shell builtins only: it runs
# every second of every wait.
progress() {
	_kids=
	for _c in /proc/"$1"/task/*/children; do
		# no newline at its end: read fails, and has read it
		_k=
		read -r _k 2>/dev/null <"$_c"
		_kids="$_kids $_k"
	done
	_m=0
	for _p in "$1" $_kids; do
		_m=$((_m + 1))
		[ "$_m" -le 16 ] || break
		_st=
		read -r _st 2>/dev/null </proc/"$_p"/stat || continue
		# shellcheck disable=SC2086 # the fields after the command name
		set -- ${_st#*) }
		printf '%s ' "${12}" "${13}"
		while read -r _k _v; do
			case $_k in rchar: | wchar:) printf '%s ' "$_v" ;; esac
		done 2>/dev/null </proc/"$_p"/io
	done
}

# wait_on PID COMMAND...: polls COMMAND every 0.1 s until it succeeds. Gives
# up (returns 1, saying why on stderr) once PID is gone and COMMAND still
# fails, or when PID has made no progress for STALL_S s.
wait_on() {
	_pid=$1
	shift
	_seen=
	_since=$(uptime_s)
	_n=0
	while ! "$@"; do
		if ! alive "$_pid"; then
			"$@" && return 0
			echo "wait_on: pid $_pid is gone (waiting for: $*)" >&2
			return 1
		fi
		_n=$((_n + 1))
		if [ $((_n % 10)) -eq 0 ]; then
			_p=$(progress "$_pid")
			_now=$(uptime_s)
			if [ "$_p" != "$_seen" ]; then
				_seen=$_p
				_since=$_now
			elif awk -v a="$_since" -v b="$_now" -v s="$STALL_S" 'BEGIN { exit !(b - a >= s) }'; then
				echo "wait_on: pid $_pid made no progress for $STALL_S s (waiting for: $*)" >&2
				return 1
			fi
		fi
		sleep 0.1
	done
}

# stop_pid PID SIGNAL: sends SIGNAL to PID and waits until it is gone; kills
# it once it makes no progress for STALL_S s. Returns its exit status.
stop_pid() {
	kill -"$2" "$1" 2>/dev/null
	if ! wait_on "$1" eval "! alive $1"; then
		echo "stop_pid: pid $1 did not stop on SIG$2: killed" >&2
		kill -KILL "$1" 2>/dev/null
	fi
	wait "$1"
}

# --- pmucheck output: "STAT name count enabled running", "OPEN name ok" ---

# stat_count FILE EVENT: the unscaled count, or nothing if it did not open.
stat_count() { awk -v e="$2" '$1 == "STAT" && $2 == e && $3 ~ /^[0-9]+$/ { print $3; exit }' "$1"; }
# stat_scaled FILE EVENT: count x enabled / running, as perf stat shows it.
stat_scaled() { awk -v e="$2" '$1 == "STAT" && $2 == e && $5 > 0 { printf "%.0f", $3 * $4 / $5; exit }' "$1"; }
# stat_coverage FILE EVENT: running / enabled.
stat_coverage() { awk -v e="$2" '$1 == "STAT" && $2 == e && $4 > 0 { printf "%.4f", $5 / $4; exit }' "$1"; }
# open_result FILE EVENT: "ok" or the errno name (ENOENT, ...).
open_result() { awk -v e="$2" '$1 == "OPEN" && $2 == e { print ($3 == "ok") ? "ok" : $4; exit }' "$1"; }

# expect_enoent NAME EVENT...: each EVENT must fail to open with ENOENT.
expect_enoent() {
	name=$1
	shift
	pmucheck open "$@" >"$name.out" 2>&1
	bad=
	for e in "$@"; do
		[ "$(open_result "$name.out" "$e")" = ENOENT ] || bad="$bad $e"
	done
	if [ -z "$bad" ]; then
		pass "$name" "ENOENT for $*"
	else
		fail "$name" "not ENOENT:$bad"
		show "$name.out"
	fi
}

# --- workloads started with -w: they print "NAME pid=N ..." then wait ---

# workload_start OUT PROGRAM ARGS...: starts PROGRAM -w ARGS in the
# background with stdout to OUT and sets WL_PID once it is waiting.
workload_start() {
	wl_out=$1
	shift
	prog=$1
	shift
	"$prog" -w "$@" >"$wl_out" 2>&1 &
	WL_PID=$!
	wait_on "$WL_PID" grep -qs "pid=$WL_PID" "$wl_out"
}

# workload_go: lets the waiting workload run and waits for it to exit.
workload_go() {
	kill -USR1 "$WL_PID"
	wait "$WL_PID"
}

# --- pmbpf JSON Lines ---------------------------------------------------
#
# Each process line holds the counts of one interval (session__collect
# reports what ran since the previous read), so a process's total is the sum
# over its lines, its exit line included.

PMBPF=/bin/pmbpf
PMBPF_INTERVAL=250ms

have_pmbpf() { [ -x "$PMBPF" ]; }

# pmbpf_run ARGS...: `pmbpf ARGS` in the foreground; killed if it makes no
# progress for STALL_S s (wait_on). Returns its exit status.
pmbpf_run() {
	"$PMBPF" "$@" &
	_run=$!
	if ! wait_on "$_run" eval "! alive $_run"; then
		echo "pmbpf_run: killed" >&2
		kill -KILL "$_run" 2>/dev/null
	fi
	wait "$_run"
}

# pmbpf_start OUT ARGS...: runs `pmbpf record -o json -i $PMBPF_INTERVAL ARGS`
# in the background (JSON Lines to OUT, stderr to OUT.err) and returns once
# it has printed its event lines and its first interval, so that it is
# counting. However long loading the BPF object takes (the verifier: over
# 30 s in arm64-icount2 on an idle host), it is awaited while pmbpf works.
# Sets PMBPF_PID and PMBPF_OUT.
pmbpf_start() {
	PMBPF_OUT=$1
	shift
	"$PMBPF" record -o json -i "$PMBPF_INTERVAL" "$@" >"$PMBPF_OUT" 2>"$PMBPF_OUT.err" &
	PMBPF_PID=$!
	if ! wait_on "$PMBPF_PID" pmbpf_counting 2>>"$PMBPF_OUT.err"; then
		stop_pid "$PMBPF_PID" INT 2>>"$PMBPF_OUT.err"
		PMBPF_RC=$?
		echo "pmbpf_start: exit status $PMBPF_RC after $(cat /proc/uptime)" >>"$PMBPF_OUT.err"
		return 1
	fi
}

# pmbpf_intervals: how many intervals pmbpf has reported (system lines: the
# last line of each interval).
pmbpf_intervals() { grep -cs '"type": *"system"' "$PMBPF_OUT"; }

pmbpf_counting() { [ "$(pmbpf_intervals)" -ge 1 ]; }

# pmbpf_wait N COMMAND...: waits until COMMAND succeeds, for at most N more
# intervals of pmbpf (its reads, which slow down with the guest, not a fixed
# time) and while pmbpf runs. Returns COMMAND's status.
pmbpf_wait() {
	_until=$(($(pmbpf_intervals) + $1))
	shift
	wait_on "$PMBPF_PID" pmbpf_done_or_past "$_until" "$@" 2>>"$PMBPF_OUT.err"
	"$@"
}

# pmbpf_reads N: waits until pmbpf has reported N more intervals (read its
# maps N times), while it runs.
pmbpf_reads() {
	_r=$(($(pmbpf_intervals) + $1))
	wait_on "$PMBPF_PID" eval '[ "$(pmbpf_intervals)" -ge '"$_r"' ]' 2>>"$PMBPF_OUT.err"
}

pmbpf_done_or_past() {
	_u=$1
	shift
	"$@" || [ "$(pmbpf_intervals)" -ge "$_u" ]
}

# pmbpf_exited PID: pmbpf has printed the exit line of PID.
pmbpf_exited() { proc_lines "$PMBPF_OUT" "$1" | grep -q '"exited":true'; }

# pmbpf_stop: gives pmbpf 8 intervals (2 s at 250 ms) to report the
# workload's exit and stop by itself (it does when its -p process is gone),
# then stops it with SIGINT. Returns pmbpf's exit status.
pmbpf_stop() {
	pmbpf_wait 8 pmbpf_gone
	stop_pid "$PMBPF_PID" INT 2>>"$PMBPF_OUT.err"
}

pmbpf_gone() { ! alive "$PMBPF_PID"; }

# pmbpf_verbose NAME ARGS...: when a check fails because pmbpf did not start,
# runs `pmbpf ARGS -v` once more to NAME.verbose, whose end (the verifier's
# complaint, usually) goes into the failure report.
pmbpf_verbose() {
	name=$1
	shift
	pmbpf_run "$@" -v >"$name.verbose" 2>&1
}

# jl_compact FILE: the JSON Lines without blanks after ':' and ',', so that
# the patterns below need not allow for them.
jl_compact() { sed -e 's/": */":/g' -e 's/, *"/,"/g' "$1"; }

# event_state FILE EVENT: state of EVENT from the event lines.
event_state() {
	jl_compact "$1" | grep '"type":"event"' | grep "\"name\":\"$2\"" |
		sed -n 's/.*"state":"\([^"]*\)".*/\1/p' | head -n 1
}

# session_attach FILE: how the programs attached (tp_btf or raw_tp).
session_attach() {
	jl_compact "$1" | grep '"type":"session"' |
		sed -n 's/.*"attach":"\([^"]*\)".*/\1/p' | head -n 1
}

# words: its input lines as one line of words.
words() { tr '\n' ' ' | sed 's/ *$//'; }

# proc_lines FILE PID: the process lines of PID.
# Its own "pid" comes before the first nested object ("events"): the pids in
# "delayed_by" and "delayed" are other processes'.
proc_lines() { jl_compact "$1" | grep -E "^\{\"type\":\"process\"[^{]*\"pid\":$2[,}]"; }

# row_pids FILE: the pid of each process line (null for the overflow row:
# not listed).
row_pids() { jl_compact "$1" | sed -n 's/^{"type":"process"[^{]*"pid":\([0-9]*\),.*/\1/p'; }

# proc_field FILE PID EVENT FIELD: FIELD (count, raw, coverage) of EVENT in
# each process line of PID, one per line.
proc_field() {
	proc_lines "$1" "$2" |
		sed -n "s/.*\"$3\":{\([^}]*\)}.*/\1/p" |
		sed -n "s/.*\"$4\":\([-0-9.eE+]*\).*/\1/p"
}

# proc_sum FILE PID EVENT: EVENT's count summed over PID's lines.
proc_sum() { proc_field "$1" "$2" "$3" count | awk '{ s += $1 } END { printf "%.0f", s }'; }

# proc_ipc FILE PID: the ipc field of each line of PID (a number or null).
proc_ipc() { proc_lines "$1" "$2" | sed -n 's/.*"ipc":\(null\|[-0-9.eE+][-0-9.eE+]*\).*/\1/p'; }
