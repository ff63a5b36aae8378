// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Statistics, the JSON reader, thresholds and verdicts of pmbpf compare.
 * `test_stats --table` prints the calibration and power of compare's test
 * by simulation (docs/ci.md).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "compare.h"
#include "compare_report.h"
#include "json_reader.h"
#include "stats.h"

static void test_summary(void)
{
	double x[] = { 2, 4, 4, 4, 5, 5, 7, 9 }, big[] = { 1e15 + 1, 1e15 + 2, 1e15 + 3 };
	double one[] = { 3 }, bad[] = { 1, NAN };
	struct summary s;

	stats__summary(x, 8, &s);
	CHECK_EQ_INT(s.n, 8);
	CHECK_NEAR(s.mean, 5, 1e-12);
	/* sample stddev: sqrt(32 / 7) */
	CHECK_NEAR(s.stddev, 2.138089935299395, 1e-12);
	CHECK_NEAR(s.rsd_pct, 42.7617987059879, 1e-9);
	CHECK_NEAR(s.min, 2, 0);
	CHECK_NEAR(s.max, 9, 0);
	/* large counts with a small spread: no cancellation */
	stats__summary(big, 3, &s);
	CHECK_NEAR(s.stddev, 1, 1e-6);
	stats__summary(one, 1, &s);
	CHECK_NEAR(s.mean, 3, 0);
	CHECK_NAN(s.stddev);
	CHECK_NAN(s.rsd_pct);
	stats__summary(bad, 2, &s);
	CHECK_NAN(s.mean);
	stats__summary(x, 0, &s);
	CHECK_NAN(s.mean);
	/* median 4.5; |x - 4.5| = 2.5 .5 .5 .5 .5 .5 2.5 4.5: MAD 0.5 */
	stats__summary(x, 8, &s);
	CHECK_NEAR(s.median, 4.5, 0);
	CHECK_NEAR(s.robust_rsd_pct, 1.4826 * 0.5 / 4.5 * 100, 1e-9);
	stats__summary(one, 1, &s);
	CHECK_NEAR(s.median, 3, 0);
	CHECK_NAN(s.robust_rsd_pct);
}

static void test_rng(void)
{
	struct rng a, b;
	int i, hist[10] = {};

	rng__seed(&a, 42);
	rng__seed(&b, 42);
	for (i = 0; i < 1000; i++)
		CHECK_EQ_U64(rng__next(&a), rng__next(&b));
	/* splitmix64's published first output for seed 0 */
	rng__seed(&a, 0);
	CHECK_EQ_U64(rng__next(&a), 0xe220a8397b1dcdafULL);
	rng__seed(&a, 7);
	for (i = 0; i < 100000; i++)
		hist[rng__below(&a, 10)]++;
	for (i = 0; i < 10; i++)
		CHECK(hist[i] > 9500 && hist[i] < 10500);
}

