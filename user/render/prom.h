/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Prometheus exposition of snapshots. Snapshots hold interval deltas; this
 * module accumulates them into counters that only grow, chooses which
 * processes (and with --threads which threads) get series (the top K by
 * recent CPU time, each), expires series of
 * dead processes and removed cgroups after a grace period, and renders the
 * text exposition format 0.0.4.
 */
#ifndef __PMBPF_PROM_H
#define __PMBPF_PROM_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "snapshot.h"
#include "strbuf.h"

/*
 * Append v as a label value: escaped, invalid UTF-8 bytes replaced by '?' and
 * control characters (text__char()) by U+FFFD.
 */
void prom__label_value(struct strbuf *sb, const char *v);

struct prom_opts {
	unsigned int top_k; /* live processes with series (0: none); as many threads */
	/*
	 * --threads (snapshots with threads): the top K threads get series
	 * too, pmbpf_thread_ families; false: no thread series at all.
	 */
	bool threads;
	unsigned int delay_pairs; /* --delays: (cgroup, by) pairs with series, the top N */
	__u64 grace_ns; /* how long series of dead processes and removed cgroups stay */
	/* Does this cgroup (path below the cgroup2 mount) still exist? NULL: always. */
	bool (*cgroup_exists)(const char *path, void *ctx);
	/* Families of its own (serve: prom__cpi()'s), rendered last; NULL: none. */
	void (*more)(struct strbuf *out, void *ctx);
	void *ctx;
};

/* Figures of the pmbpf process itself, gathered by its caller. */
struct prom_self {
	double rss_bytes;
	double vsize_bytes;
	double cpu_seconds;
	double start_time_seconds;
	double open_fds;
	__u64 collections;
	__u64 collection_errors;
	double collection_seconds; /* cumulative */
	bool bpf_stats_enabled;
	bool no_pmu;
	const char *version;
	__u64 http_requests[4]; /* 2xx, 4xx, 5xx, other */
};

struct prom_state;

struct prom_state *prom__new(const struct prom_opts *opts);
void prom__free(struct prom_state *ps);
/* Add one snapshot's deltas; now_ns is CLOCK_MONOTONIC at its end. */
int prom__update(struct prom_state *ps, const struct snapshot *snap, __u64 now_ns);
/* Render the exposition of the counters after the last update. */
void prom__render(struct prom_state *ps, const struct snapshot *snap, const struct prom_self *self,
		  struct strbuf *out);
/* Process and cgroup series sets currently exported, and processes tracked for ranking. */
void prom__counts(const struct prom_state *ps, size_t *procs, size_t *cgroups, size_t *tracked);
/* --threads: thread series sets currently exported, and threads tracked for ranking. */
void prom__thread_counts(const struct prom_state *ps, size_t *threads, size_t *tracked);

/* For families rendered elsewhere: HELP and TYPE lines, a sample's value and a cgroup's labels. */
void prom__family(struct strbuf *sb, const char *name, const char *type, const char *help);
void prom__value(struct strbuf *sb, double v);
/* A sample's value: ns as exact decimal seconds, a whole number; each with its newline. */
void prom__ns(struct strbuf *sb, __u64 ns);
void prom__u64(struct strbuf *sb, __u64 v);
/* Some event asked for is a clock (counts ns): the _seconds_total families have samples. */
bool prom__has_clock_event(const struct snapshot *snap);
/* The state's system-wide count of event i, idle time and --threads, for prom_self.c. */
double prom__system_event(const struct prom_state *ps, int i);
__u64 prom__idle_ns(const struct prom_state *ps);
bool prom__threads(const struct prom_state *ps);
/* The statistics of pmbpf itself (prom_self.c), and the last family: the exposition's samples. */
void prom__render_self(const struct prom_state *ps, const struct snapshot *snap,
		       const struct prom_self *self, struct strbuf *out);
void prom__samples(struct strbuf *out, size_t samples);
/* "cgroup=...,runtime=...,container_id=...,pod_uid=...", malloc'd; NULL on ENOMEM. */
char *prom__cgroup_labels(const char *path, const struct container_info *ci);

struct cpi_live;
/* The live CPI outliers' families (catalog__cpi(); prom_cpi.c). */
void prom__cpi(struct strbuf *out, const struct cpi_live *l, const struct snapshot *snap);

#endif
