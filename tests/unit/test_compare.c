// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * pmbpf compare's verdicts: the decision table of docs/ci.md row by row
 * (with changes exactly at the limit), the absolute floors, the output
 * without "nan", and the calibration on noisy work: series of runs of a
 * fixed base plus a random 0-50% more CPU time, as a shared CI runner gives.
 * `test_compare --calibration` prints the rates for docs/ci.md.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "compare.h"
#include "compare_report.h"
#include "stats.h"

/* Two series of one metric each; values in the metric's unit. */
static void make(struct series *s, const char *name, int n, const double *v, bool time)
{
	struct metric_col *c;
	int i;

	memset(s, 0, sizeof(*s));
	s->label = strdup("x.json");
	s->command = strdup("cmd");
	s->n = n;
	c = series__add(s, name, time);
	for (i = 0; i < n; i++)
		c->v[i] = v[i];
}

/* The verdict of one metric, a against b; th: "NAME=+P%" or NULL. */
static enum verdict judge_one(const char *name, const double *a, int na, const double *b, int nb,
			      const char *th, struct compare_row *out)
{
	struct series sa, sb;
	struct threshold t;
	struct compare_result *r = malloc(sizeof(*r));
	char err[256];
	enum verdict v = VERDICT_COUNT;

	make(&sa, name, na, a, false);
	make(&sb, name, nb, b, false);
	if (th && threshold__parse(th, &t))
		goto out;
	if (r && !compare__series(&sa, &sb, &t, th ? 1 : 0, r, err, sizeof(err)) &&
	    r->nr_rows == 1) {
		v = r->rows[0].verdict;
		if (out)
			*out = r->rows[0];
	}
out:
	free(r);
	series__free(&sa);
	series__free(&sb);
	return v;
}

static void fill_const(double *v, int n, double x)
{
	int i;

	for (i = 0; i < n; i++)
		v[i] = x;
}

static void test_decision_table(void)
{
	double a[7], b[7];
	/* the first two rows: A 60-90 ms of CPU, B 87-117 ms and 162-192 ms */
	double noisy_a[7] = { 60e6, 65e6, 70e6, 75e6, 80e6, 85e6, 90e6 };
	double noisy_b[7] = { 87e6, 92e6, 97e6, 102e6, 107e6, 112e6, 117e6 };
	double far_b[7] = { 162e6, 167e6, 172e6, 177e6, 182e6, 187e6, 192e6 };
	double near_b[7];
	struct compare_row row;
	int i;

	/* exactly at the limit: 100 -> 125 at +25%: the interval is [25, 25] */
	fill_const(a, 7, 100);
	fill_const(b, 7, 125);
	CHECK_EQ_INT(judge_one("widgets", a, 7, b, 7, "widgets=+25%", &row), VERDICT_REGRESSION);
	CHECK_NEAR(row.change.lo_pct, 25, 0);
	CHECK_NEAR(row.limit_pct, 25, 0);
	/* a hair below it: the interval holds nothing at +25% */
	fill_const(b, 7, 124.99);
	CHECK_EQ_INT(judge_one("widgets", a, 7, b, 7, "widgets=+25%", NULL), VERDICT_NONE);
	/* a drop exactly at the limit is an improvement */
	fill_const(b, 7, 75);
	CHECK_EQ_INT(judge_one("widgets", a, 7, b, 7, "widgets=+25%", &row), VERDICT_IMPROVEMENT);
	CHECK_NEAR(row.change.hi_pct, -25, 0);
	/* a metric whose drop is the regression (ipc -5%): at the limit too */
	fill_const(a, 7, 2);
	fill_const(b, 7, 1.5);
	CHECK_EQ_INT(judge_one("ipc", a, 7, b, 7, "ipc=-25%", NULL), VERDICT_REGRESSION);
	fill_const(b, 7, 2.5);
	CHECK_EQ_INT(judge_one("ipc", a, 7, b, 7, "ipc=-25%", NULL), VERDICT_IMPROVEMENT);

	/* noisy but wholly beyond the threshold: a regression, whatever the noise */
	CHECK_EQ_INT(judge_one("task-clock", noisy_a, 7, noisy_b, 7, NULL, &row),
		     VERDICT_REGRESSION);
	CHECK(row.change.lo_pct > 10 && row.base.robust_rsd_pct > 10);
	CHECK_EQ_INT(judge_one("task-clock", noisy_a, 7, far_b, 7, NULL, NULL), VERDICT_REGRESSION);
	/* and at 5 runs a side */
	CHECK_EQ_INT(judge_one("task-clock", noisy_a, 5, far_b, 5, NULL, NULL), VERDICT_REGRESSION);

	/* the interval holds +10%: too noisy, with the runs that would decide */
	for (i = 0; i < 7; i++)
		near_b[i] = noisy_a[i] * 1.12;
	CHECK_EQ_INT(judge_one("task-clock", noisy_a, 7, near_b, 7, NULL, &row), VERDICT_NOISY);
	CHECK(row.change.lo_pct < 10 && row.change.hi_pct >= 10);
	CHECK(row.runs_needed > 7);

	/* the same runs on both sides, but too noisy to rule out +10% */
	CHECK_EQ_INT(judge_one("task-clock", noisy_a, 7, noisy_a, 7, NULL, NULL), VERDICT_NOISY);
	/* an interval that excludes 0 but lies below the limit: no regression */
	fill_const(a, 7, 1e6);
	fill_const(b, 7, 1.05e6);
	CHECK_EQ_INT(judge_one("task-clock", a, 7, b, 7, NULL, &row), VERDICT_NONE);
	CHECK(row.change.significant);

	/* too few runs: 3 against 3, however far apart */
	CHECK_EQ_INT(judge_one("task-clock", noisy_a, 3, far_b, 3, NULL, &row), VERDICT_FEW);
	CHECK_EQ_INT(row.runs_needed, 4);
}

