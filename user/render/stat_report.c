// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * pmbpf stat's report (stat_report.h): one run's totals as text, the
 * summary of repeated runs and --ab's comparison, the JSON document of
 * every run. From plain data: stat.c runs the command and hands over the
 * runs, the events and the session's facts.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/utsname.h>
#include "catalog.h"
#include "common.h"
#include "compare_report.h"
#include "host.h"
#include "json_writer.h"
#include "metrics.h"
#include "output.h"
#include "stat_report.h"
#include "util.h"

/* A run's figures, for stat's text: the figures and what metrics__figures() made of them. */
struct stat_text {
	FILE *out;
	const struct snapshot *snap;
	const struct figures *f;
	struct row_metrics m;
};

/*
 * pmbpf stat's notes: on an event's row its coverage and MPKI, on the
 * on-CPU time's the CPUs utilized, on IPC's whether it is of one group, on
 * the run-queue p99's the waits and the longest.
 */
static void stat_note(char *buf, size_t len, const struct stat_text *r, const struct figure *fd,
		      int i)
{
	const struct row_metrics *m = &r->m;
	int n = 0;

	buf[0] = '\0';
	if (figure__reading(fd) && r->snap->events[i].state != EVENT_COUNTING) {
		snprintf(buf, len, " # %s", event_state__str(r->snap->events[i].state));
	} else if (fd->src == SRC_EVENT) {
		if (m->coverage[i] < 1.0)
			n = snprintf(buf, len, " (%.1f%% counted)", m->coverage[i] * 100);
		if (isfinite(m->mpki[i]))
			snprintf(buf + n, len - n, " # %.2f per 1000 instructions", m->mpki[i]);
	} else if (fd->src == SRC_COUNT && fd->index == PMBPF_N_ONCPU_NS) {
		snprintf(buf, len, " # %.3f CPUs utilized", m->cpu_pct / 100);
	} else if (fd->src == SRC_DERIVED && fd->index == DER_IPC) {
		snprintf(buf, len, " # %s",
			 !isfinite(m->ipc) ? "needs cycles and instructions" :
			 m->ipc_grouped	   ? "one group" :
					     "cycles and instructions not in one group");
	} else if (fd->src == SRC_DERIVED && fd->index == DER_RUNQ_P99_NS &&
		   r->f->n[PMBPF_N_RUNQ_COUNT]) {
		snprintf(buf, len, " (%llu waits, max %.1f us)",
			 (unsigned long long)r->f->n[PMBPF_N_RUNQ_COUNT], m->runq_max_ns / 1e3);
	}
}

/*
 * A row of pmbpf stat's text for each OUT_STAT figure with a label (the
 * others are notes): times that add up in ms, latencies in us. A gauge
 * without a value and without a note to say why is left out.
 */
static void stat_row(const struct figure *fd, int i, void *arg)
{
	const struct stat_text *r = arg;
	double v = figure__value(fd, r->f, &r->m, i);
	char label[128], note[160], buf[64];
	const char *unit = "";

	if (!fd->label)
		return;
	figure__name(fd, fd->label, r->snap, i, label, sizeof(label));
	stat_note(note, sizeof(note), r, fd, i);
	if (fd->src == SRC_METRIC && !r->snap->metrics->m[i / METRIC_MAX_VALUES].def) {
		if (i % METRIC_MAX_VALUES)
			return;
		snprintf(label, sizeof(label), "%s",
			 r->snap->metrics->m[i / METRIC_MAX_VALUES].name);
		snprintf(note, sizeof(note), " # not supported");
		v = NAN;
	}
	if (!isfinite(v) && !note[0] && fd->kind == FIG_GAUGE)
		return;
	if (isfinite(v) && figure__ns(fd, r->snap, i))
		unit = fd->kind == FIG_COUNTER ? "ms" : "us";
	if (!isfinite(v))
		snprintf(buf, sizeof(buf), "-");
	else if (unit[0])
		snprintf(buf, sizeof(buf), "%.*f", unit[0] == 'm' ? 3 : 1,
			 v / (unit[0] == 'm' ? 1e6 : 1e3));
	else
		snprintf(buf, sizeof(buf), "%.*f",
			 fd->fmt == FMT_RATIO ? 3 : json_decimals(fd->fmt), v);
	if (note[0])
		fprintf(r->out, "%18s %-2s   %-17s%s\n", buf, unit, label, note);
	else
		fprintf(r->out, "%18s %-2s   %s\n", buf, unit, label);
}

