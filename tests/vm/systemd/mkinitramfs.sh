#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The initramfs of the systemd guest. Debian's amd64 kernel has virtio_blk and
# ext4 as modules (CONFIG_VIRTIO_BLK=m, CONFIG_EXT4_FS=m), so it cannot mount
# the root disk by itself: this initramfs (static busybox, the modules and
# systemd/init) loads them, mounts root= and switch_roots to init=. Usage:
#
#   mkinitramfs.sh -o OUT.cpio
#
# The modules come from the same package as $PMBPF_VM_CACHE/vmlinuz-amd64
# (fetch-kernels.sh, which records it in vmlinuz-amd64.version); they are
# extracted to $PMBPF_VM_CACHE/modules-amd64/ and fetched again only when
# that kernel changes. Needs root (mknod /dev/console, as ../mkinitramfs.sh).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
cache=${PMBPF_VM_CACHE:-$HOME/.cache/pmbpf-vm}
out=
while getopts o: opt; do
	case $opt in
	o) out=$OPTARG ;;
	*) exit 2 ;;
	esac
done
if [ -z "$out" ]; then
	echo "usage: $0 -o OUT.cpio" >&2
	exit 2
fi

# In load order: each after the modules it needs (their .modinfo "depends=").
# crc32c_generic is not a declared dependency, but ext4 and jbd2 ask the
# crypto API for "crc32c" at mount time (metadata_csum, mkfs.ext4's default),
# and nothing in the initramfs could load it on demand.
modules="crc32c_generic crc16 mbcache jbd2 ext4 virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci virtio_blk"
paths="crypto/crc32c_generic lib/crc16 fs/mbcache fs/jbd2/jbd2 fs/ext4/ext4 drivers/virtio/virtio_ring drivers/virtio/virtio drivers/virtio/virtio_pci_modern_dev drivers/virtio/virtio_pci_legacy_dev drivers/virtio/virtio_pci drivers/block/virtio_blk"

id=$(cat "$cache/vmlinuz-amd64.version" 2>/dev/null || true)
if [ -z "$id" ] || [ ! -s "$cache/busybox-amd64" ]; then
	echo "mkinitramfs: no $cache/vmlinuz-amd64.version or busybox-amd64: run tests/vm/fetch-kernels.sh amd64" >&2
	exit 1
fi
mods=$cache/modules-amd64
if [ "$(cat "$mods.version" 2>/dev/null)" != "$id" ]; then
	pkg=${id%%_*}
	version=${id#*_}
	tmp=$(mktemp -d "$cache/modules.XXXXXX")
	sandbox=
	[ "$(id -u)" -ne 0 ] || sandbox="-o APT::Sandbox::User=root"
	echo "mkinitramfs: apt-get download $pkg=$version (for its modules)" >&2
	# shellcheck disable=SC2086
	(cd "$tmp" && apt-get download -q $sandbox "$pkg=$version" >&2)
	kver=${pkg#linux-image-}
	members=
	for p in $paths; do
		members="$members ./lib/modules/$kver/kernel/$p.ko"
	done
	# shellcheck disable=SC2086
	dpkg-deb --fsys-tarfile "$tmp"/*.deb | tar -x -C "$tmp" $members
	rm -rf "$mods"
	mkdir -p "$mods"
	for p in $paths; do
		mv "$tmp/lib/modules/$kver/kernel/$p.ko" "$mods/"
	done
	rm -rf "$tmp"
	echo "$id" >"$mods.version"
fi

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
chmod 755 "$stage"
mkdir -p "$stage/bin" "$stage/dev" "$stage/proc" "$stage/sys" "$stage/newroot" "$stage/modules"
if ! mknod -m 600 "$stage/dev/console" c 5 1; then
	echo "$0: mknod /dev/console failed: building the initramfs needs root" >&2
	exit 1
fi
install -m 755 "$cache/busybox-amd64" "$stage/bin/busybox"
install -m 755 "$here/init" "$stage/init"
for m in $modules; do
	install -m 644 "$mods/$m.ko" "$stage/modules/"
done
echo "$modules" >"$stage/modules/order"
(cd "$stage" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --reproducible --quiet) >"$out.tmp"
mv "$out.tmp" "$out"