static void test_runs_to_exclude(void)
{
	/* half-width 7 above the estimate, 2 from the bound: (7/2)^2 x 7 runs */
	CHECK_EQ_INT(stats__runs_to_exclude(12, 5, 19, 10, 7, 7), 86);
	/* below the bound: the upper half must shrink from 4 to 2 */
	CHECK_EQ_INT(stats__runs_to_exclude(8, 4, 12, 10, 7, 7), 28);
	/* already off the bound */
	CHECK_EQ_INT(stats__runs_to_exclude(20, 15, 25, 10, 7, 9), 9);
	/* the estimate on the bound: no number of runs will do */
	CHECK_EQ_INT(stats__runs_to_exclude(10, 5, 15, 10, 7, 7), 1000000);
	CHECK_EQ_INT(stats__runs_to_exclude(10, -INFINITY, INFINITY, 10, 3, 3), 1000000);
}

static char *print_all(const struct compare_result *r)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	compare__print(f, COMPARE_TABLE, r);
	compare__print(f, COMPARE_MARKDOWN, r);
	compare__print(f, COMPARE_JSON, r);
	fclose(f);
	return text;
}

static void test_floors_and_output(void)
{
	double pf_a[7] = { 215, 215, 216, 215, 214, 215, 215 };
	double pf_b[7] = { 220, 220, 221, 220, 219, 220, 220 }; /* +5 faults: +2.3% */
	double pf_c[7] = { 240, 240, 241, 240, 239, 240, 240 }; /* +25: beyond the floor of 20 */
	double zero[7] = { 0, 0, 0, 0, 0, 0, 0 };
	double near_a[7] = { 60e6, 65e6, 70e6, 75e6, 80e6, 85e6, 90e6 };
	double near_b[7];
	struct series a, b;
	struct compare_result *r = malloc(sizeof(*r));
	struct compare_row row;
	struct metric_col *c;
	struct threshold th;
	char err[256], *text;
	int i;

	CHECK_EQ_INT(judge_one("page-faults", pf_a, 7, pf_b, 7, NULL, &row), VERDICT_NONE);
	CHECK_NEAR(row.limit_pct, 20.0 / 215 * 100, 1e-9);
	CHECK_NEAR(row.threshold_pct, 1, 0);
	CHECK_EQ_INT(judge_one("page-faults", pf_a, 7, pf_c, 7, NULL, NULL), VERDICT_REGRESSION);
	/* the floor holds against a tighter --threshold too */
	CHECK_EQ_INT(judge_one("page-faults", pf_a, 7, pf_b, 7, "page-faults=+0.5%", NULL),
		     VERDICT_NONE);
	/* where the floor is less than the threshold, the threshold */
	CHECK_NEAR(compare__limit_pct(1, 20, 10000), 1, 0);
	CHECK_NEAR(compare__limit_pct(-5, 0.01, 1.0), -5, 0);
	CHECK_NEAR(compare__limit_pct(-5, 0.1, 1.0), -10, 1e-9);
	CHECK_NEAR(compare__limit_pct(10, 100000, 0), 10, 0);
	/* thresholds as documented */
	CHECK_NEAR(threshold__default("migrations"), 50, 0);
	CHECK_NEAR(threshold__default("cpu-migrations"), 50, 0);
	CHECK_NEAR(threshold__default("involuntary-switches"), 50, 0);
	CHECK_NEAR(threshold__default("voluntary-switches"), 20, 0);
	CHECK_NEAR(threshold__floor("page-faults"), 20, 0);
	CHECK_NEAR(threshold__floor("migrations"), 5, 0);
	CHECK_NEAR(threshold__floor("cpu-time"), 100000, 0);
	CHECK_NEAR(threshold__floor("LLC-load-misses"), 100, 0);
	CHECK_NEAR(threshold__floor("r01c2"), 0, 0);
	/* off-CPU parts: not judged by default (the A/A pair that CI saw), judged when named */
	{
		double ob_a[7] = { 230e3, 228e3, 232e3, 229e3, 231e3, 230e3, 233e3 };
		double ob_b[7];

		for (i = 0; i < 7; i++)
			ob_b[i] = ob_a[i] * 1.19;
		CHECK_EQ_INT(judge_one("offcpu-blocked", ob_a, 7, ob_b, 7, NULL, NULL),
			     VERDICT_COUNT); /* no row: listed as not compared */
		CHECK_EQ_INT(judge_one("runq-wait", ob_a, 7, ob_b, 7, NULL, NULL), VERDICT_COUNT);
		/* named: +10% of 0.23 ms is under the 100 us floor (43%) */
		CHECK_EQ_INT(
			judge_one("offcpu-blocked", ob_a, 7, ob_b, 7, "offcpu-blocked=+10%", NULL),
			VERDICT_NONE);
		for (i = 0; i < 7; i++)
			ob_b[i] = ob_a[i] * 1.6;
		CHECK_EQ_INT(
			judge_one("offcpu-blocked", ob_a, 7, ob_b, 7, "offcpu-blocked=+10%", NULL),
			VERDICT_REGRESSION);
	}

	/* all-zero series and a too-noisy row beyond the runs' cap: no "nan" anywhere */
	for (i = 0; i < 7; i++)
		near_b[i] = near_a[i] * 1.10;
	make(&a, "major-faults", 7, zero, false);
	make(&b, "major-faults", 7, zero, false);
	c = series__add(&a, "task-clock", true);
	memcpy(c->v, near_a, sizeof(near_a));
	c = series__add(&b, "task-clock", true);
	memcpy(c->v, near_b, sizeof(near_b));
	CHECK(r && !compare__series(&a, &b, NULL, 0, r, err, sizeof(err)));
	CHECK_EQ_INT(r->rows[0].verdict, VERDICT_NONE);
	CHECK_EQ_INT(r->rows[1].verdict, VERDICT_NOISY);
	CHECK(r->rows[1].runs_needed > COMPARE_MAX_RUNS);
	/* a threshold may name a metric in both files that no run counted (no PMU) */
	c = series__add(&a, "instructions", false);
	c = series__add(&b, "instructions", false);
	CHECK_EQ_INT(threshold__parse("instructions=+0.5%", &th), 0);
	CHECK_EQ_INT(compare__series(&a, &b, &th, 1, r, err, sizeof(err)), 0);
	CHECK_SUBSTR(r->dropped, "instructions (not counted in every run)");
	/* NAME=off: listed as not compared, and the other metrics are judged */
	CHECK_EQ_INT(threshold__parse("task-clock=off", &th), 0);
	CHECK(th.off);
	CHECK_EQ_INT(compare__series(&a, &b, &th, 1, r, err, sizeof(err)), 0);
	CHECK_EQ_INT(r->nr_rows, 1);
	CHECK_STR(r->rows[0].name, "major-faults");
	CHECK_SUBSTR(r->dropped, "task-clock (--threshold off)");
	CHECK_EQ_INT(threshold__parse("task-clock=of", &th), -EINVAL);
	CHECK_EQ_INT(threshold__parse("instruction=+0.5%", &th), 0);
	CHECK_EQ_INT(compare__series(&a, &b, &th, 1, r, err, sizeof(err)), -EINVAL);
	CHECK_EQ_INT(compare__series(&a, &b, NULL, 0, r, err, sizeof(err)), 0);
	text = print_all(r);
	CHECK(text && !strstr(text, "nan") && !strstr(text, "NaN"));
	CHECK_SUBSTR(text, "too noisy: 30 runs a side would not do");
	CHECK_SUBSTR(text, "\"robust_rsd_pct\":null");
	CHECK_SUBSTR(text, "\"max_runs\":30");
	free(text);
	series__free(&a);
	series__free(&b);
	free(r);
}

