// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <math.h>
#include <string.h>
#include <time.h>
#include "json_writer.h"
#include "metrics.h"
#include "output.h"

int output_format__parse(const char *s, enum output_format *fmt)
{
	if (!strcmp(s, "table"))
		*fmt = OUTPUT_TABLE;
	else if (!strcmp(s, "json"))
		*fmt = OUTPUT_JSON;
	else if (!strcmp(s, "csv"))
		*fmt = OUTPUT_CSV;
	else
		return -EINVAL;
	return 0;
}

const char *fmt_count(char *buf, size_t len, double v)
{
	static const char units[] = "KMGTPE";
	int u = -1;

	if (!isfinite(v)) {
		snprintf(buf, len, "-");
		return buf;
	}
	if (v < 100000) {
		snprintf(buf, len, "%.0f", v);
		return buf;
	}
	while (v >= 999.95 && u < 5) {
		v /= 1000;
		u++;
	}
	snprintf(buf, len, v < 100 ? "%.1f%c" : "%.0f%c", v, units[u]);
	return buf;
}

static const char *event_class(const struct event_spec *s)
{
	switch (s->type) {
	case 0:
		return "hardware";
	case 1:
		return "software";
	case 3:
		return "hw-cache";
	case 4:
		return "raw";
	}
	return "other";
}

