// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * pmbpf compare BASE.json NEW.json: did a change make a benchmark slower?
 *
 * For every metric in both files: the change of the median in percent, a 95%
 * confidence interval of the shift from the exact Mann-Whitney test over the
 * per-run values (stats__rank_change: no randomness, the same files give the
 * same answer), and a verdict. Medians, ranks and the median absolute
 * deviation, so that one run disturbed by the machine does not make a
 * verdict on its own. The verdict is read off the interval against the
 * metric's limit (its threshold, or its absolute floor where that is more;
 * see judge()): wholly beyond it, a regression, however noisy the runs;
 * holding it, too noisy, with the runs per side that would decide. Too few
 * runs for the test to reach 95% (fewer than 4 a side, unless the other has
 * more): no verdict, but the number of runs it would need.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "commands.h"
#include "compare.h"
#include "json_reader.h"
#include "util.h"

struct metric_col *series__add(struct series *s, const char *name, bool time)
{
	struct metric_col *m;
	int i;

	if (s->nr_metrics >= SERIES_MAX_METRICS || strlen(name) >= METRIC_NAME_LEN)
		return NULL;
	m = &s->m[s->nr_metrics];
	m->v = malloc(sizeof(double) * (s->n ? s->n : 1));
	if (!m->v)
		return NULL;
	for (i = 0; i < s->n; i++)
		m->v[i] = NAN;
	snprintf(m->name, sizeof(m->name), "%s", name);
	m->time = time;
	s->nr_metrics++;
	return m;
}

struct metric_col *series__find(const struct series *s, const char *name)
{
	int i;

	for (i = 0; i < s->nr_metrics; i++)
		if (!strcmp(s->m[i].name, name))
			return (struct metric_col *)&s->m[i];
	return NULL;
}

void series__free(struct series *s)
{
	int i;

	for (i = 0; i < s->nr_metrics; i++)
		free(s->m[i].v);
	free(s->label);
	free(s->command);
	memset(s, 0, sizeof(*s));
}

static char *join_words(const struct json_value *arr)
{
	size_t i, len = 1;
	char *s;

	for (i = 0; i < arr->len; i++)
		len += (json__str(&arr->items[i]) ? strlen(arr->items[i].string) : 0) + 1;
	s = calloc(1, len);
	if (!s)
		return NULL;
	for (i = 0; i < arr->len; i++) {
		if (i)
			strcat(s, " ");
		if (json__str(&arr->items[i]))
			strcat(s, arr->items[i].string);
	}
	return s;
}

int series__from_json(struct series *s, const char *text, size_t len, const char *group, char *err,
		      size_t err_len)
{
	const struct json_value *v, *runs, *cmd;
	struct json_value doc;
	char why[128];
	size_t i, j;
	int k = 0, ret = -EINVAL;

	if (json__parse(text, len, &doc, why, sizeof(why))) {
		snprintf(err, err_len, "not a complete JSON document (%s)", why);
		return -EINVAL;
	}
	if (doc.type != JSON_OBJECT || !json__str(json__get(&doc, "type")) ||
	    strcmp(json__get(&doc, "type")->string, "stat")) {
		snprintf(err, err_len, "not the output of pmbpf stat -o json");
		goto out;
	}
	v = json__get(&doc, "schema");
	if (!v || v->type != JSON_NUMBER || v->number != STAT_SCHEMA) {
		if (v && v->type == JSON_NUMBER)
			snprintf(err, err_len, "schema version %g, this pmbpf reads version %d",
				 v->number, STAT_SCHEMA);
		else
			snprintf(err, err_len, "no schema version (this pmbpf reads version %d)",
				 STAT_SCHEMA);
		goto out;
	}
	cmd = json__get(&doc, strcmp(group, "B") ? "command" : "command_b");
	runs = json__get(&doc, "runs");
	if (!cmd || cmd->type != JSON_ARRAY || !runs || runs->type != JSON_ARRAY) {
		snprintf(err, err_len, "no %s",
			 !cmd || cmd->type != JSON_ARRAY ? "command" : "runs");
		goto out;
	}
	for (i = 0; i < runs->len; i++)
		if (!strcmp(json__str(json__get(&runs->items[i], "group")) ?: "", group))
			s->n++;
	s->command = join_words(cmd);
	if (!s->command)
		goto out;
	for (i = 0; i < runs->len; i++) {
		const struct json_value *run = &runs->items[i], *metrics;

		if (strcmp(json__str(json__get(run, "group")) ?: "", group))
			continue;
		metrics = json__get(run, "metrics");
		if (!metrics || metrics->type != JSON_OBJECT) {
			snprintf(err, err_len, "run %zu has no metrics", i + 1);
			goto out;
		}
		for (j = 0; j < metrics->len; j++) {
			const struct json_value *m = &metrics->items[j];
			const char *name = metrics->keys[j];
			struct metric_col *col = series__find(s, name);

			if (!col) {
				const struct json_value *units = json__get(&doc, "units");

				col = series__add(
					s, name,
					!strcmp(json__str(json__get(units, name)) ?: "", "ns"));
				if (!col) {
					snprintf(err, err_len,
						 "too many metrics (or name too long: %s)", name);
					goto out;
				}
			}
			if (m->type == JSON_NUMBER)
				col->v[k] = m->number;
		}
		k++;
	}
	ret = 0;
out:
	json__free(&doc);
	return ret;
}