/*
 * n runs of CPU work of a fixed base plus a random 0-50% of the base more
 * (A: 60-90 ms), the base times factor (B: 87-117 ms at 1.45, the +36% of
 * the median of the first row; 162-192 ms at 2.7).
 */
static void noisy_runs(struct rng *g, double *v, int n, double factor)
{
	int i;

	for (i = 0; i < n; i++)
		v[i] = 60e6 * factor + 30e6 * (rng__below(g, 1000001) / 1e6);
}

/* Percent of series with the given verdict on task-clock (default +10%). */
static double sim_rate(int runs, double factor, int series, enum verdict want, uint64_t seed)
{
	double a[32], b[32];
	struct rng g;
	int i, hits = 0;

	rng__seed(&g, seed);
	for (i = 0; i < series; i++) {
		noisy_runs(&g, a, runs, 1);
		noisy_runs(&g, b, runs, factor);
		hits += judge_one("task-clock", a, runs, b, runs, NULL, NULL) == want;
	}
	return 100.0 * hits / series;
}

static void test_calibration(void)
{
	/* 400 series a cell; seeds fixed, so the rates are the same every time */
	CHECK(sim_rate(7, 1.45, 400, VERDICT_REGRESSION, 1) >= 90);
	CHECK(sim_rate(7, 2.70, 400, VERDICT_REGRESSION, 2) == 100);
	CHECK(sim_rate(5, 2.70, 400, VERDICT_REGRESSION, 3) == 100);
	CHECK(sim_rate(7, 1.00, 400, VERDICT_REGRESSION, 4) <= 5);
	CHECK(sim_rate(5, 1.00, 400, VERDICT_REGRESSION, 5) <= 5);
	/* nor does an A/A pair come out an improvement more often */
	CHECK(sim_rate(7, 1.00, 400, VERDICT_IMPROVEMENT, 6) <= 5);
}

