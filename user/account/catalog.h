/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The catalog of figures: every figure pmbpf shows for a process, a cgroup
 * or a command, and every statistic about pmbpf itself, defined once, with
 * its name, unit, help, kind and the outputs that show it. The renderers
 * (output.c: table, JSON, CSV and stat's text; stat.c: stat -r; prom.c;
 * top_view.c) walk these tables instead of naming figures. pmbpf fields
 * prints them (fields.c), docs/fields.md's tables are its output, and
 * tests/test_catalog.py finds every figure in every output it declares. A
 * new figure is one entry here and the code that fills it (a count: enum
 * pmbpf_count and the BPF program; a derived figure: enum fig_derived and
 * metrics.c).
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
	/* pmbpf stat's text (a row, or a note on one); with a stat name, stat -r's and compare's */
	OUT_STAT = 1 << 5,
	OUT_SYSTEM = 1 << 6, /* the JSON system record: all CPUs, from the per-CPU counters */
};

#define FIG_OUT_NR 7

/* "table", "json", "csv", "prometheus", "top", "stat", "system" for bit 1 << i. */
const char *fig_out__name(int i);

/*
 * Prometheus-style kind: a counter only grows (the outputs show its
 * interval delta, top per second, Prometheus the running total).
 */
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
	/*
	 * A cgroup's own kernel file (row_metrics.cgroup->v[index], enum
	 * cgroup_stat_index): cgroup records only, read for the cgroups shown
	 * or exported (cgroup.c).
	 */
	SRC_CGROUP,
};

/*
 * How a value is written where a format has a choice. A count of a clock
 * event is in ns (figure__ns()): ms in the table and stat, scaled in top.
 */
enum fig_fmt {
	FMT_COUNT, /* integer; humanized (12.3M) in table and top */
	FMT_PCT, /* one decimal in table and top, two in JSON/CSV */
	FMT_RATIO, /* two decimals in table and top, three in stat, four in JSON/CSV */
	FMT_FRACTION, /* four decimals */
	/*
	 * A duration in ns: us in the table (its title says so), scaled in top
	 * (850us, 12ms, 1.20s), in stat ms for counters and us for gauges.
	 */
	FMT_NS,
	FMT_BOOL, /* 0 or 1: JSON true/false */
	FMT_HIST, /* SRC_RUNQ_HIST: JSON array of slot counts up to the last non-zero */
	FMT_SHARE, /* a fraction (0..1) that table and top show as a percentage, one decimal */
};

struct figure {
	/*
	 * JSON key and CSV column. A '.' nests in JSON ("runq.p99_ns" is key
	 * p99_ns of object runq) and is a '_' in CSV. Per-event figures have
	 * "%s" where the event's (or -M metric's) name goes.
	 */
	const char *name;
	const char *csv; /* CSV column when it is not name with '_' for '.' */
	const char *title; /* the table's column (and top's), NULL: none; "%s" as in name */
	const char *top_title; /* top's column where it is not title ("%s/s": a rate) */
	const char *stat; /* stat -r's and compare's metric name, NULL: none */
	const char *label; /* pmbpf stat's row, NULL: a note on another row (MPKI: its event's) */
	const char *unit; /* "ns", "percent", "switches", "waits", "events", "ratio" */
	const char *help; /* one line: docs/fields.md and Prometheus HELP */
	enum fig_kind kind;
	enum fig_src src;
	int index; /* for SRC_COUNT and SRC_DERIVED */
	enum fig_fmt fmt;
	unsigned int outputs; /* enum fig_out */
	/*
	 * Event kinds (enum event_kind) it is computed from besides its own
	 * event: stat -r has it where they were asked for, top ranks it low
	 * where they do not count.
	 */
	unsigned int needs;
	int width; /* table's and top's column: at least this, and its title's length */
	/*
	 * top on a narrow terminal drops the lowest first; a column that can
	 * only show '-' (figure__counting() false) ranks at a tenth of it.
	 */
	int top_prio;
	/*
	 * Prometheus family below pmbpf_process_ and pmbpf_cgroup_ (NULL:
	 * not exported), and its labels when figures share one family.
	 * Durations in ns are exported in seconds.
	 */
	const char *prom;
	const char *prom_labels;
	bool prom_cgroup_only; /* cardinality: cgroups only, not processes */
	/*
	 * A per-event counter's family for the instances in ns (clock events:
	 * cpu-clock, task-clock; figure__ns()), in seconds: a family of counts
	 * holds no time, a _seconds_total family no counts. NULL: none.
	 */
	const char *prom_time;
	/*
	 * The tests that check it against ground truth (or, for a formula
	 * over other figures, its arithmetic): "FILE::NAME ...", FILE below
	 * tests/, NAME a pytest test, a C unit test's function or a VM
	 * guest's check (tests/test_catalog.py checks that each exists).
	 */
	const char *tests;
};

/* --delays: the figure of a pair (who waited, who ran meanwhile). */
const struct figure *catalog__delay(void);
/* A cgroup's processes without a row of their own (the counts map full). */
const struct figure *catalog__overflow(void);
/* The figures of a row (process, cgroup, command), in display order. */
const struct figure *catalog__figures(size_t *nr);
/*
 * Call fn for each instance of each figure shown in one of the outputs
 * out (enum fig_out), in catalog order: figure by figure, then event by
 * event (or metric value by metric value).
 */
