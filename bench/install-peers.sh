#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Install the tools `make bench` compares pmbpf with (Debian 12, root).
set -eu

PKGS="bpftrace libbpf-tools linux-perf tiptop bpftool procps"

if [ "$(id -u)" -ne 0 ]; then
	echo "install-peers: the benchmark loads BPF programs and installs packages: run as root" >&2
	exit 1
fi
missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${db:Status-Status}\n' "$p" 2>/dev/null | grep -q '^installed$'; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0
echo "install-peers: installing$missing"
export DEBIAN_FRONTEND=noninteractive
# shellcheck disable=SC2086
if ! apt-get install -y -q --no-install-recommends $missing; then
	apt-get update -q
	# shellcheck disable=SC2086
	apt-get install -y -q --no-install-recommends $missing
fi