static void test_rank_change(void)
{
	double a[] = { 100, 100, 100, 100, 100 }, b[] = { 101, 101, 101, 101, 101 };
	double n1[] = { 98, 102, 99, 101, 100, 100, 97, 103 };
	double n2[] = { 99, 101, 100, 102, 98, 100, 103, 97 };
	double far[] = { 120, 122, 119, 121, 118, 120, 123, 117 };
	double zero[] = { 0, 0 }, some[] = { 1, 2 };
	struct change c, c2;

	/* exact counts: every difference is the change, and it is significant */
	CHECK_EQ_INT(stats__rank_change(a, 5, b, 5, 0.95, &c), 0);
	CHECK_NEAR(c.pct, 1.0, 1e-9);
	CHECK_NEAR(c.lo_pct, 1.0, 1e-9);
	CHECK_NEAR(c.hi_pct, 1.0, 1e-9);
	CHECK(c.significant);
	/* A/A with noise: 8 vs 8 leaves out 13 of the 64 differences at each end */
	CHECK_EQ_INT(stats__rank_change(n1, 8, n2, 8, 0.95, &c), 0);
	CHECK_NEAR(c.pct, 0, 1e-9);
	CHECK_NEAR(c.lo_pct, -2, 1e-9);
	CHECK_NEAR(c.hi_pct, 2, 1e-9);
	CHECK(!c.significant);
	/* +20% with 2% noise: the 14th smallest and largest of far - n1 */
	CHECK_EQ_INT(stats__rank_change(n1, 8, far, 8, 0.95, &c), 0);
	CHECK_NEAR(c.pct, 20, 1e-9);
	CHECK_NEAR(c.lo_pct, 18, 1e-9);
	CHECK_NEAR(c.hi_pct, 22, 1e-9);
	CHECK(c.significant);
	/* the other way round: the same interval, negated (base median 120) */
	CHECK_EQ_INT(stats__rank_change(far, 8, n1, 8, 0.95, &c2), 0);
	CHECK_NEAR(c2.lo_pct, -22 / 1.2, 1e-9);
	CHECK_NEAR(c2.hi_pct, -18 / 1.2, 1e-9);
	/* one disturbed run (a page-cache miss) in an A/A pair: no change */
	{
		double base[] = { 3086, 3085, 3085, 3084, 3085 };
		double aa[] = { 3213, 3086, 3086, 3086, 3086 };

		CHECK_EQ_INT(stats__rank_change(base, 5, aa, 5, 0.95, &c), 0);
		CHECK_NEAR(c.pct, 1.0 / 3085 * 100, 1e-9);
		/* the 3rd of 25 differences is 0 (four are), the 23rd 3213 - 3085 */
		CHECK_NEAR(c.lo_pct, 0, 0);
		CHECK_NEAR(c.hi_pct, 128.0 / 3085 * 100, 1e-9);
		CHECK(!c.significant);
	}
	/* 2 vs 2 and 3 vs 3: no interval at 95%, however far apart */
	CHECK_EQ_INT(stats__rank_change(a, 3, far, 3, 0.95, &c), 0);
	CHECK_NEAR(c.pct, 20, 1e-9);
	CHECK(isinf(c.lo_pct) && c.lo_pct < 0 && isinf(c.hi_pct) && c.hi_pct > 0);
	CHECK(!c.significant);
	/* 3 vs 5 can: one split in 56 */
	CHECK_EQ_INT(stats__rank_change(a, 3, far, 5, 0.95, &c), 0);
	CHECK_NEAR(c.lo_pct, 18, 1e-9);
	CHECK_NEAR(c.hi_pct, 22, 1e-9);
	CHECK(c.significant);
	/* bad input */
	CHECK_EQ_INT(stats__rank_change(a, 1, b, 5, 0.95, &c), -EINVAL);
	CHECK_EQ_INT(stats__rank_change(a, 5, b, 5, 1, &c), -EINVAL);
	CHECK_EQ_INT(stats__rank_change(zero, 2, some, 2, 0.95, &c), -EDOM);
	CHECK_EQ_INT(stats__rank_change(zero, 2, zero, 2, 0.95, &c), 0);
	CHECK_NEAR(c.pct, 0, 0);
}

/* Splits of na + nb ranks with fewer than k pairs (a above b): by enumeration. */
static double brute_tail(int na, int nb, int k)
{
	uint32_t mask, all = 1u << (na + nb);
	double below = 0, total = 0;

	for (mask = 0; mask < all; mask++) {
		int i, seen_b = 0, u = 0;

		if (__builtin_popcount(mask) != na)
			continue;
		/* rank i is a's when its bit is set; it is above the b's below it */
		for (i = 0; i < na + nb; i++) {
			if (mask >> i & 1)
				u += seen_b;
			else
				seen_b++;
		}
		total++;
		below += u < k;
	}
	return below / total;
}

