# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Sourced by run.sh and systemd/run.sh: a guest's time limit that scales with
# its measured speed.
#
#   run_scaled LIMIT BOOT_S RAW CMD...
#
# runs CMD (QEMU) with its console in RAW and times its boot: from the start
# to the guest's first line (VMTEST INFO boot). LIMIT (seconds, for an idle
# host) is multiplied by that time over BOOT_S (the same boot on an idle
# host), from 1x to 6x: on a busy host TCG gets a fraction of a CPU and the
# whole guest slows alike, so it is given the time, while a guest that hangs
# still stops. Sets booted_s (empty if the guest never printed) and limit_s;
# returns CMD's exit status, or 124 when it was stopped at the limit.
run_scaled() {
	_limit=$1
	_boot=$2
	_raw=$3
	shift 3
	_t0=$(date +%s.%N)
	booted_s=
	limit_s=$_limit
	"$@" </dev/null >"$_raw" 2>&1 &
	_pid=$!
	while kill -0 "$_pid" 2>/dev/null; do
		sleep 0.2
		_el=$(awk -v a="$_t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
		if [ -z "$booted_s" ] && grep -q 'VMTEST INFO boot ' "$_raw"; then
			booted_s=$_el
			limit_s=$(awk -v l="$_limit" -v b="$booted_s" -v n="$_boot" \
				'BEGIN { f = b / n; if (f < 1) f = 1; if (f > 6) f = 6; printf "%d", l * f }')
		fi
		if awk -v e="$_el" -v l="$limit_s" 'BEGIN { exit !(e >= l) }'; then
			kill -TERM "$_pid" 2>/dev/null
			sleep 5
			kill -KILL "$_pid" 2>/dev/null
			wait "$_pid" 2>/dev/null
			return 124
		fi
	done
	wait "$_pid"
}