/*
 * stat --ab --max-runs: start at runs a side, take what compare__runs_to_decide()
 * asks for up to max_runs, judge again. spread_grows: every run of the new
 * side factor times one of the base's (20-30 ms against 26-39 ms at 1.3).
 */
static double sim_extended_rate(int runs, int max_runs, double factor, bool spread_grows,
				int series, enum verdict want, uint64_t seed, double *mean_runs)
{
	struct compare_result *r = malloc(sizeof(*r));
	double a[COMPARE_MAX_RUNS], b[COMPARE_MAX_RUNS];
	struct series sa, sb;
	struct rng g;
	int i, n, have, hits = 0, total = 0;
	char err[256];

	rng__seed(&g, seed);
	for (i = 0; r && i < series; i++) {
		enum verdict v = VERDICT_COUNT;

		for (n = runs, have = 0;;) {
			for (; have < n; have++) {
				noisy_runs(&g, &a[have], 1, 1);
				if (spread_grows) {
					noisy_runs(&g, &b[have], 1, 1);
					b[have] *= factor;
				} else {
					noisy_runs(&g, &b[have], 1, factor);
				}
			}
			make(&sa, "task-clock", n, a, true);
			make(&sb, "task-clock", n, b, true);
			if (compare__series(&sa, &sb, NULL, 0, r, err, sizeof(err)))
				n = -1;
			series__free(&sa);
			series__free(&sb);
			if (n < 0)
				break;
			v = r->rows[0].verdict;
			if (compare__runs_to_decide(r, n, max_runs) == n)
				break;
			n = compare__runs_to_decide(r, n, max_runs);
		}
		hits += v == want;
		total += n;
	}
	free(r);
	if (mean_runs)
		*mean_runs = (double)total / series;
	return 100.0 * hits / series;
}