/*
 * Default thresholds, and the absolute floor below which a change is never
 * a verdict whatever its percent (a handful of page faults or switches of
 * a short command; 100 us of time): exact counts tight, times and misses
 * loose, the scheduler's choices loosest. docs/ci.md has this table.
 */
static const struct metric_limit {
	const char *name;
	double pct;
	double floor; /* in the metric's unit (ns for times) */
} default_limits[] = {
	{ "instructions", +1, 10000 },
	{ "branch-instructions", +1, 2000 },
	{ "branches", +1, 2000 },
	{ "page-faults", +1, 20 },
	{ "minor-faults", +1, 20 },
	{ "major-faults", +10, 5 },
	{ "ipc", -5, 0.01 },
	{ "cycles", +5, 10000 },
	{ "wall-time", +10, 100000 },
	{ "cpu-time", +10, 100000 },
	{ "task-clock", +10, 100000 },
	{ "cpu-clock", +10, 100000 },
	{ "context-switches", +20, 5 },
	{ "voluntary-switches", +20, 5 },
	{ "involuntary-switches", +50, 5 },
	{ "migrations", +50, 5 },
	{ "cpu-migrations", +50, 5 },
};

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

static const struct metric_limit *limit_of(const char *name)
{
	static const struct metric_limit misses = { "*-misses", +15, 100 };
	static const struct metric_limit mpki = { "*-mpki", +15, 0.05 };
	static const struct metric_limit other = { "*", +10, 0 };
	size_t i;

	for (i = 0; i < sizeof(default_limits) / sizeof(default_limits[0]); i++)
		if (!strcmp(name, default_limits[i].name))
			return &default_limits[i];
	if (ends_with(name, "-misses"))
		return &misses;
	if (ends_with(name, "-mpki"))
		return &mpki;
	return &other;
}

double threshold__default(const char *name)
{
	return limit_of(name)->pct;
}

double threshold__floor(const char *name)
{
	return limit_of(name)->floor;
}

int threshold__parse(const char *arg, struct threshold *t)
{
	const char *eq = strchr(arg, '=');
	double sign = 0, v;
	const char *p;
	char *end;

	if (!eq || eq == arg || (size_t)(eq - arg) >= sizeof(t->name))
		return -EINVAL;
	snprintf(t->name, sizeof(t->name), "%.*s", (int)(eq - arg), arg);
	p = eq + 1;
	t->off = !strcmp(p, "off");
	if (t->off) {
		t->pct = 0;
		return 0;
	}
	if (*p == '+' || *p == '-')
		sign = *p++ == '+' ? 1 : -1;
	if (!(*p >= '0' && *p <= '9') && *p != '.')
		return -EINVAL;
	errno = 0;
	v = strtod(p, &end);
	if (errno || end == p || !isfinite(v) || v <= 0 || v >= 1000)
		return -EINVAL;
	if (*end == '%')
		end++;
	if (*end)
		return -EINVAL;
	if (!sign)
		sign = threshold__default(t->name) < 0 ? -1 : 1;
	t->pct = sign * v;
	return 0;
}

