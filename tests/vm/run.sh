#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Boots the VM test guests under QEMU (TCG) and reports their checks.
#
#   run.sh [-o DIR] [--pmbpf-arm64 FILE] [--pmbpf-x86 FILE] [-t SECONDS] [-k] [SUITE...]
#
# SUITE is one of (default: all)
#   arm64-icount0   arm64 guest, -icount shift=0: exact counts, IPC 1
#   arm64-icount2   arm64 guest, -icount shift=2: IPC 0.25
#   arm64-noicount  arm64 guest without -icount: no instructions event
#   amd64           amd64 guest: Debian 12's 6.1 kernel, BTF, no PMU
#   amd64-5.10      the same checks on Debian 11's 5.10 kernel
#   amd64-6.12      the same checks on Debian 13's 6.12 kernel, and CPU
#                   hotplug with -smp 2,maxcpus=4 (possible != online)
#   amd64-cpus2     6.1, -smp 2: pmbpf record with 5,000 live processes, the
#                   kernel memory of its maps (memlock) against the formula
#   amd64-cpus192   6.1, -smp 2,maxcpus=192: 192 possible CPUs, 2 of them
#                   present; 20,000 live processes and 50,000 live threads
#                   under pmbpf record and record --threads: a row each with
#                   its page faults, no overflow, the maps' memory (issue 35);
#                   run.sh compares its maps with amd64-cpus2's
#   amd64-cpus64    as amd64-cpus2 at 64 possible CPUs (not in the default set)
#   amd64-smp32     6.1 with 32 vCPUs: kernel memory of the maps (not in the
#                   default set: about a minute under TCG)
#   amd64-big2      as amd64-cpus192 at 2 possible CPUs (not in the default
#                   set)
# -o DIR    build directory with the guest workloads (DIR/arm64, DIR/amd64;
#           built with `make -f tests/vm/vm.mk` when missing; default build/vm)
# --pmbpf-arm64, --pmbpf-x86 FILE
#           static pmbpf for each guest; without one, its pmbpf checks are
#           skipped (reported, never passed)
# -t        time limit per guest in seconds on an idle host (default 180);
#           it grows with the guest's measured slowness: see boot() below
# -k        keep the console logs of passing guests too
#
# Kernels and busybox come from fetch-kernels.sh ($PMBPF_VM_CACHE). Exits 1
# if any check fails or a guest does not finish.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
out=$top/build/vm
pmbpf_arm64=
pmbpf_x86=
limit=180
keep=0
all_suites="arm64-icount0 arm64-icount2 arm64-noicount amd64 amd64-5.10 amd64-6.12 amd64-cpus2 amd64-cpus192"
extra_suites="amd64-cpus64 amd64-smp32 amd64-big2"
# live processes in the amd64-cpus2 and amd64-cpus64 guests
scale_procs=5000
# amd64-cpus192 and amd64-big2: PROCS,MULTI,THREADS (population.c): 20,000
# processes, 2,000 of them with 16 threads: 50,000 threads
population=${PMBPF_VM_POPULATION:-20000,2000,16}

usage() {
	# The header comment, from its usage line to its end.
	awk 'NR > 4 && !/^#/ { exit } NR > 4 { sub(/^# ?/, ""); print }' "$0" >&2
	exit "${1:-2}"
}

while [ $# -gt 0 ]; do
	case $1 in
	-o) out=$2; shift 2 ;;
	--pmbpf-arm64) pmbpf_arm64=$2; shift 2 ;;
	--pmbpf-x86) pmbpf_x86=$2; shift 2 ;;
	-t) limit=$2; shift 2 ;;
	-k) keep=1; shift ;;
	-h | --help) usage 0 ;;
	-*) echo "run.sh: unknown option $1" >&2; usage ;;
	*) break ;;
	esac
done
# shellcheck disable=SC2086 # a list of words
[ $# -gt 0 ] || set -- $all_suites
for s in "$@"; do
	case " $all_suites $extra_suites " in
	*" $s "*) ;;
	*) echo "run.sh: unknown suite '$s' (one of: $all_suites $extra_suites)" >&2; exit 2 ;;
	esac
