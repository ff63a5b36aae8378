// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "stats.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Median of x[0..n), reordering x. */
static double median_inplace(double *x, int n)
{
	qsort(x, n, sizeof(*x), cmp_double);
	return n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
}

static void robust(const double *x, int n, struct summary *s)
{
	double *tmp = malloc(sizeof(*tmp) * n);
	int i;

	if (!tmp)
		return;
	memcpy(tmp, x, sizeof(*tmp) * n);
	s->median = median_inplace(tmp, n);
	for (i = 0; i < n; i++)
		tmp[i] = fabs(x[i] - s->median);
	if (n >= 2 && s->median != 0)
		s->robust_rsd_pct = 1.4826 * median_inplace(tmp, n) / fabs(s->median) * 100;
	free(tmp);
}

void stats__summary(const double *x, int n, struct summary *s)
{
	double sum = 0, sq = 0;
	int i;

	s->n = n;
	s->mean = s->stddev = s->rsd_pct = s->min = s->max = NAN;
	s->median = s->robust_rsd_pct = NAN;
	for (i = 0; i < n; i++)
		if (!isfinite(x[i]))
			return;
	if (n < 1)
		return;
	s->min = s->max = x[0];
	for (i = 0; i < n; i++) {
		sum += x[i];
		if (x[i] < s->min)
			s->min = x[i];
		if (x[i] > s->max)
			s->max = x[i];
	}
	s->mean = sum / n;
	robust(x, n, s);
	if (n < 2)
		return;
	/* two passes: large counts with small spreads keep their precision */
	for (i = 0; i < n; i++)
		sq += (x[i] - s->mean) * (x[i] - s->mean);
	s->stddev = sqrt(sq / (n - 1));
	if (s->mean != 0)
		s->rsd_pct = s->stddev / fabs(s->mean) * 100;
}

void rng__seed(struct rng *r, uint64_t seed)
{
	r->state = seed;
}

uint64_t rng__next(struct rng *r)
{
	uint64_t z = (r->state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

uint32_t rng__below(struct rng *r, uint32_t n)
{
	/* multiply-shift: the bias for n < 2^16 is below 2^-16 */
	return (uint32_t)(((rng__next(r) >> 32) * (uint64_t)n) >> 32);
}

static double resample_median(struct rng *r, const double *x, int n, double *tmp)
{
	int i;

	for (i = 0; i < n; i++)
		tmp[i] = x[rng__below(r, (uint32_t)n)];
	return median_inplace(tmp, n);
}

/* The q-quantile of sorted x[0..n), interpolated between order statistics. */
static double quantile(const double *x, int n, double q)
{
	double pos = q * (n - 1);
	int i = (int)floor(pos);

	if (i >= n - 1)
		return x[n - 1];
	return x[i] + (pos - i) * (x[i + 1] - x[i]);
}

int stats__bootstrap_change(const double *a, int na, const double *b, int nb, double level,
			    int resamples, uint64_t seed, struct change *c)
{
	struct summary sa, sb;
	double *boot, *tmp;
	struct rng r;
	int i, k = 0;

	c->pct = c->lo_pct = c->hi_pct = NAN;
	c->significant = false;
	if (na < 2 || nb < 2 || resamples < 1)
		return -EINVAL;
	stats__summary(a, na, &sa);
	stats__summary(b, nb, &sb);
	if (!isfinite(sa.median) || !isfinite(sb.median))
		return -EINVAL;
	if (sa.median == 0) {
		if (sb.median != 0)
			return -EDOM;
		c->pct = c->lo_pct = c->hi_pct = 0;
		return 0;
	}
	c->pct = (sb.median / sa.median - 1) * 100;
	boot = malloc(sizeof(*boot) * resamples);
	tmp = malloc(sizeof(*tmp) * (na > nb ? na : nb));
	if (!boot || !tmp) {
		free(boot);
		free(tmp);
		return -ENOMEM;
	}
	rng__seed(&r, seed);
	for (i = 0; i < resamples; i++) {
		double ma = resample_median(&r, a, na, tmp);
		double mb = resample_median(&r, b, nb, tmp);

		/* a resample of a base whose values are all 0 has no ratio */
		if (ma != 0)
			boot[k++] = (mb / ma - 1) * 100;
	}
	free(tmp);
	if (!k) {
		free(boot);
		return -EDOM;
	}
	qsort(boot, k, sizeof(*boot), cmp_double);
	c->lo_pct = quantile(boot, k, (1 - level) / 2);
	c->hi_pct = quantile(boot, k, 1 - (1 - level) / 2);
	c->significant = c->lo_pct > 0 || c->hi_pct < 0;
	free(boot);
	return 0;
}

int stats__runs_needed(double rsd_a_pct, double rsd_b_pct, double threshold_pct)
{
	const double z = 1.959964 + 0.841621; /* two-sided 5%, power 80% */
	double var = (rsd_a_pct * rsd_a_pct + rsd_b_pct * rsd_b_pct) / 2, n;
	double t = fabs(threshold_pct);

	if (!isfinite(var) || var == 0)
		return 2;
	if (t == 0)
		return INT32_MAX;
	n = ceil(2 * z * z * var / (t * t) * M_PI / 2);
	if (n > 1e6)
		return 1000000;
	return n < 2 ? 2 : (int)n;
}
