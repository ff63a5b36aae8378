/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * pmbpf stat's report, text and JSON, from plain data: one run's totals
 * (stat_report__run), the summary of -r N runs and --ab's comparison
 * (stat_report__table), and the JSON document of every run
 * (stat_report__json, schema STAT_SCHEMA: what series__from_json() reads
 * back for pmbpf compare).
 */
#ifndef __PMBPF_STAT_REPORT_H
#define __PMBPF_STAT_REPORT_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>
#include "compare.h"
#include "snapshot.h"

/* One run of the command. */
struct stat_run {
	char group; /* 'A' or 'B' */
	int status; /* its wait status */
	int exit_code; /* as a shell's $?: 128 + N when killed by signal N */
	__u64 wall_ns;
	unsigned int nr_procs;
	struct figures f;
};

/* A figure of a run as stat reports and compares it. */
struct stat_metric {
	char name[METRIC_NAME_LEN];
	bool time; /* nanoseconds */
	double v; /* NaN where an event does not count */
};

/* What the report is about: the session's events and facts, the runs. */
struct stat_report {
	const struct event_info *events;
	int nr_events;
	const struct metric_sel *metrics; /* -M, or NULL */
	const char *attach; /* tp_btf or raw_tp */
	const char *pmu; /* "counting", "none" or "not-used" */
	char **argv_a, **argv_b; /* argv_b: --ab's second command, else NULL */
	int repeat;
	const struct stat_run *runs;
	int nr_runs;
};

/*
 * The figures of a run that are reported and compared: its wall time (the
 * command's own), then every figure with a stat name (catalog.c) whose
 * events were asked for. Returns how many went to mv (at most
 * SERIES_MAX_METRICS).
 */
int stat_run__metrics(const struct stat_report *rep, const struct stat_run *run,
		      struct stat_metric *mv);
/*
 * One run's totals as text: snap gives the events, the metrics and
 * interval_ns (the command's wall time), fig the summed figures, status the
 * command's wait status. Returns 0 or stream__error()'s negative errno.
 */
int stat_report__run(FILE *f, const struct snapshot *snap, const struct figures *fig,
		     char *const *argv, int status, unsigned int nr_procs);
/* -r N: the summary of series a (and b); with cmp, --ab's comparison after them. */
void stat_report__table(FILE *f, const struct series *a, const struct series *b,
			const struct compare_result *cmp);
/* stat -o json: the document of every run, the summaries and the comparison (cmp, or NULL). */
void stat_report__json(FILE *f, const struct stat_report *rep, const struct series *a,
		       const struct series *b, const struct compare_result *cmp);

#endif
