/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The catalog of figures: every figure pmbpf shows for a process, a cgroup
 * or a command, and every statistic about pmbpf itself, defined once, with
 * its name, unit, help, kind and the outputs that show it. The renderers
 * (output.c: table, JSON, CSV and stat; prom.c; top_view.c) walk these
 * tables instead of naming figures, and docs/fields.md is checked against
 * them (tests/test_catalog.py). A new figure is one entry here and the code
 * that fills it (a count: enum pmbpf_count and the BPF program; a derived
 * figure: enum fig_derived and metrics.c).
 */
#ifndef __PMBPF_CATALOG_H
#define __PMBPF_CATALOG_H

#include <stdbool.h>
#include <stddef.h>
#include "metrics.h"
#include "snapshot.h"

/* The outputs a figure appears in. */
enum fig_out {
	OUT_TABLE = 1 << 0, /* record's table: a column */
	OUT_JSON = 1 << 1, /* record and serve's JSON Lines, stat -o json */
	OUT_CSV = 1 << 2,
	OUT_PROM = 1 << 3, /* serve's /metrics */
	OUT_TOP = 1 << 4, /* a column of pmbpf top */
	OUT_STAT = 1 << 5, /* a row of pmbpf stat, and a figure of stat -r and compare */
};

/* Prometheus-style kind: a counter only grows (the outputs show its interval delta). */
enum fig_kind {
	FIG_COUNTER,
	FIG_GAUGE,
};

/* Where a figure's value comes from; per-event kinds give one figure per event. */
enum fig_src {
	SRC_COUNT, /* figures.n[index] (enum pmbpf_count) */
	SRC_DERIVED, /* row_metrics.d[index] (enum fig_derived) */
	SRC_EVENT, /* each event: its count scaled for multiplexing */
	SRC_EVENT_RAW, /* each event: its reading's value as counted */
	SRC_EVENT_ENABLED, /* each event: ns its counter was enabled */
	SRC_EVENT_RUNNING, /* each event: ns its counter was counting */
	SRC_EVENT_COVERAGE, /* each event: running / enabled */
	SRC_MPKI, /* each miss event: per 1000 instructions */
	SRC_METRIC, /* each -M metric's each value */
	SRC_RUNQ_HIST, /* the run-queue latency histogram (enum pmbpf runq_slot.h) */
};

/* How a value is written where a format has a choice (table, top, stat). */
enum fig_fmt {
	FMT_COUNT, /* integer; humanized (12.3M) in table and top */
	FMT_PCT, /* one decimal */
	FMT_RATIO, /* two decimals in table and top, four in JSON/CSV */
	FMT_FRACTION, /* four decimals */
	FMT_NS, /* a duration in ns: table/top scale it (us, ms, s) */
	FMT_BOOL, /* 0 or 1: JSON true/false */
	FMT_HIST, /* SRC_RUNQ_HIST: JSON array of slot counts up to the last non-zero */
};

struct figure {
	/*
	 * JSON key and CSV column. A '.' nests in JSON ("runq.p99_ns" is key
	 * p99_ns of object runq) and is a '_' in CSV. Per-event figures have
	 * "%s" where the event's (or -M metric's) name goes.
	 */
	const char *name;
	const char *csv; /* CSV column when it is not name with '_' for '.' */
	const char *title; /* table and top column, NULL: none; "%s" as in name */
	const char *stat; /* stat's row and compare's metric name, NULL: none */
	const char *unit; /* "ns", "percent", "switches", "waits", "events", "ratio" */
	const char *help; /* one line: docs/fields.md and Prometheus HELP */
	enum fig_kind kind;
	enum fig_src src;
	int index; /* for SRC_COUNT and SRC_DERIVED */
	enum fig_fmt fmt;
	unsigned int outputs; /* enum fig_out */
	/*
	 * Prometheus family below pmbpf_process_ and pmbpf_cgroup_ (NULL:
	 * not exported), and its labels when figures share one family.
	 * Durations in ns are exported in seconds.
	 */
	const char *prom;
	const char *prom_labels;
	bool prom_cgroup_only; /* cardinality: cgroups only, not processes */
};

/* The figures of a row (process, cgroup, command), in display order. */
const struct figure *catalog__figures(size_t *nr);
/* The figure of a plain count or a derived figure; NULL if none. */
const struct figure *catalog__count(enum pmbpf_count c);
const struct figure *catalog__derived(enum fig_derived d);

/*
 * The value of figure fd for a row (f, m from metrics__figures()); i is the
 * event index for per-event figures, the metric and value (u * METRIC_MAX_VALUES + v)
 * for SRC_METRIC. NaN where it was not counted.
 */
double figure__value(const struct figure *fd, const struct figures *f, const struct row_metrics *m,
		     int i);
/* Whether figure fd has an instance for event (or metric value) i of snap. */
bool figure__applies(const struct figure *fd, const struct snapshot *snap, int i);
/* How many instances a per-event figure can have in snap (1 for the others). */
int figure__instances(const struct figure *fd, const struct snapshot *snap);
/* fd's name (or title, or stat name: pattern) for instance i: "%s" filled in. */
const char *figure__name(const struct figure *fd, const char *pattern, const struct snapshot *snap,
			 int i, char *buf, size_t len);

/* Statistics of pmbpf itself: the system record and serve's self metrics. */
enum self_src {
	SELF_STAT, /* snapshot.stats[index] (enum pmbpf_stat): the BPF program's own */
	SELF_MAP_ENTRIES,
	SELF_MAP_CAPACITY,
	SELF_MAP_BYTES,
	SELF_VANISHED,
	SELF_POLL_NS,
};

struct self_figure {
	const char *name; /* key in the JSON system record */
	const char *prom; /* full Prometheus name */
	const char *unit;
	const char *help;
	enum fig_kind kind;
	enum self_src src;
	int index;
	unsigned int outputs; /* OUT_JSON, OUT_PROM, OUT_TABLE (the table's footer) */
};

const struct self_figure *catalog__self(size_t *nr);
double self_figure__value(const struct self_figure *sf, const struct snapshot *snap);

#endif