static void iso_time(char *buf, size_t len, __u64 ns)
{
	time_t t = ns / 1000000000ULL;
	char sec[32];
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(sec, sizeof(sec), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%.20s.%03uZ", sec, (unsigned)(ns % 1000000000ULL / 1000000ULL));
}

void output__start(struct output *o, const struct event_info *ev, int nr, bool no_pmu,
		   const char *attach, int nr_cpus)
{
	struct json_writer w;
	int i;

	if (o->format == OUTPUT_JSON) {
		jw_init(&w, o->f);
		jw_start_object(&w);
		jw_key(&w, "type");
		jw_string(&w, "session");
		jw_key(&w, "attach");
		jw_string(&w, attach);
		jw_key(&w, "cpus");
		jw_u64(&w, nr_cpus);
		jw_key(&w, "pmu");
		jw_bool(&w, !no_pmu);
		jw_end_object(&w);
		fputc('\n', o->f);
		for (i = 0; i < nr; i++) {
			jw_start_object(&w);
			jw_key(&w, "type");
			jw_string(&w, "event");
			jw_key(&w, "name");
			jw_string(&w, ev[i].spec.name);
			jw_key(&w, "class");
			jw_string(&w, event_class(&ev[i].spec));
			jw_key(&w, "state");
			jw_string(&w, event_state__str(ev[i].state));
			jw_key(&w, "error");
			if (ev[i].err)
				jw_string(&w, strerror(ev[i].err));
			else
				jw_null(&w);
			jw_end_object(&w);
			fputc('\n', o->f);
		}
		fflush(o->f);
		return;
	}
	/* Table and CSV: the states go to stderr, so stdout stays data only. */
	for (i = 0; i < nr; i++) {
		if (ev[i].state == EVENT_COUNTING)
			continue;
		fprintf(stderr, "pmbpf: event %s: %s%s%s\n", ev[i].spec.name,
			event_state__str(ev[i].state), ev[i].err ? ": " : "",
			ev[i].err ? strerror(ev[i].err) : "");
	}
	if (no_pmu)
		fprintf(stderr,
			"pmbpf: no hardware PMU on this host: hardware events show '-'; CPU time, switches and software events are counted\n");
}

static void short_miss_name(char *buf, size_t len, const char *name)
{
	size_t n = strcspn(name, "-");

	snprintf(buf, len, "%.*s-MPKI", (int)n, name);
}

static int col_width(const char *name)
{
	int n = (int)strlen(name);

	return n < 8 ? 8 : n;
}

static void table(struct output *o, const struct snapshot *snap)
{
	char buf[64], tbuf[32];
	struct row_metrics m;
	size_t r;
	int i;
	time_t t = snap->time_ns / 1000000000ULL;
	struct tm tm;

	localtime_r(&t, &tm);
	strftime(tbuf, sizeof(tbuf), "%H:%M:%S", &tm);
	fprintf(o->f, "\n%s  interval %.2fs  %zu processes\n", tbuf, snap->interval_ns / 1e9,
		snap->nr_rows);
	fprintf(o->f, "%7s %-16s %-24s %6s", "PID", "COMM", "CGROUP", "CPU%");
	for (i = 0; i < snap->nr_events; i++)
		fprintf(o->f, " %*s", col_width(snap->events[i].spec.name),
			snap->events[i].spec.name);
	fprintf(o->f, " %6s", "IPC");
	for (i = 0; i < snap->nr_events; i++) {
		if (!(snap->events[i].spec.kind & EVENT_MISS))
			continue;
		short_miss_name(buf, sizeof(buf), snap->events[i].spec.name);
		fprintf(o->f, " %9s", buf);
	}
	fprintf(o->f, " %7s %7s %5s\n", "VCSW", "ICSW", "COV%");

	for (r = 0; r < snap->nr_rows; r++) {
		const struct proc_row *row = &snap->rows[r];
		const char *cg = row->cgroup ? row->cgroup : "-";
		size_t cglen = strlen(cg);
		char comm[PMBPF_COMM_LEN + 2];

		metrics__row(snap, row, &m);
		snprintf(comm, sizeof(comm), "%s%s", row->comm, row->exited ? "*" : "");
		if (row->overflow)
			fprintf(o->f, "%7s", "-");
		else
			fprintf(o->f, "%7u", row->pid);
		fprintf(o->f, " %-16.17s %-24s %6.1f", comm, cglen > 24 ? cg + cglen - 24 : cg,
			m.cpu_pct);
		for (i = 0; i < snap->nr_events; i++) {
			if ((snap->events[i].spec.kind & EVENT_TIME) && isfinite(m.count[i]))
				snprintf(buf, sizeof(buf), "%.1fms", m.count[i] / 1e6);
			else
				fmt_count(buf, sizeof(buf), m.count[i]);
			fprintf(o->f, " %*s", col_width(snap->events[i].spec.name), buf);
		}
		if (isfinite(m.ipc))
			fprintf(o->f, " %6.2f", m.ipc);
		else
			fprintf(o->f, " %6s", "-");
		for (i = 0; i < snap->nr_events; i++) {
			if (!(snap->events[i].spec.kind & EVENT_MISS))
				continue;
			if (isfinite(m.mpki[i]))
				fprintf(o->f, " %9.2f", m.mpki[i]);
			else
				fprintf(o->f, " %9s", "-");
		}
		fprintf(o->f, " %7llu %7llu", (unsigned long long)row->nvcsw,
			(unsigned long long)row->nivcsw);
		if (isfinite(m.min_coverage))
			fprintf(o->f, " %5.1f\n", m.min_coverage * 100);
		else
			fprintf(o->f, " %5s\n", "-");
	}
	if (snap->stats[PMBPF_STAT_OVERFLOW] || snap->stats[PMBPF_STAT_EXITS_LOST])
		fprintf(o->f, "(map full: %llu credits folded into [overflow]; exit records lost: %llu)\n",
			(unsigned long long)snap->stats[PMBPF_STAT_OVERFLOW],
			(unsigned long long)snap->stats[PMBPF_STAT_EXITS_LOST]);
	fflush(o->f);
}

static void json_events(struct json_writer *w, const struct snapshot *snap,
			const struct pmbpf_reading *ev, const struct row_metrics *m)
{
	int i;

	jw_key(w, "events");
	jw_start_object(w);
	for (i = 0; i < snap->nr_events; i++) {
		jw_key(w, snap->events[i].spec.name);
		if (snap->events[i].state != EVENT_COUNTING) {
			jw_null(w);
			continue;
		}
		jw_start_object(w);
		jw_key(w, "count");
		jw_double(w, m->count[i], 0);
		jw_key(w, "raw");
		jw_u64(w, ev[i].value);
		jw_key(w, "enabled_ns");
		jw_u64(w, ev[i].enabled);
		jw_key(w, "running_ns");
		jw_u64(w, ev[i].running);
		jw_key(w, "coverage");
		jw_double(w, m->coverage[i], 4);
		jw_end_object(w);
	}
	jw_end_object(w);
	jw_key(w, "ipc");
	jw_double(w, m->ipc, 4);
	jw_key(w, "mpki");
	jw_start_object(w);
	for (i = 0; i < snap->nr_events; i++) {
		if (!(snap->events[i].spec.kind & EVENT_MISS))
			continue;
		jw_key(w, snap->events[i].spec.name);
		jw_double(w, m->mpki[i], 4);
	}
	jw_end_object(w);
}

static void json_common(struct json_writer *w, const struct snapshot *snap, const char *type)
{
	char tbuf[40];

	iso_time(tbuf, sizeof(tbuf), snap->time_ns);
	jw_key(w, "type");
	jw_string(w, type);
	jw_key(w, "time");
	jw_string(w, tbuf);
	jw_key(w, "interval_s");
	jw_double(w, snap->interval_ns / 1e9, 6);
}

static void json(struct output *o, const struct snapshot *snap)
{
	struct json_writer w;
	struct row_metrics m;
	size_t r;

	jw_init(&w, o->f);
	for (r = 0; r < snap->nr_rows; r++) {
		const struct proc_row *row = &snap->rows[r];

		metrics__row(snap, row, &m);
		jw_start_object(&w);
		json_common(&w, snap, "process");
		jw_key(&w, "pid");
		if (row->overflow)
			jw_null(&w);
		else
			jw_u64(&w, row->pid);
		jw_key(&w, "comm");
		jw_string(&w, row->comm);
		jw_key(&w, "cgroup_id");
		jw_u64(&w, row->cgroup_id);
		jw_key(&w, "cgroup");
		if (row->cgroup)
			jw_string(&w, row->cgroup);
		else
			jw_null(&w);
		jw_key(&w, "exited");
		jw_bool(&w, row->exited);
		jw_key(&w, "overflow");
		jw_bool(&w, row->overflow);
		if (row->overflow) {
			jw_key(&w, "folded_processes");
			jw_u64(&w, row->folded);
		}
		jw_key(&w, "cpu_pct");
		jw_double(&w, m.cpu_pct, 2);
		jw_key(&w, "oncpu_ns");
		jw_u64(&w, row->oncpu_ns);
		jw_key(&w, "voluntary_switches");
		jw_u64(&w, row->nvcsw);
		jw_key(&w, "involuntary_switches");
		jw_u64(&w, row->nivcsw);
		json_events(&w, snap, row->ev, &m);
		jw_end_object(&w);
		fputc('\n', o->f);
	}

	metrics__system(snap, &m);
	jw_start_object(&w);
	json_common(&w, snap, "system");
	jw_key(&w, "cpus");
	jw_u64(&w, snap->nr_cpus);
	jw_key(&w, "processes");
	jw_u64(&w, snap->nr_rows);
	json_events(&w, snap, snap->system, &m);
	jw_key(&w, "attach");
	jw_string(&w, snap->attach);
	jw_key(&w, "map_entries");
	jw_u64(&w, snap->map_entries);
	jw_key(&w, "map_capacity");
	jw_u64(&w, snap->map_capacity);
	jw_key(&w, "overflow_credits");
	jw_u64(&w, snap->stats[PMBPF_STAT_OVERFLOW]);
	jw_key(&w, "exit_records");
	jw_u64(&w, snap->stats[PMBPF_STAT_EXITS]);
	jw_key(&w, "exit_records_lost");
	jw_u64(&w, snap->stats[PMBPF_STAT_EXITS_LOST]);
	jw_key(&w, "read_errors");
	jw_u64(&w, snap->stats[PMBPF_STAT_READ_ERRORS]);
	jw_key(&w, "switches");
	jw_u64(&w, snap->stats[PMBPF_STAT_SWITCHES]);
	jw_key(&w, "vanished");
	jw_u64(&w, snap->vanished);
	jw_key(&w, "poll_ms");
	jw_double(&w, snap->poll_ns / 1e6, 3);
	jw_end_object(&w);
	fputc('\n', o->f);
	fflush(o->f);
}

static void csv_field_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static void csv_double(FILE *f, double v, int decimals)
{
	if (isfinite(v))
		fprintf(f, ",%.*f", decimals, v);
	else
		fputc(',', f);
}

static void csv(struct output *o, const struct snapshot *snap)
{
	char tbuf[40];
	struct row_metrics m;
	size_t r;
	int i;

	if (!o->header_done) {
		fprintf(o->f, "time,interval_s,pid,comm,cgroup_id,cgroup,exited,cpu_pct,oncpu_ns,"
			      "voluntary_switches,involuntary_switches");
		for (i = 0; i < snap->nr_events; i++)
			fprintf(o->f, ",%s,%s_coverage", snap->events[i].spec.name,
				snap->events[i].spec.name);
		fprintf(o->f, ",ipc");
		for (i = 0; i < snap->nr_events; i++)
			if (snap->events[i].spec.kind & EVENT_MISS)
				fprintf(o->f, ",%s_mpki", snap->events[i].spec.name);
		fputc('\n', o->f);
		o->header_done = true;
	}
	iso_time(tbuf, sizeof(tbuf), snap->time_ns);
	for (r = 0; r < snap->nr_rows; r++) {
		const struct proc_row *row = &snap->rows[r];

		metrics__row(snap, row, &m);
		fprintf(o->f, "%s,%.6f,", tbuf, snap->interval_ns / 1e9);
		if (!row->overflow)
			fprintf(o->f, "%u", row->pid);
		fputc(',', o->f);
		csv_field_str(o->f, row->comm);
		fprintf(o->f, ",%llu,", (unsigned long long)row->cgroup_id);
		csv_field_str(o->f, row->cgroup ? row->cgroup : "");
		fprintf(o->f, ",%d", row->exited);
		csv_double(o->f, m.cpu_pct, 2);
		fprintf(o->f, ",%llu,%llu,%llu", (unsigned long long)row->oncpu_ns,
			(unsigned long long)row->nvcsw, (unsigned long long)row->nivcsw);
		for (i = 0; i < snap->nr_events; i++) {
			csv_double(o->f, m.count[i], 0);
			csv_double(o->f, m.coverage[i], 4);
		}
		csv_double(o->f, m.ipc, 4);
		for (i = 0; i < snap->nr_events; i++)
			if (snap->events[i].spec.kind & EVENT_MISS)
				csv_double(o->f, m.mpki[i], 4);
		fputc('\n', o->f);
	}
	fflush(o->f);
}

void output__snapshot(struct output *o, const struct snapshot *snap)
{
	switch (o->format) {
	case OUTPUT_TABLE:
		table(o, snap);
		break;
	case OUTPUT_JSON:
		json(o, snap);
		break;
	case OUTPUT_CSV:
		csv(o, snap);
		break;
	}
}
