# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# CPU quota throttling per cgroup (issue 33): a guest whose cgroup2 has the
# cpu controller (the host keeps it on cgroup v1, where cpu.max does not
# exist). A cgroup at cpu.max "20000 100000" (20% of a CPU) runs a spinner;
# pmbpf's cgroup records (throttled_ns, nr_throttled, nr_periods: the
# growth of the cgroup's cpu.stat over each interval) against the cgroup's
# own cpu.stat read by this script before and after, over the same run:
# their rates per second of wall time. Sourced by amd64.sh after lib.sh;
# skips where the cpu controller cannot be enabled on cgroup2.

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
	workload_start thr.wl busy 60000 || { fail pmbpf-throttle "busy did not start"; return; }
	spin_pid=$WL_PID
	echo "$spin_pid" >"$cg/cgroup.procs"
	kill -USR1 "$spin_pid"
	if ! pmbpf_start thr.out -G "$cg" --by cgroup; then
		fail pmbpf-throttle "pmbpf record -G printed no event line"
		show thr.out thr.out.err
		kill "$spin_pid"
		return
	fi
	# the cgroup's own figures over the same run as pmbpf's records
	t0=$(cut -d' ' -f1 /proc/uptime)
	thr0=$(cpu_stat "$cg" throttled_usec)
	nthr0=$(cpu_stat "$cg" nr_throttled)
	per0=$(cpu_stat "$cg" nr_periods)
	sleep 4
	thr1=$(cpu_stat "$cg" throttled_usec)
	nthr1=$(cpu_stat "$cg" nr_throttled)
	per1=$(cpu_stat "$cg" nr_periods)
	t1=$(cut -d' ' -f1 /proc/uptime)
	pmbpf_stop
	rc=$?
	kill "$spin_pid"
	wait "$spin_pid"
	rmdir "$cg"
	set -- $(cg_sum thr.out "$rel" throttled_ns)
	thr_ns=$1 secs=$2 nrec=$3
	set -- $(cg_sum thr.out "$rel" nr_throttled)
	nthr=$1
	set -- $(cg_sum thr.out "$rel" nr_periods)
	per=$1
	wall=$(calc "$t1 - $t0")
	# rates: throttled seconds per second, throttled periods per second
	want_r=$(calc "($thr1 - $thr0) / 1e6 / $wall")
	want_n=$(calc "($nthr1 - $nthr0) / $wall")
	want_p=$(calc "($per1 - $per0) / $wall")
	if [ "$nrec" -lt 4 ]; then
		fail pmbpf-throttle "exit=$rc: $nrec cgroup records with throttled_ns (want 4+)"
		show thr.out thr.out.err
		return
	fi
	got_r=$(calc "$thr_ns / 1e9 / $secs")
	got_n=$(calc "$nthr / $secs")
	got_p=$(calc "$per / $secs")
	# a spinner held to 20% of a CPU is throttled about 80% of the time, in
	# about every 100 ms period; pmbpf's rates within 0.05 s/s and 1 period/s
	# of the file's over the same run
	detail="throttled $got_r s/s (cpu.stat $want_r), nr_throttled $got_n/s ($want_n), nr_periods $got_p/s ($want_p), $nrec records over $secs s, wall $wall s"
	if [ $rc -eq 0 ] && within "$got_r" "$want_r" 0.05 && within "$got_n" "$want_n" 1 &&
		within "$got_p" "$want_p" 1 && within "$want_r" 0.8 0.15; then
		pass pmbpf-throttle "$detail"
	else
		fail pmbpf-throttle "exit=$rc $detail"
		show thr.out thr.out.err
	fi
}

check_pmbpf_throttle
