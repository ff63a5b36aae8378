# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Checks in the amd64 guest: Debian's 6.1 kernel, another kernel than the
# host's, with BTF and no PMU. pmbpf must load there (tp_btf) and credit
# software events exactly. Sourced by /init after lib.sh.

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
	want="cycles=not-supported instructions=not-supported page-faults=counting attach=tp_btf"
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
	if [ $rc -eq 0 ] && [ -n "$n" ] && page_faults_ok "$n"; then
		pass $name "pages=$PAGES credited=$n attach=$attach"
	else
		fail $name "exit=$rc pages=$PAGES credited=${n:-none} (want $PAGES..+2%) attach=$attach"
		show $name.wl $name.out $name.out.err
	fi
}

check_btf
expect_enoent pmu-no-hardware cycles instructions
check_pmu_page_faults

if ! have_pmbpf; then
	skip pmbpf "no pmbpf binary in this guest (run.sh --pmbpf-x86)"
else
	check_pmbpf_events
	check_pmbpf_page_faults pmbpf-page-faults
	check_pmbpf_page_faults pmbpf-page-faults-raw-tp --raw-tp
fi
