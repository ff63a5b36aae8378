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
#include "cgroup.h"
#include "container.h"

struct metric_sel;
struct snapshot_strings;
struct delay_pair;

/* A BPF program's cumulative cost (kernel.bpf_stats_enabled=1): prog_stats__read() in bpfload.h. */
struct prog_stat {
	char name[32];
	__u64 run_time_ns;
	__u64 run_cnt;
	__u64 recursion_misses; /* runs skipped because the program was already running on that CPU */
};

struct event_info {
	struct event_spec spec;
	enum event_state state;
	int err; /* errno from perf_event_open when not counting */
	int slot; /* index in the BPF program's counter set, -1 if not counting */
	int cpus; /* CPUs it counts on (fewer than online: another core type lacks it) */
	bool switches; /* context-switches counted from sched_switch: no counter opened */
};

/* What was counted for a process or a cgroup over one interval. */
struct figures {
	__u64 n[PMBPF_N_NR]; /* enum pmbpf_count */
	__u64 runq_max_ns;
	__u32 runq_hist[PMBPF_RUNQ_SLOTS]; /* slot k: [2^k, 2^(k+1)) us, slot 0: < 2 us */
	struct pmbpf_reading ev[PMBPF_MAX_EVENTS]; /* indexed like snapshot.events */
};

/* One process (in one cgroup), or with --threads one thread of it, over one interval. */
struct proc_row {
	__u32 pid;
	__u32 tid; /* a thread row's thread id; 0 in a process row */
	/*
	 * --threads: a process row's threads that ran (rows in snapshot.threads);
	 * a thread row: its exit ended its process.
	 */
	__u32 nr_threads;
	bool proc_end;
	__u64 cgroup_id;
	const char *cgroup; /* path below the cgroup2 mount, or NULL (snapshot__strdup) */
	char comm[PMBPF_COMM_LEN];
	bool exited;
	bool overflow; /* the entry that holds processes that found the map full */
	__u64 start_ns;
	__u64 folded;
	struct figures f;
	/* --hot: the function most samples of this process were in, or NULL (snapshot__strdup) */
	const char *hot;
	__u64 hot_samples; /* of that function */
	double hot_share; /* of the process's samples this interval */
};

/* One cgroup over one interval. */
struct cgroup_row {
	__u64 id;
	const char *path; /* below the cgroup2 mount; NULL if unknown (removed before seen) */
	__u64 parent_id; /* 0 for the root or when unknown */
	int depth;
	struct container_info ci;
	__u32 nr_procs; /* processes that ran in this cgroup itself */
	__u32 nr_procs_total; /* ... in it and its descendants */
	/*
	 * Its overflow entry had credits this interval: processes that found
	 * the counts map full, in self without a row of their own
	 * (overflow_procs: first seen so this interval); overflow_total: it or
	 * a descendant.
	 */
	bool overflow;
	bool overflow_total;
	__u64 overflow_procs;
	__u64 overflow_procs_total; /* ... in it and its descendants: catalog__overflow() */
	struct figures self; /* processes in this cgroup itself */
	struct figures total; /* this cgroup and all its descendants */
	struct cgroup_stat stat; /* its own files' figures (hierarchical, like total) */
};

#define SNAPSHOT_MAX_PROGS 8

struct snapshot {
	__u64 time_ns; /* CLOCK_REALTIME at the end of the interval */
	__u64 interval_ns; /* CLOCK_MONOTONIC length of the interval */
	int nr_cpus; /* online CPUs counted */
	int nr_events;
	const struct event_info *events;
	const struct metric_sel *metrics; /* -M, or NULL */
	const char *attach; /* "tp_btf" or "raw_tp" */
	struct proc_row *rows;
	size_t nr_rows;
	size_t cap_rows;
	/*
	 * --threads: one row per thread that ran (tid set); each process row
	 * is the exact sum of its threads' rows (same pid, cgroup, start_ns).
	 */
	bool threads_on;
	struct proc_row *threads;
	size_t nr_threads;
	size_t cap_threads;
	struct cgroup_row *cgroups; /* every cgroup with a process row, and its ancestors */
	size_t nr_cgroups;
	size_t cap_cgroups;
	/* System-wide deltas read from the per-CPU counters themselves. */
	struct pmbpf_reading system[PMBPF_MAX_EVENTS];
	/* Kernel-side statistics, cumulative since start (enum pmbpf_stat). */
	__u64 stats[PMBPF_STAT_NR];
	__u64 map_entries; /* entries in the counts map at this read */
	__u64 map_capacity;
	__u64 map_bytes; /* kernel memory of pmbpf's BPF maps (memlock) */
	__u64 vanished; /* entries that disappeared without an exit record */
	__u64 poll_ns; /* time this collection took */
	__u64 late_intervals; /* intervals longer than 1.5 times the one asked for, so far */
	struct prog_stat progs[SNAPSHOT_MAX_PROGS];
	int nr_progs;
	struct snapshot_strings *strings; /* what snapshot__strdup copied */
	bool hot; /* --hot: rows carry their hottest function */
	bool thread_fold; /* switches credit threads' task storage (session.c) */
	bool wakeup_progs; /* programs run at sched_wakeup (session.c) */
	bool delays_on; /* --delays: delays holds who delayed whom (delay.h) */
	struct delay_pair *delays;
	size_t nr_delays;
	size_t cap_delays;
	/*
	 * delays' indices sorted by (cgroup, pid) of the waiter [0] and of the
	 * runner [1], nr_delays each (delay.c), built at the first lookup
	 * (delay_indexed; serve makes none); NULL once built: scan them.
	 */
	bool delay_indexed;
	size_t *delay_index[2];
	/* the (cgroup, pid) of delay_index[side][i] at [2 * i], [2 * i + 1]: searched without a miss per pair */
	__u64 *delay_keys[2];
	/*
	 * Each side's (cgroup, pid) runs of delay_keys by a hash of the key:
	 * slot s is [2 * s] = the run's first index + 1 (0: empty), [2 * s + 1]
	 * = its end; delay_hash_mask + 1 slots (a power of two). A process's
	 * lookup is then a probe or two, not a binary search.
	 */
	__u32 *delay_hash[2];
	size_t delay_hash_mask;
	size_t cap_delay_index;
};

struct proc_row *snapshot__add_row(struct snapshot *snap);
struct cgroup_row *snapshot__add_cgroup(struct snapshot *snap);
/*
 * A copy of s that lives until the next snapshot__reset or snapshot__free:
 * rows' paths, whatever happens to where they were read from. NULL when out
 * of memory.
 */
const char *snapshot__strdup(struct snapshot *snap, const char *s);
void snapshot__reset(struct snapshot *snap);
void figures__add(struct figures *dst, const struct figures *src);
/* Run-queue latency percentile (0 < q <= 1) from the histogram, in ns: the upper bound of its slot. */
double figures__runq_pct(const struct figures *f, double q);
void snapshot__free(struct snapshot *snap);
/* Sort rows (and threads) by on-CPU time, highest first (stable for equal figures). */
void snapshot__sort_cpu(struct snapshot *snap);
/* Sort cgroups by path (parents before children), unknown paths last. */
void snapshot__sort_cgroups(struct snapshot *snap);

#endif
