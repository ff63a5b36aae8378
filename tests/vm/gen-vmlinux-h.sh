#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Writes vmlinux.h for CO-RE from the BTF built into an uncompressed kernel
# Image (Debian's arm64 vmlinuz is one). Usage:
#
#   gen-vmlinux-h.sh IMAGE OUT.h
#
# The .BTF section is stored whole in the Image: it starts with the header
# struct btf_header { u16 magic 0xeb9f; u8 version 1; u8 flags 0;
# u32 hdr_len 24; u32 type_off, type_len, str_off, str_len; }, so the bytes
# 9f eb 01 00 18 00 00 00 mark it, and hdr_len + str_off + str_len bytes from
# there are the raw BTF that bpftool reads.
set -eu

[ $# -eq 2 ] || { echo "usage: $0 IMAGE OUT.h" >&2; exit 2; }
image=$1
out=$2

u32_at() { od -A n -t u4 -j "$1" -N 4 "$image" | tr -d ' '; }

size=$(wc -c <"$image")
btf_off=
# shellcheck disable=SC2013 # offsets are words
for off in $(LC_ALL=C grep -obUaP '\x9f\xeb\x01\x00\x18\x00\x00\x00' "$image" | cut -d: -f1); do
	type_off=$(u32_at $((off + 8)))
	type_len=$(u32_at $((off + 12)))
	str_off=$(u32_at $((off + 16)))
	str_len=$(u32_at $((off + 20)))
	# A real header has its type section first and strings right after it.
	if [ "$type_off" -eq 0 ] && [ "$type_len" -gt 0 ] &&
		[ "$str_off" -eq "$type_len" ] && [ "$str_len" -gt 0 ] &&
		[ $((off + 24 + str_off + str_len)) -le "$size" ]; then
		btf_off=$off
		btf_len=$((24 + str_off + str_len))
		break
	fi
done
if [ -z "$btf_off" ]; then
	echo "$0: no BTF header found in $image (is it an uncompressed Image built with CONFIG_DEBUG_INFO_BTF?)" >&2
	exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# iflag=skip_bytes,count_bytes lets dd work in bytes with a large block size.
dd if="$image" of="$tmp/btf" bs=1M iflag=skip_bytes,count_bytes \
	skip="$btf_off" count="$btf_len" status=none
bpftool btf dump file "$tmp/btf" format c >"$tmp/vmlinux.h"
mv "$tmp/vmlinux.h" "$out"
echo "$0: $out from $btf_len bytes of BTF at offset $btf_off of $image" >&2
