#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Fetches what the VM guests boot from the Debian archive with `apt-get
# download`: bookworm's 6.1 kernel and the static busybox that runs the guest's
# /init, for each architecture; and the amd64 kernels of Debian 11 (bullseye,
# 5.10) and Debian 13 (trixie, 6.12). Usage:
#
#   fetch-kernels.sh [arm64|amd64|amd64-bullseye|amd64-trixie]...
#                                          (default: arm64 amd64)
#
# Files land in $PMBPF_VM_CACHE (default $HOME/.cache/pmbpf-vm):
#   vmlinuz-ARCH   the kernel (arm64: an uncompressed Image; amd64: a bzImage)
#   vmlinuz-amd64-SUITE  bullseye's or trixie's amd64 kernel (the guests use
#                  bookworm's busybox); apt lists for SUITE are kept in
#                  apt-SUITE/ and refreshed once a day, the host's apt sources
#                  are left alone
#   busybox-ARCH   busybox from busybox-static
#   *.version      the package each file came from, e.g. linux-image-6.1.0-56-arm64_6.1.192-2
# A file whose package has not changed is not fetched again; when apt cannot
# name or download a package, the copy fetched last is used. The arm64
# packages need `dpkg --add-architecture arm64` and `apt-get update` first
# (tests/vm/deps.sh does both).
set -eu

cache=${PMBPF_VM_CACHE:-$HOME/.cache/pmbpf-vm}
mkdir -p "$cache"
cd "$cache"

native=$(dpkg --print-architecture)
# apt options: empty for the host's sources (bookworm), else another suite's
apt_opts=
# apt-cache takes about a second to start with two architectures: ask it
# everything in two calls, kernels first.
deps=
policy=

# lookup ARCH...: fills deps and policy for these architectures.
lookup() {
	meta=
	for a in "$@"; do
		meta="$meta linux-image-$a:$a"
	done
	# shellcheck disable=SC2086
	deps=$(apt-cache $apt_opts depends $meta 2>/dev/null || true)
	pkgs=
	for a in "$@"; do
		k=$(kernel_pkg "$a")
		pkgs="$pkgs ${k:+$k:$a} busybox-static:$a"
	done
	# shellcheck disable=SC2086
	policy=$(apt-cache $apt_opts policy $pkgs 2>/dev/null || true)
}

# kernel_pkg ARCH: the versioned kernel package that Debian's
# linux-image-ARCH metapackage depends on, e.g. linux-image-6.1.0-56-arm64.
kernel_pkg() {
	printf '%s\n' "$deps" |
		sed -n "s/^ *Depends: \(linux-image-[0-9][0-9.]*[-+][^ :]*-$1\)\(:$1\)\{0,1\}\$/\1/p" |
		head -n 1
}

# candidate PKG ARCH: the version apt would install. apt-cache policy heads
# each package "name:arch:", or "name:" for the native architecture.
candidate() {
	printf '%s\n' "$policy" | awk -v want="$1:$2" -v native="$native" '
		/^[^ ]/ { h = $0; sub(/:$/, "", h); if (!index(h, ":")) h = h ":" native; cur = (h == want); next }
		cur && $1 == "Candidate:" { if ($2 != "(none)") print $2; exit }'
}

