/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * --delays: who delayed whom. The kernel's delays map holds, per pair
 * (process in a cgroup that waited in a run queue, process in a cgroup that
 * ran on that CPU meanwhile), the cumulative waiting time and the number of
 * waits (bpf/delay.bpf.h). Here the pairs become interval deltas in the
 * snapshot, pairs of processes that exited are dropped from the map after
 * their last delta, and the pairs of a process or a cgroup are summed and
 * ranked for the outputs.
 */
#ifndef __PMBPF_DELAY_H
#define __PMBPF_DELAY_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "pmbpf.h"
#include "snapshot.h"

/* Entries of the kernel's delays map (pairs) by default. */
#define DELAY_MAP_ENTRIES 16384
/* Pairs listed per victim (and per runner) in JSON and top. */
#define DELAY_TOP 5

/* One (waiter, runner) pair over one interval, in snapshot.delays. */
struct delay_pair {
	__u32 pid; /* waited */
	__u32 by_pid; /* ran meanwhile: 0 is the idle task */
	__u64 cgroup_id;
	__u64 by_cgroup_id;
	const char *cgroup; /* paths below the cgroup2 mount, or NULL (snapshot__strdup) */
	const char *by_cgroup;
	char comm[PMBPF_COMM_LEN];
	char by_comm[PMBPF_COMM_LEN];
	__u64 ns;
	__u64 waits;
};

/* The sum of pairs over one party (a process, or a cgroup when pid is 0). */
struct delay_sum {
	__u32 pid;
	__u64 cgroup_id;
	const char *cgroup;
	const char *comm; /* NULL for a cgroup */
	__u64 ns;
	__u64 waits;
};

enum delay_side {
	DELAY_BY, /* who delayed the party (it waited) */
	DELAY_OF, /* whom the party delayed (it ran) */
};

/*
 * The parties of the pairs whose other side is the process (pid, cgid)
 * (side DELAY_BY: its runners; DELAY_OF: its waiters), summed per party and
 * ranked by ns (ties by pid), up to max into out. Returns how many; *total
 * (when not NULL) gets the sum over all of them.
 */
size_t delay__of_proc(const struct snapshot *snap, __u32 pid, __u64 cgid, enum delay_side side,
		      struct delay_sum *out, size_t max, __u64 *total);
/* The same for the processes of cgroup cgid itself, summed per cgroup on the other side. */
size_t delay__of_cgroup(const struct snapshot *snap, __u64 cgid, enum delay_side side,
			struct delay_sum *out, size_t max, __u64 *total);
/*
 * The delay runner by (a cgroup path, or "PID comm" / a PID for a process)
 * caused the waiter (cgroup cgid's own processes, or process pid in cgid)
 * this interval: the evidence beside a CPI outlier's suspects.
 */
__u64 delay__cgroup_by(const struct snapshot *snap, __u64 cgid, const char *by);
__u64 delay__proc_by(const struct snapshot *snap, __u32 pid, __u64 cgid, const char *by);
/* "name" of a party for text: comm (pid), cgroup path, "[idle]". */
const char *delay__name(const struct delay_sum *d, char *buf, size_t len);

/* The state kept between reads: the cumulative figures of every slot seen. */
struct delay_acct;

/* A pair to delete from the kernel map (its waiter exited), and its slot. */
struct delay_dead {
	struct pmbpf_delay_key k;
	__u32 slot;
};

struct delay_acct *delay_acct__new(void);
void delay_acct__free(struct delay_acct *a);
/* Slot slot of the kernel map holds pair k, cumulative figures v. Returns 0 or -ENOMEM. */
int delay_acct__entry(struct delay_acct *a, __u32 slot, const struct pmbpf_delay_key *k,
		      const struct pmbpf_delay_val *v);
/*
 * All entries of this read are in (the slots that grew since the last
 * read, or all): their deltas go to snap (names from snap's rows where they
 * ran, else from lookup), and the pairs whose waiter exited in this
 * snapshot are returned in *dead (nr in *nr_dead; valid until the next
 * call) for the caller to delete from the kernel map; their state is
 * forgotten. Returns 0 or -ENOMEM.
 */
int delay_acct__finish(struct delay_acct *a, struct snapshot *snap,
		       const char *(*cgroup_path)(void *ctx, __u64 id),
		       void (*comm_of)(void *ctx, __u32 pid, char *buf, size_t len), void *ctx,
		       const struct delay_dead **dead, size_t *nr_dead);

#endif
