/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Comparison of two series of runs (pmbpf compare, pmbpf stat --ab): per
 * metric the change of the median with a rank-test confidence interval
 * (stats__rank_change), and a verdict against a threshold.
 */
#ifndef __PMBPF_COMPARE_H
#define __PMBPF_COMPARE_H

#include <stdbool.h>
#include <stdio.h>
#include "stats.h"

#define STAT_SCHEMA	       1
#define METRIC_NAME_LEN	       80
#define SERIES_MAX_METRICS     40
#define COMPARE_MAX_THRESHOLDS 32
#define COMPARE_LEVEL	       0.95
/* Runs a side that "too noisy" may ask for: more is no advice for a CI job. */
#define COMPARE_MAX_RUNS 30
#define STR_(x)		 #x
#define STR(x)		 STR_(x)

/* The runs of one command: one column of values per metric. */
struct series {
	char *label; /* file name, or "A"/"B" */
	char *command; /* the command line, words joined by spaces */
	int n; /* runs */
	int nr_metrics;
	struct metric_col {
		char name[METRIC_NAME_LEN];
		bool time; /* nanoseconds */
		double *v; /* n values; NaN where the run has none */
	} m[SERIES_MAX_METRICS];
};

/* Add a metric column for n runs (values NaN); NULL when full. */
struct metric_col *series__add(struct series *s, const char *name, bool time);
struct metric_col *series__find(const struct series *s, const char *name);
void series__free(struct series *s);
/*
 * Read the runs of group ("A", or "B" of a --ab file) from a pmbpf stat
 * -o json document. Returns 0, or -EINVAL with a one-line reason in err.
 */
int series__from_json(struct series *s, const char *text, size_t len, const char *group, char *err,
		      size_t err_len);

struct threshold {
	char name[METRIC_NAME_LEN];
	double pct; /* signed: the direction that is a regression */
	bool off; /* NAME=off: not judged (listed as not compared) */
};

/*
 * "NAME=+P%", "NAME=-P%", "NAME=P%" (the default direction of NAME) or
 * "NAME=off"; returns -EINVAL on a malformed value.
 */
int threshold__parse(const char *arg, struct threshold *t);
/* Default threshold of a metric (signed percent); 0: judged only when a --threshold names it. */
double threshold__default(const char *name);
/*
 * Absolute floor of a metric (its unit; ns for times): a change smaller than
 * this is never a regression or an improvement, whatever its percent.
 */
double threshold__floor(const char *name);

enum verdict {
	VERDICT_NONE, /* no significant change */
	VERDICT_REGRESSION,
	VERDICT_IMPROVEMENT,
	VERDICT_NOISY,
	VERDICT_FEW, /* too few runs for the test to reach COMPARE_LEVEL */
	VERDICT_COUNT,
};

struct compare_row {
	char name[METRIC_NAME_LEN];
	bool time;
	struct summary base, new;
	struct change change;
	double threshold_pct; /* the metric's, or --threshold's */
	double floor; /* threshold__floor() */
	double limit_pct; /* the one judged against: compare__limit_pct() */
	/*
	 * Runs per side: too few runs: what the test needs; too noisy: an
	 * estimate of what would decide (above COMPARE_MAX_RUNS: no advice);
	 * otherwise the runs it had.
	 */
	int runs_needed;
	enum verdict verdict;
};

struct compare_result {
	const struct series *base, *new;
	struct compare_row rows[SERIES_MAX_METRICS];
	int nr_rows;
	char dropped[1024]; /* "name (reason), ..." of metrics not compared */
	int counts[VERDICT_COUNT]; /* rows per verdict */
};

/*
 * Compare every metric of both series. Thresholds override the defaults by
 * name. Returns 0, or -EINVAL with a one-line reason in err (fewer than 2
 * runs, no metric in common, a threshold naming no compared metric).
 */
int compare__series(const struct series *base, const struct series *new, const struct threshold *th,
		    int nr_th, struct compare_result *r, char *err, size_t err_len);
const char *verdict__str(enum verdict v);
/*
 * The limit a change is judged against: the threshold, or the floor in
 * percent of the base median where that is more (in the threshold's
 * direction).
 */
double compare__limit_pct(double threshold_pct, double floor, double base_median);

/*
 * Runs per side to take before judging again (stat --ab --max-runs), having
 * run have: the most that a too noisy row asks for, at most twice have and
 * at most max_runs; have
 * when none asks for more, or when a row regressed already (the gate fails
 * either way, and more runs cannot make its interval any truer).
 */
int compare__runs_to_decide(const struct compare_result *r, int have, int max_runs);

#endif
