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
	/*
	 * Off-CPU time and its parts measure the machine as much as the change:
	 * the disk, the other tasks, how busy the runner was (an A/A pair of 20
	 * runs here: offcpu-blocked 0.230 -> 0.274 ms, +19.45% [+10.50%,
	 * +23.40%]). Not judged unless a --threshold names them; their limit
	 * then is the threshold, with the times' 100 us floor.
	 */
	{ "offcpu-time", 0, 100000 },
	{ "offcpu-sleep", 0, 100000 },
	{ "offcpu-blocked", 0, 100000 },
	{ "offcpu-other", 0, 100000 },
	{ "runq-wait", 0, 100000 },
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
		for (j = 0; j < nr_th && strcmp(th[j].name, a->name); j++)
			;
		if (j == nr_th && threshold__default(a->name) == 0) {
			add_dropped(r, a->name, "judged only with a --threshold");
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