int stat_report__run(FILE *f, const struct snapshot *snap, const struct figures *fig,
		     char *const *argv, int status, unsigned int nr_procs)
{
	struct stat_text r = { .out = f, .snap = snap, .f = fig };
	char how[64];
	int i;

	errno = 0;
	fprintf(f, "\n Counts for '");
	for (i = 0; argv[i]; i++) {
		if (i)
			fputc(' ', f);
		text__fputs(argv[i], false, f);
	}
	fprintf(f, "' and its children (%u process%s):\n\n", nr_procs, nr_procs == 1 ? "" : "es");
	metrics__figures(snap, fig, &r.m);
	catalog__each(snap, OUT_STAT, stat_row, &r);
	fprintf(f, "\n%18.6f s    wall time, %s\n\n", snap->interval_ns / 1e9,
		wait_status__str(status, how, sizeof(how)));
	return stream__error(f);
}

struct run_figures {
	struct stat_metric *mv;
	int n;
	const struct snapshot *snap;
	const struct figures *f;
	struct row_metrics m;
};

static void run_figure(const struct figure *fd, int i, void *arg)
{
	struct run_figures *r = arg;
	struct stat_metric *mv = &r->mv[r->n];

	if (!fd->stat || !figure__asked(fd, r->snap, i) || r->n == SERIES_MAX_METRICS)
		return;
	figure__name(fd, fd->stat, r->snap, i, mv->name, sizeof(mv->name));
	mv->time = figure__ns(fd, r->snap, i);
	mv->v = figure__value(fd, r->f, &r->m, i);
	r->n++;
}

int stat_run__metrics(const struct stat_report *rep, const struct stat_run *run,
		      struct stat_metric *mv)
{
	struct snapshot snap = {};
	struct run_figures r = { .mv = mv, .n = 1, .snap = &snap, .f = &run->f };

	snap.events = rep->events;
	snap.nr_events = rep->nr_events;
	snap.metrics = rep->metrics;
	snap.interval_ns = run->wall_ns;
	metrics__figures(&snap, &run->f, &r.m);
	mv[0] = (struct stat_metric){ "wall-time", true, (double)run->wall_ns };
	catalog__each(&snap, OUT_STAT, run_figure, &r);
	return r.n;
}

static void host_cpu_model(char *buf, size_t len)
{
	struct utsname u;

	snprintf(buf, len, "%s", host__cpu()->model_name);
	if (!buf[0] && !uname(&u))
		snprintf(buf, len, "%s", u.machine); /* arm64 names no model */
}

static void json_argv(struct json_writer *w, const char *key, char **argv)
{
	int i;

	jw_key(w, key);
	jw_start_array(w);
	for (i = 0; argv[i]; i++)
		jw_string(w, argv[i]);
	jw_end_array(w);
}

static void json_summaries(struct json_writer *w, const char *key, const struct series *s)
{
	struct summary sm;
	int i;

	jw_key(w, key);
	jw_start_object(w);
	for (i = 0; i < s->nr_metrics; i++) {
		stats__summary(s->m[i].v, s->n, &sm);
		jw_key(w, s->m[i].name);
		jw_start_object(w);
		jw_key(w, "n");
		jw_u64(w, sm.n);
		jw_key(w, "mean");
		jw_double(w, sm.mean, 6);
		jw_key(w, "stddev");
		jw_double(w, sm.stddev, 6);
		jw_key(w, "rsd_pct");
		jw_double(w, sm.rsd_pct, 4);
		jw_key(w, "min");
		jw_double(w, sm.min, 6);
		jw_key(w, "max");
		jw_double(w, sm.max, 6);
		jw_end_object(w);
	}
	jw_end_object(w);
}

