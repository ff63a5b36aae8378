/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Statistics over repeated runs (pmbpf stat -r, pmbpf compare): summaries,
 * a rank-based confidence interval for the change between two series, and
 * how many runs a threshold needs. Pure functions: no I/O, no randomness
 * (the RNG, fixed-seed, is for tests and simulations).
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

struct change {
	double pct; /* (median(b) / median(a) - 1) x 100 */
	/*
	 * Confidence interval of the shift from a to b, in percent of
	 * median(a); -inf and +inf when there are too few runs for the level.
	 */
	double lo_pct, hi_pct;
	bool significant; /* the interval excludes 0 */
};

/*
 * Change of the median from a (base) to b (new), and a distribution-free
 * confidence interval at level (0.95) for the shift between them: the
 * interval that inverts the exact two-sided Mann-Whitney (Wilcoxon
 * rank-sum) test. Of the na x nb differences b[j] - a[i], sorted, it runs
 * from the k-th smallest to the k-th largest, k = stats__rank_cut(); the
 * change is significant when it excludes 0, and so when the test rejects
 * "no change" at 1 - level (where values tie, the closed interval is the
 * more careful of the two). Under no change (both sides from one
 * distribution, whatever it is, runs independent) that happens at most
 * 1 - level of the time at every na and nb, where a percentile bootstrap of
 * the median was far too narrow below 5 runs (34% at 2 runs). Ranks, like
 * medians: of a run disturbed by the machine (a page-cache miss, a
 * preemption) only its rank counts, not how far off it is. No randomness:
 * the same values always give the same result. When a side has so few runs
 * that no split reaches the level (2 vs 2 or 3 vs 3 at 0.95), the interval
 * is -inf..+inf and nothing is significant: see stats__rank_runs_needed().
 * Returns -EINVAL when na or nb < 2, level is not in (0, 1) or a value is
 * not finite, -EDOM when median(a) is 0 and median(b) is not, -ENOMEM.
 */
int stats__rank_change(const double *a, int na, const double *b, int nb, double level,
		       struct change *c);

/*
 * The rank, from either end, of the sorted pairwise differences that bound
 * a confidence interval at level (k - 1 are left out at each end): the
 * largest k with P(U < k) <= (1 - level) / 2, U the Mann-Whitney count of
 * pairs (a above b) when both sides come from one distribution, all
 * C(na + nb, na) splits of the runs equally likely. Exact up to 2500 pairs
 * (na x nb), beyond the normal approximation with continuity correction
 * (U has lighter tails than the normal: it errs on the wide side). 0 when
 * no k reaches the level: 1 / C(na + nb, na) > (1 - level) / 2. -ENOMEM.
 */
int stats__rank_cut(int na, int nb, double level);

/*
 * Runs per side with which stats__rank_change() can reach level: the
 * smallest m (at least 2) such that max(na, m) against max(nb, m) runs
 * can; at most min(na, nb) when na against nb can already. At 0.95: 4 when
 * both sides have fewer (4 vs 4: 1/70 <= 2.5%; 3 vs 3 only 1/20), fewer
 * for the smaller side when the other has more (3 vs 5, 2 vs 8).
 */
int stats__rank_runs_needed(int na, int nb, double level);

/*
 * Runs per side with which a confidence interval [lo, hi] of a change
 * (estimate pct), now from na against nb runs, would no longer hold bound:
 * its half on the bound's side shrinks as sqrt(1/na + 1/nb), with m runs a
 * side as sqrt(2/m), while the estimate stays. An estimate, not a promise
 * (the estimate moves with more runs too); 1000000 when the estimate is on
 * the bound (no number of runs will do) or beyond that.
 */
int stats__runs_to_exclude(double pct, double lo, double hi, double bound, int na, int nb);

#endif
