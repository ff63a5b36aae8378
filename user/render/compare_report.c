// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The comparison of two series of runs (compare.c) for people and programs:
 * a table, Markdown (a CI job's summary) or one JSON object.
 */
#include <errno.h>
#include <math.h>
#include <string.h>
#include "compare_report.h"
#include "util.h"

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
	jw_u64_field(w, "n", s->n);
	jw_double_field(w, "mean", s->mean, 6);
	jw_double_field(w, "stddev", s->stddev, 6);
	jw_double_field(w, "rsd_pct", s->rsd_pct, 4);
	jw_double_field(w, "median", s->median, 6);
	jw_double_field(w, "robust_rsd_pct", s->robust_rsd_pct, 4);
	jw_double_field(w, "min", s->min, 6);
	jw_double_field(w, "max", s->max, 6);
	jw_end_object(w);
}

static void json_side(struct json_writer *w, const char *key, const struct series *s)
{
	jw_key(w, key);
	jw_start_object(w);
	jw_string_field(w, "label", s->label);
	jw_string_field(w, "command", s->command);
	jw_u64_field(w, "runs", s->n);
	jw_end_object(w);
}

void compare__json(struct json_writer *w, const struct compare_result *r)
{
	int i;

	jw_start_object(w);
	jw_string_field(w, "type", "compare");
	json_side(w, "base", r->base);
	json_side(w, "new", r->new);
	jw_bool_field(w, "same_command", !strcmp(r->base->command, r->new->command));
	jw_key(w, "method");
	jw_string(w, "change of the median; interval of the shift from the exact Mann-Whitney "
		     "test (Hodges-Lehmann)");
	jw_double_field(w, "confidence", COMPARE_LEVEL, 2);
	jw_u64_field(w, "max_runs", COMPARE_MAX_RUNS);
	jw_key(w, "rows");
	jw_start_array(w);
	for (i = 0; i < r->nr_rows; i++) {
		const struct compare_row *row = &r->rows[i];

		jw_start_object(w);
		jw_string_field(w, "metric", row->name);
		jw_string_field(w, "unit", row->time ? "ns" : "");
		jw_key(w, "base");
		json_summary(w, &row->base);
		jw_key(w, "new");
		json_summary(w, &row->new);
		jw_double_field(w, "change_pct", row->change.pct, 4);
		jw_double_field(w, "ci_low_pct", row->change.lo_pct, 4);
		jw_double_field(w, "ci_high_pct", row->change.hi_pct, 4);
		jw_bool_field(w, "significant", row->change.significant);
		jw_double_field(w, "threshold_pct", row->threshold_pct, 4);
		jw_double_field(w, "floor", row->floor, 6);
		jw_double_field(w, "limit_pct", row->limit_pct, 4);
		jw_u64_field(w, "runs_needed", row->runs_needed);
		jw_string_field(w, "verdict", verdict__str(row->verdict));
		jw_end_object(w);
	}
	jw_end_array(w);
	jw_string_field(w, "not_compared", r->dropped);
	jw_u64_field(w, "regressions", r->counts[VERDICT_REGRESSION]);
	jw_u64_field(w, "improvements", r->counts[VERDICT_IMPROVEMENT]);
	jw_u64_field(w, "too_noisy", r->counts[VERDICT_NOISY]);
	jw_u64_field(w, "too_few_runs", r->counts[VERDICT_FEW]);
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