const char *verdict__str(enum verdict v)
{
	switch (v) {
	case VERDICT_REGRESSION:
		return "regression";
	case VERDICT_IMPROVEMENT:
		return "improvement";
	case VERDICT_NOISY:
		return "too noisy";
	case VERDICT_FEW:
		return "too few runs";
	default:
		return "no significant change";
	}
}

static void add_dropped(struct compare_result *r, const char *name, const char *why)
{
	size_t n = strlen(r->dropped);

	snprintf(r->dropped + n, sizeof(r->dropped) - n, "%s%s (%s)", n ? ", " : "", name, why);
}

static bool all_finite(const double *v, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (!isfinite(v[i]))
			return false;
	return true;
}

/*
 * The decision table (docs/ci.md, pmbpf compare --help), in the direction of
 * the threshold (a drop of ipc reads as a rise), L the limit (the threshold,
 * or the floor in percent of the base median where that is more):
 *
 *   a side has too few runs for the test       too few runs
 *   the interval lies wholly at or beyond +L   regression
 *   the interval lies wholly at or beyond -L   improvement
 *   the interval lies wholly below +L          no significant change
 *   the interval holds +L and values below it  too noisy
 *
 * So a regression needs no more than its interval: however noisy the runs,
 * an interval wholly beyond the limit is one (it excludes 0). Too noisy is
 * the one undecided case; its runs_needed is an estimate of the runs per
 * side that would move the interval's end off L.
 */
static void judge(struct compare_row *row)
{
	const struct change *c = &row->change;
	double dir = row->limit_pct < 0 ? -1 : 1, lim = fabs(row->limit_pct);
	double lo = dir > 0 ? c->lo_pct : -c->hi_pct, hi = dir > 0 ? c->hi_pct : -c->lo_pct;
	double pct = dir * c->pct;
	int have = row->base.n < row->new.n ? row->base.n : row->new.n;
	int few = stats__rank_runs_needed(row->base.n, row->new.n, COMPARE_LEVEL);

	row->runs_needed = have;
	if (few > have) {
		/* no split of 2 + 2 or 3 + 3 runs is rare enough for 95%, however far apart */
		row->verdict = VERDICT_FEW;
		row->runs_needed = few;
	} else if (lo >= lim) {
		row->verdict = VERDICT_REGRESSION;
	} else if (hi <= -lim) {
		row->verdict = VERDICT_IMPROVEMENT;
	} else if (hi < lim) {
		row->verdict = VERDICT_NONE;
	} else {
		row->verdict = VERDICT_NOISY;
		row->runs_needed =
			stats__runs_to_exclude(pct, lo, hi, lim, row->base.n, row->new.n);
	}
}

double compare__limit_pct(double threshold_pct, double floor, double base_median)
{
	double f = base_median ? floor / fabs(base_median) * 100 : 0;

	return fabs(threshold_pct) >= f ? threshold_pct : copysign(f, threshold_pct);
}

