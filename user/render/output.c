// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include "catalog.h"
#include "container.h"
#include "delay.h"
#include "common.h"
#include "json_writer.h"
#include "metrics.h"
#include "output.h"
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

static void iso_time(char *buf, size_t len, __u64 ns)
{
	time_t t = ns / 1000000000ULL;
	char sec[32];
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(sec, sizeof(sec), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%.20s.%03uZ", sec, (unsigned)(ns % 1000000000ULL / 1000000ULL));
}

void json_event_fields(struct json_writer *w, const struct event_info *ev)
{
	jw_key(w, "name");
	jw_string(w, ev->spec.name);
	jw_key(w, "class");
	jw_string(w, event__class(&ev->spec));
	jw_key(w, "state");
	jw_string(w, event_state__str(ev->state));
	jw_key(w, "group");
	if (ev->spec.group >= 0)
		jw_u64(w, (__u64)ev->spec.group);
	else
		jw_null(w);
	jw_key(w, "cpus");
	jw_u64(w, (__u64)ev->cpus);
	jw_key(w, "error");
	if (ev->err)
		jw_string(w, strerror(ev->err));
	else
		jw_null(w);
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
			json_event_fields(&w, &ev[i]);
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

/*
 * A row's figures, for the renderers that walk the catalog: f and m (from
 * metrics__figures()) of one process, cgroup, command or the system.
 */
struct row {
	struct output *o;
	const struct snapshot *snap;
	const struct figures *f;
	struct row_metrics m;
	bool header; /* table and CSV: the column names instead */
};

static void row_init(struct row *r, struct output *o, const struct snapshot *snap,
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
static const char *hot_cell(char *buf, size_t len, const struct proc_row *row);

/*
 * The figure columns of the table (f NULL: their titles), then hot as the
 * last column (NULL: none), then the end of the line.
 */
static void table_figures(struct output *o, const struct snapshot *snap, const struct figures *f,
			  const char *hot)
{
	struct row r;

	row_init(&r, o, snap, f, !f);
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
			char path[4096 * 3], cut[64];

			text__printable(path, sizeof(path), cg->path ? cg->path : "?", false);
			fprintf(o->f, "%-40s %-10s %-12s %5u",
				path_tail(cut, sizeof(cut), path, 40),
				cg->ci.runtime[0] ? cg->ci.runtime : "-",
				cg->ci.id[0] ? cg->ci.id : "-", cg->nr_procs_total);
			table_figures(o, snap, &cg->total, NULL);
		}
	}
	if (snap->stats[PMBPF_STAT_OVERFLOW] || snap->stats[PMBPF_STAT_EXITS_DROPPED] ||
	    snap->stats[PMBPF_STAT_EXITS_LOST])
		fprintf(o->f,
			"(map full: %llu credits folded into their cgroup's [overflow] row; exit records dropped: %llu, "
			"read from the map instead; exit records lost: %llu)\n",
			(unsigned long long)snap->stats[PMBPF_STAT_OVERFLOW],
			(unsigned long long)snap->stats[PMBPF_STAT_EXITS_DROPPED],
			(unsigned long long)snap->stats[PMBPF_STAT_EXITS_LOST]);
}

/*
 * The JSON object of a row: the figures of one output as a tree of keys,
 * since a '.' in a name nests ("events.%s.count": "events": {"cycles":
 * {"count": ...}}); keys come in the order of their first figure.
 */
#define JSON_MAX_NODES 256
_Static_assert(JSON_MAX_NODES >
		       32 + 7 * PMBPF_MAX_EVENTS + (METRIC_MAX_VALUES + 1) * METRIC_MAX_SEL,
	       "a node per key of a row with every event and -M metric");

struct json_node {
	char key[EVENT_NAME_LEN]; /* an event's name, or a part of a figure's */
	char quoted[6 * EVENT_NAME_LEN + 3]; /* key as a JSON string */
	size_t qlen;
	int child, last, next; /* first and last child, next sibling: indices, -1: none */
	const struct figure *fd; /* a value: figure fd's instance i */
	int i;
	bool null; /* an event's object: the event does not count */
};

struct json_tree {
	struct row r;
	struct json_node n[JSON_MAX_NODES];
	int nr;
};

/* The child of node with key (its first len bytes), added if new; -1 when full. */
static int json_child(struct json_tree *t, int node, const char *key, size_t len)
{
	struct json_node *c;
	int k;

	for (k = t->n[node].child; k >= 0; k = t->n[k].next)
		if (strlen(t->n[k].key) == len && !memcmp(t->n[k].key, key, len))
			return k;
	if (t->nr == JSON_MAX_NODES)
		return -1;
	c = &t->n[t->nr];
	memset(c, 0, sizeof(*c));
	snprintf(c->key, sizeof(c->key), "%.*s", (int)len, key);
	c->qlen = json_quote(c->quoted, c->key);
	c->child = c->last = c->next = -1;
	if (t->n[node].last >= 0)
		t->n[t->n[node].last].next = t->nr;
	else
		t->n[node].child = t->nr;
	t->n[node].last = t->nr;
	return t->nr++;
}

/*
 * Add instance i of fd at its path; with i < 0 only the objects before
 * its "%s", so that "events" and "mpki" are there (empty) without events.
 */
static void json_add(struct json_tree *t, const struct figure *fd, int i)
{
	const char *part[2] = {}, *p = fd->name;
	int node = 0, np = 0, k;
	size_t n;

	if (i >= 0)
		np = figure__instance(fd, t->r.snap, i, part);
	while (node >= 0 && *p) {
		n = strcspn(p, ".");
		if (n == 2 && !strncmp(p, "%s", 2)) {
			if (i < 0)
				return;
			for (k = 0; k < np && node >= 0; k++)
				node = json_child(t, node, part[k], strlen(part[k]));
			if (node >= 0 && figure__reading(fd) &&
			    t->r.snap->events[i].state != EVENT_COUNTING) {
				t->n[node].null = true;
				return;
			}
		} else {
			node = json_child(t, node, p, n);
		}
		p += n + (p[n] == '.');
	}
	if (node > 0 && i >= 0) {
		t->n[node].fd = fd;
		t->n[node].i = i;
	}
}

int json_decimals(enum fig_fmt fmt)
{
	switch (fmt) {
	case FMT_PCT:
		return 2;
	case FMT_RATIO:
	case FMT_FRACTION:
	case FMT_SHARE:
		return 4;
	default:
		return 0;
	}
}

static void json_value(struct json_writer *w, const struct row *r, const struct figure *fd, int i)
{
	double v = figure__value(fd, r->f, &r->m, i);
	int k, last = -1;
	__u64 u;

	if (fd->fmt == FMT_HIST) {
		jw_start_array(w);
		for (k = 0; k < PMBPF_RUNQ_SLOTS; k++)
			if (r->f->runq_hist[k])
				last = k;
		for (k = 0; k <= last; k++)
			jw_u64(w, r->f->runq_hist[k]);
		jw_end_array(w);
	} else if (fd->fmt == FMT_BOOL) {
		jw_bool(w, v == 1.0);
	} else if (figure__integer(fd, r->f, i, &u)) {
		jw_u64(w, u);
	} else {
		jw_double(w, v, json_decimals(fd->fmt));
	}
}

static void json_emit(struct json_writer *w, const struct json_tree *t, int node)
{
	int k;

	for (k = t->n[node].child; k >= 0; k = t->n[k].next) {
		jw_key_raw(w, t->n[k].quoted, t->n[k].qlen);
		if (t->n[k].null) {
			jw_null(w);
		} else if (t->n[k].fd) {
			json_value(w, &t->r, t->n[k].fd, t->n[k].i);
		} else {
			jw_start_object(w);
			json_emit(w, t, k);
			jw_end_object(w);
		}
	}
}

/*
 * The keys of one output (OUT_JSON: a row's, OUT_SYSTEM: the system's) for
 * snap: the same for each of its rows, so made once a snapshot; with
 * cgroup, of a cgroup's record (its own kernel figures too).
 */
static void json_tree_build(struct json_tree *t, const struct snapshot *snap, unsigned int out,
			    bool cgroup)
{
	static const struct cgroup_stat some = {};
	const struct figure *fds;
	size_t nr, k;
	int i, n;

	row_init(&t->r, NULL, snap, NULL, false);
	t->r.m.cgroup = cgroup ? &some : NULL;
	memset(&t->n[0], 0, sizeof(t->n[0]));
	t->n[0].child = t->n[0].last = t->n[0].next = -1;
	t->nr = 1;
	fds = catalog__figures(&nr);
	for (k = 0; k < nr; k++) {
		if (!(fds[k].outputs & out) || !figure__present(&fds[k], snap) ||
		    !figure__of_row(&fds[k], &t->r.m))
			continue;
		json_add(t, &fds[k], -1);
		n = figure__instances(&fds[k], snap);
		for (i = 0; i < n; i++)
			if (figure__applies(&fds[k], snap, i))
				json_add(t, &fds[k], i);
	}
}

/* Every figure of t's output for f (a process, cgroup or command; or the system) as keys of w's object. */
static void json_figures(struct json_writer *w, struct json_tree *t, const struct figures *f,
			 unsigned int out, const struct cgroup_stat *cgroup)
{
	row_init(&t->r, NULL, t->r.snap, f, false);
	if (out == OUT_SYSTEM)
		metrics__system(t->r.snap, &t->r.m);
	t->r.m.cgroup = cgroup;
	json_emit(w, t, 0);
}

/* tbuf: iso_time() of the snapshot's time, made once for all its rows. */
static void json_common(struct json_writer *w, const struct snapshot *snap, const char *tbuf,
			const char *type)
{
	jw_key(w, "type");
	jw_string(w, type);
	jw_key(w, "time");
	jw_string(w, tbuf);
	jw_key(w, "interval_s");
	jw_double(w, snap->interval_ns / 1e9, 6);
}

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

/* "hot_function": {"name", "samples", "share"}, or null: --hot had no sample of it. */
static void json_hot(struct json_writer *w, const struct proc_row *row)
{
	jw_key(w, "hot_function");
	if (!row->hot) {
		jw_null(w);
		return;
	}
	jw_start_object(w);
	jw_key(w, "name");
	jw_string(w, row->hot);
	jw_key(w, "samples");
	jw_u64(w, row->hot_samples);
	jw_key(w, "share");
	jw_double(w, row->hot_share, 3);
	jw_end_object(w);
}

/*
 * --delays: "delayed_by" (who ran while it waited) and "delayed" (who waited
 * while it ran), the top DELAY_TOP of each by time this interval; for a
 * cgroup (pid ~0), of its own processes, per cgroup on the other side.
 */
static void json_delays(struct json_writer *w, const struct snapshot *snap, __u32 pid, __u64 cgid)
{
	static const char *const keys[] = { "delayed_by", "delayed" };
	struct delay_sum d[DELAY_TOP];
	size_t n, i;
	int side;

	for (side = DELAY_BY; side <= DELAY_OF; side++) {
		n = pid == ~0U ? delay__of_cgroup(snap, cgid, side, d, DELAY_TOP, NULL) :
				 delay__of_proc(snap, pid, cgid, side, d, DELAY_TOP, NULL);
		jw_key(w, keys[side]);
		jw_start_array(w);
		for (i = 0; i < n; i++) {
			jw_start_object(w);
			if (d[i].comm) {
				jw_key(w, "pid");
				jw_u64(w, d[i].pid);
				jw_key(w, "comm");
				jw_string(w, d[i].comm);
			}
			jw_key(w, "cgroup_id");
			jw_u64(w, d[i].cgroup_id);
			jw_key(w, "cgroup");
			if (d[i].cgroup)
				jw_string(w, d[i].cgroup);
			else
				jw_null(w);
			jw_key(w, "ns");
			jw_u64(w, d[i].ns);
			jw_key(w, "waits");
			jw_u64(w, d[i].waits);
			jw_end_object(w);
		}
		jw_end_array(w);
	}
}

/* comm, cgroup_id, cgroup and exited of a process's or a thread's record. */
static void json_row_names(struct json_writer *w, const struct proc_row *row)
{
	jw_key(w, "comm");
	jw_string(w, row->comm);
	jw_key(w, "cgroup_id");
	jw_u64(w, row->cgroup_id);
	jw_key(w, "cgroup");
	if (row->cgroup)
		jw_string(w, row->cgroup);
	else
		jw_null(w);
	jw_key(w, "exited");
	jw_bool(w, row->exited);
}

/* The keys of rows, of cgroups' records and of the system; the renderers run one at a time. */
static struct json_tree rows_tree, cg_tree, sys_tree;

static void json(struct output *o, const struct snapshot *snap)
{
	const struct self_figure *self;
	struct json_writer w;
	struct figures sys;
	size_t r, nr_self;
	char tbuf[40];

	iso_time(tbuf, sizeof(tbuf), snap->time_ns);
	jw_init_lines(&w, o->f);
	json_tree_build(&rows_tree, snap, OUT_JSON, false);
	json_tree_build(&cg_tree, snap, OUT_JSON, true);
	for (r = 0; o->procs && r < snap->nr_rows; r++) {
		const struct proc_row *row = &snap->rows[r];

		jw_start_object(&w);
		json_common(&w, snap, tbuf, "process");
		jw_key(&w, "pid");
		if (row->overflow)
			jw_null(&w);
		else
			jw_u64(&w, row->pid);
		json_row_names(&w, row);
		jw_key(&w, "overflow");
		jw_bool(&w, row->overflow);
		if (row->overflow) {
			jw_key(&w, "folded_processes");
			jw_u64(&w, row->folded);
		}
		json_figures(&w, &rows_tree, &row->f, OUT_JSON, NULL);
		if (snap->hot)
			json_hot(&w, row);
		if (snap->threads_on) {
			jw_key(&w, "threads");
			jw_u64(&w, row->nr_threads);
		}
		if (snap->delays_on && !row->overflow)
			json_delays(&w, snap, row->pid, row->cgroup_id);
		jw_end_object(&w);
	}
	for (r = 0; o->threads && r < snap->nr_threads; r++) {
		const struct proc_row *row = &snap->threads[r];

		jw_start_object(&w);
		json_common(&w, snap, tbuf, "thread");
		jw_key(&w, "pid");
		jw_u64(&w, row->pid);
		jw_key(&w, "tid");
		jw_u64(&w, row->tid);
		json_row_names(&w, row);
		json_figures(&w, &rows_tree, &row->f, OUT_JSON, NULL);
		jw_end_object(&w);
	}
	for (r = 0; o->cgroups && r < snap->nr_cgroups; r++) {
		const struct cgroup_row *cg = &snap->cgroups[r];

		jw_start_object(&w);
		json_common(&w, snap, tbuf, "cgroup");
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
		/* its figures hold processes without a row (the counts map was full) */
		jw_key(&w, "overflow");
		jw_bool(&w, cg->overflow_total);
		jw_key(&w, "overflow_processes");
		jw_u64(&w, cg->overflow_procs);
		json_figures(&w, &cg_tree, &cg->total, OUT_JSON, &cg->stat);
		jw_key(&w, "self");
		jw_start_object(&w);
		json_figures(&w, &rows_tree, &cg->self, OUT_JSON, NULL);
		jw_end_object(&w);
		if (snap->delays_on)
			json_delays(&w, snap, ~0U, cg->id);
		jw_end_object(&w);
	}

	memset(&sys, 0, sizeof(sys));
	memcpy(sys.ev, snap->system, sizeof(sys.ev));
	jw_start_object(&w);
	json_common(&w, snap, tbuf, "system");
	jw_key(&w, "cpus");
	jw_u64(&w, snap->nr_cpus);
	jw_key(&w, "processes");
	jw_u64(&w, snap->nr_rows);
	if (snap->threads_on) {
		jw_key(&w, "threads");
		jw_u64(&w, snap->nr_threads);
	}
	jw_key(&w, "cgroups");
	jw_u64(&w, snap->nr_cgroups);
	json_tree_build(&sys_tree, snap, OUT_SYSTEM, false);
	json_figures(&w, &sys_tree, &sys, OUT_SYSTEM, NULL);
	jw_key(&w, "attach");
	jw_string(&w, snap->attach);
	self = catalog__self(&nr_self);
	for (r = 0; r < nr_self; r++) {
		double v = self_figure__value(&self[r], snap);

		if (!(self[r].outputs & OUT_JSON))
			continue;
		jw_key(&w, self[r].name);
		if (isnan(v))
			jw_null(&w);
		else if (self[r].json_ms)
			jw_double(&w, v / 1e6, 3);
		else
			jw_u64(&w, (__u64)v);
	}
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
	jw_flush(&w);
}

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

	/* a cgroup's own file figures: columns of the cgroup rows' stream only */
	if (fd->src == SRC_CGROUP && cols->procs)
		return;
	if (cols->nr == cols->cap) {
		size_t cap = cols->cap ? cols->cap * 2 : 64;
		struct csv_col *c = realloc(cols->c, cap * sizeof(*c));

		if (!c) {
			cols->failed = true;
			return;
		}
		cols->c = c;
		cols->cap = cap;
	}
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

	row_init(&r, NULL, snap, f, false);
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
static void csv(struct output *o, const struct snapshot *snap)
{
	static struct csv_cols cols; /* the renderers run one at a time */
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
	outbuf__init(b, o->f);
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
	iso_time(tbuf, sizeof(tbuf), snap->time_ns);
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

void output__json_status(struct json_writer *w, int status)
{
	char name[32];

	jw_key(w, "exit_code");
	if (WIFEXITED(status))
		jw_s64(w, WEXITSTATUS(status));
	else
		jw_null(w);
	jw_key(w, "signal");
	if (WIFSIGNALED(status) && sigabbrev_np(WTERMSIG(status))) {
		snprintf(name, sizeof(name), "SIG%s", sigabbrev_np(WTERMSIG(status)));
		jw_string(w, name);
	} else if (WIFSIGNALED(status)) {
		jw_s64(w, WTERMSIG(status));
	} else {
		jw_null(w);
	}
}

int output__command(struct output *o, const struct snapshot *snap, const struct figures *f,
		    char *const *argv, int status, unsigned int nr_procs)
{
	struct json_writer w;
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
		output__json_status(&w, status);
		jw_key(&w, "wall_s");
		jw_double(&w, snap->interval_ns / 1e9, 6);
		jw_key(&w, "processes");
		jw_u64(&w, nr_procs);
		json_tree_build(&rows_tree, snap, OUT_JSON, false);
		json_figures(&w, &rows_tree, f, OUT_JSON, NULL);
		jw_end_object(&w);
		fputc('\n', o->f);
		return stream__error(o->f);
	}
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
		json(o, snap);
		break;
	case OUTPUT_CSV:
		csv(o, snap);
		break;
	}
	return stream__error(o->f);
}