done
# check_static FILE MACHINE: FILE must be a static executable for MACHINE (as
# readelf names it): the guests have no libraries.
check_static() {
	[ -n "$1" ] || return 0
	if [ ! -x "$1" ]; then
		echo "run.sh: pmbpf binary $1 does not exist" >&2
		exit 2
	fi
	if ! readelf -h "$1" 2>/dev/null | grep -q "Machine: *$2\$"; then
		echo "run.sh: $1 is not an $2 executable" >&2
		exit 2
	fi
	if readelf -l "$1" | grep -q 'program interpreter'; then
		echo "run.sh: $1 is dynamically linked; the guests need a static pmbpf (make STATIC=1)" >&2
		exit 2
	fi
}
check_static "$pmbpf_arm64" AArch64
check_static "$pmbpf_x86" "Advanced Micro Devices X86-64"

cache=${PMBPF_VM_CACHE:-$HOME/.cache/pmbpf-vm}
export PMBPF_VM_CACHE="$cache"
mkdir -p "$out/logs"
out=$(cd "$out" && pwd)

archs=
kernels=
case " $* " in *" arm64-"*) archs="$archs arm64" kernels="$kernels arm64" ;; esac
case " $* " in *" amd64"*) archs="$archs amd64" ;; esac
case " $* " in *" amd64 "* | *" amd64-smp32 "* | *" amd64-cpus"* | *" amd64-big"*) kernels="$kernels amd64" ;; esac
case " $* " in *" amd64-5.10 "*) kernels="$kernels amd64-bullseye" ;; esac
case " $* " in *" amd64-6.12 "*) kernels="$kernels amd64-trixie" ;; esac

# shellcheck disable=SC2086
"$here/fetch-kernels.sh" $kernels
# bullseye and trixie guests use bookworm's busybox
case " $kernels " in
*" amd64 "*) ;;
*" amd64-"*) "$here/fetch-kernels.sh" amd64 ;;
esac
make -s -C "$top" -f tests/vm/vm.mk VM_OUT="$out" vm-workloads

for arch in $archs; do
	pmbpf=$pmbpf_arm64
	[ "$arch" = arm64 ] || pmbpf=$pmbpf_x86
	files=
	for w in loop busy pagetouch pmucheck; do
		files="$files $out/$arch/$w"
	done
	[ "$arch" = arm64 ] || files="$files $out/$arch/sleepers $out/$arch/mapmem $out/$arch/population"
	[ -z "$pmbpf" ] || files="$files $pmbpf:/bin/pmbpf"
	# shellcheck disable=SC2086
	"$here/mkinitramfs.sh" -o "$out/$arch.cpio" -b "$cache/busybox-$arch" $files
done

now() { date +%s.%N; }

failed_suites=
total_pass=0
total_fail=0
total_skip=0

# shellcheck source=tests/vm/scaled.sh
. "$here/scaled.sh"

