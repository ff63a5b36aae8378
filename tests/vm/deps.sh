#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Installs what `make vmtest` needs on Debian 12 (bookworm): QEMU for both
# guests, the arm64 cross compiler and the arm64 static libraries that the
# static cross-built pmbpf links against. Idempotent: packages already
# installed are left alone and apt is not called at all when nothing is
# missing. Must run as root (or through sudo).
set -eu

host_pkgs="qemu-system-arm qemu-system-x86 gcc-aarch64-linux-gnu libc6-dev-arm64-cross
cpio bpftool clang llvm gcc make libc6-dev libbpf-dev libelf-dev zlib1g-dev libzstd-dev"
arm64_pkgs="libbpf-dev:arm64 libelf-dev:arm64 zlib1g-dev:arm64 libzstd-dev:arm64"

if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		exec sudo -- "$0" "$@"
	fi
	echo "deps.sh: must run as root (apt-get install)" >&2
	exit 1
fi

missing() {
	for p in "$@"; do
		dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null |
			grep -q '^ii' || printf '%s\n' "$p"
	done
}

need_update=0
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
	dpkg --add-architecture arm64
	need_update=1
fi

# shellcheck disable=SC2086
todo=$(missing $host_pkgs $arm64_pkgs)
if [ -z "$todo" ]; then
	echo "deps.sh: all VM test dependencies are installed"
	exit 0
fi

if [ "$need_update" -eq 1 ] || [ ! -d /var/lib/apt/lists ] ||
	! ls /var/lib/apt/lists/*_binary-arm64_Packages* >/dev/null 2>&1; then
	apt-get update
fi
# The :arm64 development packages must match the installed amd64 versions of
# the same libraries (Multi-Arch: same), so apt may upgrade a few amd64 ones.
export DEBIAN_FRONTEND=noninteractive
# shellcheck disable=SC2086
if ! apt-get install -y -q --no-install-recommends $todo; then
	# Stale lists name package versions the archive no longer has.
	apt-get update -q
	# shellcheck disable=SC2086
	apt-get install -y -q --no-install-recommends $todo
fi