# get PKG ARCH MEMBER OUT: extracts file MEMBER (a path in the package, as
# ./boot/...) of PKG:ARCH to OUT, unless OUT came from that version already.
get() {
	pkg=$1 arch=$2 member=$3 out=$4
	version=$(candidate "$pkg" "$arch")
	if [ -z "$version" ]; then
		if [ -s "$out" ]; then
			echo "fetch-kernels: apt knows no $pkg:$arch; using cached $out ($(cat "$out.version"))" >&2
			return 0
		fi
		echo "fetch-kernels: apt knows no $pkg:$arch package;" \
			"run tests/vm/deps.sh (adds the arm64 architecture and runs apt-get update)" >&2
		return 1
	fi
	# Package file names drop the epoch: 1:1.35.0-4 -> 1.35.0-4.
	id=${pkg}_${version#*:}
	if [ -s "$out" ] && [ "$(cat "$out.version" 2>/dev/null)" = "$id" ]; then
		return 0
	fi

	tmp=$(mktemp -d "$cache/fetch.XXXXXX")
	# As root, apt would warn that its _apt sandbox user cannot write here.
	sandbox=
	[ "$(id -u)" -ne 0 ] || sandbox="-o APT::Sandbox::User=root"
	echo "fetch-kernels: apt-get download $pkg:$arch=$version" >&2
	# shellcheck disable=SC2086
	if ! (cd "$tmp" && apt-get download -q $sandbox $apt_opts "$pkg:$arch=$version" >&2); then
		rm -rf "$tmp"
		if [ -s "$out" ]; then
			echo "fetch-kernels: download failed; using cached $out ($(cat "$out.version"))" >&2
			return 0
		fi
		return 1
	fi
	dpkg-deb --fsys-tarfile "$tmp"/*.deb | tar -x -C "$tmp" "$member"
	# tar kept the package's date; make must see the file as new.
	touch "$tmp/$member"
	mv "$tmp/$member" "$out"
	echo "$id" >"$out.version"
	rm -rf "$tmp"
	echo "fetch-kernels: $cache/$out from $id" >&2
}

fetch() {
	arch=$1
	pkg=$(kernel_pkg "$arch")
	if [ -z "$pkg" ] && [ ! -s "vmlinuz-$arch" ]; then
		echo "fetch-kernels: apt knows no linux-image-$arch:$arch package;" \
			"run tests/vm/deps.sh (adds the arm64 architecture and runs apt-get update)" >&2
		return 1
	fi
	if [ -n "$pkg" ]; then
		get "$pkg" "$arch" "./boot/vmlinuz-${pkg#linux-image-}" "vmlinuz-$arch"
	else
		echo "fetch-kernels: apt knows no linux-image-$arch:$arch; using cached vmlinuz-$arch ($(cat "vmlinuz-$arch.version"))" >&2
	fi
	get busybox-static "$arch" ./bin/busybox "busybox-$arch"
}

# fetch_suite SUITE: SUITE's amd64 kernel as vmlinuz-amd64-SUITE, through
# apt lists of its own in apt-SUITE/ (the host's sources name bookworm only).
fetch_suite() {
	suite=$1
	dir=$cache/apt-$suite
	mkdir -p "$dir/lists/partial" "$dir/archives/partial"
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $suite main" >"$dir/sources.list"
	apt_opts="-o Dir::Etc::SourceList=$dir/sources.list -o Dir::Etc::SourceParts=/dev/null"
	apt_opts="$apt_opts -o Dir::State::Lists=$dir/lists -o Dir::Cache=$dir -o Dir::State::status=/dev/null"
	apt_opts="$apt_opts -o APT::Architectures=amd64"
	sandbox=
	[ "$(id -u)" -ne 0 ] || sandbox="-o APT::Sandbox::User=root"
	if [ -z "$(find "$dir/lists" -name '*_Packages' -mtime -1 2>/dev/null)" ]; then
		echo "fetch-kernels: apt-get update for $suite" >&2
		# shellcheck disable=SC2086
		apt-get -q $apt_opts $sandbox update >&2 ||
			echo "fetch-kernels: apt-get update for $suite failed; using what is cached" >&2
	fi
	lookup amd64
	pkg=$(kernel_pkg amd64)
	if [ -n "$pkg" ]; then
		get "$pkg" amd64 "./boot/vmlinuz-${pkg#linux-image-}" "vmlinuz-amd64-$suite"
	elif [ ! -s "vmlinuz-amd64-$suite" ]; then
		echo "fetch-kernels: apt knows no linux-image-amd64 in $suite" >&2
		return 1
	fi
	apt_opts=
}

[ $# -gt 0 ] || set -- arm64 amd64
archs=
suites=
for arch in "$@"; do
	case $arch in
	arm64 | amd64) archs="$archs $arch" ;;
	amd64-bullseye | amd64-trixie) suites="$suites ${arch#amd64-}" ;;
	*)
		echo "fetch-kernels: unknown kernel '$arch' (arm64, amd64, amd64-bullseye, amd64-trixie)" >&2
		exit 2
		;;
	esac
done
if [ -n "$archs" ]; then
	# shellcheck disable=SC2086
	lookup $archs
	for arch in $archs; do
		fetch "$arch"
	done
fi
for suite in $suites; do
	fetch_suite "$suite"
done