int compare__series(const struct series *base, const struct series *new, const struct threshold *th,
		    int nr_th, struct compare_result *r, char *err, size_t err_len)
{
	int i, j, ret;

	memset(r, 0, sizeof(*r));
	r->base = base;
	r->new = new;
	if (base->n < 2 || new->n < 2) {
		const struct series *s = base->n < 2 ? base : new;

		snprintf(
			err, err_len,
			"%s has %d run%s: a verdict needs the spread of at least 2 (pmbpf stat -r N)",
			s->label, s->n, s->n == 1 ? "" : "s");
		return -EINVAL;
	}
	for (i = 0; i < base->nr_metrics; i++) {
		const struct metric_col *a = &base->m[i], *b = series__find(new, a->name);
		struct compare_row *row;

		if (!b) {
			add_dropped(r, a->name, "only in base");
			continue;
		}
		for (j = 0; j < nr_th && !(th[j].off && !strcmp(th[j].name, a->name)); j++)
			;
		if (j < nr_th) {
			add_dropped(r, a->name, "--threshold off");
			continue;
		}
		if (!all_finite(a->v, base->n) || !all_finite(b->v, new->n)) {
			add_dropped(r, a->name, "not counted in every run");
			continue;
		}
		row = &r->rows[r->nr_rows];
		snprintf(row->name, sizeof(row->name), "%s", a->name);
		row->time = a->time;
		stats__summary(a->v, base->n, &row->base);
		stats__summary(b->v, new->n, &row->new);
		row->threshold_pct = threshold__default(a->name);
		for (j = 0; j < nr_th; j++)
			if (!strcmp(th[j].name, a->name))
				row->threshold_pct = th[j].pct;
		row->floor = threshold__floor(a->name);
		ret = stats__rank_change(a->v, base->n, b->v, new->n, COMPARE_LEVEL, &row->change);
		if (ret == -EDOM) {
			add_dropped(r, a->name, "0 in base");
			continue;
		}
		if (ret)
			return ret;
		row->limit_pct =
			compare__limit_pct(row->threshold_pct, row->floor, row->base.median);
		judge(row);
		r->counts[row->verdict]++;
		r->nr_rows++;
	}
	for (i = 0; i < new->nr_metrics; i++)
		if (!series__find(base, new->m[i].name))
			add_dropped(r, new->m[i].name, "only in new");
	/* a metric in both files but not counted (no PMU) is in "not compared" */
	for (j = 0; j < nr_th; j++) {
		if (!series__find(base, th[j].name) || !series__find(new, th[j].name)) {
			snprintf(err, err_len, "--threshold %s: no such metric in both series",
				 th[j].name);
			return -EINVAL;
		}
	}
	if (!r->nr_rows) {
		snprintf(err, err_len, "no metric in common: %s", r->dropped);
		return -EINVAL;
	}
	return 0;
}

int compare__runs_to_decide(const struct compare_result *r, int have, int max_runs)
{
	int i, want = have;

	if (r->counts[VERDICT_REGRESSION])
		return have;
	for (i = 0; i < r->nr_rows; i++)
		if (r->rows[i].verdict == VERDICT_NOISY && r->rows[i].runs_needed > want)
			want = r->rows[i].runs_needed;
	/* at most twice as many at a time: a clear change stops early, whatever asks for more */
	if (want > 2 * have)
		want = 2 * have;
	return want < max_runs ? want : max_runs > have ? max_runs : have;
}

int compare_format__parse(const char *s, enum compare_format *fmt)
{
	if (!strcmp(s, "table"))
		*fmt = COMPARE_TABLE;
	else if (!strcmp(s, "json"))
		*fmt = COMPARE_JSON;
	else if (!strcmp(s, "markdown") || !strcmp(s, "md"))
		*fmt = COMPARE_MARKDOWN;
	else
		return -EINVAL;
	return 0;
}

/* A figure for people: times in ms, counts whole, ratios with 3 decimals. */
static void fmt_mean(char *buf, size_t len, double v, bool time)
{
	if (time)
		snprintf(buf, len, "%.3fms", v / 1e6);
	else if (fabs(v) >= 1000)
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%.3f", v);
}

static void fmt_verdict(char *buf, size_t len, const struct compare_row *row)
{
	int have = row->base.n < row->new.n ? row->base.n : row->new.n;

	if (row->verdict == VERDICT_NOISY && row->runs_needed > COMPARE_MAX_RUNS)
		snprintf(buf, len, "too noisy: %d runs a side would not do", COMPARE_MAX_RUNS);
	else if (row->verdict == VERDICT_NOISY)
		snprintf(buf, len, "too noisy: %d more runs needed", row->runs_needed - have);
	else if (row->verdict == VERDICT_FEW)
		snprintf(buf, len, "too few runs: %d more needed", row->runs_needed - have);
	else
		snprintf(buf, len, "%s", verdict__str(row->verdict));
}

