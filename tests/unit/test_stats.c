// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Statistics, the JSON reader, thresholds and verdicts of pmbpf compare. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "compare.h"
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

static void test_bootstrap(void)
{
	double a[] = { 100, 100, 100, 100, 100 }, b[] = { 101, 101, 101, 101, 101 };
	double n1[] = { 98, 102, 99, 101, 100, 100, 97, 103 };
	double n2[] = { 99, 101, 100, 102, 98, 100, 103, 97 };
	double far[] = { 120, 122, 119, 121, 118, 120, 123, 117 };
	double zero[] = { 0, 0 }, some[] = { 1, 2 };
	struct change c, c2;

	/* exact counts: the interval is the point, and significant */
	CHECK_EQ_INT(stats__bootstrap_change(a, 5, b, 5, 0.95, 2000, 1, &c), 0);
	CHECK_NEAR(c.pct, 1.0, 1e-9);
	CHECK_NEAR(c.lo_pct, 1.0, 1e-9);
	CHECK_NEAR(c.hi_pct, 1.0, 1e-9);
	CHECK(c.significant);
	/* A/A with noise: the interval holds 0 */
	CHECK_EQ_INT(stats__bootstrap_change(n1, 8, n2, 8, 0.95, 10000, 1, &c), 0);
	CHECK_NEAR(c.pct, 0, 1e-9);
	CHECK(c.lo_pct < 0 && c.hi_pct > 0);
	CHECK(!c.significant);
	/* +20% with 2% noise: significant, interval around it */
	CHECK_EQ_INT(stats__bootstrap_change(n1, 8, far, 8, 0.95, 10000, 1, &c), 0);
	CHECK_NEAR(c.pct, 20, 1e-9);
	CHECK(c.lo_pct > 17 && c.hi_pct < 23 && c.significant);
	/* deterministic for a seed */
	CHECK_EQ_INT(stats__bootstrap_change(n1, 8, far, 8, 0.95, 10000, 1, &c2), 0);
	CHECK_NEAR(c.lo_pct, c2.lo_pct, 0);
	CHECK_NEAR(c.hi_pct, c2.hi_pct, 0);
	/* one disturbed run (a page-cache miss) in an A/A pair: no change */
	{
		double base[] = { 3086, 3085, 3085, 3084, 3085 };
		double aa[] = { 3213, 3086, 3086, 3086, 3086 };

		CHECK_EQ_INT(stats__bootstrap_change(base, 5, aa, 5, 0.95, 4000, 1, &c), 0);
		CHECK_NEAR(c.pct, 1.0 / 3085 * 100, 1e-9);
		CHECK(c.lo_pct < 0.1);
	}
	/* bad input */
	CHECK_EQ_INT(stats__bootstrap_change(a, 1, b, 5, 0.95, 100, 1, &c), -EINVAL);
	CHECK_EQ_INT(stats__bootstrap_change(zero, 2, some, 2, 0.95, 100, 1, &c), -EDOM);
	CHECK_EQ_INT(stats__bootstrap_change(zero, 2, zero, 2, 0.95, 100, 1, &c), 0);
	CHECK_NEAR(c.pct, 0, 0);
}

/* The false-positive rate of the interval on A/A samples of a known spread. */
static void test_bootstrap_coverage(void)
{
	struct rng r;
	double a[10], b[10];
	int i, k, hits = 0;

	rng__seed(&r, 99);
	for (k = 0; k < 200; k++) {
		struct change c;

		for (i = 0; i < 10; i++) {
			/* sum of 12 uniforms: close to a normal of sd 1 */
			double ua = -6, ub = -6;
			int j;

			for (j = 0; j < 12; j++) {
				ua += (double)rng__next(&r) / 18446744073709551616.0;
				ub += (double)rng__next(&r) / 18446744073709551616.0;
			}
			a[i] = 100 + 5 * ua;
			b[i] = 100 + 5 * ub;
		}
		stats__bootstrap_change(a, 10, b, 10, 0.95, 2000, STATS_BOOTSTRAP_SEED, &c);
		hits += c.significant;
	}
	/* nominal 5%; the percentile bootstrap at n = 10 is a little narrow */
	CHECK(hits <= 20);
}

static void test_runs_needed(void)
{
	/* 15.68 s^2 / t^2 x pi/2: RSD 5%, threshold 10% -> 7 runs */
	CHECK_EQ_INT(stats__runs_needed(5, 5, 10), 7);
	CHECK_EQ_INT(stats__runs_needed(0, 0, 1), 2);
	CHECK_EQ_INT(stats__runs_needed(0.01, 0.01, 0.5), 2);
	CHECK_EQ_INT(stats__runs_needed(10, 10, 5), 99);
	CHECK_EQ_INT(stats__runs_needed(2, 2, -5), 4);
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
	double pf_b[] = { 10099, 10101, 10099, 10098, 10100 }; /* +0.99% */
	double ipc_a[] = { 1.00, 1.00, 1.00, 1.00, 1.00 };
	double ipc_b[] = { 0.90, 0.90, 0.90, 0.90, 0.90 }; /* -10%: worse */
	double t_a[] = { 100, 130, 80, 120, 70 }; /* RSD 25% */
	double t_b[] = { 90, 140, 85, 110, 75 };
	double ins_a[] = { 1000, 1000, 1000, 1000, 1000 };
	double ins_b[] = { 900, 900, 900, 900, 900 }; /* -10%: better */
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

	/* default page-faults threshold +1%: +0.99% passes */
	CHECK_EQ_INT(compare__series(&a, &b, NULL, 0, r, err, sizeof(err)), 0);
	CHECK_EQ_INT(r->nr_rows, 4);
	CHECK_STR(r->rows[0].name, "page-faults");
	CHECK_EQ_INT(r->rows[0].verdict, VERDICT_NONE);
	CHECK_EQ_INT(r->rows[1].verdict, VERDICT_REGRESSION); /* ipc -10% */
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

int main(void)
{
	test_summary();
	test_rng();
	test_bootstrap();
	test_bootstrap_coverage();
	test_runs_needed();
	test_json_reader();
	test_thresholds();
	test_verdicts();
	test_series_json();
	return check_summary();
}