static void test_rank_cut(void)
{
	int na, nb, k;

	/* the largest k with P(U < k) <= 2.5%, by enumeration up to 8 vs 8 */
	for (na = 1; na <= 8; na++)
		for (nb = 1; nb <= 8; nb++) {
			k = stats__rank_cut(na, nb, 0.95);
			CHECK(brute_tail(na, nb, k) <= 0.025);
			CHECK(brute_tail(na, nb, k + 1) > 0.025);
		}
	/* published critical values (two-sided 5%): U <= 2 at 5 vs 5, 37 at 12 vs 12 */
	CHECK_EQ_INT(stats__rank_cut(5, 5, 0.95), 3);
	CHECK_EQ_INT(stats__rank_cut(12, 12, 0.95), 38);
	CHECK_EQ_INT(stats__rank_cut(3, 3, 0.95), 0);
	CHECK_EQ_INT(stats__rank_cut(4, 4, 0.95), 1);
	CHECK_EQ_INT(stats__rank_cut(2, 8, 0.95), 1);
	/* exact at 50 vs 50 (966); the normal approximation beyond errs wide */
	CHECK_EQ_INT(stats__rank_cut(50, 50, 0.95), 966);
	CHECK_EQ_INT(stats__rank_cut(51, 51, 0.95), 1008);
	CHECK_EQ_INT(stats__rank_cut(5, 5, 1), 0);
	/* runs per side for an interval at all */
	CHECK_EQ_INT(stats__rank_runs_needed(2, 2, 0.95), 4);
	CHECK_EQ_INT(stats__rank_runs_needed(3, 3, 0.95), 4);
	CHECK_EQ_INT(stats__rank_runs_needed(3, 4, 0.95), 4);
	CHECK_EQ_INT(stats__rank_runs_needed(10, 10, 0.95), 2); /* enough already */
	CHECK_EQ_INT(stats__rank_runs_needed(2, 5, 0.95), 3);
	CHECK_EQ_INT(stats__rank_runs_needed(2, 8, 0.95), 2);
	CHECK_EQ_INT(stats__rank_runs_needed(2, 2, 0.99), 5);
}

/* A/A and A/B pairs of independent runs, as pmbpf compare sees them. */
static struct rng sim_rng;

static double sim_uniform(void)
{
	return ((rng__next(&sim_rng) >> 11) + 0.5) * 0x1p-53;
}

