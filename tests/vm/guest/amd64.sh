# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Checks in the amd64 guests: Debian's 5.10, 6.1 and 6.12 kernels, other
# kernels than the host's, with BTF and no PMU. pmbpf must load there, choose
# the programs the kernel can run (tp_btf, or raw_tp without task storage;
# exits summed in BPF, or marked for userspace before 5.19) and credit
# software events exactly. Sourced by /init after lib.sh.
#
# Kernel command line (run.sh): pmbpf_vm.hotplug=1 takes CPU 1 offline and
# back under pmbpf; pmbpf_vm.memory=1 reports the maps' kernel memory.

PAGES=10000

# page_faults_ok COUNT: PAGES faults plus start-up and exit, at most 2% more.
page_faults_ok() { [ "$1" -ge $PAGES ] && [ "$1" -le $((PAGES + PAGES / 50)) ]; }

check_btf() {
	if [ -s /sys/kernel/btf/vmlinux ]; then
		pass btf "/sys/kernel/btf/vmlinux $(wc -c </sys/kernel/btf/vmlinux) bytes"
	else
		fail btf "/sys/kernel/btf/vmlinux missing or empty"
	fi
}

check_pmu_page_faults() {
	pmucheck stat -e page-faults -- pagetouch $PAGES >pmu-pf.out 2>&1
	n=$(stat_count pmu-pf.out page-faults)
	if [ -n "$n" ] && page_faults_ok "$n"; then
		pass pmu-page-faults "pages=$PAGES page-faults=$n"
	else
		fail pmu-page-faults "pages=$PAGES page-faults=${n:-none} (want $PAGES..+2%)"
		show pmu-pf.out
	fi
}

check_pmbpf_events() {
	pmbpf_run record -o json -i 250ms -c 2 -e cycles,instructions,page-faults \
		>pmbpf-events.out 2>pmbpf-events.err
	rc=$?
	got="cycles=$(event_state pmbpf-events.out cycles)"
	got="$got instructions=$(event_state pmbpf-events.out instructions)"
	got="$got page-faults=$(event_state pmbpf-events.out page-faults)"
	got="$got attach=$(session_attach pmbpf-events.out)"
	# tp_btf needs task storage (5.11): Debian 11's 5.10 gets raw_tp
	attach=tp_btf
	case $(uname -r) in 5.10.*) attach=raw_tp ;; esac
	want="cycles=not-supported instructions=not-supported page-faults=counting attach=$attach"
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

# check_pmbpf_page_faults NAME [pmbpf options]: the raw_tp fallback too
check_pmbpf_page_faults() {
	name=$1
	shift
	workload_start $name.wl pagetouch $PAGES || { fail $name "pagetouch did not start"; return; }
	if ! pmbpf_start $name.out -p "$WL_PID" -e page-faults "$@"; then
		fail $name "pmbpf record printed no event line"
		show $name.out $name.out.err
		kill "$WL_PID"
		return
	fi
	workload_go
	pmbpf_stop
	rc=$?
	n=$(proc_sum $name.out "$WL_PID" page-faults)
	attach=$(session_attach $name.out)
	exited=$(proc_lines $name.out "$WL_PID" | grep -c '"exited":true')
	if [ $rc -eq 0 ] && [ -n "$n" ] && page_faults_ok "$n" && [ "$exited" -eq 1 ]; then
		pass $name "pages=$PAGES credited=$n attach=$attach exit-lines=$exited"
	else
		fail $name "exit=$rc pages=$PAGES credited=${n:-none} (want $PAGES..+2%) attach=$attach exit-lines=$exited (want 1)"
		show $name.wl $name.out $name.out.err
	fi
}

# check_pmbpf_features: what doctor says this kernel offers, as one INFO line.
check_pmbpf_features() {
	pmbpf_run doctor -o json >doctor.out 2>doctor.err
	rc=$?
	feats=$(jl_compact doctor.out | tr '{' '\n' | sed -n 's/^"name":"\([^"]*\)","on":\(true\|false\).*/\1=\2/p' | words)
	if [ $rc -eq 0 ] && [ -n "$feats" ]; then
		pass pmbpf-doctor "$feats"
	else
		fail pmbpf-doctor "exit=$rc features: ${feats:-none}"
		show doctor.out doctor.err
	fi
}

cgroup2_mount() {
	grep -q ' /sys/fs/cgroup cgroup2 ' /proc/mounts || mount -t cgroup2 none /sys/fs/cgroup
}

