# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Checks in the arm64 guest, whose emulated PMUv3 counts for real: cycles
# always, instructions only under -icount, where every instruction takes 2^N
# virtual nanoseconds so that busy code has an IPC of exactly 1/2^N. Sourced
# by /init after lib.sh; ICOUNT is N, or empty without -icount.

LOOP_ITERS=25000000
LOOP_INSNS=$((LOOP_ITERS * 4))
BUSY_MS=1500
# 8 events, one more than the emulated PMU has counters: the kernel rotates
# them. Raw codes 1-6 open and count nothing, but they take counters.
MUX_EVENTS=instructions,cycles,r1,r2,r3,r4,r5,r6

if [ -n "$ICOUNT" ]; then
	EXPECTED_IPC=$(calc "1 / $((1 << ICOUNT))")
fi

# --- ground truth from perf_event_open (pmucheck) ------------------------

check_pmu_cycles() {
	pmucheck stat -e cycles -- loop 1000000 >pmu-cycles.out 2>&1
	c=$(stat_count pmu-cycles.out cycles)
	if [ -n "$c" ] && [ "$c" -gt 0 ]; then
		pass pmu-cycles "cycles=$c for loop 1000000"
	else
		fail pmu-cycles "cycles did not count"
		show pmu-cycles.out
	fi
}

check_pmu_loop() {
	pmucheck stat -e instructions,cycles -- loop $LOOP_ITERS >pmu-loop.out 2>&1
	pmucheck stat -u -e instructions -- loop $LOOP_ITERS >pmu-loop-user.out 2>&1
	n=$(stat_count pmu-loop.out instructions)
	u=$(stat_count pmu-loop-user.out instructions)
	info pmu-loop-user "expected=$LOOP_INSNS counted_user_only=$u"
	if [ -n "$n" ] && within_pct "$n" $LOOP_INSNS 1; then
		pass pmu-loop "expected=$LOOP_INSNS counted=$n ratio=$(calc "$n / $LOOP_INSNS")"
	else
		fail pmu-loop "expected=$LOOP_INSNS counted=${n:-none} (tolerance 1%)"
		show pmu-loop.out
	fi
}

check_pmu_ipc() {
	pmucheck stat -e instructions,cycles -- busy $BUSY_MS >pmu-ipc.out 2>&1
	i=$(stat_count pmu-ipc.out instructions)
	c=$(stat_count pmu-ipc.out cycles)
	if [ -n "$i" ] && [ -n "$c" ] && [ "$c" -gt 0 ] &&
		within "$(calc "$i / $c")" "$EXPECTED_IPC" 0.01; then
		pass pmu-ipc "ipc=$(calc "$i / $c") expected=$EXPECTED_IPC instructions=$i cycles=$c"
	else
		fail pmu-ipc "instructions=${i:-none} cycles=${c:-none} expected ipc=$EXPECTED_IPC"
		show pmu-ipc.out
	fi
}

check_pmu_multiplex() {
	pmucheck stat -e $MUX_EVENTS -- loop $LOOP_ITERS >pmu-mux.out 2>&1
	cov=$(stat_coverage pmu-mux.out instructions)
	s=$(stat_scaled pmu-mux.out instructions)
	if [ -n "$cov" ] && [ -n "$s" ] && awk "BEGIN { exit !($cov < 1) }" &&
		within_pct "$s" $LOOP_INSNS 5; then
		pass pmu-multiplex "coverage=$cov scaled=$s expected=$LOOP_INSNS"
	else
		fail pmu-multiplex "coverage=${cov:-none} scaled=${s:-none} expected=$LOOP_INSNS (coverage < 1, 5%)"
		show pmu-mux.out
	fi
}

# --- pmbpf against that truth ---------------------------------------------

check_pmbpf_events() {
	events=cycles,instructions,LLC-load-misses,dTLB-load-misses
	pmbpf_run record -o json -i 250ms -c 2 -e $events >pmbpf-events.out 2>pmbpf-events.err
	rc=$?
	want_insns=counting
	[ -n "$ICOUNT" ] || want_insns=not-supported
	got="cycles=$(event_state pmbpf-events.out cycles)"
	got="$got instructions=$(event_state pmbpf-events.out instructions)"
	got="$got LLC-load-misses=$(event_state pmbpf-events.out LLC-load-misses)"
	got="$got dTLB-load-misses=$(event_state pmbpf-events.out dTLB-load-misses)"
	want="cycles=counting instructions=$want_insns LLC-load-misses=not-supported dTLB-load-misses=not-supported"
	info pmbpf-attach "$(session_attach pmbpf-events.out)"
	if [ $rc -eq 0 ] && [ "$got" = "$want" ]; then
		pass pmbpf-events "$got"
	else
		fail pmbpf-events "exit=$rc got: $got; want: $want"
		show pmbpf-events.out pmbpf-events.err
		if [ $rc -ne 0 ]; then
			pmbpf_verbose pmbpf-events record -o json -i 250ms -c 1 -e cycles
			show pmbpf-events.verbose
		fi
	fi
}

