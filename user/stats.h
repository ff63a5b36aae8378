/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Statistics over repeated runs (pmbpf stat -r, pmbpf compare): summaries,
 * a bootstrap confidence interval for the change of a mean, and how many
 * runs a threshold needs. Pure functions: no I/O, a fixed-seed RNG.
 */
#ifndef __PMBPF_STATS_H
#define __PMBPF_STATS_H

#include <stdbool.h>
#include <stdint.h>

struct summary {
	int n;
	double mean;
	double stddev; /* sample standard deviation (n - 1); NaN when n < 2 */
	double rsd_pct; /* stddev / |mean| x 100; NaN when n < 2 or the mean is 0 */
	double min, max;
	double median;
	/*
	 * 1.4826 x median absolute deviation / |median| x 100: the RSD of a
	 * normal sample, but one disturbed run does not move it. NaN when n < 2
	 * or the median is 0.
	 */
	double robust_rsd_pct;
};

/* Summary of x[0..n); NaN everywhere when n is 0 or any value is not finite. */
void stats__summary(const double *x, int n, struct summary *s);

/* splitmix64: small, fast, and the same sequence everywhere. */
struct rng {
	uint64_t state;
};

void rng__seed(struct rng *r, uint64_t seed);
uint64_t rng__next(struct rng *r);
/* Uniform in [0, n). */
uint32_t rng__below(struct rng *r, uint32_t n);

#define STATS_BOOTSTRAP_RESAMPLES 4000
#define STATS_BOOTSTRAP_SEED	  0x706d627066ULL /* "pmbpf" */

struct change {
	double pct; /* (median(b) / median(a) - 1) x 100 */
	double lo_pct, hi_pct; /* confidence interval of pct */
	bool significant; /* the interval excludes 0 */
};

/*
 * Change of the median from a (base) to b (new), with a percentile bootstrap
 * confidence interval at level (0.95): each resample draws na values from a
 * and nb from b with replacement. Medians, not means: one run disturbed by
 * the machine (a page-cache miss, a preemption) moves a mean of 5 runs by a
 * fifth of its excess, a median not at all. Deterministic for a given seed.
 * Returns -EINVAL when na or nb < 2 or a value is not finite, -EDOM when
 * median(a) is 0 and median(b) is not.
 */
int stats__bootstrap_change(const double *a, int na, const double *b, int nb, double level,
			    int resamples, uint64_t seed, struct change *c);

/*
 * Runs per side needed to detect a relative change of threshold_pct with a
 * two-sided test at 5% and 80% power, for the given relative standard
 * deviations (percent) of both sides: 2 (1.96 + 0.84)^2 s^2 / t^2 with s^2
 * the mean of both variances, times pi/2 because a median needs that many
 * more runs than a mean for the same precision. At least 2.
 */
int stats__runs_needed(double rsd_a_pct, double rsd_b_pct, double threshold_pct);

#endif
