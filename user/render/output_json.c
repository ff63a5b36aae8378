// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * record -o json: JSON Lines, one record per line: the session and its
 * events at the start, then each snapshot's processes, threads, cgroups and
 * the system; a command's totals (stat's children). The keys are the
 * catalog's JSON names, nested at each '.'.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include "catalog.h"
#include "common.h"
#include "delay.h"
#include "json_writer.h"
#include "metrics.h"
#include "output.h"
#include "output_row.h"

/* A record's object begun: {"type": type. */
static void record_start(struct json_writer *w, const char *type)
{
	jw_start_object(w);
	jw_string_field(w, "type", type);
}

/* A record of its own line ended; 0 or the write's negative errno. */
static int record_end(struct json_writer *w, FILE *f)
{
	jw_end_object(w);
	fputc('\n', f);
	return stream__error(f);
}

void json_event_fields(struct json_writer *w, const struct event_info *ev)
{
	jw_string_field(w, "name", ev->spec.name);
	jw_string_field(w, "class", event__class(&ev->spec));
	jw_string_field(w, "state", event_state__str(ev->state));
	jw_key(w, "group");
	if (ev->spec.group >= 0)
		jw_u64(w, (__u64)ev->spec.group);
	else
		jw_null(w);
	jw_u64_field(w, "cpus", (__u64)ev->cpus);
	jw_key(w, "error");
	if (ev->err)
		jw_string(w, strerror(ev->err));
	else
		jw_null(w);
}