/* A robust RSD; "-" where there is none (a median of 0). */
static void fmt_noise(char *buf, size_t len, double rsd_pct)
{
	if (isfinite(rsd_pct))
		snprintf(buf, len, "%.2f", rsd_pct);
	else
		snprintf(buf, len, "-");
}

/*
 * The interval, "[lo, hi]" (table) or "lo … hi" (Markdown); with too few
 * runs for the level it is unbounded: "-inf" and "+inf", no percent sign.
 */
static void fmt_ci(char *buf, size_t len, const struct change *c, bool md)
{
	char lo[24], hi[24];

	snprintf(lo, sizeof(lo), isfinite(c->lo_pct) ? "%+.2f%%" : "%+.0f", c->lo_pct);
	snprintf(hi, sizeof(hi), isfinite(c->hi_pct) ? "%+.2f%%" : "%+.0f", c->hi_pct);
	snprintf(buf, len, md ? "%s … %s" : "[%s, %s]", lo, hi);
}

static void print_counts(FILE *f, const struct compare_result *r, bool md)
{
	const char *b = md ? "**" : "";

	fprintf(f, "%s%d regression%s%s, %d improvement%s, %d no significant change, %d too noisy",
		b, r->counts[VERDICT_REGRESSION], r->counts[VERDICT_REGRESSION] == 1 ? "" : "s", b,
		r->counts[VERDICT_IMPROVEMENT], r->counts[VERDICT_IMPROVEMENT] == 1 ? "" : "s",
		r->counts[VERDICT_NONE], r->counts[VERDICT_NOISY]);
	/* a matter of the numbers of runs alone: every row or none */
	if (r->counts[VERDICT_FEW])
		fprintf(f, ", %d too few runs", r->counts[VERDICT_FEW]);
	fputc('\n', f);
}

static void print_table(FILE *f, const struct compare_result *r)
{
	char a[32], b[32], ci[48], v[64], na[16], nb[16];
	int i;

	fprintf(f, "base: %s (%d runs): %s\nnew:  %s (%d runs): %s\n", r->base->label, r->base->n,
		r->base->command, r->new->label, r->new->n, r->new->command);
	if (strcmp(r->base->command, r->new->command))
		fprintf(f, "note: the two series ran different commands\n");
	fprintf(f, "\n%-24s %14s %7s %14s %7s %8s %-20s %6s  %s\n", "METRIC", "BASE", "NOISE%",
		"NEW", "NOISE%", "CHANGE", "95% CI", "LIMIT", "VERDICT");
	for (i = 0; i < r->nr_rows; i++) {
		const struct compare_row *row = &r->rows[i];

		fmt_mean(a, sizeof(a), row->base.median, row->time);
		fmt_mean(b, sizeof(b), row->new.median, row->time);
		fmt_ci(ci, sizeof(ci), &row->change, false);
		fmt_verdict(v, sizeof(v), row);
		fmt_noise(na, sizeof(na), row->base.robust_rsd_pct);
		fmt_noise(nb, sizeof(nb), row->new.robust_rsd_pct);
		fprintf(f, "%-24s %14s %7s %14s %7s %+7.2f%% %-20s %+5.3g%%  %s\n", row->name, a,
			na, b, nb, row->change.pct, ci, row->limit_pct, v);
	}
	if (r->dropped[0])
		fprintf(f, "not compared: %s\n", r->dropped);
	fputc('\n', f);
	print_counts(f, r, false);
}

/* "median ± noise%", or the median alone where there is no noise figure */
static void md_value(char *buf, size_t len, const struct summary *s, bool time)
{
	char m[32];

	fmt_mean(m, sizeof(m), s->median, time);
	if (isfinite(s->robust_rsd_pct))
		snprintf(buf, len, "%s ± %.2f%%", m, s->robust_rsd_pct);
	else
		snprintf(buf, len, "%s", m);
}

