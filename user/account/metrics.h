/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Scaling for multiplexed counters and the derived figures. */
#ifndef __PMBPF_METRICS_H
#define __PMBPF_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include "snapshot.h"

/*
 * Count scaled for multiplexing: value x enabled / running. NaN when the
 * counter was enabled but never running (nothing measured).
 */
double reading__scaled(const struct pmbpf_reading *r);
/* running / enabled in [0, 1]; 1 when no time was enabled. */
double reading__coverage(const struct pmbpf_reading *r);

/*
 * Named metrics (-M): per CPU family, one group of events and the formula
 * that turns their counts into figures, with its source (metrics.c).
 */
#define METRIC_MAX_SEL	  3
#define METRIC_MAX_VALUES 5

struct metric_def {
	const char *metric; /* "ipc", "mpki", "topdown" */
	const char *family; /* "any", "neoverse-n1-v1", "intel-topdown-v1", ... */
	const char *events; /* one group, in the order compute() reads them */
	const char *values[METRIC_MAX_VALUES]; /* names of the figures, NULL-terminated */
	/* c: the group's counts; slots: dispatch slots per cycle where the family needs it */
	void (*compute)(const double *c, double slots, double *out);
	const char *source;
};

/* The metrics asked for and how they were resolved on this host. */
struct metric_sel {
	int nr;
	struct metric_use {
		char name[16]; /* as given to -M */
		const struct metric_def *def; /* NULL: not supported here */
		int first; /* index of its group's first event in the event list */
		int nr_events;
		double slots;
		char why[160]; /* why not supported */
	} m[METRIC_MAX_SEL];
};

const struct metric_def *metrics__defs(int *nr);
/* "ipc,topdown" into sel (names only). -EINVAL with a one-line message on stderr. */
int metrics__parse(const char *list, struct metric_sel *sel);
/*
 * Pick each metric's definition for this host's CPU (family read from
 * /proc/cpuinfo, the Arm MIDR, and the topdown events sysfs exposes).
 */
void metrics__resolve(struct metric_sel *sel);
/* "not supported" once per metric whose definition is missing or whose events do not count. */
void metrics__report_unsupported(struct metric_sel *sel, const struct event_info *ev, int nr);

/* Names of the figures of a metric (also when it is not supported here). */
const char *const *metric_use__values(const struct metric_use *mu);

/* The derived figures of a row, in row_metrics.d[] (their catalog entries: catalog.c). */
enum fig_derived {
	DER_CPU_PCT,
	DER_IPC,
	DER_MIN_COVERAGE,
	DER_RUNQ_AVG_NS,
	DER_RUNQ_P50_NS,
	DER_RUNQ_P99_NS,
	DER_RUNQ_MAX_NS,
	DER_SWITCHES,
	DER_IPC_SAME_GROUP,
	DER_NR,
};

/* Figures of one row; NaN where a figure is unavailable. */
struct row_metrics {
	union {
		double d[DER_NR]; /* by enum fig_derived */
		struct {
			double cpu_pct;
			double ipc;
			double min_coverage; /* over counting events; NaN if none */
			double runq_avg_ns, runq_p50_ns, runq_p99_ns,
				runq_max_ns; /* NaN without waits */
			double switches; /* voluntary + involuntary */
			double ipc_same_group; /* 1: cycles and instructions of one group, 0: not, NaN: no IPC */
		};
	};
	double count[PMBPF_MAX_EVENTS];
	double coverage[PMBPF_MAX_EVENTS];
	bool ipc_grouped; /* cycles and instructions of one group: same running time */
	double mpki[PMBPF_MAX_EVENTS]; /* for miss events, else NaN */
	bool mpki_grouped[PMBPF_MAX_EVENTS];
	double metric[METRIC_MAX_SEL][METRIC_MAX_VALUES]; /* -M figures, NaN when not counted */
	/*
	 * A cgroup row's own kernel figures (cgroup_row.stat): the renderer of
	 * a cgroup's record sets it; NULL for every other row, which has none.
	 */
	const struct cgroup_stat *cgroup;
};

_Static_assert(offsetof(struct row_metrics, ipc_same_group) == DER_IPC_SAME_GROUP * sizeof(double),
	       "row_metrics: named derived figures in enum fig_derived order");

/* Index of the first counting event of a kind, or -1. */
int events__find_kind(const struct event_info *ev, int nr, __u32 kind);
void metrics__figures(const struct snapshot *snap, const struct figures *f, struct row_metrics *m);
void metrics__row(const struct snapshot *snap, const struct proc_row *row, struct row_metrics *m);
/* The same figures for the system-wide totals (cpu_pct is NaN). */
void metrics__system(const struct snapshot *snap, struct row_metrics *m);
double ratio(double num, double den);

#endif
