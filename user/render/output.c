// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * record's output: the format chosen (output_format__parse), the session's
 * start, each snapshot and a command's totals handed to their renderer: the
 * table here, JSON Lines in output_json.c, CSV in output_csv.c.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "catalog.h"
#include "container.h"
#include "common.h"
#include "metrics.h"
#include "output.h"
#include "output_row.h"
#include "stat_report.h"
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

void output__iso_time(char *buf, size_t len, __u64 ns)
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
	int i;

	errno = 0;
	if (o->format == OUTPUT_JSON)
		return output__json_start(o, ev, nr, no_pmu, attach, nr_cpus);
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
	if (i < nr) {
		char why[512];

		pr_err("%s\n", perm__why(why, sizeof(why)));
	}
	for (i = 0; i < nr; i++)
		if (ev[i].spec.kind & EVENT_HW)
			break;
	if (no_pmu && i < nr)
		pr_err("no hardware PMU on this host: hardware events show '-'; CPU time, switches and software events are counted\n");
	return 0;
}

void output_row__init(struct row *r, struct output *o, const struct snapshot *snap,
		      const struct figures *f, bool header)
{
	r->o = o;
	r->snap = snap;
	r->f = f;
	r->header = header;
	if (f)
		metrics__figures(snap, f, &r->m);
}

/*
 * IPC from cycles and instructions that were multiplexed over different
 * slices (not one group): the table marks it with '*'.
 */
static bool ipc_ungrouped(const struct figure *fd, const struct row_metrics *m)
{
	return fd->src == SRC_DERIVED && fd->index == DER_IPC && !m->ipc_grouped &&
	       m->min_coverage < 1.0;
}

/* The table's text of a value: ns in us (titles say so), clock events in ms, counts humanized. */
static const char *table_value(char *buf, size_t len, const struct figure *fd,
			       const struct snapshot *snap, int i, double v,
			       const struct row_metrics *m)
{
	if (!isfinite(v))
		return "-";
	switch (fd->fmt) {
	case FMT_PCT:
		snprintf(buf, len, "%.1f", v);
		break;
	case FMT_SHARE:
		snprintf(buf, len, "%.1f", v * 100);
		break;
	case FMT_RATIO:
		snprintf(buf, len, "%.2f%s", v, ipc_ungrouped(fd, m) ? "*" : "");
		break;
	case FMT_NS:
		snprintf(buf, len, "%.0f", v / 1e3);
		break;
	case FMT_COUNT:
		if (figure__ns(fd, snap, i))
			snprintf(buf, len, "%.1fms", v / 1e6);
		else
			fmt_count(buf, len, v);
		break;
	default:
		snprintf(buf, len, "%.4f", v);
		break;
	}
	return buf;
}

static void table_cell(const struct figure *fd, int i, void *arg)
{
	struct row *r = arg;
	char title[128], buf[64];
	int w;

	figure__name(fd, fd->title, r->snap, i, title, sizeof(title));
	w = (int)strlen(title) > fd->width ? (int)strlen(title) : fd->width;
	if (r->header)
		fprintf(r->o->f, " %*s", w, title);
	else
		fprintf(r->o->f, " %*s", w,
			table_value(buf, sizeof(buf), fd, r->snap, i,
				    figure__value(fd, r->f, &r->m, i), &r->m));
}

/* Characters of the HOT column's function name kept, as COMM keeps 16. */
#define HOT_WIDTH 32

/* The HOT cell of a row: its function, cut to HOT_WIDTH characters, or "-". */
static const char *hot_cell(char *buf, size_t len, const struct proc_row *row)
{
	const unsigned char *p;
	int chars = 0;

	if (!row->hot)
		return "-";
	text__printable(buf, len, row->hot, false);
	/* cut at a character boundary */
	for (p = (const unsigned char *)buf; *p; p++)
		if ((*p & 0xc0) != 0x80 && ++chars > HOT_WIDTH) {
			*(char *)p = '\0';
			break;
		}
	return buf;
}

/*
 * The figure columns of the table (f NULL: their titles), then hot as the
 * last column (NULL: none), then the end of the line.
 */