void catalog__each(const struct snapshot *snap, unsigned int out,
		   void (*fn)(const struct figure *fd, int i, void *ctx), void *ctx);
/* The figure named name (its JSON name); NULL if none. */
const struct figure *catalog__named(const char *name);
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
/*
 * Whether a row with figures m has figure fd at all: a cgroup's own file
 * figures (SRC_CGROUP) only in cgroup records (m->cgroup set), where a file
 * that is missing makes the value NaN (null, '-'), never 0.
 */
bool figure__of_row(const struct figure *fd, const struct row_metrics *m);
/* The same as an integer where the source is one (counts, raw readings): exact in JSON and CSV. */
bool figure__integer(const struct figure *fd, const struct figures *f, int i, __u64 *v);
/* Whether figure fd has an instance for event (or metric value) i of snap. */
bool figure__applies(const struct figure *fd, const struct snapshot *snap, int i);
/* How many instances a per-event figure can have in snap (1 for the others). */
int figure__instances(const struct figure *fd, const struct snapshot *snap);
/* Whether fd is in snap's outputs at all (-M figures: only with -M), even with no instance. */
bool figure__present(const struct figure *fd, const struct snapshot *snap);
/* A figure of one event's reading: the event's JSON object is null when it does not count. */
bool figure__reading(const struct figure *fd);
/* One figure per event: the readings' figures and MPKI (instance i is event i). */
bool figure__per_event(const struct figure *fd);
/* The events instance i is computed from (its event, fd->needs, its metric's group) were asked for. */
bool figure__asked(const struct figure *fd, const struct snapshot *snap, int i);
/* ... and they count on this host: it can have a value. */
bool figure__counting(const struct figure *fd, const struct snapshot *snap, int i);
/* Instance i's value is in ns (FMT_NS, or the count of a clock event). */
bool figure__ns(const struct figure *fd, const struct snapshot *snap, int i);
/*
 * The names instance i stands for: its event's, or its metric's and the
 * metric value's (two); returns how many (0 for figures of one instance).
 */
int figure__instance(const struct figure *fd, const struct snapshot *snap, int i,
		     const char *part[2]);
/*
 * fd's name (or csv, title, top_title, stat or label: pattern) for instance
 * i, its "%s" filled in: the event's name (in title and top_title, a miss
 * event's first word: LLC-MPKI); a metric value as "METRIC.VALUE" in a
 * name with a '.' (JSON nests it), else its VALUE; a pattern with two "%s"
 * gets METRIC and VALUE ("%s-%s": topdown-retiring).
 */
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
	SELF_LATE,
	SELF_THREAD_FOLD,
	SELF_WAKEUPS, /* a stat of the wakeup programs: none (NaN) when they are not attached */
	SELF_SERVE, /* serve's own (enum serve_stat in index): prom.c has its value */
};

/* The statistics only serve has: of its process, its collections, its series. */
enum serve_stat {
	SERVE_INFO,
	SERVE_CPUS,
	SERVE_PMU,
	SERVE_EVENT_SUPPORTED,
	SERVE_METRIC_SUPPORTED,
	SERVE_SYSTEM_EVENTS,
	SERVE_SYSTEM_EVENT_SECONDS,
	SERVE_IDLE,
	SERVE_PROG_RUN_TIME,
	SERVE_PROG_RUNS,
	SERVE_PROG_RECURSION,
	SERVE_BPF_STATS,
	SERVE_COLLECTIONS,
	SERVE_COLLECTION_ERRORS,
	SERVE_COLLECTION_TIME,
	SERVE_LAST_COLLECTION,
	SERVE_INTERVAL,
	SERVE_EXPORTED_PROCS,
	SERVE_EXPORTED_CGROUPS,
	SERVE_TRACKED_PROCS,
	SERVE_EXPORTED_THREADS,
	SERVE_TRACKED_THREADS,
	SERVE_HTTP_REQUESTS,
	SERVE_RSS,
	SERVE_VSIZE,
	SERVE_CPU_TIME,
	SERVE_FDS,
	SERVE_START_TIME,
	SERVE_SAMPLES,
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
	bool json_ms; /* a figure in ns that the JSON record shows in ms, 3 decimals (poll_ms) */
	const char *prom_labels; /* the labels of its series ("event, class, state"), or NULL */
};

const struct self_figure *catalog__self(size_t *nr);
double self_figure__value(const struct self_figure *sf, const struct snapshot *snap);

/*
 * serve's families of the live CPI outliers (cpi_live.h, rendered by
 * prom_cpi.c), which are judgements over intervals, not figures of a row.
 */
enum cpi_family {
	CPI_FAM_SIGNAL_INFO,
	CPI_FAM_OUTLIER,
	CPI_FAM_SIGNAL,
	CPI_FAM_BASELINE_MEAN,
	CPI_FAM_THRESHOLD,
	CPI_FAM_SUSPECT,
	CPI_FAM_SUSPECT_DELAY,
	CPI_FAM_NR,
};

struct prom_family {
	const char *prom; /* full Prometheus name */
	bool cgroup; /* a series per cgroup: the labels of the pmbpf_cgroup_ families first */
	const char *labels; /* its own labels */
	const char *unit;
	const char *help;
	enum fig_kind kind;
};

/* By enum cpi_family. */
const struct prom_family *catalog__cpi(size_t *nr);

#endif