void stat_report__json(FILE *f, const struct stat_report *rep, const struct series *a,
		       const struct series *b, const struct compare_result *cmp)
{
	struct stat_metric mv[SERIES_MAX_METRICS];
	const struct event_info *ev;
	struct json_writer w;
	struct utsname u;
	char model[256];
	int i, j, n, nr_ev;

	ev = rep->events;
	nr_ev = rep->nr_events;
	jw_init(&w, f);
	jw_start_object(&w);
	jw_key(&w, "type");
	jw_string(&w, "stat");
	jw_key(&w, "schema");
	jw_u64(&w, STAT_SCHEMA);
	jw_key(&w, "pmbpf");
	jw_string(&w, PMBPF_VERSION);
	jw_key(&w, "host");
	jw_start_object(&w);
	host_cpu_model(model, sizeof(model));
	jw_key(&w, "cpu_model");
	jw_string(&w, model);
	if (!uname(&u)) {
		jw_key(&w, "kernel");
		jw_string(&w, u.release);
		jw_key(&w, "machine");
		jw_string(&w, u.machine);
	}
	jw_key(&w, "cpus");
	jw_u64(&w, sysconf(_SC_NPROCESSORS_ONLN));
	jw_key(&w, "pmu");
	jw_string(&w, rep->pmu);
	jw_key(&w, "attach");
	jw_string(&w, rep->attach);
	jw_end_object(&w);
	jw_key(&w, "events");
	jw_start_array(&w);
	for (i = 0; i < nr_ev; i++) {
		jw_start_object(&w);
		json_event_fields(&w, &ev[i]);
		jw_end_object(&w);
	}
	jw_end_array(&w);
	json_argv(&w, "command", rep->argv_a);
	if (rep->argv_b)
		json_argv(&w, "command_b", rep->argv_b);
	jw_key(&w, "repeat");
	jw_u64(&w, rep->repeat);
	jw_key(&w, "units");
	jw_start_object(&w);
	for (i = 0; i < a->nr_metrics; i++) {
		jw_key(&w, a->m[i].name);
		jw_string(&w, a->m[i].time ? "ns" : "");
	}
	jw_end_object(&w);
	jw_key(&w, "runs");
	jw_start_array(&w);
	for (i = 0; i < rep->nr_runs; i++) {
		const struct stat_run *r = &rep->runs[i];
		char group[2] = { r->group, '\0' };

		jw_start_object(&w);
		jw_key(&w, "run");
		jw_u64(&w, i + 1);
		jw_key(&w, "group");
		jw_string(&w, group);
		output__json_status(&w, r->status);
		jw_key(&w, "processes");
		jw_u64(&w, r->nr_procs);
		jw_key(&w, "metrics");
		jw_start_object(&w);
		n = stat_run__metrics(rep, r, mv);
		for (j = 0; j < n; j++) {
			jw_key(&w, mv[j].name);
			jw_double(&w, mv[j].v, mv[j].v == floor(mv[j].v) ? 0 : 6);
		}
		jw_end_object(&w);
		jw_key(&w, "raw");
		jw_start_object(&w);
		for (j = 0; j < nr_ev; j++) {
			if (ev[j].state != EVENT_COUNTING)
				continue;
			jw_key(&w, ev[j].spec.name);
			jw_start_object(&w);
			jw_key(&w, "value");
			jw_u64(&w, r->f.ev[j].value);
			jw_key(&w, "enabled_ns");
			jw_u64(&w, r->f.ev[j].enabled);
			jw_key(&w, "running_ns");
			jw_u64(&w, r->f.ev[j].running);
			jw_end_object(&w);
		}
		jw_end_object(&w);
		jw_end_object(&w);
	}
	jw_end_array(&w);
	json_summaries(&w, "summary", a);
	if (b)
		json_summaries(&w, "summary_b", b);
	if (cmp) {
		jw_key(&w, "comparison");
		compare__json(&w, cmp);
	}
	jw_end_object(&w);
	fputc('\n', f);
}

static void fmt_value(char *buf, size_t len, double v, bool time)
{
	if (!isfinite(v))
		snprintf(buf, len, "-");
	else if (time)
		snprintf(buf, len, "%.3fms", v / 1e6);
	else if (fabs(v) >= 1000 || v == floor(v))
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%.3f", v);
}

static void table_summary(FILE *f, const struct series *s)
{
	char mean[32], sd[32], lo[32], hi[32];
	struct summary sm;
	int i;

	fprintf(f, "\n Counts for '");
	text__fputs(s->command, false, f);
	fprintf(f, "' and its children, %d runs:\n\n", s->n);
	fprintf(f, " %-26s %14s %12s %7s %14s %14s\n", "METRIC", "MEAN", "STDDEV", "RSD%", "MIN",
		"MAX");
	for (i = 0; i < s->nr_metrics; i++) {
		stats__summary(s->m[i].v, s->n, &sm);
		fmt_value(mean, sizeof(mean), sm.mean, s->m[i].time);
		fmt_value(sd, sizeof(sd), sm.stddev, s->m[i].time);
		fmt_value(lo, sizeof(lo), sm.min, s->m[i].time);
		fmt_value(hi, sizeof(hi), sm.max, s->m[i].time);
		if (isfinite(sm.rsd_pct))
			fprintf(f, " %-26s %14s %12s %7.2f %14s %14s\n", s->m[i].name, mean, sd,
				sm.rsd_pct, lo, hi);
		else
			fprintf(f, " %-26s %14s %12s %7s %14s %14s\n", s->m[i].name, mean, sd, "-",
				lo, hi);
	}
}

void stat_report__table(FILE *f, const struct series *a, const struct series *b,
			const struct compare_result *cmp)
{
	table_summary(f, a);
	if (b)
		table_summary(f, b);
	if (cmp) {
		fprintf(f, "\n A/B comparison (interleaved runs, B against A):\n\n");
		compare__print(f, COMPARE_TABLE, cmp);
	}
	fputc('\n', f);
}
