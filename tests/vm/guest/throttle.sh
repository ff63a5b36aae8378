# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# CPU quota throttling per cgroup (issue 33): a guest whose cgroup2 has the
# cpu controller (the host keeps it on cgroup v1, where cpu.max does not
# exist). A cgroup at cpu.max "20000 100000" (20% of a CPU) holds a spinner,
# stopped until pmbpf runs, which then spins for 3 s. pmbpf reads the
# cgroup's cpu.stat at its start and at the end of every interval the
# cgroup has a record in (the spinner runs in every 100 ms period): its
# records carry the growth over each interval (throttled_ns, nr_throttled,
# nr_periods), whose sums over the run must be the growth of the cgroup's
# own cpu.stat over the spinner's life, read by this script before it
# starts and after it ends (nothing runs in the cgroup outside it), to the
# microsecond and the period. Sourced by amd64.sh after lib.sh; skips where
# the cpu controller cannot be enabled on cgroup2.
# cpu_stat CGROUP KEY: KEY's value in CGROUP's cpu.stat.
cpu_stat() { awk -v k="$2" '$1 == k { print $2 }' "$1/cpu.stat"; }

# cg_lines FILE REL: the cgroup records of cgroup REL (path below the mount).
cg_lines() { jl_compact "$1" | grep '"type":"cgroup"' | grep "\"cgroup\":\"$2\""; }

# cg_sum FILE REL KEY: KEY summed over REL's records that have it (not null),
# and the records' interval_s summed alike: "SUM SECONDS RECORDS".
cg_sum() {
	cg_lines "$1" "$2" | sed -n "s/.*\"interval_s\":\([0-9.]*\),.*\"$3\":\([0-9][0-9]*\).*/\1 \2/p" |
		awk '{ s += $2; t += $1; n++ } END { printf "%.0f %.6f %d", s, t, n }'
}

check_pmbpf_throttle() {
	root=/sys/fs/cgroup
	rel=/vmtest-throttle-$$
	cg=$root$rel
	if ! cgroup2_mount; then
		fail pmbpf-throttle "cannot mount cgroup2"
		return
	fi
	if ! grep -qw cpu $root/cgroup.controllers; then
		skip pmbpf-throttle "cgroup2 has no cpu controller in this kernel"
		return
	fi
	if ! echo +cpu >$root/cgroup.subtree_control 2>/dev/null || ! mkdir "$cg" ||
		! echo "20000 100000" >"$cg/cpu.max"; then
		fail pmbpf-throttle "cannot enable the cpu controller for a cgroup2 child or set its cpu.max"
		return
	fi
	workload_start thr.wl busy 3000 || { fail pmbpf-throttle "busy did not start"; return; }
	spin_pid=$WL_PID
	echo "$spin_pid" >"$cg/cgroup.procs"
	if ! pmbpf_start thr.out -G "$cg" --by cgroup; then
		fail pmbpf-throttle "pmbpf record -G printed no event line"
		show thr.out thr.out.err
		kill "$spin_pid"
		return
	fi
	thr0=$(cpu_stat "$cg" throttled_usec)
	nthr0=$(cpu_stat "$cg" nr_throttled)
	per0=$(cpu_stat "$cg" nr_periods)
	t0=$(uptime_s)
	workload_go
	t1=$(uptime_s)
	# pmbpf reads the cgroup at the end of the interval the spinner exited
	# in; three intervals (750 ms) cover the 2 periods the period timer
	# still counts
	pmbpf_reads 3
	thr1=$(cpu_stat "$cg" throttled_usec)
	nthr1=$(cpu_stat "$cg" nr_throttled)
	per1=$(cpu_stat "$cg" nr_periods)
	pmbpf_stop
	rc=$?
	rmdir "$cg"
	set -- $(cg_sum thr.out "$rel" throttled_ns)
	thr_ns=$1 secs=$2 nrec=$3
	set -- $(cg_sum thr.out "$rel" nr_throttled)
	nthr=$1
	set -- $(cg_sum thr.out "$rel" nr_periods)
	per=$1
	# the spinner's run-queue wait (a throttled task is runnable): next to
	# the throttled time, for the record (one thread on one CPU: about equal)
	rq=$(cg_lines thr.out "$rel" | sed 's/"self".*//' |
		sed -n 's/.*"runq":{"count":[0-9]*,"total_ns":\([0-9]*\),.*/\1/p' | awk '{ s += $1 } END { printf "%.0f", s }')
	info pmbpf-throttle-runq "runq.total_ns $rq against throttled_ns $thr_ns over the cgroup's records"
	# records of the cgroup without a value: a reading missed
	gaps=$(cg_lines thr.out "$rel" | grep -c '"throttled_ns":null')
	want_ns=$(((thr1 - thr0) * 1000))
	want_n=$((nthr1 - nthr0))
	want_p=$((per1 - per0))
	spin_s=$(calc "$t1 - $t0")
	detail="throttled_ns $thr_ns (cpu.stat $want_ns over the spinner's $spin_s s), nr_throttled $nthr ($want_n), nr_periods $per ($want_p), $nrec records over $secs s, $gaps without a value"
	# the sums telescope: equal to the file's growth (1 us: its unit); the
	# period timer goes on counting periods until it has seen a whole idle
	# one: up to 2 after the spinner's end, after pmbpf's last reading of
	# the cgroup (seen: 32 against 33, 31 against 33); the spinner held to
	# 20% of a CPU is throttled in most periods, most of the time
	if [ $rc -eq 0 ] && [ "$nrec" -ge 4 ] && [ "$gaps" -eq 0 ] &&
		within "$thr_ns" "$want_ns" 1000 && [ "$nthr" -eq "$want_n" ] &&
		[ "$per" -le "$want_p" ] && [ "$want_p" -le $((per + 2)) ] &&
		[ "$want_n" -ge 10 ] && [ "$(calc "($want_ns / 1e9 > 0.5 * $spin_s)")" = 1.0000 ]; then
		pass pmbpf-throttle "$detail"
	else
		fail pmbpf-throttle "exit=$rc $detail"
		show thr.out thr.out.err
	fi
}

check_pmbpf_throttle