static double sim_normal(void)
{
	double u = sim_uniform(), v = sim_uniform();

	return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

enum sim_kind {
	SIM_NORMAL, /* 2% spread: time on a quiet runner */
	SIM_LOGNORMAL, /* 30% spread, skewed */
	SIM_COUNTS, /* page faults: 3084..3088, one run in 20 disturbed by +40..+130 */
};

static double sim_draw(enum sim_kind kind, double shift)
{
	double v;

	switch (kind) {
	case SIM_NORMAL:
		return (100 + 2 * sim_normal()) * (1 + shift);
	case SIM_LOGNORMAL:
		return 100 * exp(0.3 * sim_normal()) * (1 + shift);
	case SIM_COUNTS:
		v = 3084 + (int)(sim_uniform() * 5);
		if (sim_uniform() < 0.05)
			v += 40 + (int)(sim_uniform() * 91);
		return v * (1 + shift);
	}
	return NAN;
}

/* Percent of pairs of n runs a side whose interval excludes 0. */
static double sim_significant_pct(enum sim_kind kind, int n, double shift, int pairs)
{
	double a[64], b[64];
	int t, i, hits = 0;

	for (t = 0; t < pairs; t++) {
		struct change c;

		for (i = 0; i < n; i++)
			a[i] = sim_draw(kind, 0);
		for (i = 0; i < n; i++)
			b[i] = sim_draw(kind, shift);
		if (stats__rank_change(a, n, b, n, 0.95, &c))
			return NAN;
		hits += c.significant;
	}
	return 100.0 * hits / pairs;
}

/*
 * The false-significance rate on A/A pairs is the test's exact size at
 * every n: 0 at 2 and 3 runs (no verdict then), 2.9% at 4, 3.2% at 5, up
 * to 5%; it was 34%, 11% and 7.8% at 2, 3 and 4 runs with the percentile
 * bootstrap of the median. 2000 pairs per n, fixed seed.
 */
static void test_rank_calibration(void)
{
	int n, pairs = 2000;

	rng__seed(&sim_rng, 14);
	for (n = 2; n <= 10; n++) {
		double pct = sim_significant_pct(SIM_NORMAL, n, 0, pairs);
		/* the exact size: both tails of U, by enumeration */
		double size = 200 * brute_tail(n, n, stats__rank_cut(n, n, 0.95));
		double sd = sqrt(size * (100 - size) / pairs);

		CHECK(pct <= 6);
		CHECK(size <= 5);
		if (n <= 3)
			CHECK_NEAR(pct, 0, 0);
		else /* the simulation agrees with it, within 4 standard errors */
			CHECK_NEAR(pct, size, 4 * sd);
	}
	/* skewed runs alike: the test assumes no distribution */
	for (n = 4; n <= 10; n += 3)
		CHECK(sim_significant_pct(SIM_LOGNORMAL, n, 0, pairs) <= 6);
	/* power: a 10% shift at 2% spread, found at 4 and 5 runs a side */
	CHECK(sim_significant_pct(SIM_NORMAL, 4, 0.10, pairs) >= 95);
	CHECK(sim_significant_pct(SIM_NORMAL, 5, 0.10, pairs) >= 95);
	/* +1% page faults with disturbed runs: 7 runs a side tolerate one */
	CHECK(sim_significant_pct(SIM_COUNTS, 7, 0.01, pairs) >= 90);
	CHECK(sim_significant_pct(SIM_COUNTS, 7, 0, pairs) <= 5);
}

/*
 * test_stats --table: the simulation behind docs/ci.md, 4000 pairs per cell
 * (percent of pairs significant: A/A, then shifts).
 */
static void print_calibration_table(void)
{
	static const int ns[] = { 2, 3, 4, 5, 6, 7, 8, 10, 15, 20, 30 };
	static const struct {
		enum sim_kind kind;
		double shift;
	} cols[] = {
		{ SIM_NORMAL, 0 },    { SIM_LOGNORMAL, 0 }, { SIM_COUNTS, 0 },
		{ SIM_NORMAL, 0.02 }, { SIM_NORMAL, 0.04 }, { SIM_NORMAL, 0.10 },
		{ SIM_COUNTS, 0.01 },
	};
	size_t i, j;

	rng__seed(&sim_rng, 42);
	printf("| runs | A/A normal 2%% | A/A lognormal 30%% | A/A counts | +2%% at 2%% | "
	       "+4%% at 2%% | +10%% at 2%% | +1%% counts |\n");
	for (i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		printf("| %d |", ns[i]);
		for (j = 0; j < sizeof(cols) / sizeof(cols[0]); j++)
			printf(" %.*f%% |", cols[j].shift ? 1 : 2,
			       sim_significant_pct(cols[j].kind, ns[i], cols[j].shift, 4000));
		printf("\n");
		fflush(stdout);
	}
}

static void test_json_reader(void)
{
	const char *doc =
		" {\"a\": [1, -2.5e3, true, null], \"s\": \"x\\u00e9\\n\\ud83d\\ude00\"} ";
	struct json_value v;
	char err[128];

	CHECK_EQ_INT(json__parse(doc, strlen(doc), &v, err, sizeof(err)), 0);
	CHECK_EQ_INT(v.type, JSON_OBJECT);
	CHECK_EQ_INT(json__get(&v, "a")->len, 4);
	CHECK_NEAR(json__get(&v, "a")->items[1].number, -2500, 0);
	CHECK_EQ_INT(json__get(&v, "a")->items[3].type, JSON_NULL);
	CHECK_STR(json__str(json__get(&v, "s")), "x\xc3\xa9\n\xf0\x9f\x98\x80");
	CHECK(!json__get(&v, "none"));
	json__free(&v);

	CHECK_EQ_INT(json__parse("", 0, &v, err, sizeof(err)), -EINVAL);
	CHECK_SUBSTR(err, "empty");
	CHECK_EQ_INT(json__parse("{\"a\": [1, 2", 11, &v, err, sizeof(err)), -EINVAL);
	CHECK_SUBSTR(err, "truncated");
	CHECK_EQ_INT(json__parse("{\"a\": \"x", 8, &v, err, sizeof(err)), -EINVAL);
	CHECK_EQ_INT(json__parse("{} {}", 5, &v, err, sizeof(err)), -EINVAL);
	CHECK_EQ_INT(json__parse("[1,]", 4, &v, err, sizeof(err)), -EINVAL);
	CHECK_EQ_INT(json__parse("tru", 3, &v, err, sizeof(err)), -EINVAL);
	CHECK_EQ_INT(json__parse("[.5]", 4, &v, err, sizeof(err)), -EINVAL);
	/* found by tests/fuzz/fuzz_json.c: a number past double's range was infinity */
	CHECK_EQ_INT(json__parse("1e999", 5, &v, err, sizeof(err)), -EINVAL);
	CHECK_SUBSTR(err, "out of range");
	CHECK_EQ_INT(json__parse("[-1e400]", 8, &v, err, sizeof(err)), -EINVAL);
	CHECK_SUBSTR(err, "out of range");
	CHECK_EQ_INT(json__parse("[1e-400]", 8, &v, err, sizeof(err)), 0);
	json__free(&v);
	CHECK_EQ_INT(json__parse("1\0", 2, &v, err, sizeof(err)), -EINVAL);
}

static void test_thresholds(void)
{
	struct threshold t;

	CHECK_EQ_INT(threshold__parse("page-faults=+0.5%", &t), 0);
	CHECK_STR(t.name, "page-faults");
	CHECK_NEAR(t.pct, 0.5, 0);
	CHECK_EQ_INT(threshold__parse("ipc=-3%", &t), 0);
	CHECK_NEAR(t.pct, -3, 0);
	/* no sign: the metric's own direction */
	CHECK_EQ_INT(threshold__parse("ipc=2", &t), 0);
	CHECK_NEAR(t.pct, -2, 0);
	CHECK_EQ_INT(threshold__parse("cycles=2%", &t), 0);
	CHECK_NEAR(t.pct, 2, 0);
	CHECK_EQ_INT(threshold__parse("cycles", &t), -EINVAL);
	CHECK_EQ_INT(threshold__parse("=1%", &t), -EINVAL);
	CHECK_EQ_INT(threshold__parse("cycles=0%", &t), -EINVAL);
	CHECK_EQ_INT(threshold__parse("cycles=x%", &t), -EINVAL);
	CHECK_EQ_INT(threshold__parse("cycles=1%%", &t), -EINVAL);
	CHECK_EQ_INT(threshold__parse("cycles=nan", &t), -EINVAL);
	CHECK_NEAR(threshold__default("instructions"), 1, 0);
	CHECK_NEAR(threshold__default("ipc"), -5, 0);
	CHECK_NEAR(threshold__default("LLC-load-misses"), 15, 0);
	CHECK_NEAR(threshold__default("LLC-load-misses-mpki"), 15, 0);
	CHECK_NEAR(threshold__default("wall-time"), 10, 0);
	CHECK_NEAR(threshold__default("r01c2"), 10, 0);
}

static void fill(struct series *s, const char *label, int n, const char *name, const double *v)
{
	struct metric_col *c;
	int i;

	if (!s->label) {
		s->label = strdup(label);
		s->command = strdup("cmd");
		s->n = n;
	}
	c = series__add(s, name, false);
	for (i = 0; i < n; i++)
		c->v[i] = v[i];
}

static void test_verdicts(void)
{
	double pf_a[] = { 10000, 10001, 10000, 10002, 10000 };
	double pf_b[] = { 10089, 10091, 10089, 10088, 10090 }; /* +0.9% */
	double ipc_a[] = { 1.00, 1.00, 1.00, 1.00, 1.00 };
	double ipc_b[] = { 0.90, 0.90, 0.90, 0.90, 0.90 }; /* -10%: worse */
	double t_a[] = { 100e6, 130e6, 80e6, 120e6, 70e6 }; /* RSD 25% */
	double t_b[] = { 90e6, 140e6, 85e6, 110e6, 75e6 };
	double ins_a[] = { 1e6, 1e6, 1e6, 1e6, 1e6 };
	double ins_b[] = { 9e5, 9e5, 9e5, 9e5, 9e5 }; /* -10%: better */
	struct series a = {}, b = {};
	struct threshold th[2];
	struct compare_result *r = malloc(sizeof(*r));
	char err[256];

	fill(&a, "base.json", 5, "page-faults", pf_a);
	fill(&b, "new.json", 5, "page-faults", pf_b);
	fill(&a, "", 5, "ipc", ipc_a);
	fill(&b, "", 5, "ipc", ipc_b);
	fill(&a, "", 5, "task-clock", t_a);
	fill(&b, "", 5, "task-clock", t_b);
	fill(&a, "", 5, "instructions", ins_a);
	fill(&b, "", 5, "instructions", ins_b);
	fill(&a, "", 5, "cycles", ins_a); /* only in base */

	/* default page-faults threshold +1%: +0.9% (all of its interval) passes */
	CHECK_EQ_INT(compare__series(&a, &b, NULL, 0, r, err, sizeof(err)), 0);
	CHECK_EQ_INT(r->nr_rows, 4);
	CHECK_STR(r->rows[0].name, "page-faults");
	CHECK_EQ_INT(r->rows[0].verdict, VERDICT_NONE);
	CHECK_EQ_INT(r->rows[1].verdict, VERDICT_REGRESSION); /* ipc -10% */
	/* its interval holds +10% and 0: more runs could tell */
	CHECK_EQ_INT(r->rows[2].verdict, VERDICT_NOISY);
	CHECK(r->rows[2].runs_needed > 5);
	CHECK_EQ_INT(r->rows[3].verdict, VERDICT_IMPROVEMENT);
	CHECK_SUBSTR(r->dropped, "cycles (only in base)");
	CHECK_EQ_INT(r->counts[VERDICT_REGRESSION], 1);

	CHECK_EQ_INT(threshold__parse("page-faults=+0.5%", &th[0]), 0);
	CHECK_EQ_INT(compare__series(&a, &b, th, 1, r, err, sizeof(err)), 0);
	CHECK_EQ_INT(r->rows[0].verdict, VERDICT_REGRESSION);
	CHECK_EQ_INT(r->counts[VERDICT_REGRESSION], 2);

	/* a threshold must name a compared metric */
	CHECK_EQ_INT(threshold__parse("page-fault=+0.5%", &th[1]), 0);
	CHECK_EQ_INT(compare__series(&a, &b, th + 1, 1, r, err, sizeof(err)), -EINVAL);
	CHECK_SUBSTR(err, "page-fault");

	/*
	 * 3 runs a side: ipc's -10% is no regression but "too few runs: 1
	 * more needed" (3 vs 3 cannot reach 95%), and the interval unbounded
	 */
	a.n = b.n = 3;
	CHECK_EQ_INT(compare__series(&a, &b, NULL, 0, r, err, sizeof(err)), 0);
	CHECK_EQ_INT(r->rows[1].verdict, VERDICT_FEW);
	CHECK_EQ_INT(r->rows[1].runs_needed, 4);
	CHECK(isinf(r->rows[1].change.lo_pct) && !r->rows[1].change.significant);
	CHECK_NEAR(r->rows[1].change.pct, -10, 1e-9);
	CHECK_EQ_INT(r->counts[VERDICT_FEW], 4);
	CHECK_EQ_INT(r->counts[VERDICT_REGRESSION], 0);
	{
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);

		compare__print(f, COMPARE_TABLE, r);
		compare__print(f, COMPARE_MARKDOWN, r);
		compare__print(f, COMPARE_JSON, r);
		fclose(f);
		CHECK_SUBSTR(text, "-10.00% [-inf, +inf]");
		CHECK_SUBSTR(text, "too few runs: 1 more needed\n");
		CHECK_SUBSTR(text, "0 no significant change, 0 too noisy, 4 too few runs\n");
		CHECK_SUBSTR(text, "| -10.00% | -inf … +inf | -5% | too few runs: 1 more needed |");
		CHECK_SUBSTR(text,
			     "\"ci_low_pct\":null,\"ci_high_pct\":null,\"significant\":false");
		CHECK_SUBSTR(text, "\"verdict\":\"too few runs\"");
		CHECK_SUBSTR(text, "\"too_noisy\":0,\"too_few_runs\":4}");
		free(text);
	}
	/* 2 vs 5 runs: the 2 need 1 more (3 vs 5 can) */
	a.n = 2;
	b.n = 5;
	CHECK_EQ_INT(compare__series(&a, &b, NULL, 0, r, err, sizeof(err)), 0);
	CHECK_EQ_INT(r->rows[1].verdict, VERDICT_FEW);
	CHECK_EQ_INT(r->rows[1].runs_needed, 3);
	/* 4 runs a side: a verdict again */
	a.n = b.n = 4;
	CHECK_EQ_INT(compare__series(&a, &b, NULL, 0, r, err, sizeof(err)), 0);
	CHECK_EQ_INT(r->rows[1].verdict, VERDICT_REGRESSION);
	CHECK_EQ_INT(r->counts[VERDICT_FEW], 0);
	a.n = b.n = 5;

	/* fewer than 2 runs */
	b.n = 1;
	CHECK_EQ_INT(compare__series(&a, &b, NULL, 0, r, err, sizeof(err)), -EINVAL);
	CHECK_SUBSTR(err, "new.json has 1 run");
	series__free(&a);
	series__free(&b);
	free(r);
}