static void test_runs_to_decide(void)
{
	struct compare_result *r = calloc(1, sizeof(*r));
	double mean;

	if (!CHECK(r))
		return;
	r->nr_rows = 2;
	r->rows[0].verdict = VERDICT_NONE;
	r->rows[0].runs_needed = 7;
	r->rows[1].verdict = VERDICT_NOISY;
	r->rows[1].runs_needed = 12;
	CHECK_EQ_INT(compare__runs_to_decide(r, 7, 30), 12);
	CHECK_EQ_INT(compare__runs_to_decide(r, 7, 10), 10);
	r->rows[1].runs_needed = 1000000; /* no number will do: twice, up to the cap */
	CHECK_EQ_INT(compare__runs_to_decide(r, 7, 30), 14);
	CHECK_EQ_INT(compare__runs_to_decide(r, 14, 30), 28);
	CHECK_EQ_INT(compare__runs_to_decide(r, 28, 30), 30);
	CHECK_EQ_INT(compare__runs_to_decide(r, 30, 30), 30);
	r->rows[1].runs_needed = 6; /* the estimate has no more to offer */
	CHECK_EQ_INT(compare__runs_to_decide(r, 7, 30), 7);
	r->rows[1].runs_needed = 12;
	r->counts[VERDICT_REGRESSION] = 1; /* the gate fails already */
	CHECK_EQ_INT(compare__runs_to_decide(r, 7, 30), 7);
	free(r);

	/* from 7 runs, up to 30: a true +30% of the median found in (nearly) every series */
	CHECK(sim_extended_rate(7, 30, 1.375, false, 400, VERDICT_REGRESSION, 21, &mean) >= 95);
	CHECK(mean < 15);
	CHECK(sim_extended_rate(7, 30, 1.30, true, 400, VERDICT_REGRESSION, 22, &mean) >= 95);
	CHECK(sim_extended_rate(7, 30, 1.00, false, 400, VERDICT_REGRESSION, 23, &mean) <= 5);
	CHECK(mean <= 30);
}

static void print_calibration(void)
{
	/* base factors: the change of the median is (60 f + 15) / 75 - 1 */
	static const double factors[] = { 1.00, 1.125, 1.25, 1.375, 1.45, 1.625, 2.70 };
	static const int runs[] = { 4, 5, 7, 10, 15, 20 };
	size_t i, j;

	double mean;

	printf("| runs a side |");
	for (j = 0; j < sizeof(factors) / sizeof(factors[0]); j++)
		printf(" %+.0f%% |", ((60 * factors[j] + 15) / 75 - 1) * 100);
	printf("\n");
	for (i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		printf("| %d |", runs[i]);
		for (j = 0; j < sizeof(factors) / sizeof(factors[0]); j++)
			printf(" %.1f%% |", sim_rate(runs[i], factors[j], 4000, VERDICT_REGRESSION,
						     100 + i * 10 + j));
		printf("\n");
	}
	printf("\n--ab -r 7 --max-runs 30 (2000 series): regressions, mean runs a side\n");
	for (j = 0; j < sizeof(factors) / sizeof(factors[0]); j++) {
		double rate = sim_extended_rate(7, 30, factors[j], false, 2000, VERDICT_REGRESSION,
						200 + j, &mean);

		printf("%+.0f%%: %.1f%%, %.1f runs\n", ((60 * factors[j] + 15) / 75 - 1) * 100,
		       rate, mean);
	}
	printf("x1.30, the spread growing with the work: %.1f%%",
	       sim_extended_rate(7, 30, 1.30, true, 2000, VERDICT_REGRESSION, 300, &mean));
	printf(", %.1f runs\n", mean);
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "--calibration")) {
		print_calibration();
		return 0;
	}
	test_decision_table();
	test_runs_to_exclude();
	test_floors_and_output();
	test_calibration();
	test_runs_to_decide();
	return check_summary();
}
