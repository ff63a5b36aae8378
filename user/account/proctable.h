/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Cumulative counts per (tgid, cgroup), or (tgid, tid, cgroup), as of the previous read. */
#ifndef __PMBPF_PROCTABLE_H
#define __PMBPF_PROCTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "pmbpf.h"

struct proc_entry {
	struct pmbpf_key key;
	/* internal: empty, used, deleted; next to the key, so that a probe
	 * reads one cache line of each slot it passes (the counts are 300+ B) */
	__u8 state;
	__u32 seq_pos; /* internal: its place in the last sequence it was in (proctable__get_seq) */
	__u64 gen; /* collection generation in which the map last held it */
	struct pmbpf_counts cum;
	__u64 row_gen; /* generation in which row was filled */
	size_t row; /* index of this interval's row in the snapshot */
};

struct proctable {
	struct proc_entry *slots;
	size_t cap;
	size_t used;
	size_t deleted;
	/*
	 * The slots of the entries proctable__get_seq() returned since
	 * proctable__seq_begin() (seq), and before it (prev): a read walks the
	 * kernel's entries in the same order each time, so the next key is
	 * most likely the one after the last found in prev (at cursor).
	 */
	__u32 *seq, *prev;
	size_t nr_seq, cap_seq, nr_prev, cap_prev, cursor;
};

struct proc_entry *proctable__find(struct proctable *t, const struct pmbpf_key *key);
/*
 * Start loading the slot where key's entry would be (a read walks the
 * kernel's entries in its own order: each probe misses the cache otherwise).
 */
void proctable__prefetch(const struct proctable *t, const struct pmbpf_key *key);
/* Find or add; a new entry has zero counts. NULL when out of memory. */
struct proc_entry *proctable__get(struct proctable *t, const struct pmbpf_key *key);
/*
 * A sequence of proctable__get_seq() begins (a read): the last one's order
 * becomes the guess of this one's.
 */
void proctable__seq_begin(struct proctable *t);
/*
 * proctable__get(), the entry the last sequence had after the one found
 * last tried first: no hash, no probe when the order holds.
 */
struct proc_entry *proctable__get_seq(struct proctable *t, const struct pmbpf_key *key);
/*
 * Start loading the entry ahead places on in the last sequence, after the
 * one found last; false when there is no such guess.
 */
bool proctable__prefetch_seq(const struct proctable *t, size_t ahead);
void proctable__remove(struct proctable *t, struct proc_entry *e);
/* Iterate: pass NULL first, then the previous result. */
struct proc_entry *proctable__next(struct proctable *t, struct proc_entry *prev);
/*
 * Iterate the entries of process tgid's thread tid (tid 0: the process's)
 * in every cgroup: pass NULL first, then the previous result, which may
 * have been removed. None for the idle task (tgid 0) or the overflow.
 */
struct proc_entry *proctable__next_of(struct proctable *t, __u32 tgid, __u32 tid,
				      struct proc_entry *prev);
void proctable__free(struct proctable *t);

#endif
