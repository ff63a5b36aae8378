// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * record -o csv: one kind of row per stream (processes, threads or
 * cgroups), a header of the catalog's CSV names once, then a line per row.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "catalog.h"
#include "metrics.h"
#include "outbuf.h"
#include "output.h"
#include "output_row.h"
#include "util.h"

/* Quoted, as valid UTF-8 on one line: control bytes and bad UTF-8 become U+FFFD. */
static void csv_field_str(struct outbuf *b, const char *s)
{
	int n;

	outbuf__putc(b, '"');
	for (; *s; s += n) {
		if ((unsigned char)*s >= 0x20 && (unsigned char)*s < 0x7f) {
			n = 1;
			if (*s == '"')
				outbuf__putc(b, '"');
			outbuf__putc(b, *s);
			continue;
		}
		if (!text__char(s, false, &n)) {
			outbuf__puts(b, TEXT_REPLACEMENT);
			continue;
		}
		outbuf__write(b, s, n);
	}
	outbuf__putc(b, '"');
}

/* The figure columns of a CSV stream: the same for each row of a snapshot. */
struct csv_cols {
	struct csv_col {
		const struct figure *fd;
		int i;
	} * c;
	size_t nr, cap;
	bool procs; /* a stream of process or thread rows: not a cgroup's own figures */
	bool failed;
};

static void csv_col_add(const struct figure *fd, int i, void *arg)
{
	struct csv_cols *cols = arg;
	struct csv_col *c;

	/* a cgroup's own file figures: columns of the cgroup rows' stream only */
	if (fd->src == SRC_CGROUP && cols->procs)
		return;
	c = array__room(cols->c, cols->nr, &cols->cap, sizeof(*c));
	if (!c) {
		cols->failed = true;
		return;
	}
	cols->c = c;
	cols->c[cols->nr++] = (struct csv_col){ fd, i };
}

/* The header's names of the figure columns, then the end of the line. */
static void csv_header_figures(struct outbuf *b, const struct snapshot *snap,
			       const struct csv_cols *cols)
{
	char name[128], *p;
	size_t k;

	for (k = 0; k < cols->nr; k++) {
		const struct figure *fd = cols->c[k].fd;

		figure__name(fd, fd->csv ? fd->csv : fd->name, snap, cols->c[k].i, name,
			     sizeof(name));
		/* a nested JSON name is flat here: runq.p99_ns -> runq_p99_ns */
		for (p = name; !fd->csv && (p = strchr(p, '.'));)
			*p = '_';
		outbuf__putc(b, ',');
		outbuf__puts(b, name);
	}
	outbuf__putc(b, '\n');
}

/* The figure columns of one row, then the end of the line. */
static void csv_figures(struct outbuf *b, const struct snapshot *snap, const struct csv_cols *cols,
			const struct figures *f, const struct cgroup_stat *cgroup)
{
	struct row r;
	size_t k;
	double v;
	__u64 u;

	output_row__init(&r, NULL, snap, f, false);
	r.m.cgroup = cgroup;
	for (k = 0; k < cols->nr; k++) {
		const struct figure *fd = cols->c[k].fd;
		int i = cols->c[k].i;

		outbuf__putc(b, ',');
		v = figure__value(fd, r.f, &r.m, i);
		if (figure__integer(fd, r.f, i, &u))
			outbuf__u64(b, u);
		else if (isfinite(v))
			outbuf__fixed(b, v, json_decimals(fd->fmt));
	}
	outbuf__putc(b, '\n');
}

/*
 * One kind of row per CSV stream: processes, threads with --threads, or
 * cgroups with --by cgroup.
 */
void output__csv(struct output *o, const struct snapshot *snap)
{
	static struct csv_cols cols; /* the renderers run one at a time */
	static char buf[OUTPUT_WRITE_SIZE];
	bool threads = o->threads && snap->threads_on;
	const struct proc_row *rows = threads ? snap->threads : snap->rows;
	size_t r, nr = threads ? snap->nr_threads : snap->nr_rows;
	char tbuf[40], lead[80];
	struct outbuf ob, *b = &ob;
	size_t nlead;

	cols.nr = 0;
	cols.failed = false;
	cols.procs = o->procs || o->threads;
	catalog__each(snap, OUT_CSV, csv_col_add, &cols);
	if (cols.failed) {
		pr_err("CSV output: %s\n", strerror(ENOMEM));
		return;
	}
	outbuf__init_buf(b, o->f, buf, sizeof(buf));
	if (!o->header_done) {
		if (o->procs || o->threads) {
			outbuf__puts(b, "time,interval_s,pid,");
			if (o->threads)
				outbuf__puts(b, "tid,");
			outbuf__puts(b, "comm,cgroup_id,cgroup,exited");
		} else {
			outbuf__puts(
				b, "time,interval_s,cgroup_id,cgroup,runtime,container_id,pod_uid,"
				   "qos,processes");
		}
		csv_header_figures(b, snap, &cols);
		o->header_done = true;
	}
	output__iso_time(tbuf, sizeof(tbuf), snap->time_ns);
	/* "time,interval_s," of every row */
	nlead = snprintf(lead, sizeof(lead), "%s,%.6f,", tbuf, snap->interval_ns / 1e9);
	for (r = 0; (o->procs || o->threads) && r < nr; r++) {
		const struct proc_row *row = &rows[r];

		outbuf__write(b, lead, nlead);
		if (!row->overflow)
			outbuf__u64(b, row->pid);
		outbuf__putc(b, ',');
		if (o->threads) {
			outbuf__u64(b, row->tid);
			outbuf__putc(b, ',');
		}
		csv_field_str(b, row->comm);
		outbuf__putc(b, ',');
		outbuf__u64(b, row->cgroup_id);
		outbuf__putc(b, ',');
		csv_field_str(b, row->cgroup ? row->cgroup : "");
		outbuf__puts(b, row->exited ? ",1" : ",0");
		csv_figures(b, snap, &cols, &row->f, NULL);
	}
	for (r = 0; !o->procs && !o->threads && r < snap->nr_cgroups; r++) {
		const struct cgroup_row *cg = &snap->cgroups[r];

		outbuf__write(b, lead, nlead);
		outbuf__u64(b, cg->id);
		outbuf__putc(b, ',');
		csv_field_str(b, cg->path ? cg->path : "");
		outbuf__putc(b, ',');
		outbuf__puts(b, cg->ci.runtime);
		outbuf__putc(b, ',');
		outbuf__puts(b, cg->ci.id);
		outbuf__putc(b, ',');
		outbuf__puts(b, cg->ci.pod_uid);
		outbuf__putc(b, ',');
		outbuf__puts(b, cg->ci.qos);
		outbuf__putc(b, ',');
		outbuf__u64(b, cg->nr_procs_total);
		csv_figures(b, snap, &cols, &cg->total, &cg->stat);
	}
	outbuf__flush(b);
}
