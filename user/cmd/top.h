/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * pmbpf top's state, shared by its loop and keys (top.c) and its screen
 * (top_draw.c).
 */
#ifndef __PMBPF_TOP_H
#define __PMBPF_TOP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/utsname.h>
#include <linux/types.h>
#include "cgroup.h"
#include "cpi_live.h"
#include "session.h"
#include "top_user.h"
#include "top_view.h"

enum top_mode {
	MODE_NORMAL,
	MODE_HELP,
	MODE_SORT_MENU,
	MODE_FILTER_COMM,
	MODE_FILTER_CGROUP,
};

struct top {
	struct session_opts so;
	struct cpi_opts cpi_o;
	char cgroup_path[4096];
	__u64 interval_ns;

	struct session *s;
	const struct event_info *events;
	int nr_events;
	bool no_pmu;
	struct utsname uts;
	int online_cpus;

	struct snapshot snap;
	bool have_snap;
	struct top_view v;
	struct top_users *users;
	struct cpi_live *cpi;
	struct cgroup_stats *cgs; /* the cgroup view's rows' own files (throttling, PSI) */
	bool shown[TOP_MAX_COLS]; /* columns that fit, at the last draw */

	enum top_mode mode;
	bool paused;
	__u64 deadline; /* CLOCK_MONOTONIC of the next collection */
	__u64 last_collect;
	size_t sel, first; /* selected row, first row on screen */
	bool follow; /* the user moved the selection: keep it on its row */
	__u32 sel_pid;
	__u32 sel_tid; /* the thread view's selected thread */
	__u64 sel_id; /* cgroup id (of the process row, or of the cgroup) */
	int page; /* rows on screen */
	int menu_sel;
	bool descended; /* the scope was entered from the cgroup view */
	int fatal; /* a key's action failed: the view closes with it */

	/* pmbpf's own cost */
	__u64 prev_self_ns, prev_prog_ns, prev_prog_runs;
	double self_pct, prog_pct; /* of one CPU; prog_pct NaN without bpf_stats */
};

/* Colors and attributes, once curses has started. */
void top__setup_colors(void);
/* The whole screen from t: header, table, the CPI and delay lines, footer (or help, or the sort menu). */
void top__draw(struct top *t);

#endif
