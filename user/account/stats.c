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

/*
 * Pairs (na x nb) up to which the null distribution of the Mann-Whitney
 * count is computed exactly: at most 2500^2 / 2 additions. Beyond, the
 * normal approximation: one difference wider at 50 vs 51 runs.
 */
#define RANK_EXACT_PAIRS 2500

/* C(na + nb, na), in floating point: up to 10^300 it is exact enough. */
static double splits(int na, int nb)
{
	double c = 1;
	int i;

	for (i = 1; i <= na; i++)
		c = c * (nb + i) / i;
	return c;
}

/* z with P(Z > z) = p for a standard normal Z (0 < p < 0.5), by bisection. */
static double normal_upper(double p)
{
	double lo = 0, hi = 40;
	int i;

	for (i = 0; i < 100; i++) {
		double mid = (lo + hi) / 2;

		if (0.5 * erfc(mid / M_SQRT2) > p)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

int stats__rank_cut(int na, int nb, double level)
{
	double tail = (1 - level) / 2, total, cum = 0, *f;
	int m, n, u, half, k = 0;

	if (na < 1 || nb < 1 || !(level > 0 && level < 1))
		return 0;
	total = splits(na, nb);
	/* U = 0 is one split of all: below the tail, or no interval at all */
	if (1 / total > tail)
		return 0;
	if ((long)na * nb > RANK_EXACT_PAIRS) {
		double mu = na * (double)nb / 2;
		double sd = sqrt(na * (double)nb * (na + nb + 1) / 12);
		double u_max = floor(mu - 0.5 - normal_upper(tail) * sd);

		/* P(U <= u) ~ Phi((u + 0.5 - mu) / sd) <= tail for u <= u_max */
		return u_max < 0 ? 1 : (int)u_max + 1;
	}
	/*
	 * f[m][u]: the orderings of m values of a and n of b in which u pairs
	 * have the value of b below that of a. The largest value is either
	 * an a above all n values of b, or a b above nothing:
	 * f(m, n, u) = f(m - 1, n, u - n) + f(m, n - 1, u); in place over n.
	 * The tail is below the mean na nb / 2: half of the range will do.
	 */
	half = na * nb / 2;
	f = calloc((size_t)(na + 1) * (half + 1), sizeof(*f));
	if (!f)
		return -ENOMEM;
	for (m = 0; m <= na; m++)
		f[(size_t)m * (half + 1)] = 1;
	for (n = 1; n <= nb; n++)
		for (m = 1; m <= na; m++) {
			double *row = f + (size_t)m * (half + 1), *prev = row - (half + 1);

			for (u = n; u <= half; u++)
				row[u] += prev[u - n];
		}
	for (u = 0; u <= half; u++) {
		cum += f[(size_t)na * (half + 1) + u];
		if (cum / total > tail)
			break;
		k = u + 1;
	}
	free(f);
	return k;
}

int stats__rank_runs_needed(int na, int nb, double level)
{
	double tail = (1 - level) / 2;
	int m;

	if (!(level > 0 && level < 1))
		return INT32_MAX;
	for (m = 2; m < 1000000; m++)
		if (1 / splits(na > m ? na : m, nb > m ? nb : m) <= tail)
			return m;
	return 1000000;
}

int stats__rank_change(const double *a, int na, const double *b, int nb, double level,
		       struct change *c)
{
	struct summary sa, sb;
	size_t i, j, pairs;
	double *d, lo, hi;
	int k;

	c->pct = c->lo_pct = c->hi_pct = NAN;
	c->significant = false;
	if (na < 2 || nb < 2 || !(level > 0 && level < 1))
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
	k = stats__rank_cut(na, nb, level);
	if (k < 0)
		return k;
	if (!k) {
		/* too few runs for this level: the interval is everything */
		c->lo_pct = -INFINITY;
		c->hi_pct = INFINITY;
		return 0;
	}
	pairs = (size_t)na * nb;
	d = malloc(sizeof(*d) * pairs);
	if (!d)
		return -ENOMEM;
	for (i = 0; i < (size_t)na; i++)
		for (j = 0; j < (size_t)nb; j++)
			d[i * nb + j] = b[j] - a[i];
	qsort(d, pairs, sizeof(*d), cmp_double);
	lo = d[k - 1] / sa.median * 100;
	hi = d[pairs - k] / sa.median * 100;
	free(d);
	c->lo_pct = sa.median > 0 ? lo : hi;
	c->hi_pct = sa.median > 0 ? hi : lo;
	c->significant = c->lo_pct > 0 || c->hi_pct < 0;
	return 0;
}

int stats__runs_to_exclude(double pct, double lo, double hi, double bound, int na, int nb)
{
	/* the interval's end on the bound's side, and how far the estimate is from the bound */
	double half = pct < bound ? hi - pct : pct - lo, gap = fabs(pct - bound), m;

	if (na < 1 || nb < 1 || !isfinite(half) || !isfinite(gap))
		return 1000000;
	if (half <= gap)
		return na > nb ? na : nb; /* already off the bound */
	/* half ~ sqrt(1/na + 1/nb); at m a side sqrt(2/m) */
	m = ceil(2 / ((1.0 / na + 1.0 / nb) * (gap / half) * (gap / half)));
	if (!(m < 1000000))
		return 1000000;
	return (int)m;
}
