#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# make fuzz's runner: each harness for SECONDS from its seed corpus
# (tests/fuzz/NAME/, read only) and what earlier runs found
# (DIR/corpus/NAME/). One line per harness: executions, executions per
# second, corpus size; a crash, leak or timeout prints libFuzzer's report,
# keeps the input in DIR/crash/ and fails the run.
#
#   tests/fuzz/run.sh DIR SECONDS NAME...
set -uo pipefail

dir=$1
secs=$2
shift 2
seeds=$(dirname "$0")
failed=0
for name in "$@"; do
	bin=$dir/fuzz_$name
	corpus=$dir/corpus/$name
	mkdir -p "$corpus" "$dir/crash"
	if [ ! -d "$seeds/$name" ] || [ -z "$(ls -A "$seeds/$name")" ]; then
		echo "fuzz: FAIL $name: no seed corpus in $seeds/$name"
		failed=$((failed + 1))
		continue
	fi
	log=$dir/fuzz_$name.log
	# cpi's seeds are 20-odd intervals of 3 cgroups: 16-19 KB
	case $name in
	cpi) max_len=32768 ;;
	*) max_len=4096 ;;
	esac
	"$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=$max_len \
		-print_final_stats=1 -artifact_prefix="$dir/crash/$name-" \
		"$corpus" "$seeds/$name" >"$log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
	units=$(ls "$corpus" | wc -l)
	if [ "$rc" -ne 0 ] || [ -z "$runs" ]; then
		echo "fuzz: FAIL $name (exit $rc)"
		grep -v '^#[0-9]' "$log" | tail -n 60 | sed 's/^/    /'
		failed=$((failed + 1))
	else
		echo "fuzz: ok   $name: $runs runs in ${secs}s ($rate/s), $units new inputs kept"
	fi
done
[ "$failed" -eq 0 ]
