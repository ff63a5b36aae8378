#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Boots deploy/pmbpf.service under a real systemd: a minimal Debian 12 rootfs
# (mkrootfs.sh, cached) with pmbpf `make install`ed into a copy of it and the
# unit enabled, on Debian's 6.1 amd64 kernel under QEMU (TCG); check.sh runs
# in the guest as pmbpf-vmtest.service after pmbpf.service. Usage:
#
#   run.sh [-o DIR] [-t SECONDS] [-k] [-n] [-d DEB]
#
# -o DIR    build directory (default build/vm); the guest's files go to
#           DIR/systemd/, its console log to DIR/logs/systemd.log
# -t        time limit of the boot in seconds on an idle host (default 300);
#           it grows with the guest's measured slowness (below, step 4)
# -k        keep the console log and disk image when the guest passes too
# -n        prepare everything (rootfs, image, initramfs), print the QEMU
#           command, do not boot
# -d DEB    install the Debian package (dpkg -i: its postinst makes the user
#           and enables the unit) instead of make install
#
# The pmbpf installed is the top-level `make install` one (build/pmbpf, the
# dynamically linked build: the rootfs has its libraries). Needs root. Exits 1
# if any check fails or the guest does not finish.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
out=$top/build/vm
limit=300
keep=0
prepare_only=0
deb=

usage() {
	awk 'NR > 4 && !/^#/ { exit } NR > 4 { sub(/^# ?/, ""); print }' "$0" >&2
	exit "${1:-2}"
}
while [ $# -gt 0 ]; do
	case $1 in
	-o) out=$2; shift 2 ;;
	-t) limit=$2; shift 2 ;;
	-k) keep=1; shift ;;
	-n) prepare_only=1; shift ;;
	-d) deb=$(cd "$(dirname "$2")" && pwd)/$(basename "$2"); shift 2 ;;
	-h | --help) usage 0 ;;
	*) echo "run.sh: unknown argument $1" >&2; usage ;;
	esac
done
if [ "$(id -u)" -ne 0 ]; then
	echo "vmtest-systemd: needs root (debootstrap, mknod, a root-owned rootfs)" >&2
	exit 2
fi

cache=${PMBPF_VM_CACHE:-$HOME/.cache/pmbpf-vm}
export PMBPF_VM_CACHE="$cache"
mkdir -p "$out/logs" "$out/systemd"
out=$(cd "$out" && pwd)
dir=$out/systemd
log=$out/logs/systemd.log

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
t_all=$(now)

# 1. Kernel, base rootfs, initramfs (all cached).
t=$(now)
"$here/../fetch-kernels.sh" amd64
base=$("$here/mkrootfs.sh")
"$here/mkinitramfs.sh" -o "$dir/initramfs.cpio"
echo "vmtest-systemd: kernel $(cat "$cache/vmlinuz-amd64.version"), rootfs $base ($(since "$t") s)"

# 2. A copy of the rootfs with pmbpf installed as a user would: make install
#    (PREFIX=/usr/local), then systemctl enable.
t=$(now)
root=$dir/root
rm -rf "$root"
cp -a "$base" "$root"
if [ -n "$deb" ]; then
	# As apt would, without the network: the rootfs has pmbpf's libraries.
	cp "$deb" "$root/tmp/"
	if ! chroot "$root" dpkg -i "/tmp/$(basename "$deb")" >"$dir/install.log" 2>&1; then
		echo "vmtest-systemd: dpkg -i $(basename "$deb") failed:" >&2
		tail -n 20 "$dir/install.log" >&2
		exit 1
	fi
	rm -f "$root/tmp/$(basename "$deb")"
	cat >"$root/etc/pmbpf-vmtest.env" <<EOF
PMBPF_UNIT=/lib/systemd/system/pmbpf.service
PMBPF_BIN=/usr/sbin/pmbpf
PMBPF_SYSCTL=/usr/share/pmbpf/50-pmbpf.conf
PMBPF_SYSCTL_ACTIVE=0
PMBPF_SYSUSERS=/usr/lib/sysusers.d/pmbpf.conf
PMBPF_HOW="the package $(basename "$deb")"
EOF
elif ! make --no-print-directory -C "$top" install DESTDIR="$root" >"$dir/install.log" 2>&1; then
	echo "vmtest-systemd: make install DESTDIR=$root failed:" >&2
	tail -n 20 "$dir/install.log" >&2
	exit 1
fi
install -D -m 755 "$here/check.sh" "$root/usr/local/libexec/pmbpf-vmtest/check.sh"
install -D -m 644 "$here/pmbpf-vmtest.service" "$root/etc/systemd/system/pmbpf-vmtest.service"
# The package's postinst enabled pmbpf.service already (tested: is-enabled).
if [ -n "$deb" ]; then
	systemctl --root="$root" --quiet enable pmbpf-vmtest.service
else
	systemctl --root="$root" --quiet enable pmbpf.service pmbpf-vmtest.service
