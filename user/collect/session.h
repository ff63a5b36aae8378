/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* A running collection: BPF programs loaded and attached, counters open. */
#ifndef __PMBPF_SESSION_H
#define __PMBPF_SESSION_H

#include <stdbool.h>
#include <sys/types.h>
#include "events.h"
#include "metrics.h"
#include "snapshot.h"

/* --thread-fold: where switches credit counts on tp_btf (choose_programs() in session.c). */
enum thread_fold {
	THREAD_FOLD_AUTO, /* chosen by the switch rate: the default */
	THREAD_FOLD_ON, /* each thread's task storage, folded into the processes at each read */
	THREAD_FOLD_OFF, /* the process entries, at each switch */
};

enum delays_mode {
	DELAYS_OFF, /* the other commands, and --no-delays */
	DELAYS_AUTO,
	DELAYS_ON,
};

struct session_opts {
	struct event_spec events[PMBPF_MAX_EVENTS];
	int nr_events;
	pid_t pid; /* 0: all processes */
	const char *cgroup; /* cgroup2 directory whose subtree is monitored, or NULL */
	__u32 max_procs; /* entries in the counts map */
	bool default_events; /* no -e: a default group may be split where it does not fit */
	struct metric_sel metrics; /* -M: their groups are at the end of events */
	bool force_raw_tp;
	bool verbose;
	__u32 hot_hz; /* --hot: sample rate of the hottest-function sampler; 0: off */
	/*
	 * Who delayed whom in the run queues (record, top, serve): DELAYS_AUTO
	 * is on without a -p/-G filter (with one, unmonitored switches would
	 * pay a clock read), DELAYS_ON and DELAYS_OFF are --delays and --no-delays.
	 */
	enum delays_mode delays;
	/*
	 * --threads: count each thread apart (snapshot.threads), each rolled
	 * up into its process's row: an entry per thread (the fold moves a
	 * thread's task storage into its own), no deferral of same-process
	 * handoffs, an exit record per thread.
	 */
	bool threads;
	/* --thread-fold (benchmarks, tests): THREAD_FOLD_AUTO unless forced */
	enum thread_fold thread_fold;
	/*
	 * --wakeup-progs (benchmarks, tests): programs at sched_wakeup time the
	 * run-queue waits even where the switch program reads them from the
	 * scheduler's sched_info (they always do where it cannot)
	 */
	bool wakeup_progs;
	/*
	 * The interval asked for (record, serve), 0 for none: intervals longer
	 * than 1.5 times it are counted (snapshot.late_intervals) and said.
	 */
	__u64 interval_ns;
};

struct session;

/* Returns 0 or a negative errno; the message has been printed. */
int session__open(struct session **sp, const struct session_opts *opts);
/*
 * Make every CPU credit its current task, then read: fills snap with one row
 * per process that ran since the previous call (exited ones included).
 */
int session__collect(struct session *s, struct snapshot *snap);
/*
 * Between collections: take the exit records waiting in the ring buffer
 * (they are accounted at the next collection). A command calls it every
 * SESSION_DRAIN_NS while it waits, so that an exit storm within one long
 * interval finds room: the 1 MiB ring holds about 2,000 records, and a
 * record that finds none leaves its map entry held until the next read.
 * Returns the records taken, or a negative errno (printed).
 */
#define SESSION_DRAIN_NS (100 * 1000 * 1000ULL)
int session__drain(struct session *s);
const struct event_info *session__events(const struct session *s, int *nr);
/* The host has no hardware PMU: pmu__available(), the one meaning of "pmu" in every output. */
bool session__no_pmu(const struct session *s);
/* At least one hardware event is counting. */
bool session__hw_counting(const struct session *s);
const char *session__attach_kind(const struct session *s);
int session__possible_cpus(const struct session *s);
/* Entries of the counts map in force. */
__u32 session__max_procs(const struct session *s);
/*
 * A counts map value (struct pmbpf_counts cut after nr_slots counting
 * slots), and the session's.
 */
__u32 session__counts_value_size(int nr_slots);
__u32 session__value_size(const struct session *s);
/*
 * The counts map's default size for values per entry (1: the shared map;
 * else the per-CPU map's possible CPUs) and slots (memory budget).
 */
__u32 session__default_max_procs(int possible_cpus, int nr_slots);

struct map_memory {
	char name[16]; /* BPF_OBJ_NAME_LEN */
	__u64 bytes; /* the kernel's memlock figure */
	__u32 max_entries;
	__u32 value_size;
	bool percpu;
};
/*
 * Kernel memory of the session's maps (those this kernel created): up to
 * max of them in out, their total in *total_bytes. Returns how many.
 */
int session__map_memory(const struct session *s, struct map_memory *out, int max,
			__u64 *total_bytes);
void session__close(struct session *s);

#endif
