#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Builds the initramfs of a VM test guest: static busybox, the guest's /init
# and check scripts (guest/), and the given static programs. Usage:
#
#   mkinitramfs.sh -o OUT.cpio -b BUSYBOX [FILE[:GUEST_PATH]]...
#
# A FILE without GUEST_PATH goes to /bin/NAME. Needs root: /dev/console must
# be a device node in the archive, because the kernel opens it for /init's
# stdio before /init can mount devtmpfs.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
out=
busybox=
while getopts o:b: opt; do
	case $opt in
	o) out=$OPTARG ;;
	b) busybox=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
if [ -z "$out" ] || [ -z "$busybox" ]; then
	echo "usage: $0 -o OUT.cpio -b BUSYBOX [FILE[:GUEST_PATH]]..." >&2
	exit 2
fi

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
chmod 755 "$stage"
mkdir -p "$stage/bin" "$stage/dev" "$stage/proc" "$stage/sys" "$stage/tmp" \
	"$stage/checks"
if ! mknod -m 600 "$stage/dev/console" c 5 1; then
	echo "$0: mknod /dev/console failed: building the initramfs needs root" >&2
	exit 1
fi
install -m 755 "$busybox" "$stage/bin/busybox"
install -m 755 "$here/guest/init" "$stage/init"
install -m 644 "$here"/guest/*.sh "$stage/checks/"

for spec in "$@"; do
	src=${spec%%:*}
	dst=${spec#"$src"}
	dst=${dst#:}
	[ -n "$dst" ] || dst=/bin/$(basename "$src")
	if [ ! -f "$src" ]; then
		echo "$0: $src: no such file" >&2
		exit 1
	fi
	mkdir -p "$stage$(dirname "$dst")"
	install -m 755 "$src" "$stage$dst"
done

# newc is the format the kernel unpacks; owners are root whoever builds it.
(cd "$stage" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --reproducible --quiet) >"$out.tmp"
mv "$out.tmp" "$out"
