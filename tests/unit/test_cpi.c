// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The CPI outlier detector (user/account/cpi.[ch]): its statistics and its rules, by hand. */
#include <errno.h>
#include <math.h>
#include <string.h>
#include "check.h"
#include "cpi.h"

static void test_baseline(void)
{
	double x[] = { 2, 4, 4, 4, 5, 5, 7, 9 }, one[] = { 3 };
	struct cpi_baseline b;

	cpi__baseline(x, 8, &b);
	CHECK_EQ_INT(b.n, 8);
	CHECK_NEAR(b.mean, 5, 1e-12);
	/* sample sd: sqrt(32 / 7) */
	CHECK_NEAR(b.sd, 2.138089935299395, 1e-12);
	/* mean + 2 sd */
	CHECK_NEAR(cpi__threshold(&b), 5 + 2 * 2.138089935299395, 1e-12);
	cpi__baseline(one, 1, &b);
	CHECK_NEAR(b.mean, 3, 0);
	CHECK_NAN(b.sd);
	CHECK_NAN(cpi__threshold(&b));
	/* an sd under 1% of the mean counts as 1%: 1.0 + 2 x 0.01 */
	b = (struct cpi_baseline){ .n = 20, .mean = 1.0, .sd = 0.001 };
	CHECK_NEAR(cpi__threshold(&b), 1.02, 1e-12);
	b.sd = 0;
	CHECK_NEAR(cpi__threshold(&b), 1.02, 1e-12);
	b.sd = 0.05;
	CHECK_NEAR(cpi__threshold(&b), 1.10, 1e-12);
}

static void test_pearson(void)
{
	double x[] = { 1, 2, 3, 4, 5 }, up[] = { 2, 4, 6, 8, 10 }, down[] = { 10, 8, 6, 4, 2 };
	double y[] = { 2, 1, 4, 3, 5 }, flat[] = { 3, 3, 3, 3, 3 }, bad[] = { 1, 2, NAN, 4, 5 };

	CHECK_NEAR(cpi__pearson(x, up, 5), 1, 1e-12);
	CHECK_NEAR(cpi__pearson(x, down, 5), -1, 1e-12);
	/* dx = -2 -1 0 1 2, dy = -1 -2 1 0 2: sxy 8, sxx 10, syy 10: r = 0.8 */
	CHECK_NEAR(cpi__pearson(x, y, 5), 0.8, 1e-12);
	CHECK_NEAR(cpi__pearson(y, x, 5), 0.8, 1e-12);
	CHECK_NAN(cpi__pearson(x, flat, 5));
	CHECK_NAN(cpi__pearson(flat, x, 5));
	CHECK_NAN(cpi__pearson(x, bad, 5));
	CHECK_NAN(cpi__pearson(x, up, 2));
	/* large values, small spread: no cancellation */
	{
		double bx[] = { 1e12 + 1, 1e12 + 2, 1e12 + 3, 1e12 + 4, 1e12 + 5 };

		CHECK_NEAR(cpi__pearson(bx, y, 5), 0.8, 1e-9);
	}
}

static void test_options(void)
{
	struct cpi_opts o = { .window = 20, .k = 3, .min_cpu = 0.05, .max_suspects = 2 };
	struct cpi_detector *d;

	o.window = CPI_MIN_BASELINE - 1;
	errno = 0;
	CHECK(!cpi__new(&o) && errno == EINVAL);
	o.window = 20;
	o.k = 21;
	CHECK(!cpi__new(&o) && errno == EINVAL);
	o.k = 0;
	CHECK(!cpi__new(&o) && errno == EINVAL);
	o.k = 3;
	o.max_suspects = CPI_MAX_SUSPECTS + 1;
	CHECK(!cpi__new(&o) && errno == EINVAL);
	o.max_suspects = 2;
	o.min_cpu = NAN;
	CHECK(!cpi__new(&o) && errno == EINVAL);
	o.min_cpu = 0.05;
	d = cpi__new(&o);
	CHECK(d != NULL);
	cpi__free(d);
	cpi__free(NULL);
}

