/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * CPI outliers and their suspects, after Google's CPI2 (EuroSys 2013): each
 * victim's cycles per instruction against its own baseline, and when it
 * rises, the other victims' CPU use that rises with it. Pure: no I/O.
 *
 * Per victim (a cgroup, or a process: anything with a name), one sample per
 * interval: its CPU use and its signal (the CPI, or where no PMU counts, a
 * scheduler figure such as the run-queue latency p99).
 *
 * - Baseline: mean and sample standard deviation of the victim's last
 *   `window` normal samples (learned online, as the intervals come). A
 *   sample above the threshold is not normal and stays out, so a rise does
 *   not raise its own bar (which costs a slightly narrower baseline: the
 *   upper 2% tail of the noise is left out too). A rise that lasts a whole
 *   window is the new normal: the baseline restarts from it.
 * - Outlier: the signal above mean + CPI_SIGMAS x sd for k consecutive
 *   intervals, the sd taken as at least CPI_SD_FLOOR of the mean (a very
 *   steady CPI is not flagged for a change of a fraction of a percent), once
 *   the baseline holds CPI_MIN_BASELINE samples. An interval where the
 *   victim used less than min_cpu CPUs (its CPI is then mostly cold caches
 *   and wakeups) or had no signal has no sample and ends a run.
 * - Suspects: every other victim, ranked by the Pearson correlation of its
 *   CPU use (on-CPU time per interval) with the victim's signal over the
 *   last `window` intervals, outlier intervals included (they carry the
 *   evidence); a name without a sample in an interval used no CPU there.
 *   Only positive correlations are suspects.
 */
#ifndef __PMBPF_CPI_H
#define __PMBPF_CPI_H

#include <stdbool.h>
#include <stddef.h>

#define CPI_WINDOW	 60
#define CPI_K		 5
#define CPI_SIGMAS	 2.0
#define CPI_SD_FLOOR	 0.01
#define CPI_MIN_BASELINE 20
#define CPI_MIN_CPU	 0.05
#define CPI_SUSPECTS	 5
#define CPI_MAX_SUSPECTS 32
#define CPI_MAX_WINDOW	 100000

struct cpi_opts {
	int window; /* samples of the baseline, intervals of the correlation */
	int k; /* consecutive intervals above the threshold */
	double min_cpu; /* CPUs a victim must use for its interval to count */
	int max_suspects; /* listed per outlier, at most CPI_MAX_SUSPECTS */
};

struct cpi_baseline {
	int n;
	double mean;
	double sd; /* sample standard deviation (n - 1); NaN when n < 2 */
};

/* Mean and standard deviation of x[0..n). */
void cpi__baseline(const double *x, int n, struct cpi_baseline *b);
/*
 * mean + CPI_SIGMAS x max(sd, CPI_SD_FLOOR x mean); NaN when the baseline
 * has fewer than 2 samples.
 */
double cpi__threshold(const struct cpi_baseline *b);
/*
 * Pearson's r of x[0..n) and y[0..n); NaN when n < 3, a value is not finite,
 * or either has no variance.
 */
double cpi__pearson(const double *x, const double *y, int n);

struct cpi_sample {
	const char *name;
	double cpu; /* CPUs used in the interval (on-CPU time / interval) */
	double value; /* the signal (CPI); NaN when not measured */
};

struct cpi_suspect {
	const char *name;
	double r; /* correlation of its CPU use with the victim's signal */
	double cpu; /* its CPU use in this interval */
};

struct cpi_outlier {
	const char *victim;
	double value;
	struct cpi_baseline base;
	double threshold;
	int run; /* consecutive intervals above the threshold, this one included */
	int pairs; /* intervals of the window with a sample of the victim */
	int nr_suspects;
	struct cpi_suspect suspects[CPI_MAX_SUSPECTS];
};

struct cpi_detector;

/* NULL and errno EINVAL (bad options) or ENOMEM. */
struct cpi_detector *cpi__new(const struct cpi_opts *o);
void cpi__free(struct cpi_detector *d);
/*
 * One interval: the samples of the names that ran in it (a name given twice
 * keeps its last sample). Returns 0 or -ENOMEM. Then cpi__outlier(d, i) for
 * i < cpi__nr_outliers(d) are this interval's outliers; names stay valid
 * until the next call.
 */
int cpi__interval(struct cpi_detector *d, const struct cpi_sample *s, int n);
int cpi__nr_outliers(const struct cpi_detector *d);
const struct cpi_outlier *cpi__outlier(const struct cpi_detector *d, int i);
/* Names tracked now (seen within the last window). */
int cpi__nr_names(const struct cpi_detector *d);
/* Samples judged so far against a baseline (the false-positive denominator). */
long long cpi__judged(const struct cpi_detector *d);

/* Where victim i (< cpi__nr_names()) stands after the last interval. */
struct cpi_state {
	const char *name; /* valid until the next cpi__interval() */
	double value; /* its sample of the last interval; NaN: none */
	/* its normal samples: the bar the next interval is judged against */
	struct cpi_baseline base;
	double threshold; /* NaN until the baseline holds CPI_MIN_BASELINE samples */
	int run; /* consecutive intervals above, up to the last one */
};

void cpi__state(const struct cpi_detector *d, int i, struct cpi_state *st);

/*
 * The signal, chosen once for a host: the CPI where cycles and
 * instructions both count, else the mean run-queue wait (the scheduler
 * evidence alone: no PMU). Not the p99: pmbpf's p99 is the bound of a log2
 * bucket, so it moves in steps of 2x and has little spread to learn a
 * baseline from (docs/fleet.md).
 */
enum cpi_signal {
	CPI_SIGNAL_CPI,
	CPI_SIGNAL_RUNQ_AVG, /* ns */
};

enum cpi_signal cpi__signal(bool cycles_count, bool instructions_count);
/* "cpi" or "runq_avg_ns": the JSON and Prometheus name. */
const char *cpi_signal__name(enum cpi_signal s);

/*
 * A victim's own figures over one interval: its own processes (a cgroup's
 * `self`, never its children's, so that a parent is never a suspect of its
 * child) or one process.
 */
struct cpi_figures {
	double interval_s;
	double oncpu_ns;
	double cycles, instructions; /* NaN where they do not count */
	double runq_avg_ns; /* NaN without waits */
};

/* Its sample: CPUs used and the signal's value (NaN where there is none). */
void cpi__sample(struct cpi_sample *s, const char *name, const struct cpi_figures *f,
		 enum cpi_signal sig);
/*
 * "CPI 1.379 above 1.014 (mean 0.957, sd 0.029 of 60 intervals) for 5
 * intervals", or the same of the run-queue wait in us. Returns snprintf's.
 */
int cpi__describe(const struct cpi_outlier *x, enum cpi_signal sig, char *buf, size_t len);

#endif