fi
# Less to start under emulation: no logins, no timers, no first-boot updates.
for u in getty.target serial-getty@.service getty@.service systemd-logind.service \
	systemd-update-utmp.service systemd-update-utmp-runlevel.service \
	systemd-user-sessions.service systemd-ask-password-wall.path \
	systemd-ask-password-console.path timers.target apt-daily.timer \
	apt-daily-upgrade.timer dpkg-db-backup.timer e2scrub_all.timer \
	e2scrub_reap.service fstrim.timer systemd-tmpfiles-clean.timer \
	systemd-pstore.service ldconfig.service systemd-journal-catalog-update.service \
	systemd-hwdb-update.service systemd-update-done.service systemd-firstboot.service \
	systemd-repart.service systemd-binfmt.service proc-sys-fs-binfmt_misc.automount \
	systemd-modules-load.service kmod-static-nodes.service remote-fs.target; do
	ln -sf /dev/null "$root/etc/systemd/system/$u"
done
# No fstab entries: the initramfs mounted / read-write, and without udev a
# /dev/vda entry would wait for a device unit that never appears.
echo "# root is mounted by the initramfs (tests/vm/systemd/init)" >"$root/etc/fstab"
echo pmbpf-vmtest >"$root/etc/hostname"

# 3. An ext4 image of it (mkfs.ext4 -d: no loop mount).
size=$(du -sm "$root" | awk '{ print int($1 * 1.3) + 64 }')
rm -f "$dir/root.img"
mkfs.ext4 -q -F -L pmbpf-root -d "$root" "$dir/root.img" "${size}M" >/dev/null
rm -rf "$root"
echo "vmtest-systemd: image $dir/root.img (${size} MB, pmbpf $(git -C "$top" describe --always --dirty 2>/dev/null || echo ?)) ($(since "$t") s)"

# 4. Boot it. no_timer_check: on a busy host the kernel's check that the
#    IO-APIC timer ticks can time out under TCG ("IO-APIC + timer doesn't
#    work!", a panic at 0.05 s; seen at load 14).
set -- qemu-system-x86_64 -accel tcg -cpu max -smp 1 -m 1G -nographic -no-reboot -nic none \
	-kernel "$cache/vmlinuz-amd64" -initrd "$dir/initramfs.cpio" \
	-drive "file=$dir/root.img,if=virtio,format=raw" \
	-append "console=ttyS0 root=/dev/vda rw init=/lib/systemd/systemd systemd.unit=multi-user.target panic=-1 quiet systemd.show_status=yes no_timer_check"
for a in "$@"; do
	case $a in
	*" "*) printf "'%s' " "$a" ;;
	*) printf '%s ' "$a" ;;
	esac
done >"$log.cmd"
echo >>"$log.cmd"
if [ "$prepare_only" -eq 1 ]; then
	echo "vmtest-systemd: prepared in $(since "$t_all") s; boot with: $(cat "$log.cmd")"
	exit 0
fi
echo "vmtest-systemd: booting (systemd as PID 1, TCG; a minute or two)"
# The time limit scales with the guest's speed (../scaled.sh): QEMU's start
# to check.sh's first line (VMTEST INFO boot) is timed against the same on
# an idle host (boot_s: 8.7 s of guest uptime, about 10 s of wall time;
# README.md), and the limit grows by that factor, from 1x to 6x. Seen at
# load 14: the first line at 180 s, power-off at 291 s of a 300 s limit.
boot_s=10
t=$(now)
rc=0
# shellcheck source=tests/vm/scaled.sh
. "$here/../scaled.sh"
run_scaled "$limit" "$boot_s" "$log.raw" "$@" || rc=$?
elapsed=$(since "$t")
echo "vmtest-systemd: checks began ${booted_s:-never} s after QEMU's start (${boot_s} s on an idle host): limit ${limit_s} s"
tr -d '\r' <"$log.raw" >"$log"
rm -f "$log.raw"

results=$(sed -n 's/.*\(VMTEST [A-Z]* .*\)/\1/p' "$log")
npass=$(echo "$results" | grep -c '^VMTEST PASS ' || true)
nfail=$(echo "$results" | grep -c '^VMTEST FAIL ' || true)
nskip=$(echo "$results" | grep -c '^VMTEST SKIP ' || true)
echo "$results" | sed -n 's/^VMTEST \(PASS\|FAIL\|SKIP\|INFO\) /  \1 /p'
problem=
if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
	problem="stopped: no new result for ${limit_s} s past its limit of ${limit_s} s, or at $((limit * 20)) s in all (${limit} s scaled: ../scaled.sh)"
elif ! echo "$results" | grep -q '^VMTEST DONE '; then
	problem="stopped before its checks finished (qemu exit status $rc)"
elif [ "$rc" -ne 0 ]; then
	problem="qemu exit status $rc"
elif [ "$npass" -eq 0 ]; then
	problem="no check passed"
fi
if [ -n "$problem" ]; then
	# A guest that never finished counts as one more failure.
	nfail=$((nfail + 1))
	echo "  FAIL guest $problem"
fi
echo "vmtest-systemd: boot to power-off $elapsed s, total $(since "$t_all") s"
if [ "$nfail" -gt 0 ]; then
	echo "vmtest-systemd: console log kept: $log (command: $log.cmd; image: $dir/root.img); its end:"
	tail -n 60 "$log" | sed 's/^/    /'
elif [ "$keep" -eq 0 ]; then
	rm -f "$log" "$log.cmd" "$dir/root.img"
fi
if [ "$nskip" -gt 0 ]; then
	echo "vmtest-systemd: $npass passed, $nfail failed, $nskip skipped"
else
	echo "vmtest-systemd: $npass passed, $nfail failed"
fi
[ "$nfail" -eq 0 ]