# check_pmbpf_cgroup_filter: -G counts a process in the cgroup exactly and
# leaves out one outside it (struct cgroup's ancestors[] or ancestor_ids[]).
check_pmbpf_cgroup_filter() {
	cg=/sys/fs/cgroup/vmtest-$$
	if ! cgroup2_mount || ! mkdir "$cg"; then
		fail pmbpf-cgroup-filter "cannot create a cgroup2 directory"
		return
	fi
	workload_start cgf-in.wl pagetouch $PAGES || { fail pmbpf-cgroup-filter "pagetouch did not start"; return; }
	in_pid=$WL_PID
	echo "$in_pid" >"$cg/cgroup.procs"
	workload_start cgf-out.wl pagetouch $PAGES || { fail pmbpf-cgroup-filter "pagetouch did not start"; return; }
	out_pid=$WL_PID
	if ! pmbpf_start cgf.out -G "$cg" -e page-faults; then
		fail pmbpf-cgroup-filter "pmbpf record -G printed no event line"
		show cgf.out cgf.out.err
		kill "$in_pid" "$out_pid"
		return
	fi
	kill -USR1 "$in_pid" "$out_pid"
	wait "$in_pid" "$out_pid"
	sleep 0.6
	pmbpf_stop
	rc=$?
	n=$(proc_sum cgf.out "$in_pid" page-faults)
	others=$(jl_compact cgf.out | grep '"type":"process"' | grep -vc "\"pid\":$in_pid,")
	exited=$(proc_lines cgf.out "$in_pid" | grep -c '"exited":true')
	rmdir "$cg"
	if [ $rc -eq 0 ] && [ -n "$n" ] && page_faults_ok "$n" && [ "$others" -eq 0 ] && [ "$exited" -eq 1 ]; then
		pass pmbpf-cgroup-filter "in=$n (want $PAGES..+2%) lines-of-others=$others exit-lines=$exited"
	else
		fail pmbpf-cgroup-filter "exit=$rc in=${n:-none} (want $PAGES..+2%) lines-of-others=$others (want 0) exit-lines=$exited (want 1)"
		show cgf.out cgf.out.err
	fi
}

# check_pmbpf_memory: the maps' kernel memory as doctor reports it (the
# kernel's memlock figures), against entries x value size (doctor's
# counts_value_bytes, rounded up to 8) x possible CPUs.
check_pmbpf_memory() {
	pmbpf_run doctor -o json >mem.out 2>mem.err
	j=$(jl_compact mem.out | tr '{' '\n')
	total=$(echo "$j" | sed -n 's/^"total_bytes":\([0-9]*\).*/\1/p')
	possible=$(echo "$j" | sed -n 's/.*"possible_cpus":\([0-9]*\).*/\1/p')
	procs=$(echo "$j" | sed -n 's/.*"max_procs":\([0-9]*\).*/\1/p')
	counts=$(echo "$j" | sed -n 's/^"name":"counts","bytes":\([0-9]*\).*/\1/p')
	value=$(echo "$j" | sed -n 's/.*"counts_value_bytes":\([0-9]*\).*/\1/p')
	value=$(( (${value:-0} + 7) / 8 * 8 ))
	formula=$(( (procs + 1) * value * possible ))
	info pmbpf-memory "possible_cpus=$possible online=$(cat /sys/devices/system/cpu/online) max_procs=$procs counts_bytes=$counts formula_bytes=$formula total_bytes=$total"
	if [ -n "$counts" ] && [ "$counts" -ge "$formula" ] && [ "$counts" -le $((formula + formula / 4)) ] &&
		[ "$total" -le $((160 * 1048576)) ]; then
		pass pmbpf-memory "counts map $counts B (entries x $value B x $possible CPUs = $formula B, +$(( (counts - formula) * 100 / formula ))%), all maps $total B"
	else
		fail pmbpf-memory "counts=${counts:-none} formula=$formula total=${total:-none} (want counts within +25% of the formula, total under 160 MiB)"
		show mem.out mem.err
	fi
}

# interval_sums FILE TYPE EVENT: "time raw" of EVENT, summed per interval over
# the lines of TYPE (process or system).
interval_sums() {
	jl_compact "$1" | grep "\"type\":\"$2\"" |
		sed -n "s/.*\"time\":\"\([^\"]*\)\".*\"$3\":{[^}]*\"raw\":\([0-9]*\).*/\1 \2/p" |
		awk '{ s[$1] += $2 } END { for (t in s) print t, s[t] }' | sort
}