# check_pmbpf_loop NAME [pmbpf options]: --threads too (an entry per thread)
check_pmbpf_loop() {
	name=$1
	shift
	workload_start $name.wl loop $LOOP_ITERS || { fail $name "loop did not start"; return; }
	if ! pmbpf_start $name.out -p "$WL_PID" -e instructions,cycles "$@"; then
		fail $name "pmbpf record printed no event line"
		show $name.out $name.out.err
		kill "$WL_PID"
		return
	fi
	workload_go
	pmbpf_stop
	rc=$?
	n=$(proc_sum $name.out "$WL_PID" instructions)
	if [ $rc -eq 0 ] && [ -n "$n" ] && within_pct "$n" $LOOP_INSNS 1; then
		pass $name "expected=$LOOP_INSNS credited=$n ratio=$(calc "$n / $LOOP_INSNS")"
	else
		fail $name "exit=$rc expected=$LOOP_INSNS credited=${n:-none} (tolerance 1%)"
		show $name.wl $name.out $name.out.err
	fi
}

check_pmbpf_ipc() {
	workload_start pmbpf-ipc.wl busy $BUSY_MS || { fail pmbpf-ipc "busy did not start"; return; }
	if ! pmbpf_start pmbpf-ipc.out -p "$WL_PID" -e cycles,instructions; then
		fail pmbpf-ipc "pmbpf record printed no event line"
		show pmbpf-ipc.out pmbpf-ipc.out.err
		kill "$WL_PID"
		return
	fi
	workload_go
	pmbpf_stop
	rc=$?
	ipcs=$(proc_ipc pmbpf-ipc.out "$WL_PID" | grep -v null | words)
	bad=
	for v in $ipcs; do
		within "$v" "$EXPECTED_IPC" 0.01 || bad="$bad $v"
	done
	if [ $rc -eq 0 ] && [ -n "$ipcs" ] && [ -z "$bad" ]; then
		pass pmbpf-ipc "expected=$EXPECTED_IPC per-interval ipc: $ipcs"
	else
		fail pmbpf-ipc "exit=$rc expected=$EXPECTED_IPC±0.01 per-interval ipc: ${ipcs:-none}"
		show pmbpf-ipc.out pmbpf-ipc.out.err
	fi
}

check_pmbpf_multiplex() {
	workload_start pmbpf-mux.wl loop $LOOP_ITERS || { fail pmbpf-multiplex "loop did not start"; return; }
	if ! pmbpf_start pmbpf-mux.out -p "$WL_PID" -e $MUX_EVENTS; then
		fail pmbpf-multiplex "pmbpf record printed no event line"
		show pmbpf-mux.out pmbpf-mux.out.err
		kill "$WL_PID"
		return
	fi
	workload_go
	pmbpf_stop
	rc=$?
	n=$(proc_sum pmbpf-mux.out "$WL_PID" instructions)
	covs=$(proc_field pmbpf-mux.out "$WL_PID" instructions coverage | words)
	partial=
	for c in $covs; do
		awk "BEGIN { exit !($c < 1) }" && partial=1
	done
	if [ $rc -eq 0 ] && [ -n "$partial" ] && [ -n "$n" ] && within_pct "$n" $LOOP_INSNS 5; then
		pass pmbpf-multiplex "coverage: $covs scaled=$n expected=$LOOP_INSNS"
	else
		fail pmbpf-multiplex "exit=$rc coverage: ${covs:-none} scaled=${n:-none} expected=$LOOP_INSNS (coverage < 1, 5%)"
		show pmbpf-mux.out pmbpf-mux.out.err
	fi
}

check_pmbpf_noicount_ipc() {
	workload_start pmbpf-noicount.wl busy 1000 || { fail pmbpf-noicount-ipc "busy did not start"; return; }
	if ! pmbpf_start pmbpf-noicount.out -p "$WL_PID" -e cycles,instructions; then
		fail pmbpf-noicount-ipc "pmbpf record printed no event line"
		show pmbpf-noicount.out pmbpf-noicount.out.err
		kill "$WL_PID"
		return
	fi
	workload_go
	pmbpf_stop
	rc=$?
	ipcs=$(proc_ipc pmbpf-noicount.out "$WL_PID" | sort -u | words)
	c=$(proc_sum pmbpf-noicount.out "$WL_PID" cycles)
	if [ $rc -eq 0 ] && [ "$ipcs" = null ] && [ -n "$c" ] && [ "$c" -gt 0 ]; then
		pass pmbpf-noicount-ipc "ipc null, cycles=$c"
	else
		fail pmbpf-noicount-ipc "exit=$rc ipc values: ${ipcs:-none} cycles=${c:-none} (want null, > 0)"
		show pmbpf-noicount.out pmbpf-noicount.out.err
	fi
}

