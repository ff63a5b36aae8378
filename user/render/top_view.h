/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What `pmbpf top` shows, apart from drawing it: the columns of a view, its
 * rows (filtered and sorted from one snapshot) and the text of each cell.
 * Nothing here knows about the terminal.
 */
#ifndef __PMBPF_TOP_VIEW_H
#define __PMBPF_TOP_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include "metrics.h"
#include "snapshot.h"

enum top_col_kind {
	TOP_PID,
	TOP_TID, /* the thread view: the thread's id */
	TOP_USER,
	TOP_PROCS,
	TOP_FIGURE, /* a figure of the catalog (OUT_TOP): fd's instance inst */
	TOP_COMMAND,
	TOP_CONTAINER,
	TOP_CGROUP,
	TOP_HOT, /* --hot: the process's hottest function */
	TOP_CPI, /* a CPI outlier (cpi_live.h): its signal over its threshold */
	TOP_SHARE, /* the time view: fd's share of the row's time (inst: enum top_share) */
};

/*
 * The time view's shares of a row's time (its threads' on-CPU plus off-CPU
 * time in the interval): each the catalog figure of that part over it.
 */
enum top_share {
	SHARE_CPU, /* oncpu_ns */
	SHARE_RUNQ, /* runq.total_ns: runnable, waiting for a CPU (throttled included) */
	SHARE_THROTTLED, /* throttled_ns: cgroup rows, from cpu.stat */
	SHARE_BLOCKED, /* offcpu.blocked_ns (D) */
	SHARE_SLEEP, /* offcpu.sleep_ns (S, idle) */
	SHARE_OTHER, /* offcpu.other_ns */
	SHARE_OFF, /* without the split: offcpu_ns less runq.total_ns */
};

#define TOP_MAX_COLS (13 + 2 * PMBPF_MAX_EVENTS + METRIC_MAX_SEL * METRIC_MAX_VALUES)

struct figure;
struct cpi_live;

struct top_col {
	enum top_col_kind kind;
	const struct figure *fd; /* TOP_FIGURE */
	int inst; /* its event (or metric value) */
	char title[64];
	int width; /* the flex column's minimum */
	int prio; /* narrow terminals drop the lowest first */
	bool text; /* left-aligned, sorted as a string */
	bool flex; /* takes what width is left */
};

/* One shown row: a process (or thread), or a cgroup with its rolled-up figures. */
struct top_item {
	const struct proc_row *proc; /* NULL in the cgroup view; a thread's in the thread view */
	const struct cgroup_row *cg; /* the cgroup row; NULL if unknown */
	const struct figures *f;
	const char *user;
	struct row_metrics m;
	double key; /* sort key of numeric columns */
	const char *skey; /* sort key of text columns */
};

struct top_sort {
	enum top_col_kind kind;
	const struct figure *fd; /* TOP_FIGURE */
	int inst;
	bool reverse;
};

struct top_view {
	bool by_cgroup;
	bool time_view; /* t: each row's time as shares (CPU, run queue, throttled, blocked, sleep) */
	bool threads; /* H: the process view lists threads (snapshot.threads) */
	bool show_idle;
	char comm_filter[64]; /* case-insensitive substring of the command */
	char cg_filter[128]; /* ... of the cgroup path or container id */
	char scope[4096]; /* "" or a cgroup path: only its subtree */
	struct top_sort sort[2]; /* [by_cgroup] */
	struct top_col cols[TOP_MAX_COLS];
	int nr_cols;
	struct top_item *items;
	size_t nr_items, cap_items;
	size_t nr_candidates; /* rows before filtering */
	const struct cgroup_row **cg_index; /* snapshot cgroups by id */
	size_t cap_cg_index;
	const struct cpi_live *cpi; /* NULL: no CPI! column */
};

typedef const char *(*top_user_fn)(void *ctx, const struct proc_row *row);

void top_view__init(struct top_view *v);
void top_view__free(struct top_view *v);
/* The columns of the current view for the snapshot's events. */
void top_view__columns(struct top_view *v, const struct snapshot *snap);
/* Rows of the current view that pass the filters, sorted. */
int top_view__build(struct top_view *v, const struct snapshot *snap, top_user_fn user, void *ctx);
void top_view__sort(struct top_view *v);
/* Index in cols of the sort column (the first column if it is not shown). */
int top_view__sort_col(const struct top_view *v);
void top_view__set_sort(struct top_view *v, int col);
/* Sort the current view by CPU%, high first (the default). */
void top_view__sort_cpu(struct top_view *v);
/*
 * Which columns fit in width: shown[i] is set for the columns kept, the
 * least important dropped first; returns the flex column's width.
 */
int top_view__layout(const struct top_view *v, int width, bool *shown);
/* The time view: share (enum top_share, of figure fd) of the row's time, 0 to 1; NaN: none. */
double top_view__share(const struct top_item *it, const struct figure *fd, int share);
/* A figure column's value for a row: counters per second, NaN where not available. */
double top_view__value(const struct snapshot *snap, const struct top_item *it,
		       const struct figure *fd, int inst);
/* The text of one cell, "-" where a figure is not available. */
void top_view__cell(const struct top_view *v, const struct snapshot *snap,
		    const struct top_item *it, const struct top_col *c, char *buf, size_t len);
/*
 * Is cgroup cg a row of the cgroup view (in its scope, through its filter)?
 * Its own files (throttling, PSI) are read for those only.
 */
bool top_view__cgroup_shown(const struct top_view *v, const struct cgroup_row *cg);
/* Does a cgroup path lie in the subtree at scope ("/" holds everything)? */
bool top_view__in_scope(const char *path, const char *scope);
/* Container label of a cgroup: "docker:0123456789ab", or NULL. */
const char *top_view__container(const struct cgroup_row *cg, char *buf, size_t len);
/*
 * --delays: for the item (a process, or a cgroup's own processes), who
 * delayed it and whom it delayed this interval, in one line: "Delayed by:
 * spin (812) 9.0ms 99%, [idle] 10us 1%  Delayed: ...". "" when the
 * snapshot has no delays.
 */
const char *top_view__delay_line(const struct snapshot *snap, const struct top_item *it, char *buf,
				 size_t len);
/*
 * The selected row's CPI outlier in one line: the signal against its
 * threshold and baseline, and the suspects, with the run-queue delay each
 * caused it where the snapshot has delays. false (and buf "") when it is
 * not an outlier.
 */
bool top_view__cpi_line(const struct top_view *v, const struct snapshot *snap,
			const struct top_item *it, char *buf, size_t len);
/* ns as "850us", "12.3ms", "1.20s". */
const char *top_view__fmt_ns(char *buf, size_t len, double ns);

#endif