static void table_figures(struct output *o, const struct snapshot *snap, const struct figures *f,
			  const char *hot)
{
	struct row r;

	output_row__init(&r, o, snap, f, !f);
	catalog__each(snap, OUT_TABLE, table_cell, &r);
	if (hot)
		fprintf(o->f, " %s", hot);
	fputc('\n', o->f);
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

/* A process's row of the table, or with tid a thread's (named after itself). */
static void table_row(struct output *o, const struct snapshot *snap, const struct proc_row *row,
		      bool tid)
{
	char comm[3 * PMBPF_COMM_LEN + 2], safe[3 * PMBPF_COMM_LEN + 1];
	char path[4096 * 3], cut[64], hot[HOT_WIDTH * 3 + 1], label[64];
	struct container_info ci;
	const char *where;

	snprintf(comm, sizeof(comm), "%s%s", text__printable(safe, sizeof(safe), row->comm, false),
		 row->exited ? "*" : "");
	if (row->overflow)
		fprintf(o->f, "%7s", "-");
	else
		fprintf(o->f, "%7u", row->pid);
	if (tid)
		fprintf(o->f, " %7u", row->tid);
	/* a container's cgroup as top shows it: its 64-hex name's tail tells nothing */
	container__parse(row->cgroup ? row->cgroup : "", &ci);
	where = container__label(&ci, label, sizeof(label));
	if (!where)
		where = path_tail(
			cut, sizeof(cut),
			text__printable(path, sizeof(path), row->cgroup ? row->cgroup : "-", false),
			24);
	fprintf(o->f, " %-16s %-24s", comm, where);
	table_figures(o, snap, &row->f, !tid && snap->hot ? hot_cell(hot, sizeof(hot), row) : NULL);
}

static void table(struct output *o, const struct snapshot *snap)
{
	unsigned long long nocgroup = 0;
	bool overflow_mark = false, nocgroup_row = false;
	char tbuf[32];
	size_t r;
	time_t t = snap->time_ns / 1000000000ULL;
	struct tm tm;

	localtime_r(&t, &tm);
	strftime(tbuf, sizeof(tbuf), "%H:%M:%S", &tm);
	fprintf(o->f, "\n%s  interval %.2fs  %zu processes  ", tbuf, snap->interval_ns / 1e9,
		snap->nr_rows);
	if (snap->threads_on)
		fprintf(o->f, "%zu threads  ", snap->nr_threads);
	fprintf(o->f, "%zu cgroups\n", snap->nr_cgroups);
	if (o->procs) {
		fprintf(o->f, "%7s %-16s %-24s", "PID", "COMM", "CGROUP");
		table_figures(o, snap, NULL, snap->hot ? "HOT" : NULL);
		for (r = 0; r < snap->nr_rows; r++)
			table_row(o, snap, &snap->rows[r], false);
	}
	if (o->threads && snap->threads_on) {
		fprintf(o->f, "%7s %7s %-16s %-24s", "PID", "TID", "COMM", "CGROUP");
		table_figures(o, snap, NULL, NULL);
		for (r = 0; r < snap->nr_threads; r++)
			table_row(o, snap, &snap->threads[r], true);
	}
	if (o->cgroups) {
		fprintf(o->f, "%-40s %-10s %-12s %5s", "CGROUP (incl. descendants)", "RUNTIME",
			"ID", "PROCS");
		table_figures(o, snap, NULL, NULL);
		for (r = 0; r < snap->nr_cgroups; r++) {
			const struct cgroup_row *cg = &snap->cgroups[r];
			char path[4096 * 3], cut[64], procs[24];

			text__printable(path, sizeof(path), cg->path ? cg->path : "?", false);
			/* "+": some of its processes have no row of their own (the map full) */
			snprintf(procs, sizeof(procs), "%u%s", cg->nr_procs_total,
				 cg->overflow_procs_total ? catalog__overflow()->title : "");
			overflow_mark |= cg->overflow_procs_total != 0;
			fprintf(o->f, "%-40s %-10s %-12s %5s",
				path_tail(cut, sizeof(cut), path, 40),
				cg->ci.runtime[0] ? cg->ci.runtime : "-",
				cg->ci.id[0] ? cg->ci.id : "-", procs);
			table_figures(o, snap, &cg->total, NULL);
		}
	}
	if (overflow_mark)
		fprintf(o->f,
			"(PROCS %s: processes that found the counts map full, without a row of their own: "
			"their figures are in their cgroup's [overflow] row; -m sets the map's size)\n",
			catalog__overflow()->title);
	/* the last resort: more cgroups overflowed than the overflow map holds */
	for (r = 0; r < snap->nr_rows; r++)
		if (snap->rows[r].overflow && !snap->rows[r].cgroup_id) {
			nocgroup_row = true;
			nocgroup += snap->rows[r].folded;
		}
	if (nocgroup_row)
		fprintf(o->f,
			"([overflow] in cgroup -: processes (%llu new) that found the counts map full "
			"when more cgroups had overflowed than the overflow map holds: their figures "
			"are in no cgroup's; -m sets the counts map's size)\n",
			nocgroup);
	if (snap->stats[PMBPF_STAT_OVERFLOW] || snap->stats[PMBPF_STAT_EXITS_DROPPED] ||
	    snap->stats[PMBPF_STAT_EXITS_LOST])
		fprintf(o->f,
			"(map full: %llu credits folded into [overflow] rows; exit records dropped: %llu, "
			"read from the map instead; exit records lost: %llu)\n",
			(unsigned long long)snap->stats[PMBPF_STAT_OVERFLOW],
			(unsigned long long)snap->stats[PMBPF_STAT_EXITS_DROPPED],
			(unsigned long long)snap->stats[PMBPF_STAT_EXITS_LOST]);
}

int output__command(struct output *o, const struct snapshot *snap, const struct figures *f,
		    char *const *argv, int status, unsigned int nr_procs)
{
	errno = 0;
	if (o->format == OUTPUT_JSON)
		return output__json_command(o, snap, f, argv, status, nr_procs);
	return stat_report__run(o->f, snap, f, argv, status, nr_procs);
}

int output__snapshot(struct output *o, const struct snapshot *snap)
{
	errno = 0;
	switch (o->format) {
	case OUTPUT_TABLE:
		table(o, snap);
		break;
	case OUTPUT_JSON:
		output__json_lines(o, snap);
		break;
	case OUTPUT_CSV:
		output__csv(o, snap);
		break;
	}
	return stream__error(o->f);
}
