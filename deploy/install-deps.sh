#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Install what pmbpf needs to build, run and test on Debian 12 (bookworm):
# the README's first command, so it needs nothing but what a fresh Debian 12
# has (sh, apt-get, dpkg, coreutils); it installs make.
#
# One package list: what builds pmbpf, then what its tests, man pages and
# package (make deb, tests/test_install.py) and the README's commands (curl)
# use. Append new ones anywhere.
set -eu

PKGS="make gcc clang llvm bpftool libbpf-dev libelf-dev zlib1g-dev libzstd-dev pkg-config
libncurses-dev libdw-dev libiberty-dev libmicrohttpd-dev libsystemd-dev libcap-dev
linux-perf python3 python3-pytest python3-yaml libc6-dbg util-linux procps tmux
libxml2-utils binutils
prometheus curl
systemd man-db groff-base bash
build-essential debhelper dpkg-dev lintian debootstrap
libclang-rt-14-dev"

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: run as root (sudo ./deploy/install-deps.sh)" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
arch=$(dpkg --print-architecture)
missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${db:Status-Status}\n' "$p:$arch" 2>/dev/null | grep -q '^installed$' &&
		! dpkg-query -W -f='${db:Status-Status}\n' "$p" 2>/dev/null | grep -q '^installed$'; then
		missing="$missing $p"
	fi
done
if [ -z "$missing" ]; then
	echo "install-deps: all packages present"
	exit 0
fi
echo "install-deps: installing$missing"
# No package lists (a container image) or lists without these packages: read
# them first, rather than a screen of "Unable to locate package". Lists old
# enough that the archive has dropped a version fail the download: read them
# then, and once more.
# shellcheck disable=SC2086
if ! apt-get install -s -q --no-install-recommends $missing >/dev/null 2>&1; then
	echo "install-deps: apt-get update (the package lists lack some of these)"
	apt-get update -q
fi
# shellcheck disable=SC2086
if ! apt-get install -y -q --no-install-recommends $missing; then
	apt-get update -q
	# shellcheck disable=SC2086
	apt-get install -y -q --no-install-recommends $missing
fi