static void print_markdown(FILE *f, const struct compare_result *r)
{
	char a[48], b[48], ci[64], v[64];
	int i;

	fprintf(f, "### pmbpf compare\n\n");
	print_counts(f, r, true);
	fprintf(f, "\nBase: `%s` (%d runs); new: `%s` (%d runs)\n\n", r->base->command, r->base->n,
		r->new->command, r->new->n);
	fprintf(f, "| metric | base | new | change | 95%% CI | threshold | verdict |\n");
	fprintf(f, "|---|---:|---:|---:|---|---:|---|\n");
	for (i = 0; i < r->nr_rows; i++) {
		const struct compare_row *row = &r->rows[i];
		bool bad = row->verdict == VERDICT_REGRESSION;

		md_value(a, sizeof(a), &row->base, row->time);
		md_value(b, sizeof(b), &row->new, row->time);
		fmt_ci(ci, sizeof(ci), &row->change, true);
		fmt_verdict(v, sizeof(v), row);
		fprintf(f, "| %s | %s | %s | %+.2f%% | %s | %+.3g%% | %s%s%s |\n", row->name, a, b,
			row->change.pct, ci, row->limit_pct, bad ? "**" : "", v, bad ? "**" : "");
	}
	if (r->dropped[0])
		fprintf(f, "\nNot compared: %s\n", r->dropped);
}

static void json_summary(struct json_writer *w, const struct summary *s)
{
	jw_start_object(w);
	jw_key(w, "n");
	jw_u64(w, s->n);
	jw_key(w, "mean");
	jw_double(w, s->mean, 6);
	jw_key(w, "stddev");
	jw_double(w, s->stddev, 6);
	jw_key(w, "rsd_pct");
	jw_double(w, s->rsd_pct, 4);
	jw_key(w, "median");
	jw_double(w, s->median, 6);
	jw_key(w, "robust_rsd_pct");
	jw_double(w, s->robust_rsd_pct, 4);
	jw_key(w, "min");
	jw_double(w, s->min, 6);
	jw_key(w, "max");
	jw_double(w, s->max, 6);
	jw_end_object(w);
}

static void json_side(struct json_writer *w, const char *key, const struct series *s)
{
	jw_key(w, key);
	jw_start_object(w);
	jw_key(w, "label");
	jw_string(w, s->label);
	jw_key(w, "command");
	jw_string(w, s->command);
	jw_key(w, "runs");
	jw_u64(w, s->n);
	jw_end_object(w);
}

void compare__json(struct json_writer *w, const struct compare_result *r)
{
	int i;

	jw_start_object(w);
	jw_key(w, "type");
	jw_string(w, "compare");
	json_side(w, "base", r->base);
	json_side(w, "new", r->new);
	jw_key(w, "same_command");
	jw_bool(w, !strcmp(r->base->command, r->new->command));
	jw_key(w, "method");
	jw_string(w, "change of the median; interval of the shift from the exact Mann-Whitney "
		     "test (Hodges-Lehmann)");
	jw_key(w, "confidence");
	jw_double(w, COMPARE_LEVEL, 2);
	jw_key(w, "max_runs");
	jw_u64(w, COMPARE_MAX_RUNS);
	jw_key(w, "rows");
	jw_start_array(w);
	for (i = 0; i < r->nr_rows; i++) {
		const struct compare_row *row = &r->rows[i];

		jw_start_object(w);
		jw_key(w, "metric");
		jw_string(w, row->name);
		jw_key(w, "unit");
		jw_string(w, row->time ? "ns" : "");
		jw_key(w, "base");
		json_summary(w, &row->base);
		jw_key(w, "new");
		json_summary(w, &row->new);
		jw_key(w, "change_pct");
		jw_double(w, row->change.pct, 4);
		jw_key(w, "ci_low_pct");
		jw_double(w, row->change.lo_pct, 4);
		jw_key(w, "ci_high_pct");
		jw_double(w, row->change.hi_pct, 4);
		jw_key(w, "significant");
		jw_bool(w, row->change.significant);
		jw_key(w, "threshold_pct");
		jw_double(w, row->threshold_pct, 4);
		jw_key(w, "floor");
		jw_double(w, row->floor, 6);
		jw_key(w, "limit_pct");
		jw_double(w, row->limit_pct, 4);
		jw_key(w, "runs_needed");
		jw_u64(w, row->runs_needed);
		jw_key(w, "verdict");
		jw_string(w, verdict__str(row->verdict));
		jw_end_object(w);
	}
	jw_end_array(w);
	jw_key(w, "not_compared");
	jw_string(w, r->dropped);
	jw_key(w, "regressions");
	jw_u64(w, r->counts[VERDICT_REGRESSION]);
	jw_key(w, "improvements");
	jw_u64(w, r->counts[VERDICT_IMPROVEMENT]);
	jw_key(w, "too_noisy");
	jw_u64(w, r->counts[VERDICT_NOISY]);
	jw_key(w, "too_few_runs");
	jw_u64(w, r->counts[VERDICT_FEW]);
	jw_end_object(w);
}