# boot SUITE LOG: runs the guest of SUITE with its console in LOG. Its time
# limit scales with its speed: QEMU's start to the guest's first line
# (VMTEST INFO boot, from /init) is timed, and the limit grows by that time
# over the same boot on an idle host (boot_s), from 1x to 6x; past it the
# guest goes on while it reports results (scaled.sh).
# boot_s are upper bounds of the
# idle boot (so the limit grows no more than the slowdown): the whole
# checks-only run of each suite on an idle host (README.md's table), and for
# arm64-icount0 the 4 s to /init of docs (environment). Measured at load 20
# (make vmtest-infra): boots of 47.2, 6.3, 5.6, 29.7, 21.3 and 7.1 s.
# Sets booted_s and limit_s.
boot() {
	suite=$1
	log=$2
	suite_limit=$limit
	case $suite in
	arm64-icount0) boot_s=4.0 ;;
	arm64-icount2) boot_s=3.2 ;;
	arm64-noicount) boot_s=1.8 ;;
	*) boot_s=5.7 ;;
	esac
	case $suite in
	arm64-*)
		icount=
		case $suite in
		arm64-icount*) icount=${suite#arm64-icount} ;;
		esac
		# shellcheck disable=SC2086 # no -icount when empty
		set -- qemu-system-aarch64 -M virt -cpu max,pauth=off -smp 1 -m 1G \
			-nographic -no-reboot ${icount:+-icount shift=$icount} \
			-kernel "$cache/vmlinuz-arm64" -initrd "$out/arm64.cpio" \
			-append "console=ttyAMA0 panic=-1 quiet${icount:+ pmbpf_vm.icount=$icount}"
		;;
	amd64*)
		kernel=$cache/vmlinuz-amd64 smp=1 mem=512M extra= accel=tcg
		case $suite in
		amd64-5.10) kernel=$cache/vmlinuz-amd64-bullseye ;;
		# One host thread for both vCPUs: with multi-threaded TCG, QEMU 7.2
		# was seen to run a stale int3 of the kernel's own text patching
		# (static keys, when the first page-faults event opens): "Oops: int3"
		# in do_user_addr_fault and a panic, 1 boot in 3.
		amd64-6.12) kernel=$cache/vmlinuz-amd64-trixie smp=2,maxcpus=4 extra="possible_cpus=4 pmbpf_vm.hotplug=1" accel=tcg,thread=single ;;
		amd64-smp32) smp=32 mem=2G extra=pmbpf_vm.memory=1 ;;
		# 6.1 counts possible CPUs up to maxcpus (6.12 does not): per-CPU
		# maps are sized for them at the cost of 2 vCPUs. One host thread, as
		# for 6.12 above. Memory: the sleepers' kernel stacks and page tables
		# (about 0.4 GB for 5,000) and the per-CPU maps.
		# The counts map's formula is docs/kernels.md's, read from there
		# (its base and per-event bytes): the guest checks the docs.
		amd64-cpus* | amd64-big*)
			n=${suite#amd64-cpus}
			n=${n#amd64-big}
			formula=$(sed -n 's/^ *counts bytes ~= max_procs x (\([0-9]*\) B + \([0-9]*\) B x counting events).*/\1,\2/p' \
				"$top/docs/kernels.md" | head -n 1)
			smp=2,maxcpus=$n mem=1536M accel=tcg,thread=single
			extra="pmbpf_vm.possible=$n pmbpf_vm.procs=$scale_procs pmbpf_vm.formula=${formula:-none}"
			# 50,000 threads: kernel stacks, task structs and page tables
			# (1.9 GB), their pages and stacks (0.6 GB), the JSON in tmpfs
			# (70 MB); 2.6 GB used at the most with 6 GB (MemAvailable)
			case $suite in
			amd64-cpus192 | amd64-big*)
				mem=4G
				extra="pmbpf_vm.possible=$n pmbpf_vm.population=$population pmbpf_vm.formula=${formula:-none}"
				# 170 s in all on an idle host (the population's start
				# 39 s, pmbpf's two runs 50 s, the checks' parsing)
				[ "$suite_limit" -ge 600 ] || suite_limit=600
				;;
			esac
			;;
		esac
		# no_timer_check: on a busy host the IO-APIC timer check can time
		# out under TCG, a panic at boot (tests/vm/systemd/run.sh)
		set -- qemu-system-x86_64 -accel "$accel" -cpu max -smp "$smp" -m "$mem" \
			-nographic -no-reboot \
			-kernel "$kernel" -initrd "$out/amd64.cpio" \
			-append "console=ttyS0 panic=-1 quiet no_timer_check $extra"
		;;
	esac
	# The command as a shell line, to run the guest again by hand.
	for a in "$@"; do
		case $a in
		*" "*) printf "'%s' " "$a" ;;
		*) printf '%s ' "$a" ;;
		esac
	done >"$log.cmd"
	echo >>"$log.cmd"
	run_scaled "$suite_limit" "$boot_s" "$log.raw" "$@"
}

for suite in "$@"; do
	log=$out/logs/$suite.log
	echo "vmtest: $suite: booting"
	start=$(now)
	rc=0
	boot "$suite" "$log" || rc=$?
	elapsed=$(awk -v a="$start" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')
	tr -d '\r' <"$log.raw" >"$log"
	rm -f "$log.raw"
	results=$(sed -n 's/.*\(VMTEST [A-Z]* .*\)/\1/p' "$log")
	rm -f "$out/maps-$suite.txt"
	case $suite in
	amd64-cpus* | amd64-big*) echo "$results" | sed -n 's/^VMTEST INFO map //p' >"$out/maps-$suite.txt" ;;
	esac
	npass=$(echo "$results" | grep -c '^VMTEST PASS ' || true)
	nfail=$(echo "$results" | grep -c '^VMTEST FAIL ' || true)
	nskip=$(echo "$results" | grep -c '^VMTEST SKIP ' || true)
	echo "$results" | sed -n 's/^VMTEST \(PASS\|FAIL\|SKIP\|INFO\) /  \1 /p'
	problem=
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		problem="stopped: no new result for ${limit_s} s past its limit of ${limit_s} s, or at $((suite_limit * 20)) s in all (booted in ${booted_s:-?} s, ${boot_s} s on an idle host; ${suite_limit} s scaled: scaled.sh)"
	elif ! echo "$results" | grep -q '^VMTEST DONE '; then
		problem="stopped before its checks finished (qemu exit status $rc)"
	elif [ "$rc" -ne 0 ]; then
		problem="qemu exit status $rc"
	elif [ "$npass" -eq 0 ]; then
		problem="no check passed"
	fi
	total_pass=$((total_pass + npass))
	total_fail=$((total_fail + nfail))
	total_skip=$((total_skip + nskip))
	echo "vmtest: $suite: $npass passed, $nfail failed, $nskip skipped in $elapsed s (booted in ${booted_s:-?} s, limit ${limit_s} s)${problem:+; guest $problem}"
	if [ "$nfail" -gt 0 ] || [ -n "$problem" ]; then
		failed_suites="$failed_suites $suite"
		echo "vmtest: $suite: console log kept: $log (command: $log.cmd); its end:"
		tail -n 40 "$log" | sed 's/^/    /'
	elif [ "$keep" -eq 0 ]; then
		rm -f "$log" "$log.cmd"
	fi