/*
 * Window 20, k 3, two suspects listed. Names:
 *   v  0.5 CPU; CPI 1.0 (even t) / 1.2 (odd t) for t < 20; then 1.5 at t = 20-22;
 *   s  0.1 CPU until t = 19, 0.9 from 20 (the antagonist); CPI 1.0;
 *   a  0.2 CPU (even t) / 0.4 (odd t): in phase with v's noise; CPI 2.0;
 *   n  0.9 CPU until 19, then 0.1: against v; CPI 1.0;
 *   c  0.3 CPU always: no variance, no correlation; CPI 1.0; gone after t = 22;
 *   z  0.01 CPU (under min_cpu): CPI 1.0, then 5.0 from 20: never judged; gone after 22.
 */
static int feed(struct cpi_detector *d, int t, double v_cpi)
{
	struct cpi_sample s[6] = {
		{ "v", 0.5, v_cpi },
		{ "s", t < 20 ? 0.1 : 0.9, 1.0 },
		{ "a", t % 2 ? 0.4 : 0.2, 2.0 },
		{ "n", t < 20 ? 0.9 : 0.1, 1.0 },
		{ "c", 0.3, 1.0 },
		{ "z", 0.01, t < 20 ? 1.0 : 5.0 },
	};

	return cpi__interval(d, s, t <= 22 ? 6 : 4);
}

static void test_detector(void)
{
	struct cpi_opts o = { .window = 20, .k = 3, .min_cpu = 0.05, .max_suspects = 2 };
	struct cpi_detector *d = cpi__new(&o);
	const struct cpi_outlier *x;
	int t;

	if (!CHECK(d != NULL))
		return;
	/* warm-up: 20 samples each, nothing judged */
	for (t = 0; t < 20; t++)
		CHECK_EQ_INT(feed(d, t, t % 2 ? 1.2 : 1.0), 0);
	CHECK_EQ_INT(cpi__nr_outliers(d), 0);
	CHECK_EQ_INT(cpi__nr_names(d), 6);
	/* above the threshold at t = 20 and 21: not yet k */
	feed(d, 20, 1.5);
	CHECK_EQ_INT(cpi__nr_outliers(d), 0);
	/* v, s, a, n, c judged (z is under min_cpu) */
	CHECK_EQ_INT(cpi__judged(d), 5);
	feed(d, 21, 1.5);
	CHECK_EQ_INT(cpi__nr_outliers(d), 0);
	feed(d, 22, 1.5);
	CHECK_EQ_INT(cpi__nr_outliers(d), 1);
	x = cpi__outlier(d, 0);
	if (!CHECK(x != NULL))
		goto out;
	CHECK_STR(x->victim, "v");
	CHECK_NEAR(x->value, 1.5, 0);
	CHECK_EQ_INT(x->run, 3);
	/* 10 x 1.0 and 10 x 1.2: mean 1.1, sd sqrt(20 x 0.1^2 / 19) */
	CHECK_EQ_INT(x->base.n, 20);
	CHECK_NEAR(x->base.mean, 1.1, 1e-12);
	CHECK_NEAR(x->base.sd, 0.10259783520851541, 1e-12);
	CHECK_NEAR(x->threshold, 1.3051956704170309, 1e-12);
	/*
	 * The window t = 3..22: v is 1.2 at odd t < 20 (9), 1.0 at even t < 20
	 * (8), 1.5 at 20-22 (3): mean 1.165, population sd sqrt(0.028275).
	 * Each suspect's CPU has two levels, so r is the point-biserial
	 * (mean of y at the high level - at the low) / sd(y) x sqrt(p q):
	 *   s: high at 20-22: (1.5 - 18.8 / 17) / 0.168152 x sqrt(0.15 x 0.85) = 0.83691
	 *   a: high at odd t: (12.3 / 10 - 11 / 10) / 0.168152 x 0.5 = 0.38656
	 *   n: -0.83691 (not a suspect); c and z: no variance (not suspects).
	 */
	CHECK_EQ_INT(x->pairs, 20);
	CHECK_EQ_INT(x->nr_suspects, 2);
	CHECK_STR(x->suspects[0].name, "s");
	CHECK_NEAR(x->suspects[0].r, 0.8369117531564388, 1e-12);
	CHECK_NEAR(x->suspects[0].cpu, 0.9, 0);
	CHECK_STR(x->suspects[1].name, "a");
	CHECK_NEAR(x->suspects[1].r, 0.3865556717425339, 1e-12);
	CHECK_NEAR(x->suspects[1].cpu, 0.2, 0);
	CHECK(cpi__outlier(d, 1) == NULL);

	/*
	 * t = 23: 1.0 (normal: joins the baseline), 24-25: 1.5 (a run of 2), 26:
	 * 1.0 (normal: the run ends), 27-29: 1.5, flagged at 29. The 1.5s never
	 * joined the baseline: it holds t = 2..19, 23 and 26: eleven 1.0 and
	 * nine 1.2, mean 1.09, sd sqrt((11 x 0.09^2 + 9 x 0.11^2) / 19).
	 */
	for (t = 23; t <= 28; t++) {
		feed(d, t, t == 23 || t == 26 ? 1.0 : 1.5);
		CHECK_EQ_INT(cpi__nr_outliers(d), 0);
	}
	feed(d, 29, 1.5);
	CHECK_EQ_INT(cpi__nr_outliers(d), 1);
	x = cpi__outlier(d, 0);
	CHECK_EQ_INT(x->run, 3);
	CHECK_NEAR(x->base.mean, 1.09, 1e-12);
	CHECK_NEAR(x->base.sd, 0.10208355710680808, 1e-12);
	CHECK_NEAR(x->threshold, 1.2941671142136162, 1e-12);

	/* a whole window above (t = 27..46): flagged to the end, then the new normal */
	for (t = 30; t <= 46; t++) {
		feed(d, t, 1.5);
		CHECK_EQ_INT(cpi__nr_outliers(d), 1);
		/* c and z were last seen at 22: gone once a window has passed */
		CHECK_EQ_INT(cpi__nr_names(d), t < 42 ? 6 : 4);
	}
	CHECK_EQ_INT(cpi__outlier(d, 0)->run, 20);
	/* baseline 20 x 1.5: sd 0 counts as 1%: threshold 1.53 */
	feed(d, 47, 1.5);
	CHECK_EQ_INT(cpi__nr_outliers(d), 0);
	feed(d, 48, 1.52);
	CHECK_EQ_INT(cpi__nr_outliers(d), 0);
	/*
	 * 1.52 joined: 19 x 1.5 and 1.52, mean 1.501, sd sqrt(0.02^2 x 19 / 20 / 19)
	 * = 0.0045 under 1% of the mean: threshold 1.501 + 2 x 0.01501 = 1.53102
	 */
	for (t = 49; t <= 51; t++)
		feed(d, t, 1.54);
	CHECK_EQ_INT(cpi__nr_outliers(d), 1);
	CHECK_NEAR(cpi__outlier(d, 0)->base.mean, 1.501, 1e-12);
	CHECK_NEAR(cpi__outlier(d, 0)->threshold, 1.53102, 1e-12);
	/* an interval without a sample (no CPI, or too little CPU) ends a run */
	feed(d, 52, NAN);
	CHECK_EQ_INT(cpi__nr_outliers(d), 0);
	feed(d, 53, 1.54);
	feed(d, 54, 1.54);
	CHECK_EQ_INT(cpi__nr_outliers(d), 0);
out:
	cpi__free(d);
}