void compare__print(FILE *f, enum compare_format fmt, const struct compare_result *r)
{
	struct json_writer w;

	switch (fmt) {
	case COMPARE_TABLE:
		print_table(f, r);
		break;
	case COMPARE_MARKDOWN:
		print_markdown(f, r);
		break;
	case COMPARE_JSON:
		jw_init(&w, f);
		compare__json(&w, r);
		fputc('\n', f);
		break;
	}
}

int report__write(int fd, const char *what, const char *buf, size_t len)
{
	ssize_t n;

	while (len) {
		n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EPIPE)
			return -EPIPE; /* the reader is gone: nothing to say */
		if (n <= 0) {
			pr_err("cannot write %s: %s\n", what,
			       n < 0 ? strerror(errno) : "short write");
			return -EIO;
		}
		buf += n;
		len -= n;
	}
	return 0;
}

static const struct cmdopt options[] = {
	{ 't', "threshold", "NAME=+P%",
	  "a rise of P% or more in NAME is a regression (-P%: a drop);\n"
	  "repeatable; defaults: instructions +1%, page-faults +1%,\n"
	  "ipc -5%, wall-time and cpu-time +10%, *-misses +15%,\n"
	  "switches +20% (involuntary +50%), migrations +50%,\n"
	  "others +10% (docs/ci.md); NAME=off: no verdict for NAME\n"
	  "(wall-time measures the runner's load too: docs/ci.md)" },
	{ 'o', "output", "FORMAT", "table (default), json or markdown" },
	{ CMDOPT_HELP },
	{},
};

const struct cmdopts compare_cmdopts = {
	.cmd = "compare",
	.head = "Usage: pmbpf compare [OPTIONS] BASE.json NEW.json\n"
		"Compare two 'pmbpf stat -r N -o json' files: per metric the change of the\n"
		"median run, its 95% confidence interval (exact Mann-Whitney rank test) and a verdict.\n"
		"NOISE% is the robust RSD (1.4826 x MAD / median).\n",
	.opts = options,
	.tail = "LIMIT is the threshold, or the metric's absolute floor in percent of the base\n"
		"median where that is more (20 page faults, 5 switches, 100 us: docs/ci.md).\n"
		"The verdict, from the interval and the limit L in the bad direction:\n"
		"  either side has 2 or 3 runs (too few for 95%)   too few runs: K more needed\n"
		"  interval wholly at or above +L                  regression (exit 1)\n"
		"  interval wholly at or below -L                  improvement\n"
		"  interval wholly below +L                        no significant change\n"
		"  interval holds +L and values below it           too noisy: K more runs needed\n"
		"                                                  (or: " STR(
			COMPARE_MAX_RUNS) " runs a side would not do)\n"
					  "A regression needs no more than its interval, however noisy the runs.\n"
					  "Exit code: 0 no regression, 1 at least one regression, 2 bad input.\n",
	.permute = true, /* pmbpf compare A.json B.json -o json */
};