int output__json_start(struct output *o, const struct event_info *ev, int nr, bool no_pmu,
		       const char *attach, int nr_cpus)
{
	struct json_writer w;
	int i;

	jw_init(&w, o->f);
	record_start(&w, "session");
	jw_string_field(&w, "version", PMBPF_VERSION);
	jw_u64_field(&w, "schema", 1);
	jw_string_field(&w, "attach", attach);
	jw_u64_field(&w, "cpus", nr_cpus);
	jw_bool_field(&w, "pmu", !no_pmu);
	jw_end_object(&w);
	fputc('\n', o->f);
	for (i = 0; i < nr; i++) {
		record_start(&w, "event");
		json_event_fields(&w, &ev[i]);
		jw_end_object(&w);
		fputc('\n', o->f);
	}
	return stream__error(o->f);
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

/*
 * The tree flattened for its rows (json_flatten()): the text of every key,
 * brace and constant null is made once a snapshot; a row writes op k's
 * text and then its value, for each k.
 */
struct json_op {
	unsigned int text, len; /* t->text[text, text + len) */
	const struct figure *fd; /* NULL: text only (the last) */
	int i;
};

/* Per node at most ',' its key ':' and "null" or "{}" */
#define JSON_TEXT_MAX (JSON_MAX_NODES * (6 * EVENT_NAME_LEN + 3 + 7))

struct json_tree {
	struct row r;
	struct json_node n[JSON_MAX_NODES];
	int nr;
	struct json_op op[JSON_MAX_NODES + 1];
	int nr_op;
	char text[JSON_TEXT_MAX];
	size_t text_len, op_start; /* op_start: where the text of the op being made began */
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

/* The JSON of a value of fd (as jw_u64(), jw_double(), jw_bool() and an array of them write it). */
static void json_value(struct outbuf *b, const struct row *r, const struct figure *fd, int i)
{
	double v;
	int k, last = -1;
	__u64 u;

	if (fd->fmt == FMT_HIST) {
		outbuf__putc(b, '[');
		for (k = 0; k < PMBPF_RUNQ_SLOTS; k++)
			if (r->f->runq_hist[k])
				last = k;
		for (k = 0; k <= last; k++) {
			if (k)
				outbuf__putc(b, ',');
			outbuf__u64(b, r->f->runq_hist[k]);
		}
		outbuf__putc(b, ']');
		return;
	}
	if (fd->fmt != FMT_BOOL && figure__integer(fd, r->f, i, &u)) {
		outbuf__u64(b, u);
		return;
	}
	v = figure__value(fd, r->f, &r->m, i);
	if (fd->fmt == FMT_BOOL)
		outbuf__puts(b, v == 1.0 ? "true" : "false");
	else if (!isfinite(v))
		outbuf__write(b, "null", 4);
	else
		outbuf__fixed(b, v, json_decimals(fd->fmt));
}

static void text_put(struct json_tree *t, const char *s, size_t n)
{
	if (t->text_len + n > sizeof(t->text))
		n = 0; /* JSON_TEXT_MAX bounds it: not reached */
	memcpy(t->text + t->text_len, s, n);
	t->text_len += n;
}

/* The children of node as text and ops: keys, braces and nulls as text, a value an op. */
static void json_flatten_node(struct json_tree *t, int node)
{
	int k;

	for (k = t->n[node].child; k >= 0; k = t->n[k].next) {
		if (k != t->n[node].child)
			text_put(t, ",", 1);
		text_put(t, t->n[k].quoted, t->n[k].qlen);
		text_put(t, ":", 1);
		if (t->n[k].null) {
			text_put(t, "null", 4);
		} else if (t->n[k].fd) {
			t->op[t->nr_op++] = (struct json_op){ .text = t->op_start,
							      .len = t->text_len - t->op_start,
							      .fd = t->n[k].fd,
							      .i = t->n[k].i };
			t->op_start = t->text_len;
		} else {
			text_put(t, "{", 1);
			json_flatten_node(t, k);
			text_put(t, "}", 1);
		}
	}
}

static void json_flatten(struct json_tree *t)
{
	t->nr_op = 0;
	t->text_len = t->op_start = 0;
	json_flatten_node(t, 0);
	t->op[t->nr_op++] =
		(struct json_op){ .text = t->op_start, .len = t->text_len - t->op_start };
}

/* The keys of t's tree with the row's values, in the open object. */
static void json_emit(struct json_writer *w, const struct json_tree *t)
{
	struct outbuf *b;
	int k;

	if (t->n[0].child < 0)
		return;
	b = jw_fields_raw(w);
	for (k = 0; k < t->nr_op; k++) {
		outbuf__write(b, t->text + t->op[k].text, t->op[k].len);
		if (t->op[k].fd)
			json_value(b, &t->r, t->op[k].fd, t->op[k].i);
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

	output_row__init(&t->r, NULL, snap, NULL, false);
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
	json_flatten(t);
}

/* Every figure of t's output for f (a process, cgroup or command; or the system) as keys of w's object. */
static void json_figures(struct json_writer *w, struct json_tree *t, const struct figures *f,
			 unsigned int out, const struct cgroup_stat *cgroup)
{
	output_row__init(&t->r, NULL, t->r.snap, f, false);
	if (out == OUT_SYSTEM)
		metrics__system(t->r.snap, &t->r.m);
	t->r.m.cgroup = cgroup;
	json_emit(w, t);
}

/*
 * The first keys of every record of a snapshot: "type", "time" and
 * "interval_s", as text made once for all its rows (json_common_text()).
 */
struct json_common {
	char text[8 + (6 * 8 + 3) + 8 + (6 * 40 + 3) + 14 + FMT_NUM_MAX];
	size_t len;
};

/* tbuf: output__iso_time() of the snapshot's time (under 40 bytes); type: under 8. */
static void json_common_text(struct json_common *c, const struct snapshot *snap, const char *tbuf,
			     const char *type)
{
	double v = snap->interval_ns / 1e9;
	size_t n;

	n = sizeof("\"type\":") - 1;
	memcpy(c->text, "\"type\":", n);
	n += json_quote(c->text + n, type);
	memcpy(c->text + n, ",\"time\":", 8);
	n += 8;
	n += json_quote(c->text + n, tbuf);
	memcpy(c->text + n, ",\"interval_s\":", 14);
	n += 14;
	if (isfinite(v)) {
		n += fmt_fixed(c->text + n, v, 6);
	} else {
		memcpy(c->text + n, "null", 4);
		n += 4;
	}
	c->len = n;
}

static void json_common(struct json_writer *w, const struct json_common *c)
{
	outbuf__write(jw_fields_raw(w), c->text, c->len);
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
	jw_string_field(w, "name", row->hot);
	jw_u64_field(w, "samples", row->hot_samples);
	jw_double_field(w, "share", row->hot_share, 3);
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
				jw_u64_field(w, "pid", d[i].pid);
				jw_string_field(w, "comm", d[i].comm);
			}
			jw_u64_field(w, "cgroup_id", d[i].cgroup_id);
			jw_key(w, "cgroup");
			if (d[i].cgroup)
				jw_string(w, d[i].cgroup);
			else
				jw_null(w);
			jw_u64_field(w, "ns", d[i].ns);
			jw_u64_field(w, "waits", d[i].waits);
			jw_end_object(w);
		}
		jw_end_array(w);
	}
}

/* comm, cgroup_id, cgroup and exited of a process's or a thread's record. */
static void json_row_names(struct json_writer *w, const struct proc_row *row)
{
	jw_string_field(w, "comm", row->comm);
	jw_u64_field(w, "cgroup_id", row->cgroup_id);
	jw_key(w, "cgroup");
	if (row->cgroup)
		jw_string(w, row->cgroup);
	else
		jw_null(w);
	jw_bool_field(w, "exited", row->exited);
}

/* The keys of rows, of cgroups' records and of the system; the renderers run one at a time. */
static struct json_tree rows_tree, cg_tree, sys_tree;
/* A snapshot's lines go out in writes of this much (outbuf__init_buf()). */
static char lines_buf[OUTPUT_WRITE_SIZE];

