/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The plain result of one collection: what every renderer reads. Nothing in
 * here points at a BPF map.
 */
#ifndef __PMBPF_SNAPSHOT_H
#define __PMBPF_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "pmbpf.h"
#include "events.h"

struct event_info {
	struct event_spec spec;
	enum event_state state;
	int err; /* errno from perf_event_open when not counting */
	int slot; /* index in the BPF program's counter set, -1 if not counting */
};

/* One process (in one cgroup) over one interval. */
struct proc_row {
	__u32 pid;
	__u64 cgroup_id;
	const char *cgroup; /* path below the cgroup2 mount, or NULL */
	char comm[PMBPF_COMM_LEN];
	bool exited;
	bool overflow; /* the entry that holds processes that found the map full */
	__u64 start_ns;
	__u64 oncpu_ns;
	__u64 nvcsw;
	__u64 nivcsw;
	__u64 folded;
	struct pmbpf_reading ev[PMBPF_MAX_EVENTS]; /* indexed like snapshot.events */
};

struct snapshot {
	__u64 time_ns; /* CLOCK_REALTIME at the end of the interval */
	__u64 interval_ns; /* CLOCK_MONOTONIC length of the interval */
	int nr_cpus; /* online CPUs counted */
	int nr_events;
	const struct event_info *events;
	const char *attach; /* "tp_btf" or "raw_tp" */
	struct proc_row *rows;
	size_t nr_rows;
	size_t cap_rows;
	/* System-wide deltas read from the per-CPU counters themselves. */
	struct pmbpf_reading system[PMBPF_MAX_EVENTS];
	/* Kernel-side statistics, cumulative since start (enum pmbpf_stat). */
	__u64 stats[PMBPF_STAT_NR];
	__u64 map_entries; /* entries in the counts map at this read */
	__u64 map_capacity;
	__u64 vanished; /* entries that disappeared without an exit record */
	__u64 poll_ns; /* time this collection took */
};

struct proc_row *snapshot__add_row(struct snapshot *snap);
void snapshot__reset(struct snapshot *snap);
void snapshot__free(struct snapshot *snap);
/* Sort rows by on-CPU time, highest first (stable for equal figures). */
void snapshot__sort_cpu(struct snapshot *snap);

#endif
