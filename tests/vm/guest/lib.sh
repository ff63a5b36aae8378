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
wait_for() {
	tries=$(($1 * 10))
	shift
	while ! "$@"; do
		tries=$((tries - 1))
		[ "$tries" -gt 0 ] || return 1
		sleep 0.1
	done
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
	wait_for 10 grep -qs "pid=$WL_PID" "$wl_out"
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
# No pmbpf run may hang the guest: each is killed after this many seconds.
PMBPF_TIMEOUT=150
# Loading the BPF object (the verifier) takes long in the slowest guest:
# arm64 under TCG with icount=2, with 8 events (the switch program's credit
# is verified for task storage and for the map entry), over 30 s.
PMBPF_START_WAIT=90

have_pmbpf() { [ -x "$PMBPF" ]; }

# pmbpf_run ARGS...: `pmbpf ARGS` in the foreground, with the time limit.
pmbpf_run() { timeout -s KILL "$PMBPF_TIMEOUT" "$PMBPF" "$@"; }

# pmbpf_start OUT ARGS...: runs `pmbpf record -o json -i 250ms ARGS` in the
# background (JSON Lines to OUT, stderr to OUT.err) and returns once it has
# printed its event lines and one more interval has passed, so that it is
# counting. Sets PMBPF_PID.
pmbpf_start() {
	pm_out=$1
	shift
	# busybox timeout execs the command in its own process: PMBPF_PID is
	# pmbpf itself, and signals sent to it reach it.
	timeout -s KILL "$PMBPF_TIMEOUT" "$PMBPF" record -o json -i "$PMBPF_INTERVAL" "$@" \
		>"$pm_out" 2>"$pm_out.err" &
	PMBPF_PID=$!
	if ! wait_for "$PMBPF_START_WAIT" pmbpf_ready "$pm_out" || pmbpf_gone; then
		kill -INT "$PMBPF_PID" 2>/dev/null
		wait "$PMBPF_PID"
		PMBPF_RC=$?
		echo "pmbpf_start: exit status $PMBPF_RC after $(cat /proc/uptime)" >>"$pm_out.err"
		return 1
	fi
	sleep 0.3
}

# pmbpf_ready OUT: pmbpf has printed its event lines, or has died.
pmbpf_ready() { grep -qs '"type": *"event"' "$1" || pmbpf_gone; }

# pmbpf_stop: gives pmbpf 2 s to report the workload's exit and stop by
# itself (it does when its -p process is gone), then stops it with SIGINT.
# Returns pmbpf's exit status.
pmbpf_stop() {
	wait_for 2 pmbpf_gone || kill -INT "$PMBPF_PID" 2>/dev/null
	wait "$PMBPF_PID"
}

pmbpf_gone() { ! kill -0 "$PMBPF_PID" 2>/dev/null; }

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
proc_lines() { jl_compact "$1" | grep '"type":"process"' | grep -E "\"pid\":$2[,}]"; }

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
