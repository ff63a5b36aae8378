/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * --delays: the read of the kernel's delays map at each collection (the
 * pairs that grew, through the BPF iterators where the shared counts map is
 * used; elsewhere every pair, by batch), handed to the accounting
 * (account/delay.c).
 */
#ifndef __PMBPF_DELAY_READ_H
#define __PMBPF_DELAY_READ_H

#include <stdbool.h>
#include "bpfload.h"
#include "delay.h"

struct pmbpf_bpf;

struct delay_reader {
	struct delay_acct *acct;
	struct map_reader rd; /* every pair by batch: no iterators (raw_tp, --thread-fold off) */
	struct iter_reader all; /* read_delays: the pairs added to since delay_read_min */
	struct iter_reader changed; /* read_changed: the pairs on the read generation's list */
	bool read; /* a read was made: the next takes changes only */
	bool begun; /* delay_reader__begin() without a read after it */
};

/* Before the load: the maps' sizes (on: the pairs, else one; nr_cpus possible) and their knobs. */
void delay_reader__size(struct pmbpf_bpf *skel, bool on, int nr_cpus);
/* After the load: the state, and the iterators when their programs were loaded. */
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