done

# memory_vs_cpus: the maps of amd64-cpus192 against those of amd64-cpus2,
# by name. A map may grow with possible CPUs only if it is per-CPU state (a
# per-CPU array) or indexed by CPU (entries in proportion to possible CPUs).
# Judged once the guest asserts issue 35's bound (MEM_BOUND in
# guest/amd64.sh), reported until then.
memory_vs_cpus() {
	a=$out/maps-amd64-cpus2.txt
	b=$out/maps-amd64-cpus192.txt
	case " $* " in *" amd64-cpus2 "*) ;; *) return 0 ;; esac
	case " $* " in *" amd64-cpus192 "*) ;; *) return 0 ;; esac
	if [ ! -s "$a" ] || [ ! -s "$b" ]; then
		echo "  FAIL memory-vs-cpus no map list from amd64-cpus2 or amd64-cpus192"
		total_fail=$((total_fail + 1))
		failed_suites="$failed_suites memory-vs-cpus"
		return 0
	fi
	verdict=$(awk '
		function f(k,  i, n, kv) { n = split($0, kv, " "); for (i = 1; i <= n; i++) if (index(kv[i], k "=") == 1) return substr(kv[i], length(k) + 2); return "" }
		{ c = f("possible"); m = f("name") }
		FNR == NR { c2 = c; t2[m] = f("type"); e2[m] = f("entries"); b2[m] = f("memlock"); s2 += b2[m]; next }
		{
			c192 = c; s192 += f("memlock"); seen[m] = 1
			if (!(m in b2)) { bad = bad " " m ":only-at-" c; next }
			d = f("memlock") - b2[m]
			percpu = f("type") == 6 || (e2[m] * c192 == f("entries") * c2 && e2[m] != f("entries"))
			if (percpu) { grow += d; pc = pc " " m ":" d }
			else if (d != 0) bad = bad " " m ":" b2[m] "->" f("memlock")
		}
		END {
			for (m in b2) if (!(m in seen)) bad = bad " " m ":only-at-" c2
			printf "%s|total %d B at %d possible CPUs, %d B at %d (+%d B); per-CPU maps +%d B (%.0f B per possible CPU:%s); grew though not per CPU:%s\n",
				bad == "" ? "ok" : "grew", s192, c192, s2, c2, s192 - s2, grow, grow / (c192 - c2), pc, bad == "" ? " none" : bad
		}' "$a" "$b")
	detail=${verdict#*|}
	bound=$(sed -n 's/^MEM_BOUND=//p' "$here/guest/amd64.sh")
	if [ "$bound" != 1 ]; then
		echo "  INFO memory-vs-cpus $detail"
	elif [ "${verdict%%|*}" = ok ]; then
		echo "  PASS memory-vs-cpus $detail"
		total_pass=$((total_pass + 1))
	else
		echo "  FAIL memory-vs-cpus $detail"
		total_fail=$((total_fail + 1))
		failed_suites="$failed_suites memory-vs-cpus"
	fi
}
memory_vs_cpus "$@"

echo "vmtest: $total_pass passed, $total_fail failed, $total_skip skipped"
if [ -n "$failed_suites" ]; then
	echo "vmtest: FAILED:$failed_suites"
	exit 1
fi
