/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The shared counts map's entries as userspace reads them: counts_slots
 * mapped into this process's memory and walked without a system call
 * (bpf/state.bpf.h), and userspace's own deletions.
 */
#ifndef __PMBPF_SLOTS_H
#define __PMBPF_SLOTS_H

#include <stddef.h>
#include <linux/types.h>
#include "pmbpf.h"

struct slot_reader {
	int fd; /* counts_slots: max slots of elem bytes */
	void *mem; /* its first nr_mapped slots, mapped (len bytes) */
	size_t len;
	size_t elem;
	size_t page;
	__u32 max;
	__u32 nr_mapped;
	int index_fd; /* counts_index */
	int free_fd; /* free_slots */
	struct pmbpf_slot *copy; /* one slot, copied before it is read */
};

/* A walk's callback: one live entry, its counts copied (vals: a struct pmbpf_counts). */
typedef int (*slot_fn)(void *ctx, const struct pmbpf_key *key, const void *vals, __u32 slot);

/* A reader of slots_fd (max slots of value_size bytes), mapped as they are used. */
int slot_reader__init(struct slot_reader *r, int slots_fd, int index_fd, int free_fd, __u32 max,
		      __u32 value_size);
/*
 * The live entries among the first used slots, in slot order; stops at fn's
 * first non-zero return. Returns 0, fn's, or a negative errno (said).
 */
int slot_reader__walk(struct slot_reader *r, __u64 used, slot_fn fn, void *ctx);
/* The key of slot i (a hint: it may be changing), or NULL past the map. */
const struct pmbpf_key *slot_reader__key(const struct slot_reader *r, __u32 i);
/* Userspace's deletion of a dead process's entry: out of the index, its slot given back. */
void slot_reader__delete(struct slot_reader *r, const struct pmbpf_key *key);
void slot_reader__free(struct slot_reader *r);

#endif