# pmbpf stat -r + pmbpf compare on exact counts (issue 14): 10^8 instructions
# against 1.005 x 10^8 is a regression at +0.2%; the loop against itself is
# not. compare runs here, from the files the guest's stat wrote. 4 runs: with
# 3 against 3 compare's rank test cannot reach 95% ("too few runs").
check_pmbpf_compare() {
	more=$((LOOP_ITERS + LOOP_ITERS / 200))
	# stat runs each command in a cgroup of its own
	grep -q ' cgroup2 ' /proc/mounts || mount -t cgroup2 cgroup2 /sys/fs/cgroup ||
		{ fail pmbpf-compare "cannot mount cgroup2"; return; }
	for f in a:$LOOP_ITERS b:$more a2:$LOOP_ITERS; do
		if ! pmbpf_run stat -r 4 -e instructions -o json -O "cmp-${f%%:*}.json" -- \
			loop "${f#*:}" >/dev/null 2>"cmp-${f%%:*}.err"; then
			fail pmbpf-compare "stat -r 4 -- loop ${f#*:} failed"
			show "cmp-${f%%:*}.err"
			return
		fi
	done
	pmbpf_run compare -t instructions=+0.2% cmp-a.json cmp-b.json >cmp-ab.out 2>&1
	rc_ab=$?
	pmbpf_run compare -t instructions=+0.2% cmp-a.json cmp-a2.json >cmp-aa.out 2>&1
	rc_aa=$?
	ab=$(grep '^instructions ' cmp-ab.out)
	aa=$(grep '^instructions ' cmp-aa.out)
	info pmbpf-compare-ab "$ab"
	info pmbpf-compare-aa "$aa"
	if [ $rc_ab -eq 1 ] && echo "$ab" | grep -q ' regression$' &&
		[ -n "$aa" ] && ! echo "$aa" | grep -q 'regression'; then
		pass pmbpf-compare "1.005x instructions: regression (exit 1); A/A: none"
	else
		fail pmbpf-compare "exit $rc_ab want 1; A/B: ${ab:-no row}; A/A: ${aa:-no row}"
		show cmp-ab.out cmp-aa.out
	fi
}

# --- sysfs event names, groups and -M (issue 13) ---------------------------

# The PMU's own names: cpu_cycles and inst_retired from
# /sys/bus/event_source/devices/armv8_pmuv3_0/events, counted like
# cycles and instructions (the 10^8-instruction loop within 1%).
check_pmbpf_sysfs_names() {
	workload_start pmbpf-sysfs.wl loop $LOOP_ITERS || { fail pmbpf-sysfs-names "loop did not start"; return; }
	if ! pmbpf_start pmbpf-sysfs.out -p "$WL_PID" -e cpu_cycles,inst_retired; then
		fail pmbpf-sysfs-names "pmbpf record printed no event line"
		show pmbpf-sysfs.out pmbpf-sysfs.out.err
		kill "$WL_PID"
		return
	fi
	workload_go
	pmbpf_stop
	rc=$?
	n=$(proc_sum pmbpf-sysfs.out "$WL_PID" inst_retired)
	c=$(proc_sum pmbpf-sysfs.out "$WL_PID" cpu_cycles)
	if [ $rc -eq 0 ] && [ -n "$n" ] && within_pct "$n" $LOOP_INSNS 1 && [ "${c:-0}" -gt 0 ]; then
		pass pmbpf-sysfs-names "inst_retired=$n expected=$LOOP_INSNS cpu_cycles=$c"
	else
		fail pmbpf-sysfs-names "exit=$rc inst_retired=${n:-none} expected=$LOOP_INSNS (1%) cpu_cycles=${c:-none}"
		show pmbpf-sysfs.out pmbpf-sysfs.out.err
	fi
}