/* A name first seen late used no CPU before: its earlier intervals count as 0. */
static void test_late_name(void)
{
	struct cpi_opts o = { .window = 20, .k = 1, .min_cpu = 0, .max_suspects = 1 };
	struct cpi_detector *d = cpi__new(&o);
	struct cpi_sample s[2] = { { "v", 1, 1.0 }, { "late", 1, 1.0 } };
	int t;

	if (!CHECK(d != NULL))
		return;
	for (t = 0; t < 20; t++) {
		s[0].value = t % 2 ? 1.01 : 0.99;
		cpi__interval(d, s, 1);
	}
	/* 20 samples of mean 1, sd sqrt(20 x 0.01^2 / 19): 1.2 is above; late joins now */
	s[0].value = 1.2;
	cpi__interval(d, s, 2);
	CHECK_EQ_INT(cpi__nr_outliers(d), 1);
	/* late's CPU over the window t = 1..20: nineteen 0 and one 1, v high at 20 only */
	CHECK_EQ_INT(cpi__outlier(d, 0)->nr_suspects, 1);
	CHECK_STR(cpi__outlier(d, 0)->suspects[0].name, "late");
	CHECK(cpi__outlier(d, 0)->suspects[0].r > 0.9);
	cpi__free(d);
}

int main(void)
{
	test_baseline();
	test_pearson();
	test_options();
	test_detector();
	test_late_name();
	return check_summary();
}
