#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# make sanitize's live part: the subcommands of a build with ASan and UBSan
# (halt on the first error, leaks checked at exit), each for a few seconds on
# this host, with a spinning workload, a sleeping one and an empty perf map
# (an empty /tmp/perf-PID.map once made qsort take a NULL array). A run fails
# when a command exits non-zero or a sanitizer speaks.
#
#   tests/sanitize/run.sh PMBPF WORK     (as root; PMBPF the sanitizer build)
set -uo pipefail

pmbpf=$1
work=$2
if [ "$(id -u)" -ne 0 ]; then
	echo "sanitize: SKIPPED the live commands: they need root (the unit tests ran)"
	exit 0
fi
export ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:abort_on_error=0:detect_stack_use_after_return=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export LSAN_OPTIONS=exitcode=23
tmp=$(mktemp -d /tmp/pmbpf-sanitize.XXXXXX)
failed=0
ran=0

"$work" spin 120 >"$tmp/spin.json" &
spin=$!
"$work" sleep 100000 1000 >/dev/null &
sleeper=$!
: >"/tmp/perf-$spin.map"

cleanup() {
	kill "$spin" "$sleeper" 2>/dev/null
	wait "$spin" "$sleeper" 2>/dev/null
	rm -f "/tmp/perf-$spin.map"
	tmux -L "pmbpf-sanitize-$$" kill-server 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

# check NAME RC [STDOUT-MUST-HAVE]: a verdict on one command's run
check() {
	local name=$1 rc=$2 want=${3:-}

	ran=$((ran + 1))
	if [ "$rc" -ne 0 ] || grep -qE 'AddressSanitizer|LeakSanitizer|runtime error:|UndefinedBehaviorSanitizer' "$tmp/err"; then
		echo "sanitize: FAIL $name (exit $rc)"
		sed 's/^/    /' "$tmp/err" | head -n 60
		failed=$((failed + 1))
	elif [ -n "$want" ] && ! grep -q -- "$want" "$tmp/out"; then
		echo "sanitize: FAIL $name: no '$want' in its output"
		head -c 2000 "$tmp/out" | sed 's/^/    /'
		failed=$((failed + 1))
	else
		echo "sanitize: ok   $name"
	fi
}

# run NAME WANT ARGS...: one command that stops by itself
run() {
	local name=$1 want=$2

	shift 2
	timeout -s KILL 60 "$pmbpf" "$@" >"$tmp/out" 2>"$tmp/err"
	check "$name" $? "$want"
}

run "record" "PID" record -d 3 -i 1
run "record --hot -o json" '"hot_function":{' record -d 3 -i 1 --hot -o json
run "record -b cgroup -o csv" "cgroup" record -d 3 -i 1 -b cgroup -o csv
run "record --threads --delays -p" "$spin" record -d 3 -i 1 --threads --delays -p "$spin"
run "stat" "task-clock" stat -O - -- "$work" burn 200
run "stat -r 2 -o json" '"runs"' stat -r 2 -o json -O - -- "$work" burn 100
# the spinner's own stack (its loop is in main): 'spin' matched only other
# hosts' spinners, and failed on a quiet CI-like machine
run "profile (fp)" "^work;.*main" profile -d 3 -F 199
run "profile --call-graph dwarf" "^work;.*main" profile -d 3 -F 99 --call-graph dwarf
run "profile --off-cpu" "work" profile -d 3 --off-cpu
run "profile -p --svg" "<svg" profile -d 2 -p "$spin" --svg
run "profile -- COMMAND" "work;" profile -F 199 -- "$work" burn 300
run "profile -- COMMAND (dwarf)" "work" profile --call-graph dwarf -- "$work" burn 300
run "list" "task-clock" list
run "doctor" "BTF" doctor

# serve: until SIGINT, one scrape in between
"$pmbpf" serve -l 127.0.0.1:0 -i 1 --delays >"$tmp/out" 2>"$tmp/err" &
serve=$!
url=""
for _ in $(seq 100); do
	url=$(sed -n 's/.*serving \(http:[^ ,]*\).*/\1/p' "$tmp/err")
	[ -n "$url" ] && break
	sleep 0.1
done
sleep 3
/usr/bin/python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())' \
	"$url" >"$tmp/metrics" 2>&1
kill -INT "$serve"
wait "$serve"
rc=$?
cp "$tmp/metrics" "$tmp/out"
check "serve (one scrape)" "$rc" "pmbpf_"

# top needs a terminal: in a tmux session of its own, q after a few seconds
: >"$tmp/err"
tmux -L "pmbpf-sanitize-$$" new-session -d -x 120 -y 40 \
	"$pmbpf top -d 0.5 --hot 2>$tmp/err; echo \$? >$tmp/rc"
sleep 4
tmux -L "pmbpf-sanitize-$$" capture-pane -p >"$tmp/out" 2>/dev/null
tmux -L "pmbpf-sanitize-$$" send-keys q
for _ in $(seq 100); do
	[ -s "$tmp/rc" ] && break
	sleep 0.1
done
check "top" "$(cat "$tmp/rc" 2>/dev/null || echo 255)" "PID"

echo "sanitize: $((ran - failed)) of $ran commands clean"
[ "$failed" -eq 0 ]
