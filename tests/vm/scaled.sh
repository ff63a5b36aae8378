# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Sourced by run.sh and systemd/run.sh: a guest's time limit that follows its
# measured speed.
#
#   run_scaled LIMIT BOOT_S RAW CMD...
#
# runs CMD (QEMU) with its console in RAW and times its boot: from the start
# to the guest's first line (VMTEST INFO boot). LIMIT (seconds, for an idle
# host) is multiplied by that time over BOOT_S (the same boot on an idle
# host), from 1x to 6x. Past that limit the guest goes on while it keeps
# reporting: it is stopped once it has printed no new VMTEST line for as long
# as the limit, or at 20 times LIMIT in all. On a busy host TCG gets a
# varying fraction of a CPU (one run here booted at full speed and then ran
# its checks 60 times slower), so the boot alone does not tell the speed of
# what follows; the results as they come do. A guest that hangs still stops.
# Sets booted_s (empty if the guest never printed) and limit_s; returns
# CMD's exit status, or 124 when it was stopped.
run_scaled() {
	_limit=$1
	_boot=$2
	_raw=$3
	shift 3
	_t0=$(date +%s.%N)
	booted_s=
	limit_s=$_limit
	_lines=0
	_last=0
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
		_n=$(grep -ac 'VMTEST ' "$_raw" || true)
		if [ "$_n" != "$_lines" ]; then
			_lines=$_n
			_last=$_el
		fi
		if awk -v e="$_el" -v l="$limit_s" -v s="$_last" -v cap="$_limit" \
			'BEGIN { exit !((e >= l && e - s >= l) || e >= 20 * cap) }'; then
			kill -TERM "$_pid" 2>/dev/null
			sleep 5
			kill -KILL "$_pid" 2>/dev/null
			wait "$_pid" 2>/dev/null
			return 124
		fi
	done
	wait "$_pid"
}
