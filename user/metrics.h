/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Scaling for multiplexed counters and the derived figures. */
#ifndef __PMBPF_METRICS_H
#define __PMBPF_METRICS_H

#include <stdbool.h>
#include "snapshot.h"

/*
 * Count scaled for multiplexing: value x enabled / running. NaN when the
 * counter was enabled but never running (nothing measured).
 */
double reading__scaled(const struct pmbpf_reading *r);
/* running / enabled in [0, 1]; 1 when no time was enabled. */
double reading__coverage(const struct pmbpf_reading *r);

/* Figures of one row; NaN where a figure is unavailable. */
struct row_metrics {
	double cpu_pct;
	double count[PMBPF_MAX_EVENTS];
	double coverage[PMBPF_MAX_EVENTS];
	double ipc;
	double mpki[PMBPF_MAX_EVENTS]; /* for miss events, else NaN */
	double min_coverage; /* over counting events; NaN if none */
	double runq_p50_ns, runq_p99_ns, runq_max_ns, runq_avg_ns; /* NaN without wakeups */
};

/* Index of the first counting event of a kind, or -1. */
int events__find_kind(const struct event_info *ev, int nr, __u32 kind);
void metrics__figures(const struct snapshot *snap, const struct figures *f, struct row_metrics *m);
void metrics__row(const struct snapshot *snap, const struct proc_row *row, struct row_metrics *m);
/* The same figures for the system-wide totals (cpu_pct is NaN). */
void metrics__system(const struct snapshot *snap, struct row_metrics *m);
double ratio(double num, double den);

#endif