void output__json_lines(struct output *o, const struct snapshot *snap)
{
	const struct self_figure *self;
	struct json_writer w;
	struct figures sys;
	size_t r, nr_self;
	static const char *const types[4] = { "process", "thread", "cgroup", "system" };
	struct json_common common[4];
	char tbuf[40];
	int k;

	output__iso_time(tbuf, sizeof(tbuf), snap->time_ns);
	for (k = 0; k < 4; k++)
		json_common_text(&common[k], snap, tbuf, types[k]);
	jw_init_lines(&w, o->f);
	outbuf__init_buf(&w.out, o->f, lines_buf, sizeof(lines_buf));
	json_tree_build(&rows_tree, snap, OUT_JSON, false);
	json_tree_build(&cg_tree, snap, OUT_JSON, true);
	for (r = 0; o->procs && r < snap->nr_rows; r++) {
		const struct proc_row *row = &snap->rows[r];

		jw_start_object(&w);
		json_common(&w, &common[0]);
		jw_key(&w, "pid");
		if (row->overflow)
			jw_null(&w);
		else
			jw_u64(&w, row->pid);
		json_row_names(&w, row);
		jw_bool_field(&w, "overflow", row->overflow);
		if (row->overflow) {
			jw_u64_field(&w, "folded_processes", row->folded);
		}
		json_figures(&w, &rows_tree, &row->f, OUT_JSON, NULL);
		if (snap->hot)
			json_hot(&w, row);
		if (snap->threads_on) {
			jw_u64_field(&w, "threads", row->nr_threads);
		}
		if (snap->delays_on && !row->overflow)
			json_delays(&w, snap, row->pid, row->cgroup_id);
		jw_end_object(&w);
	}
	for (r = 0; o->threads && r < snap->nr_threads; r++) {
		const struct proc_row *row = &snap->threads[r];

		jw_start_object(&w);
		json_common(&w, &common[1]);
		jw_u64_field(&w, "pid", row->pid);
		jw_u64_field(&w, "tid", row->tid);
		json_row_names(&w, row);
		json_figures(&w, &rows_tree, &row->f, OUT_JSON, NULL);
		jw_end_object(&w);
	}
	for (r = 0; o->cgroups && r < snap->nr_cgroups; r++) {
		const struct cgroup_row *cg = &snap->cgroups[r];

		jw_start_object(&w);
		json_common(&w, &common[2]);
		jw_u64_field(&w, "cgroup_id", cg->id);
		jw_key(&w, "cgroup");
		if (cg->path)
			jw_string(&w, cg->path);
		else
			jw_null(&w);
		jw_u64_field(&w, "parent_id", cg->parent_id);
		jw_u64_field(&w, "depth", cg->depth);
		jw_string_field(&w, "runtime", cg->ci.runtime);
		jw_string_field(&w, "container_id", cg->ci.id);
		jw_string_field(&w, "pod_uid", cg->ci.pod_uid);
		jw_string_field(&w, "qos", cg->ci.qos);
		jw_u64_field(&w, "processes", cg->nr_procs);
		jw_u64_field(&w, "processes_total", cg->nr_procs_total);
		/* its figures hold processes without a row (the counts map was full) */
		jw_bool_field(&w, "overflow", cg->overflow_total);
		jw_u64_field(&w, catalog__overflow()->name, cg->overflow_procs_total);
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
	json_common(&w, &common[3]);
	jw_u64_field(&w, "cpus", snap->nr_cpus);
	jw_u64_field(&w, "processes", snap->nr_rows);
	if (snap->threads_on) {
		jw_u64_field(&w, "threads", snap->nr_threads);
	}
	jw_u64_field(&w, "cgroups", snap->nr_cgroups);
	json_tree_build(&sys_tree, snap, OUT_SYSTEM, false);
	json_figures(&w, &sys_tree, &sys, OUT_SYSTEM, NULL);
	jw_string_field(&w, "attach", snap->attach);
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
		jw_u64_field(&w, "run_time_ns", snap->progs[r].run_time_ns);
		jw_u64_field(&w, "run_cnt", snap->progs[r].run_cnt);
		jw_u64_field(&w, "recursion_misses", snap->progs[r].recursion_misses);
		jw_end_object(&w);
	}
	jw_end_object(&w);
	jw_end_object(&w);
	jw_flush(&w);
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

int output__json_command(struct output *o, const struct snapshot *snap, const struct figures *f,
			 char *const *argv, int status, unsigned int nr_procs)
{
	struct json_writer w;
	int i;

	jw_init(&w, o->f);
	record_start(&w, "command");
	jw_key(&w, "command");
	jw_start_array(&w);
	for (i = 0; argv[i]; i++)
		jw_string(&w, argv[i]);
	jw_end_array(&w);
	output__json_status(&w, status);
	jw_double_field(&w, "wall_s", snap->interval_ns / 1e9, 6);
	jw_u64_field(&w, "processes", nr_procs);
	json_tree_build(&rows_tree, snap, OUT_JSON, false);
	json_figures(&w, &rows_tree, f, OUT_JSON, NULL);
	return record_end(&w, o->f);
}
