/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * --delays: the read of the kernel's delays map at each collection: its
 * slots (delay_slots), mapped into this process's memory, walked for the
 * pairs that grew since the last read (their generation), with no system
 * call; handed to the accounting (account/delay.c).
 */
#ifndef __PMBPF_DELAY_READ_H
#define __PMBPF_DELAY_READ_H

#include <stdbool.h>
#include <linux/types.h>
#include "delay.h"

struct pmbpf_bpf;

struct delay_reader {
	struct delay_acct *acct;
	struct pmbpf_delay_slot *slots; /* delay_slots, mapped; NULL until init */
	size_t len; /* of the mapping */
	__u32 max; /* slots */
	int index_fd, free_fd;
	__u32 *freed; /* slots out of the index, given back after the next flush */
	size_t nr_freed, cap_freed;
	__u32 min; /* this read takes the slots whose gen is at least min */
	bool read; /* a read was made: the next takes changes only */
	bool begun; /* delay_reader__begin() without a read after it */
};

/* Before the load: the maps' sizes (on: the pairs, else one; none grows with nr_cpus) and their knobs. */
void delay_reader__size(struct pmbpf_bpf *skel, bool on, int nr_cpus);
/* After the load: the state, the slots mapped and all of them free. */
int delay_reader__init(struct delay_reader *r, struct pmbpf_bpf *skel);
/* Before each read's flush: a new read generation. */
void delay_reader__begin(struct delay_reader *r, struct pmbpf_bpf *skel);
/*
 * After the flush (and the rows, whose names the pairs take): the pairs
 * that grew into snap, those of waiters that exited deleted from the map.
 * Returns 0 or a negative errno, said.
 */
int delay_reader__read(struct delay_reader *r, struct pmbpf_bpf *skel, struct snapshot *snap,
		       const char *(*cgroup_path)(void *ctx, __u64 id), void *ctx);
void delay_reader__free(struct delay_reader *r);

#endif
