/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The run-queue latency histogram's one slot rule, for the BPF program and
 * userspace alike: slot 0 counts waits below 2 us, slot k (0 < k < last)
 * counts [2^k, 2^(k+1)) us, and the last slot everything from 2^last us.
 */
#ifndef __PMBPF_RUNQ_SLOT_H
#define __PMBPF_RUNQ_SLOT_H

#define PMBPF_RUNQ_SLOTS 24

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

/* floor(log2(v)) for v > 0, 0 for v == 0: branch-free, verifier-friendly. */
static __always_inline __u32 pmbpf_log2(__u64 v)
{
	__u32 r = 0, shift;

	shift = (v >= (1ULL << 32)) << 5;
	v >>= shift;
	r |= shift;
	shift = (v >= (1 << 16)) << 4;
	v >>= shift;
	r |= shift;
	shift = (v >= (1 << 8)) << 3;
	v >>= shift;
	r |= shift;
	shift = (v >= (1 << 4)) << 2;
	v >>= shift;
	r |= shift;
	shift = (v >= (1 << 2)) << 1;
	v >>= shift;
	r |= shift;
	r |= (v >> 1);
	return r;
}

/* The slot of a wait of ns nanoseconds. */
static __always_inline __u32 pmbpf_runq_slot(__u64 ns)
{
	__u32 k = pmbpf_log2(ns / 1000);

	return k < PMBPF_RUNQ_SLOTS ? k : PMBPF_RUNQ_SLOTS - 1;
}

/* Upper bound of slot k in ns (exclusive; the last slot has none: this is 2^(k+1) us too). */
static __always_inline __u64 pmbpf_runq_slot_upper_ns(__u32 k)
{
	return (2ULL << k) * 1000ULL;
}

#endif