static int load(const char *path, struct series *s)
{
	char err[256], *buf = NULL;
	size_t len = 0;
	int ret;

	ret = file__read_all(path, INPUT_MAX_BYTES, &buf, &len);
	if (ret == -EFBIG) {
		pr_err("%s holds more than %lu MiB: not a 'pmbpf stat -o json' file\n", path,
		       INPUT_MAX_BYTES >> 20);
		return ret;
	}
	if (ret) {
		pr_err("cannot read %s: %s\n", path, strerror(-ret));
		return ret;
	}
	ret = series__from_json(s, buf, len, "A", err, sizeof(err));
	free(buf);
	if (ret) {
		pr_err("%s: %s\n", path, err);
		return ret;
	}
	s->label = strdup(path);
	return s->label ? 0 : -ENOMEM;
}

/*
 * Names in the files (the command, metrics) reach a terminal: the table and
 * markdown pass text__char()'s rule (JSON escapes them itself).
 */
static int printable(enum compare_format fmt, char **text, size_t *len)
{
	char *safe;

	if (fmt == COMPARE_JSON)
		return 0;
	safe = malloc(TEXT_PRINTABLE_SIZE(*len));
	if (!safe) {
		pr_err("%s\n", strerror(ENOMEM));
		return -ENOMEM;
	}
	text__printable(safe, TEXT_PRINTABLE_SIZE(*len), *text, true);
	free(*text);
	*text = safe;
	*len = strlen(safe);
	return 0;
}

int cmd_compare(int argc, char **argv)
{
	struct threshold th[COMPARE_MAX_THRESHOLDS];
	enum compare_format fmt = COMPARE_TABLE;
	struct series base = {}, new = {};
	struct compare_result *r = NULL;
	struct cmdopt_getopt g = {};
	int c, nr_th = 0, rc = 2;
	char err[600], *text = NULL;
	size_t len = 0;
	FILE *f;

	signal(SIGPIPE, SIG_IGN); /* a closed pipe is EPIPE: exit with the verdict */
	while ((c = cmdopt__next(&compare_cmdopts, &g, argc, argv)) != -1) {
		switch (c) {
		case 't':
			if (nr_th == COMPARE_MAX_THRESHOLDS) {
				pr_err("at most %d thresholds\n", COMPARE_MAX_THRESHOLDS);
				return 2;
			}
			if (threshold__parse(optarg, &th[nr_th++])) {
				pr_err("invalid --threshold '%s': give NAME=+P%% or NAME=-P%% (0 < P < 1000)\n",
				       optarg);
				return 2;
			}
			break;
		case 'o':
			if (compare_format__parse(optarg, &fmt)) {
				pr_err("unknown output format '%s': use table, json or markdown\n",
				       optarg);
				return 2;
			}
			break;
		case 'h':
			text = cmdopt__usage(&compare_cmdopts, &len);
			if (!text) {
				pr_err("%s\n", strerror(ENOMEM));
				return 2;
			}
			rc = report__write(STDOUT_FILENO, "the help", text, len) == -EIO ? 2 : 0;
			free(text);
			return rc;
		default:
			pr_err("try 'pmbpf compare --help'\n");
			return 2;
		}
	}
	if (argc - optind != 2) {
		pr_err("give two files: pmbpf compare BASE.json NEW.json\n");
		return 2;
	}
	if (load(argv[optind], &base) || load(argv[optind + 1], &new))
		goto out;
	r = malloc(sizeof(*r));
	if (!r)
		goto out;
	if (compare__series(&base, &new, th, nr_th, r, err, sizeof(err))) {
		pr_err("%s\n", err);
		goto out;
	}
	rc = r->counts[VERDICT_REGRESSION] ? 1 : 0;
	f = open_memstream(&text, &len);
	if (!f) {
		pr_err("%s\n", strerror(errno));
		rc = 2;
		goto out;
	}
	compare__print(f, fmt, r);
	if (fclose(f) || printable(fmt, &text, &len) ||
	    report__write(STDOUT_FILENO, "the comparison", text, len) == -EIO)
		rc = 2;
out:
	free(text);
	free(r);
	series__free(&base);
	series__free(&new);
	return rc;
}
