// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <math.h>
#include <string.h>
#include <time.h>
#include "commands.h"
#include "json_writer.h"
#include "metrics.h"
#include "output.h"
#include "util.h"

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

static void iso_time(char *buf, size_t len, __u64 ns)
{
	time_t t = ns / 1000000000ULL;
	char sec[32];
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(sec, sizeof(sec), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%.20s.%03uZ", sec, (unsigned)(ns % 1000000000ULL / 1000000ULL));
}

int output__start(struct output *o, const struct event_info *ev, int nr, bool no_pmu,
		  const char *attach, int nr_cpus)
{
	struct json_writer w;
	int i;

	errno = 0;
	if (o->format == OUTPUT_JSON) {
		jw_init(&w, o->f);
		jw_start_object(&w);
		jw_key(&w, "type");
		jw_string(&w, "session");
		jw_key(&w, "version");
		jw_string(&w, PMBPF_VERSION);
		jw_key(&w, "schema");
		jw_u64(&w, 1);
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
			jw_string(&w, event__class(&ev[i].spec));
			jw_key(&w, "state");
			jw_string(&w, event_state__str(ev[i].state));
			jw_key(&w, "group");
			if (ev[i].spec.group >= 0)
				jw_u64(&w, (__u64)ev[i].spec.group);
			else
				jw_null(&w);
			jw_key(&w, "cpus");
			jw_u64(&w, (__u64)ev[i].cpus);
			jw_key(&w, "error");
			if (ev[i].err)
				jw_string(&w, strerror(ev[i].err));
			else
				jw_null(&w);
			jw_end_object(&w);
			fputc('\n', o->f);
		}
		return stream__error(o->f);
	}
	/* Table and CSV: the states go to stderr, so stdout stays data only. */
	for (i = 0; i < nr; i++) {
		if (ev[i].state == EVENT_COUNTING)
			continue;
		pr_err("event %s: %s%s%s\n", ev[i].spec.name, event_state__str(ev[i].state),
		       ev[i].err ? ": " : "", ev[i].err ? strerror(ev[i].err) : "");
	}
	for (i = 0; i < nr; i++)
		if (ev[i].state == EVENT_PERMISSION_DENIED)
			break;
	if (i < nr)
		pr_err("CPU-wide counters need CAP_PERFMON and kernel.perf_event_paranoid <= 2 (above 2, as Debian's default 3, they need CAP_SYS_ADMIN)\n");
	for (i = 0; i < nr; i++)
		if (ev[i].spec.kind & EVENT_HW)
			break;
	if (no_pmu && i < nr)
		pr_err("no hardware PMU on this host: hardware events show '-'; CPU time, switches and software events are counted\n");
	return 0;
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

static void table_metric_header(struct output *o, const struct snapshot *snap)
{
	int u, v;

	for (u = 0; snap->metrics && u < snap->metrics->nr; u++) {
		const char *const *names = metric_use__values(&snap->metrics->m[u]);

		for (v = 0; v < METRIC_MAX_VALUES && names[v]; v++)
			fprintf(o->f, " %*.*s", col_width(names[v]), col_width(names[v]), names[v]);
	}
}

static void table_metrics(struct output *o, const struct snapshot *snap,
			  const struct row_metrics *m)
{
	int u, v;

	for (u = 0; snap->metrics && u < snap->metrics->nr; u++) {
		const char *const *names = metric_use__values(&snap->metrics->m[u]);

		for (v = 0; v < METRIC_MAX_VALUES && names[v]; v++)
			if (isfinite(m->metric[u][v]))
				fprintf(o->f, " %*.4f", col_width(names[v]), m->metric[u][v]);
			else
				fprintf(o->f, " %*s", col_width(names[v]), "-");
	}
}

static void table_figure_header(struct output *o, const struct snapshot *snap)
{
	char buf[64];
	int i;

	fprintf(o->f, " %6s", "CPU%");
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
	table_metric_header(o, snap);
	fprintf(o->f, " %7s %7s %9s %5s\n", "VCSW", "ICSW", "RUNQp99us", "COV%");
}

static void table_figures(struct output *o, const struct snapshot *snap, const struct figures *f)
{
	struct row_metrics m;
	char buf[64];
	int i;

	metrics__figures(snap, f, &m);
	fprintf(o->f, " %6.1f", m.cpu_pct);
	for (i = 0; i < snap->nr_events; i++) {
		if ((snap->events[i].spec.kind & EVENT_TIME) && isfinite(m.count[i]))
			snprintf(buf, sizeof(buf), "%.1fms", m.count[i] / 1e6);
		else
			fmt_count(buf, sizeof(buf), m.count[i]);
		fprintf(o->f, " %*s", col_width(snap->events[i].spec.name), buf);
	}
	if (isfinite(m.ipc))
		/* *: from two counters multiplexed over different slices, not one group */
		fprintf(o->f, m.ipc_grouped || !(m.min_coverage < 1.0) ? " %6.2f" : " %5.2f*",
			m.ipc);
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
	table_metrics(o, snap, &m);
	fprintf(o->f, " %7llu %7llu", (unsigned long long)f->n[PMBPF_N_NVCSW],
		(unsigned long long)f->n[PMBPF_N_NIVCSW]);
	if (isfinite(m.runq_p99_ns))
		fprintf(o->f, " %9.0f", m.runq_p99_ns / 1e3);
	else
		fprintf(o->f, " %9s", "-");
	if (isfinite(m.min_coverage))
		fprintf(o->f, " %5.1f\n", m.min_coverage * 100);
	else
		fprintf(o->f, " %5s\n", "-");
}

/* U+FFFD, in place of bytes a reader's terminal or parser must not get. */
#define REPLACEMENT "\xef\xbf\xbd"

/*
 * Copy s into buf as valid UTF-8 without control characters (comms and
 * cgroup paths are any bytes: an escape sequence must not reach a terminal).
 */
static const char *printable(char *buf, size_t len, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t o = 0;
	int n;

	for (; *p; p += n) {
		n = *p >= 0x80 ? utf8_len(p) : 1;
		if (!n || *p < 0x20 || *p == 0x7f) {
			if (o + 3 >= len)
				break;
			memcpy(buf + o, REPLACEMENT, 3);
			o += 3;
			n = 1;
			continue;
		}
		if (o + n >= len)
			break;
		memcpy(buf + o, p, n);
		o += n;
	}
	buf[o] = '\0';
	return buf;
}

/*
 * The end of a path that does not fit in width, marked as top does: "..."
 * and then, where one fits, from a '/'.
 */
static const char *path_tail(char *buf, size_t len, const char *s, size_t width)
{
	size_t n = strlen(s);
	const char *tail, *slash;

	if (n <= width || width <= 3)
		return s;
	tail = s + n - (width - 3);
	slash = strchr(tail, '/');
	if (slash && slash[1])
		tail = slash;
	snprintf(buf, len, "...%s", tail);
	return buf;
}

static void table(struct output *o, const struct snapshot *snap)
{
	char tbuf[32];
	size_t r;
	time_t t = snap->time_ns / 1000000000ULL;
	struct tm tm;

	localtime_r(&t, &tm);
	strftime(tbuf, sizeof(tbuf), "%H:%M:%S", &tm);
	fprintf(o->f, "\n%s  interval %.2fs  %zu processes  %zu cgroups\n", tbuf,
		snap->interval_ns / 1e9, snap->nr_rows, snap->nr_cgroups);
	if (o->procs) {
		fprintf(o->f, "%7s %-16s %-24s", "PID", "COMM", "CGROUP");
		table_figure_header(o, snap);
		for (r = 0; r < snap->nr_rows; r++) {
			const struct proc_row *row = &snap->rows[r];
			char comm[3 * PMBPF_COMM_LEN + 2], safe[3 * PMBPF_COMM_LEN + 1];
			char path[4096 * 3], cut[64];

			snprintf(comm, sizeof(comm), "%s%s",
				 printable(safe, sizeof(safe), row->comm), row->exited ? "*" : "");
			if (row->overflow)
				fprintf(o->f, "%7s", "-");
			else
				fprintf(o->f, "%7u", row->pid);
			printable(path, sizeof(path), row->cgroup ? row->cgroup : "-");
			fprintf(o->f, " %-16s %-24s", comm, path_tail(cut, sizeof(cut), path, 24));
			table_figures(o, snap, &row->f);
		}
	}
	if (o->cgroups) {
		fprintf(o->f, "%-40s %-10s %-12s %5s", "CGROUP (incl. descendants)", "RUNTIME",
			"ID", "PROCS");
		table_figure_header(o, snap);
		for (r = 0; r < snap->nr_cgroups; r++) {
			const struct cgroup_row *cg = &snap->cgroups[r];
			char path[4096 * 3], cut[64];

			printable(path, sizeof(path), cg->path ? cg->path : "?");
			fprintf(o->f, "%-40s %-10s %-12s %5u",
				path_tail(cut, sizeof(cut), path, 40),
				cg->ci.runtime[0] ? cg->ci.runtime : "-",
				cg->ci.id[0] ? cg->ci.id : "-", cg->nr_procs_total);
			table_figures(o, snap, &cg->total);
		}
	}
	if (snap->stats[PMBPF_STAT_OVERFLOW] || snap->stats[PMBPF_STAT_EXITS_LOST])
		fprintf(o->f,
			"(map full: %llu credits folded into [overflow]; exit records lost: %llu)\n",
			(unsigned long long)snap->stats[PMBPF_STAT_OVERFLOW],
			(unsigned long long)snap->stats[PMBPF_STAT_EXITS_LOST]);
}

/* -M figures: "metrics": {"topdown": {"retiring": 0.41, ...}}, null where not counted */
static void json_metrics(struct json_writer *w, const struct snapshot *snap,
			 const struct row_metrics *m)
{
	int u, v;

	if (!snap->metrics)
		return;
	jw_key(w, "metrics");
	jw_start_object(w);
	for (u = 0; u < snap->metrics->nr; u++) {
		const char *const *names = metric_use__values(&snap->metrics->m[u]);

		jw_key(w, snap->metrics->m[u].name);
		jw_start_object(w);
		for (v = 0; v < METRIC_MAX_VALUES && names[v]; v++) {
			jw_key(w, names[v]);
			jw_double(w, m->metric[u][v], 4);
		}
		jw_end_object(w);
	}
	jw_end_object(w);
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
	jw_key(w, "ipc_same_group");
	jw_bool(w, m->ipc_grouped);
	jw_key(w, "mpki");
	jw_start_object(w);
	for (i = 0; i < snap->nr_events; i++) {
		if (!(snap->events[i].spec.kind & EVENT_MISS))
			continue;
		jw_key(w, snap->events[i].spec.name);
		jw_double(w, m->mpki[i], 4);
	}
	jw_end_object(w);
	json_metrics(w, snap, m);
}

static void json_runq(struct json_writer *w, const struct figures *f, const struct row_metrics *m)
{
	int i, last = -1;

	jw_key(w, "offcpu_ns");
	jw_u64(w, f->n[PMBPF_N_OFFCPU_NS]);
	jw_key(w, "runq");
	jw_start_object(w);
	jw_key(w, "count");
	jw_u64(w, f->n[PMBPF_N_RUNQ_COUNT]);
	jw_key(w, "total_ns");
	jw_u64(w, f->n[PMBPF_N_RUNQ_TOTAL_NS]);
	jw_key(w, "avg_ns");
	jw_double(w, m->runq_avg_ns, 0);
	jw_key(w, "p50_ns");
	jw_double(w, m->runq_p50_ns, 0);
	jw_key(w, "p99_ns");
	jw_double(w, m->runq_p99_ns, 0);
	jw_key(w, "max_ns");
	jw_double(w, m->runq_max_ns, 0);
	jw_key(w, "hist_log2_us");
	jw_start_array(w);
	for (i = 0; i < PMBPF_RUNQ_SLOTS; i++)
		if (f->runq_hist[i])
			last = i;
	for (i = 0; i <= last; i++)
		jw_u64(w, f->runq_hist[i]);
	jw_end_array(w);
	jw_end_object(w);
}

/* Every figure of a process or cgroup, with the same names in both. */
static void json_figures(struct json_writer *w, const struct snapshot *snap,
			 const struct figures *f)
{
	struct row_metrics m;

	metrics__figures(snap, f, &m);
	jw_key(w, "cpu_pct");
	jw_double(w, m.cpu_pct, 2);
	jw_key(w, "oncpu_ns");
	jw_u64(w, f->n[PMBPF_N_ONCPU_NS]);
	jw_key(w, "voluntary_switches");
	jw_u64(w, f->n[PMBPF_N_NVCSW]);
	jw_key(w, "involuntary_switches");
	jw_u64(w, f->n[PMBPF_N_NIVCSW]);
	json_runq(w, f, &m);
	json_events(w, snap, f->ev, &m);
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
	for (r = 0; o->procs && r < snap->nr_rows; r++) {
		const struct proc_row *row = &snap->rows[r];

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
		json_figures(&w, snap, &row->f);
		jw_end_object(&w);
		fputc('\n', o->f);
	}
	for (r = 0; o->cgroups && r < snap->nr_cgroups; r++) {
		const struct cgroup_row *cg = &snap->cgroups[r];

		jw_start_object(&w);
		json_common(&w, snap, "cgroup");
		jw_key(&w, "cgroup_id");
		jw_u64(&w, cg->id);
		jw_key(&w, "cgroup");
		if (cg->path)
			jw_string(&w, cg->path);
		else
			jw_null(&w);
		jw_key(&w, "parent_id");
		jw_u64(&w, cg->parent_id);
		jw_key(&w, "depth");
		jw_u64(&w, cg->depth);
		jw_key(&w, "runtime");
		jw_string(&w, cg->ci.runtime);
		jw_key(&w, "container_id");
		jw_string(&w, cg->ci.id);
		jw_key(&w, "pod_uid");
		jw_string(&w, cg->ci.pod_uid);
		jw_key(&w, "qos");
		jw_string(&w, cg->ci.qos);
		jw_key(&w, "processes");
		jw_u64(&w, cg->nr_procs);
		jw_key(&w, "processes_total");
		jw_u64(&w, cg->nr_procs_total);
		json_figures(&w, snap, &cg->total);
		jw_key(&w, "self");
		jw_start_object(&w);
		json_figures(&w, snap, &cg->self);
		jw_end_object(&w);
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
	jw_key(&w, "cgroups");
	jw_u64(&w, snap->nr_cgroups);
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
	jw_key(&w, "wakeups");
	jw_u64(&w, snap->stats[PMBPF_STAT_WAKEUPS]);
	jw_key(&w, "waits_unmatched");
	jw_u64(&w, snap->stats[PMBPF_STAT_WAIT_UNMATCHED]);
	jw_key(&w, "spans_unmatched");
	jw_u64(&w, snap->stats[PMBPF_STAT_SPAN_UNMATCHED]);
	jw_key(&w, "vanished");
	jw_u64(&w, snap->vanished);
	jw_key(&w, "poll_ms");
	jw_double(&w, snap->poll_ns / 1e6, 3);
	jw_key(&w, "programs");
	jw_start_object(&w);
	for (r = 0; r < (size_t)snap->nr_progs; r++) {
		jw_key(&w, snap->progs[r].name);
		jw_start_object(&w);
		jw_key(&w, "run_time_ns");
		jw_u64(&w, snap->progs[r].run_time_ns);
		jw_key(&w, "run_cnt");
		jw_u64(&w, snap->progs[r].run_cnt);
		jw_key(&w, "recursion_misses");
		jw_u64(&w, snap->progs[r].recursion_misses);
		jw_end_object(&w);
	}
	jw_end_object(&w);
	jw_end_object(&w);
	fputc('\n', o->f);
}

/* Quoted, as valid UTF-8 on one line: control bytes and bad UTF-8 become U+FFFD. */
static void csv_field_str(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	int n;

	fputc('"', f);
	for (; *p; p += n) {
		n = *p >= 0x80 ? utf8_len(p) : 1;
		if (!n || *p < 0x20 || *p == 0x7f) {
			fputs(REPLACEMENT, f);
			n = 1;
			continue;
		}
		if (*p == '"')
			fputc('"', f);
		fwrite(p, 1, n, f);
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

static void csv_figure_header(struct output *o, const struct snapshot *snap)
{
	int i;

	fprintf(o->f, ",cpu_pct,oncpu_ns,voluntary_switches,involuntary_switches,offcpu_ns,"
		      "runq_count,runq_avg_ns,runq_p50_ns,runq_p99_ns,runq_max_ns");
	for (i = 0; i < snap->nr_events; i++)
		fprintf(o->f, ",%s,%s_coverage", snap->events[i].spec.name,
			snap->events[i].spec.name);
	fprintf(o->f, ",ipc");
	for (i = 0; i < snap->nr_events; i++)
		if (snap->events[i].spec.kind & EVENT_MISS)
			fprintf(o->f, ",%s_mpki", snap->events[i].spec.name);
	fputc('\n', o->f);
}

static void csv_figures(struct output *o, const struct snapshot *snap, const struct figures *f)
{
	struct row_metrics m;
	int i;

	metrics__figures(snap, f, &m);
	csv_double(o->f, m.cpu_pct, 2);
	fprintf(o->f, ",%llu,%llu,%llu,%llu,%llu", (unsigned long long)f->n[PMBPF_N_ONCPU_NS],
		(unsigned long long)f->n[PMBPF_N_NVCSW], (unsigned long long)f->n[PMBPF_N_NIVCSW],
		(unsigned long long)f->n[PMBPF_N_OFFCPU_NS],
		(unsigned long long)f->n[PMBPF_N_RUNQ_COUNT]);
	csv_double(o->f, m.runq_avg_ns, 0);
	csv_double(o->f, m.runq_p50_ns, 0);
	csv_double(o->f, m.runq_p99_ns, 0);
	csv_double(o->f, m.runq_max_ns, 0);
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

/* One kind of row per CSV stream: processes, or cgroups with --by cgroup. */
static void csv(struct output *o, const struct snapshot *snap)
{
	char tbuf[40];
	size_t r;

	if (!o->header_done) {
		if (o->procs)
			fprintf(o->f, "time,interval_s,pid,comm,cgroup_id,cgroup,exited");
		else
			fprintf(o->f,
				"time,interval_s,cgroup_id,cgroup,runtime,container_id,pod_uid,"
				"qos,processes");
		csv_figure_header(o, snap);
		o->header_done = true;
	}
	iso_time(tbuf, sizeof(tbuf), snap->time_ns);
	for (r = 0; o->procs && r < snap->nr_rows; r++) {
		const struct proc_row *row = &snap->rows[r];

		fprintf(o->f, "%s,%.6f,", tbuf, snap->interval_ns / 1e9);
		if (!row->overflow)
			fprintf(o->f, "%u", row->pid);
		fputc(',', o->f);
		csv_field_str(o->f, row->comm);
		fprintf(o->f, ",%llu,", (unsigned long long)row->cgroup_id);
		csv_field_str(o->f, row->cgroup ? row->cgroup : "");
		fprintf(o->f, ",%d", row->exited);
		csv_figures(o, snap, &row->f);
	}
	for (r = 0; !o->procs && r < snap->nr_cgroups; r++) {
		const struct cgroup_row *cg = &snap->cgroups[r];

		fprintf(o->f, "%s,%.6f,%llu,", tbuf, snap->interval_ns / 1e9,
			(unsigned long long)cg->id);
		csv_field_str(o->f, cg->path ? cg->path : "");
		fprintf(o->f, ",%s,%s,%s,%s,%u", cg->ci.runtime, cg->ci.id, cg->ci.pod_uid,
			cg->ci.qos, cg->nr_procs_total);
		csv_figures(o, snap, &cg->total);
	}
}

int output__command(struct output *o, const struct snapshot *snap, const struct figures *f,
		    char *const *argv, int exit_code, unsigned int nr_procs)
{
	struct row_metrics m;
	struct json_writer w;
	char buf[64];
	int i;

	errno = 0;
	if (o->format == OUTPUT_JSON) {
		jw_init(&w, o->f);
		jw_start_object(&w);
		jw_key(&w, "type");
		jw_string(&w, "command");
		jw_key(&w, "command");
		jw_start_array(&w);
		for (i = 0; argv[i]; i++)
			jw_string(&w, argv[i]);
		jw_end_array(&w);
		jw_key(&w, "exit_code");
		jw_s64(&w, exit_code);
		jw_key(&w, "wall_s");
		jw_double(&w, snap->interval_ns / 1e9, 6);
		jw_key(&w, "processes");
		jw_u64(&w, nr_procs);
		json_figures(&w, snap, f);
		jw_end_object(&w);
		fputc('\n', o->f);
		return stream__error(o->f);
	}
	metrics__figures(snap, f, &m);
	fprintf(o->f, "\n Counts for '");
	for (i = 0; argv[i]; i++)
		fprintf(o->f, "%s%s", i ? " " : "", argv[i]);
	fprintf(o->f, "' and its children (%u processes):\n\n", nr_procs);
	fprintf(o->f, "%18.3f ms   on-CPU time       # %.3f CPUs utilized\n",
		f->n[PMBPF_N_ONCPU_NS] / 1e6, m.cpu_pct / 100);
	for (i = 0; i < snap->nr_events; i++) {
		const struct event_info *ev = &snap->events[i];

		if (ev->state != EVENT_COUNTING) {
			fprintf(o->f, "%18s      %-17s # %s\n", "-", ev->spec.name,
				event_state__str(ev->state));
			continue;
		}
		if (ev->spec.kind & EVENT_TIME)
			snprintf(buf, sizeof(buf), "%.3f ms", m.count[i] / 1e6);
		else
			snprintf(buf, sizeof(buf), "%.0f   ", m.count[i]);
		fprintf(o->f, "%21s   %-17s", buf, ev->spec.name);
		if (m.coverage[i] < 1.0)
			fprintf(o->f, " (%.1f%% counted)", m.coverage[i] * 100);
		if (isfinite(m.mpki[i]))
			fprintf(o->f, " # %.2f per 1000 instructions", m.mpki[i]);
		fputc('\n', o->f);
	}
	if (isfinite(m.ipc))
		fprintf(o->f, "%18.3f      IPC%s\n", m.ipc,
			m.ipc_grouped ?
				"               # one group" :
				"               # cycles and instructions not in one group");
	else
		fprintf(o->f, "%18s      IPC               # needs cycles and instructions\n", "-");
	for (i = 0; snap->metrics && i < snap->metrics->nr; i++) {
		const struct metric_use *mu = &snap->metrics->m[i];
		const char *const *names = metric_use__values(mu);
		int v;

		if (!mu->def) {
			fprintf(o->f, "%18s      %-17s # not supported\n", "-", mu->name);
			continue;
		}
		for (v = 0; v < METRIC_MAX_VALUES && names[v]; v++)
			if (isfinite(m.metric[i][v]))
				fprintf(o->f, "%18.4f      %s %s\n", m.metric[i][v], mu->name,
					names[v]);
	}
	fprintf(o->f, "%18llu      voluntary switches\n", (unsigned long long)f->n[PMBPF_N_NVCSW]);
	fprintf(o->f, "%18llu      involuntary switches\n",
		(unsigned long long)f->n[PMBPF_N_NIVCSW]);
	if (f->n[PMBPF_N_RUNQ_COUNT])
		fprintf(o->f, "%18.1f us   run-queue latency p99 (%llu waits, max %.1f us)\n",
			m.runq_p99_ns / 1e3, (unsigned long long)f->n[PMBPF_N_RUNQ_COUNT],
			m.runq_max_ns / 1e3);
	fprintf(o->f, "\n%18.6f s    wall time, exit code %d\n\n", snap->interval_ns / 1e9,
		exit_code);
	return stream__error(o->f);
}

int output__snapshot(struct output *o, const struct snapshot *snap)
{
	errno = 0;
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
	return stream__error(o->f);
}