# check_pmbpf_hotplug: CPU 1 goes offline and back while pmbpf records every
# process: a process faulting on CPU 0 meanwhile is credited exactly, one
# faulting on CPU 1 after its return too (the counters of CPU 1 died with it
# and are reopened, as a group again: a leader left disabled would count
# nothing after the return); per-interval conservation is reported.
check_pmbpf_hotplug() {
	online=/sys/devices/system/cpu/cpu1/online
	info cpus "possible=$(cat /sys/devices/system/cpu/possible) online=$(cat /sys/devices/system/cpu/online)"
	if [ ! -w $online ]; then
		skip pmbpf-hotplug "no $online"
		return
	fi
	# --no-delays: with who-delayed-whom on, this guest credited the
	# workload on CPU 0 about 170 faults too many (10,225 and 10,230 of
	# 10,000 pages, twice; 10,054 and 10,055 without, twice): cause not
	# established (the counts are not touched by that code; suspected:
	# pmbpf's own faults in spans whose switch the guest kernel did not
	# report, credited to the task leaving). Left open in issue 16's note.
	if ! pmbpf_start hp.out --no-delays -e '{page-faults,context-switches}'; then
		fail pmbpf-hotplug "pmbpf record printed no event line"
		show hp.out hp.out.err
		return
	fi
	taskset 1 pagetouch -w $PAGES >hp-a.wl 2>&1 &
	a=$!
	wait_for 10 grep -qs "pid=$a" hp-a.wl
	echo 0 >$online
	kill -USR1 $a
	wait $a
	sleep 0.6
	echo 1 >$online
	# two reads: one sees the counters of CPU 1 stopped, the next counts again
	sleep 0.8
	taskset 2 pagetouch -w $PAGES >hp-b.wl 2>&1 &
	b=$!
	wait_for 10 grep -qs "pid=$b" hp-b.wl
	kill -USR1 $b
	wait $b
	sleep 0.6
	pmbpf_stop
	rc=$?
	na=$(proc_sum hp.out $a page-faults)
	nb=$(proc_sum hp.out $b page-faults)
	interval_sums hp.out process page-faults >hp.procs
	interval_sums hp.out system page-faults >hp.system
	bad=$(awk 'NR == FNR { p[$1] = $2; next } { d = p[$1] - $2; if (d > 2 || d < -2) print $1 ":" p[$1] "/" $2 }' \
		hp.procs hp.system | words)
	nint=$(wc -l <hp.system)
	# Under TCG, intervals off by more than 2 are seen (issue 20: unexplained
	# excess in the interval CPU 1 goes offline); reported, not judged here.
	# tests/test_hotplug.py judges conservation on the host.
	info pmbpf-hotplug-conservation "intervals=$nint off-by-more-than-2 (processes/system): ${bad:-none}"
	if [ $rc -eq 0 ] && [ -n "$na" ] && page_faults_ok "$na" && [ -n "$nb" ] && page_faults_ok "$nb" &&
		[ "$nint" -ge 4 ]; then
		pass pmbpf-hotplug "cpu0-while-cpu1-offline=$na cpu1-after-return=$nb (want $PAGES..+2%) intervals=$nint"
	else
		fail pmbpf-hotplug "exit=$rc cpu0=${na:-none} cpu1=${nb:-none} (want $PAGES..+2%) intervals=$nint"
		show hp.out.err hp.a.wl
	fi
}

check_btf
# 32 vCPUs: memory only (with 2 GB, transparent huge pages make pagetouch fault
# about once per 2 MB, even without pmbpf)
if [ "$(cmdline_arg memory)" = 1 ]; then
	if have_pmbpf; then check_pmbpf_memory; else skip pmbpf "no pmbpf binary in this guest"; fi
	return 0
fi
expect_enoent pmu-no-hardware cycles instructions
check_pmu_page_faults

if ! have_pmbpf; then
	skip pmbpf "no pmbpf binary in this guest (run.sh --pmbpf-x86)"
else
	check_pmbpf_features
	check_pmbpf_events
	check_pmbpf_page_faults pmbpf-page-faults
	check_pmbpf_page_faults pmbpf-page-faults-raw-tp --raw-tp
	check_pmbpf_page_faults pmbpf-page-faults-threads --threads
	check_pmbpf_cgroup_filter
	[ "$(cmdline_arg hotplug)" != 1 ] || check_pmbpf_hotplug
fi
