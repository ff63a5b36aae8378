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
};

struct proc_entry *proctable__find(struct proctable *t, const struct pmbpf_key *key);
/*
 * Start loading the slot where key's entry would be (a read walks the
 * kernel's entries in its own order: each probe misses the cache otherwise).
 */
void proctable__prefetch(const struct proctable *t, const struct pmbpf_key *key);
/* Find or add; a new entry has zero counts. NULL when out of memory. */
struct proc_entry *proctable__get(struct proctable *t, const struct pmbpf_key *key);
void proctable__remove(struct proctable *t, struct proc_entry *e);
/* Iterate: pass NULL first, then the previous result. */
struct proc_entry *proctable__next(struct proctable *t, struct proc_entry *prev);
void proctable__free(struct proctable *t);

#endif