static void test_series_json(void)
{
	const char *ok = "{\"type\":\"stat\",\"schema\":1,\"command\":[\"a\",\"b\"],"
			 "\"units\":{\"wall-time\":\"ns\"},\"runs\":["
			 "{\"group\":\"A\",\"metrics\":{\"wall-time\":10,\"ipc\":null}},"
			 "{\"group\":\"B\",\"metrics\":{\"wall-time\":99}},"
			 "{\"group\":\"A\",\"metrics\":{\"wall-time\":12,\"ipc\":1.5}}]}";
	const char *v2 = "{\"type\":\"stat\",\"schema\":2,\"command\":[],\"runs\":[]}";
	struct series s = {};
	char err[256];

	CHECK_EQ_INT(series__from_json(&s, ok, strlen(ok), "A", err, sizeof(err)), 0);
	CHECK_EQ_INT(s.n, 2);
	CHECK_STR(s.command, "a b");
	CHECK(series__find(&s, "wall-time")->time);
	CHECK_NEAR(series__find(&s, "wall-time")->v[1], 12, 0);
	CHECK_NAN(series__find(&s, "ipc")->v[0]);
	series__free(&s);
	CHECK_EQ_INT(series__from_json(&s, v2, strlen(v2), "A", err, sizeof(err)), -EINVAL);
	CHECK_SUBSTR(err, "schema version 2");
	series__free(&s);
	CHECK_EQ_INT(series__from_json(&s, ok, 40, "A", err, sizeof(err)), -EINVAL);
	CHECK_SUBSTR(err, "not a complete JSON document");
	series__free(&s);
	CHECK_EQ_INT(series__from_json(&s, "{\"type\":\"command\"}", 18, "A", err, sizeof(err)),
		     -EINVAL);
	CHECK_SUBSTR(err, "not the output of pmbpf stat");
	series__free(&s);
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "--table")) {
		print_calibration_table();
		return 0;
	}
	test_summary();
	test_rng();
	test_rank_change();
	test_rank_cut();
	test_rank_calibration();
	test_json_reader();
	test_thresholds();
	test_verdicts();
	test_series_json();
	return check_summary();
}
