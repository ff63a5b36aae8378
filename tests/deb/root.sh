# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# shellcheck shell=bash
#
# Sourced by tests/deb/run.sh (make debtest) and tests/fresh/run.sh (make
# freshtest) once they have set $tag, their name in messages: PASS/FAIL
# counts, timing, and fresh_root, which sets $root to a copy under $TMPDIR of
# a minimal debootstrapped Debian 12 root ($base:
# $PMBPF_VM_CACHE/rootfs-bookworm-minbase, debootstrap --variant=minbase,
# made once, about 2 minutes) with this host's /proc, /sys and /dev mounted
# and its resolv.conf, unmounted and removed at exit. Needs root.
#
# The script runs again in a mount namespace of its own (unshare), so that
# the root's mounts are never seen on the host, where they were a second
# cgroup2 mount that perf -G took for the host's (a test's perf kept the copy
# busy, and it was left behind), and go when the script ends, whatever happens.
: "${tag:?set by the script that sources root.sh}"
if [ "$(id -u)" -ne 0 ]; then
	echo "$tag: needs root (debootstrap, chroot, mounts)" >&2
	exit 2
fi
if [ -z "${PMBPF_ROOT_NS:-}" ]; then
	PMBPF_ROOT_NS=1 exec unshare --mount --propagation private -- "$0" "$@"
fi

PATH=$PATH:/usr/sbin:/sbin
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
npass=0
nfail=0
pass() { npass=$((npass + 1)); echo "  PASS $*"; }
fail() { nfail=$((nfail + 1)); echo "  FAIL $*"; }

fresh_root() {
	local cache=${PMBPF_VM_CACHE:-$HOME/.cache/pmbpf-vm}
	local mirror=${PMBPF_VM_MIRROR:-http://deb.debian.org/debian}
	local stamp="bookworm minbase v1"

	base=$cache/rootfs-bookworm-minbase
	if [ ! -d "$base" ] || [ "$(cat "$base.stamp" 2>/dev/null)" != "$stamp" ]; then
		echo "$tag: debootstrap --variant=minbase bookworm (once, about 2 minutes)"
		rm -rf "$base" "$base.tmp"
		mkdir -p "$cache"
		if ! debootstrap --variant=minbase bookworm "$base.tmp" "$mirror" >"$base.log" 2>&1; then
			tail -n 20 "$base.log" >&2
			exit 1
		fi
		mv "$base.tmp" "$base"
		echo "$stamp" >"$base.stamp"
	fi
	root=$(mktemp -d "${TMPDIR:-/var/tmp}/pmbpf-$tag.XXXXXX")
	trap fresh_root_remove EXIT
	cp -a "$base/." "$root/"
	mount -t proc proc "$root/proc"
	mount --rbind /sys "$root/sys"
	mount --make-rslave "$root/sys"
	mount --rbind /dev "$root/dev"
	mount --make-rslave "$root/dev"
	cp /etc/resolv.conf "$root/etc/resolv.conf"
}

fresh_root_remove() {
	# lazily: only this namespace has them
	umount -R -l "$root/dev" "$root/sys" "$root/proc" 2>/dev/null || true
	# Never into the host's /sys or /dev if an unmount failed.
	if grep -q " $root/" /proc/self/mountinfo; then
		echo "$tag: $root still has mounts: left in place" >&2
	else
		rm -rf --one-file-system "$root"
	fi
}
