#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The base root filesystem of the systemd guest: a minimal Debian 12 (amd64)
# with systemd as init and the libraries a dynamically linked pmbpf needs,
# built once with debootstrap from the Debian archive. Usage:
#
#   mkrootfs.sh            prints the directory of the rootfs
#
# It is kept in $PMBPF_VM_CACHE/rootfs-bookworm-amd64 (about 150 MB) and
# rebuilt only when the package list below changes (the .stamp file next to
# it records it), or when the directory is removed. Needs root (debootstrap);
# installs debootstrap with apt-get when it is missing. The rootfs is never
# booted itself: run.sh boots a copy.
set -eu

cache=${PMBPF_VM_CACHE:-$HOME/.cache/pmbpf-vm}
mirror=${PMBPF_VM_MIRROR:-http://deb.debian.org/debian}
suite=bookworm
# systemd as PID 1 (and systemctl, sysusers, journald); dbus for a usual
# system bus; pmbpf's libraries (ldd build/pmbpf); wget to scrape /metrics;
# procps for ps. No kernel, no udev, no kmod: run.sh's initramfs mounts the
# root file system and the guest needs no modules after that.
packages=systemd,systemd-sysv,dbus,libbpf1,libelf1,zlib1g,libzstd1,libmicrohttpd12,libncursesw6,libdw1,wget,util-linux,procps
root=$cache/rootfs-$suite-amd64
stamp="$suite minbase $packages v1"

if [ -d "$root" ] && [ "$(cat "$root.stamp" 2>/dev/null)" = "$stamp" ]; then
	echo "$root"
	exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "mkrootfs: debootstrap needs root" >&2
	exit 1
fi
if ! command -v debootstrap >/dev/null 2>&1 && [ ! -x /usr/sbin/debootstrap ]; then
	echo "mkrootfs: installing debootstrap" >&2
	apt-get install -y -q debootstrap >&2
fi
PATH=$PATH:/usr/sbin:/sbin

mkdir -p "$cache"
tmp=$root.tmp
rm -rf "$tmp" "$root" "$root.stamp"
echo "mkrootfs: debootstrap --variant=minbase $suite (about a minute)" >&2
start=$(date +%s)
if ! debootstrap --variant=minbase --include="$packages" "$suite" "$tmp" "$mirror" >"$tmp.log" 2>&1; then
	echo "mkrootfs: debootstrap failed; the end of $tmp.log:" >&2
	tail -n 20 "$tmp.log" >&2
	exit 1
fi
# What the test never uses: downloaded packages, apt lists, docs, locales.
rm -rf "$tmp"/var/cache/apt/archives/*.deb "$tmp"/var/lib/apt/lists/* \
	"$tmp"/usr/share/doc/* "$tmp"/usr/share/man/* "$tmp"/usr/share/info/* \
	"$tmp"/usr/share/locale/*
mv "$tmp" "$root"
mv "$tmp.log" "$root.log"
echo "$stamp" >"$root.stamp"
echo "mkrootfs: $root ($(du -sm "$root" | cut -f1) MB) in $(($(date +%s) - start)) s" >&2
echo "$root"