# More events than counters: the group {cpu_cycles,inst_retired} runs over
# the same slices, so its IPC is exactly 1/2^N in every interval while its
# coverage is below 100%; the ungrouped cycles/instructions pair of the same
# run is scaled from different slices.
check_pmbpf_group_ipc() {
	workload_start pmbpf-group.wl busy $BUSY_MS || { fail pmbpf-group-ipc "busy did not start"; return; }
	if ! pmbpf_start pmbpf-group.out -p "$WL_PID" \
		-e '{cpu_cycles,inst_retired},cycles,instructions,r1,r2,r3,r4'; then
		fail pmbpf-group-ipc "pmbpf record printed no event line"
		show pmbpf-group.out pmbpf-group.out.err
		kill "$WL_PID"
		return
	fi
	workload_go
	pmbpf_stop
	rc=$?
	ipcs=$(proc_ipc pmbpf-group.out "$WL_PID" | grep -v null | words)
	covs=$(proc_field pmbpf-group.out "$WL_PID" inst_retired coverage | words)
	grouped=$(proc_lines pmbpf-group.out "$WL_PID" | grep -c '"ipc_same_group":true')
	bad=
	for v in $ipcs; do
		[ "$v" = "$(calc "$EXPECTED_IPC")" ] || bad="$bad $v"
	done
	partial=
	for c in $covs; do
		awk "BEGIN { exit !($c < 1) }" && partial=1
	done
	proc_field pmbpf-group.out "$WL_PID" instructions count >pmbpf-group.ins
	proc_field pmbpf-group.out "$WL_PID" cycles count >pmbpf-group.cyc
	ungrouped=$(paste -d' ' pmbpf-group.ins pmbpf-group.cyc |
		awk '$2 > 0 { printf "%.4f ", $1 / $2 }')
	info pmbpf-group-ipc "ungrouped ipc per interval (multiplexed, scaled): ${ungrouped:-none}"
	if [ $rc -eq 0 ] && [ -n "$ipcs" ] && [ -z "$bad" ] && [ -n "$partial" ] && [ "$grouped" -gt 0 ]; then
		pass pmbpf-group-ipc "grouped ipc $ipcs (expected $(calc "$EXPECTED_IPC")) coverage $covs"
	else
		fail pmbpf-group-ipc "exit=$rc grouped ipc: ${ipcs:-none} bad:${bad:-} want $(calc "$EXPECTED_IPC") every interval; coverage: ${covs:-none} (want some < 1); same-group lines: $grouped"
		show pmbpf-group.out pmbpf-group.out.err
	fi
}

# -M topdown on a CPU the table does not know: "not supported" once, exit 0,
# the other figures still there.
check_pmbpf_topdown_unsupported() {
	pmbpf_run record -o json -i 250ms -c 2 -e cycles -M topdown >pmbpf-td.out 2>pmbpf-td.err
	rc=$?
	says=$(grep -c 'metric topdown: not supported' pmbpf-td.err)
	cyc=$(event_state pmbpf-td.out cycles)
	if [ $rc -eq 0 ] && [ "$says" = 1 ] && [ "$cyc" = counting ]; then
		pass pmbpf-topdown-unsupported "$(grep 'metric topdown' pmbpf-td.err)"
	else
		fail pmbpf-topdown-unsupported "exit=$rc 'not supported' lines=$says cycles=$cyc"
		show pmbpf-td.out pmbpf-td.err
	fi
}

# A group of 8 on 7 counters can never be scheduled: refused in one line, exit 2.
check_pmbpf_group_too_big() {
	pmbpf_run record -o json -c 1 -e '{cycles,r1,r2,r3,r4,r5,r6,r7}' >pmbpf-big.out 2>pmbpf-big.err
	rc=$?
	lines=$(wc -l <pmbpf-big.err)
	if [ $rc -eq 2 ] && [ "$lines" -eq 1 ] && grep -q 'does not fit' pmbpf-big.err; then
		pass pmbpf-group-too-big "$(cat pmbpf-big.err)"
	else
		fail pmbpf-group-too-big "exit=$rc (want 2), $lines stderr lines (want 1 saying 'does not fit')"
		show pmbpf-big.out pmbpf-big.err
	fi
}

check_pmu_cycles
expect_enoent pmu-llc-dtlb-enoent LLC-load-misses dTLB-load-misses
if [ -n "$ICOUNT" ]; then
	check_pmu_loop
	check_pmu_ipc
	check_pmu_multiplex
else
	expect_enoent pmu-instructions-need-icount instructions
fi

if ! have_pmbpf; then
	skip pmbpf "no pmbpf binary in this guest (run.sh --pmbpf-arm64)"
else
	check_pmbpf_events
	check_pmbpf_topdown_unsupported
	check_pmbpf_group_too_big
	if [ -n "$ICOUNT" ]; then
		check_pmbpf_loop pmbpf-loop
		check_pmbpf_loop pmbpf-loop-threads --threads
		check_pmbpf_ipc
		check_pmbpf_multiplex
		check_pmbpf_compare
		check_pmbpf_sysfs_names
		check_pmbpf_group_ipc
	else
		check_pmbpf_noicount_ipc
	fi
fi
