// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* pmbpf top: rows, columns and cells of the view, from one snapshot. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>
#include "catalog.h"
#include "container.h"
#include "cpi_live.h"
#include "delay.h"
#include "output.h"
#include "top_view.h"

static struct top_sort cpu_sort(void)
{
	return (struct top_sort){ .kind = TOP_FIGURE, .fd = catalog__derived(DER_CPU_PCT) };
}

void top_view__init(struct top_view *v)
{
	memset(v, 0, sizeof(*v));
	v->sort[0] = v->sort[1] = cpu_sort();
}

void top_view__sort_cpu(struct top_view *v)
{
	v->sort[v->by_cgroup] = cpu_sort();
}

void top_view__free(struct top_view *v)
{
	free(v->items);
	free(v->cg_index);
	v->items = NULL;
	v->cg_index = NULL;
	v->nr_items = v->cap_items = v->cap_cg_index = 0;
}

static struct top_col *col_add(struct top_view *v, enum top_col_kind kind, const char *title,
			       int width, int prio)
{
	struct top_col *c = &v->cols[v->nr_cols++];
	int n = (int)strlen(title);

	memset(c, 0, sizeof(*c));
	c->kind = kind;
	snprintf(c->title, sizeof(c->title), "%s", title);
	c->width = width > n ? width : n;
	c->prio = prio;
	c->text = kind == TOP_USER || kind == TOP_COMMAND || kind == TOP_CONTAINER ||
		  kind == TOP_CGROUP || kind == TOP_HOT;
	return c;
}

struct columns {
	struct top_view *v;
	const struct snapshot *snap;
};

/* An event whose rate another column shows already: CPU% (clocks), CSW/s (switches). */
static bool event_shown_otherwise(const struct event_spec *spec)
{
	return (spec->kind & EVENT_TIME) ||
	       (spec->type == PERF_TYPE_SOFTWARE && spec->config == PERF_COUNT_SW_CONTEXT_SWITCHES);
}

/*
 * A column per OUT_TOP figure, ranked by its top_prio. Columns that can
 * only show '-' (events this host cannot count) are the first to go on a
 * narrow terminal; event rates go in the order the events were given,
 * after RUNQ-p99 and CSW/s; raw miss counts (whose MPKI says more), cycles
 * and instructions (whose IPC does), clocks (CPU%) and context switches
 * (CSW/s) before the others.
 */
static void figure_column(const struct figure *fd, int i, void *arg)
{
	struct columns *cs = arg;
	int prio = fd->top_prio;
	char title[64];
	struct top_col *c;

	if (cs->v->nr_cols == TOP_MAX_COLS)
		return;
	/* a cgroup's own file figures (throttling, PSI): the cgroup view's */
	if (fd->src == SRC_CGROUP && !cs->v->by_cgroup)
		return;
	if (fd->src == SRC_EVENT) {
		const struct event_spec *spec = &cs->snap->events[i].spec;

		if (spec->kind & EVENT_MISS)
			prio = 35;
		else if (spec->kind & (EVENT_CYCLES | EVENT_INSTRUCTIONS))
			prio = 40;
		else if (event_shown_otherwise(spec))
			prio = 30;
		else
			prio -= i;
	}
	if (!figure__counting(fd, cs->snap, i))
		prio /= 10;
	figure__name(fd, fd->top_title ? fd->top_title : fd->title, cs->snap, i, title,
		     sizeof(title));
	c = col_add(cs->v, TOP_FIGURE, title, fd->width, prio);
	c->fd = fd;
	c->inst = i;
}

static void figure_columns(struct top_view *v, const struct snapshot *snap)
{
	struct columns cs = { v, snap };

	catalog__each(snap, OUT_TOP, figure_column, &cs);
}

/* The last interval's outlier of a row, or NULL. */
static const struct cpi_outlier *outlier_of(const struct top_view *v, const struct top_item *it)
{
	if (!v->cpi)
		return NULL;
	if (it->proc)
		return it->proc->overflow ? NULL : cpi_live__process(v->cpi, it->proc->pid);
	return it->cg ? cpi_live__cgroup(v->cpi, it->cg->path) : NULL;
}

static double cpi_over(const struct top_view *v, const struct top_item *it)
{
	const struct cpi_outlier *x = outlier_of(v, it);

	return x ? ratio(x->value, x->threshold) : NAN;
}

/* "3.2x": how far above its threshold; "-" where it is not an outlier. */
static void cpi_cell(const struct top_view *v, const struct top_item *it, char *buf, size_t len)
{
	double r = cpi_over(v, it);

	if (!isfinite(r))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, r < 9.95 ? "%.1fx" : "%.0fx", r);
}

/* Dropped on a narrow terminal before the figures that are not blank on most rows. */
static void cpi_column(struct top_view *v)
{
	if (v->cpi)
		col_add(v, TOP_CPI, "CPI!", 5, 20);
}

/* A column of one catalog figure (its instance 0) by name or source. */
static void one_figure_column(struct top_view *v, const struct snapshot *snap,
			      const struct figure *fd)
{
	struct columns cs = { v, snap };

	if (fd)
		figure_column(fd, 0, &cs);
}

static void share_column(struct top_view *v, const char *title, const char *name, int share,
			 int prio)
{
	const struct figure *fd = catalog__named(name);
	struct top_col *c;

	if (!fd || v->nr_cols == TOP_MAX_COLS)
		return;
	c = col_add(v, TOP_SHARE, title, 6, prio);
	c->fd = fd;
	c->inst = share;
}

/*
 * The time view: CPU% (of the interval: how big the row is), then the
 * shares of the row's own time, IPC next to the on-CPU share. The off-CPU
 * split (offcpu.blocked_ns, offcpu.sleep_ns, offcpu.other_ns) where the
 * catalog has it, else off-CPU time less the run-queue wait in one column.
 */
static void time_columns(struct top_view *v, const struct snapshot *snap)
{
	bool split = catalog__named("offcpu.sleep_ns") && catalog__named("offcpu.blocked_ns");

	one_figure_column(v, snap, catalog__derived(DER_CPU_PCT));
	share_column(v, "ONCPU%", "oncpu_ns", SHARE_CPU, 94);
	one_figure_column(v, snap, catalog__derived(DER_IPC));
	share_column(v, "RUNQ%", "runq.total_ns", SHARE_RUNQ, 93);
	if (v->by_cgroup)
		share_column(v, "THROTL%", "throttled_ns", SHARE_THROTTLED, 89);
	if (split) {
		share_column(v, "BLOCK%", "offcpu.blocked_ns", SHARE_BLOCKED, 92);
		share_column(v, "SLEEP%", "offcpu.sleep_ns", SHARE_SLEEP, 91);
		share_column(v, "OTHER%", "offcpu.other_ns", SHARE_OTHER, 88);
	} else {
		share_column(v, "OFF%", "offcpu_ns", SHARE_OFF, 91);
	}
}

double top_view__share(const struct top_item *it, const struct figure *fd, int share)
{
	const struct figures *f = it->f;
	double t = (double)f->n[PMBPF_N_ONCPU_NS] + (double)f->n[PMBPF_N_OFFCPU_NS];
	double part;

	if (!(t > 0))
		return NAN;
	if (share == SHARE_OFF)
		part = (double)f->n[PMBPF_N_OFFCPU_NS] - (double)f->n[PMBPF_N_RUNQ_TOTAL_NS];
	else
		part = figure__value(fd, f, &it->m, 0);
	return isfinite(part) ? part / t : NAN;
}

void top_view__columns(struct top_view *v, const struct snapshot *snap)
{
	char label[64];
	bool containers = false;
	size_t i;

	for (i = 0; i < snap->nr_cgroups && !containers; i++)
		containers = top_view__container(&snap->cgroups[i], label, sizeof(label));
	v->nr_cols = 0;
	if (v->by_cgroup) {
		col_add(v, TOP_PROCS, "PROCS", 5, 60);
		if (v->time_view) {
			time_columns(v, snap);
		} else {
			figure_columns(v, snap);
			cpi_column(v);
		}
		col_add(v, TOP_CONTAINER, "CONTAINER", 19, containers ? 40 : 4);
		col_add(v, TOP_CGROUP, "CGROUP", 16, 100)->flex = true;
	} else {
		col_add(v, TOP_PID, "PID", 7, 100);
		if (v->threads && snap->threads_on)
			col_add(v, TOP_TID, "TID", 7, 99);
		col_add(v, TOP_USER, "USER", 8, 55);
		if (v->time_view) {
			time_columns(v, snap);
		} else {
			figure_columns(v, snap);
			cpi_column(v);
		}
		col_add(v, TOP_COMMAND, "COMMAND", 15, 98);
		/* the first to go on a narrow terminal */
		if (snap->hot)
			col_add(v, TOP_HOT, "HOT", 20, 1);
		col_add(v, TOP_CGROUP, "CGROUP", 16, 70)->flex = true;
	}
}

int top_view__sort_col(const struct top_view *v)
{
	const struct top_sort *s = &v->sort[v->by_cgroup];
	int i;

	for (i = 0; i < v->nr_cols; i++)
		if (v->cols[i].kind == s->kind &&
		    ((s->kind != TOP_FIGURE && s->kind != TOP_SHARE) ||
		     (v->cols[i].fd == s->fd && v->cols[i].inst == s->inst)))
			return i;
	return 0;
}

void top_view__set_sort(struct top_view *v, int col)
{
	struct top_sort *s = &v->sort[v->by_cgroup];

	if (col < 0 || col >= v->nr_cols)
		return;
	s->kind = v->cols[col].kind;
	s->fd = v->cols[col].fd;
	s->inst = v->cols[col].inst;
	s->reverse = false;
}

bool top_view__in_scope(const char *path, const char *scope)
{
	size_t n = strlen(scope);

	if (!n || !strcmp(scope, "/"))
		return true;
	if (!path)
		return false;
	while (n > 1 && scope[n - 1] == '/')
		n--;
	return !strncmp(path, scope, n) && (path[n] == '\0' || path[n] == '/');
}

const char *top_view__container(const struct cgroup_row *cg, char *buf, size_t len)
{
	return cg ? container__label(&cg->ci, buf, len) : NULL;
}

const char *top_view__fmt_ns(char *buf, size_t len, double ns)
{
	if (!isfinite(ns))
		snprintf(buf, len, "-");
	else if (ns < 999.5e3)
		snprintf(buf, len, "%.0fus", ns / 1e3);
	else if (ns < 999.5e6)
		snprintf(buf, len, ns < 9.95e6 ? "%.1fms" : "%.0fms", ns / 1e6);
	else
		snprintf(buf, len, "%.2fs", ns / 1e9);
	return buf;
}

static int cmp_cg_id(const void *a, const void *b)
{
	const struct cgroup_row *x = *(const struct cgroup_row *const *)a;
	const struct cgroup_row *y = *(const struct cgroup_row *const *)b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static const struct cgroup_row *cg_lookup(const struct top_view *v, size_t n, __u64 id)
{
	struct cgroup_row key = { .id = id };
	const struct cgroup_row *kp = &key, **found;

	if (!n)
		return NULL;
	found = bsearch(&kp, v->cg_index, n, sizeof(*v->cg_index), cmp_cg_id);
	return found ? *found : NULL;
}

static bool contains(const char *s, const char *needle)
{
	return s && strcasestr(s, needle);
}

static bool cg_match(const struct cgroup_row *cg, const char *path, const char *filter)
{
	char label[64];

	if (!filter[0])
		return true;
	if (contains(path, filter))
		return true;
	return cg && (contains(cg->ci.id, filter) || contains(cg->ci.pod_uid, filter) ||
		      container__id_is(&cg->ci, filter) ||
		      contains(top_view__container(cg, label, sizeof(label)), filter));
}

bool top_view__cgroup_shown(const struct top_view *v, const struct cgroup_row *cg)
{
	return v->by_cgroup && top_view__in_scope(cg->path, v->scope) &&
	       cg_match(cg, cg->path, v->cg_filter);
}

static struct top_item *item_add(struct top_view *v)
{
	struct top_item *it;

	if (v->nr_items == v->cap_items) {
		size_t cap = v->cap_items ? v->cap_items * 2 : 256;
		struct top_item *items = realloc(v->items, cap * sizeof(*items));

		if (!items)
			return NULL;
		v->items = items;
		v->cap_items = cap;
	}
	it = &v->items[v->nr_items++];
	memset(it, 0, sizeof(*it));
	return it;
}

static void item_figures(struct top_item *it, const struct snapshot *snap)
{
	metrics__figures(snap, it->f, &it->m);
	if (!it->proc && it->cg)
		it->m.cgroup = &it->cg->stat;
}

double top_view__value(const struct snapshot *snap, const struct top_item *it,
		       const struct figure *fd, int inst)
{
	double v = figure__value(fd, it->f, &it->m, inst);

	return fd->kind == FIG_COUNTER ? ratio(v * 1e9, (double)snap->interval_ns) : v;
}

int top_view__build(struct top_view *v, const struct snapshot *snap, top_user_fn user, void *ctx)
{
	size_t i;

	v->nr_items = 0;
	v->nr_candidates = 0;
	if (snap->nr_cgroups > v->cap_cg_index) {
		const struct cgroup_row **idx =
			realloc(v->cg_index, snap->nr_cgroups * sizeof(*idx));

		if (!idx)
			return -ENOMEM;
		v->cg_index = idx;
		v->cap_cg_index = snap->nr_cgroups;
	}
	for (i = 0; i < snap->nr_cgroups; i++)
		v->cg_index[i] = &snap->cgroups[i];
	if (snap->nr_cgroups > 1)
		qsort(v->cg_index, snap->nr_cgroups, sizeof(*v->cg_index), cmp_cg_id);

	if (v->by_cgroup) {
		for (i = 0; i < snap->nr_cgroups; i++) {
			const struct cgroup_row *cg = &snap->cgroups[i];
			struct top_item *it;

			v->nr_candidates++;
			if (!top_view__cgroup_shown(v, cg))
				continue;
			it = item_add(v);
			if (!it)
				return -ENOMEM;
			it->cg = cg;
			it->f = &cg->total;
			item_figures(it, snap);
		}
	} else {
		bool threads = v->threads && snap->threads_on;
		const struct proc_row *rows = threads ? snap->threads : snap->rows;
		size_t nr = threads ? snap->nr_threads : snap->nr_rows;

		for (i = 0; i < nr; i++) {
			const struct proc_row *row = &rows[i];
			const struct cgroup_row *cg;
			struct top_item *it;

			if (row->pid == 0 && !row->overflow && !v->show_idle)
				continue;
			v->nr_candidates++;
			if (v->comm_filter[0] && !contains(row->comm, v->comm_filter))
				continue;
			if (!top_view__in_scope(row->cgroup, v->scope))
				continue;
			cg = cg_lookup(v, snap->nr_cgroups, row->cgroup_id);
			if (!cg_match(cg, row->cgroup, v->cg_filter))
				continue;
			it = item_add(v);
			if (!it)
				return -ENOMEM;
			it->proc = row;
			it->cg = cg;
			it->f = &row->f;
			it->user = user ? user(ctx, row) : NULL;
			item_figures(it, snap);
		}
	}
	for (i = 0; i < v->nr_items; i++) {
		struct top_item *it = &v->items[i];
		const struct top_sort *s = &v->sort[v->by_cgroup];

		it->key = NAN;
		it->skey = "";
		switch (s->kind) {
		case TOP_PID:
			it->key = it->proc->overflow ? 4294967296.0 : it->proc->pid;
			break;
		case TOP_TID:
			it->key = it->proc->tid;
			break;
		case TOP_PROCS:
			it->key = it->cg->nr_procs_total;
			break;
		case TOP_FIGURE:
			it->key = top_view__value(snap, it, s->fd, s->inst);
			break;
		case TOP_USER:
			it->skey = it->user ? it->user : "";
			break;
		case TOP_COMMAND:
			it->skey = it->proc->comm;
			break;
		case TOP_CONTAINER:
			it->skey = it->cg ? it->cg->ci.id : "";
			break;
		case TOP_CGROUP:
			it->skey = it->proc ? it->proc->cgroup : it->cg->path;
			if (!it->skey)
				it->skey = "";
			break;
		case TOP_HOT:
			it->skey = it->proc && it->proc->hot ? it->proc->hot : "";
			break;
		case TOP_CPI:
			it->key = cpi_over(v, it);
			break;
		case TOP_SHARE:
			it->key = top_view__share(it, s->fd, s->inst);
			break;
		}
	}
	top_view__sort(v);
	return 0;
}

static int cmp_tie(const struct top_item *x, const struct top_item *y)
{
	if (x->proc) {
		if (x->proc->pid != y->proc->pid)
			return x->proc->pid < y->proc->pid ? -1 : 1;
		if (x->proc->tid != y->proc->tid)
			return x->proc->tid < y->proc->tid ? -1 : 1;
		return x->proc->cgroup_id < y->proc->cgroup_id ?
			       -1 :
			       x->proc->cgroup_id > y->proc->cgroup_id;
	}
	return x->cg->id < y->cg->id ? -1 : x->cg->id > y->cg->id;
}

/* Figures sort high first, PID and names A to Z; missing figures always last. */
static int cmp_items(const void *a, const void *b, void *arg)
{
	const struct top_sort *s = arg;
	const struct top_item *x = a, *y = b;
	bool text = s->kind == TOP_USER || s->kind == TOP_COMMAND || s->kind == TOP_CONTAINER ||
		    s->kind == TOP_CGROUP || s->kind == TOP_HOT;
	bool descending = !text && s->kind != TOP_PID && s->kind != TOP_TID;
	int r;

	if (text) {
		r = strcasecmp(x->skey, y->skey);
	} else {
		bool nx = isnan(x->key), ny = isnan(y->key);

		if (nx || ny) {
			if (nx != ny)
				return nx ? 1 : -1;
			return cmp_tie(x, y);
		}
		r = x->key < y->key ? -1 : x->key > y->key;
	}
	if (descending != s->reverse)
		r = -r;
	return r ? r : cmp_tie(x, y);
}

void top_view__sort(struct top_view *v)
{
	struct top_sort s = v->sort[v->by_cgroup];

	if (v->nr_items > 1)
		qsort_r(v->items, v->nr_items, sizeof(*v->items), cmp_items, &s);
}

int top_view__layout(const struct top_view *v, int width, bool *shown)
{
	int i, total = -1, flex = -1, sort = v->nr_cols ? top_view__sort_col(v) : -1;

	for (i = 0; i < v->nr_cols; i++) {
		shown[i] = true;
		total += v->cols[i].width + 1;
		if (v->cols[i].flex)
			flex = i;
	}
	while (total > width) {
		int drop = -1, left = 0;

		/* the sort column stays; of equals, the later (less important) goes first */
		for (i = 0; i < v->nr_cols; i++) {
			if (!shown[i])
				continue;
			left++;
			if (i != sort && (drop < 0 || v->cols[i].prio <= v->cols[drop].prio))
				drop = i;
		}
		if (drop < 0)
			break;
		if (left <= 1)
			break;
		shown[drop] = false;
		total -= v->cols[drop].width + 1;
	}
	if (flex < 0 || !shown[flex])
		return 0;
	return v->cols[flex].width + (width > total ? width - total : 0);
}

/* top's text of a figure: rates of clock events and times as 850us, 12ms, 1.20s; counts humanized. */
static void figure_cell(const struct snapshot *snap, const struct top_item *it,
			const struct top_col *c, char *buf, size_t len)
{
	double x = top_view__value(snap, it, c->fd, c->inst);

	if (!isfinite(x))
		snprintf(buf, len, "-");
	else if (figure__ns(c->fd, snap, c->inst))
		top_view__fmt_ns(buf, len, x);
	else if (c->fd->fmt == FMT_COUNT)
		fmt_count(buf, len, x);
	else if (c->fd->fmt == FMT_SHARE)
		snprintf(buf, len, "%.1f", x * 100);
	else
		snprintf(buf, len, "%.*f",
			 c->fd->fmt == FMT_PCT	 ? 1 :
			 c->fd->fmt == FMT_RATIO ? 2 :
						   4,
			 x);
}

void top_view__cell(const struct top_view *v, const struct snapshot *snap,
		    const struct top_item *it, const struct top_col *c, char *buf, size_t len)
{
	const struct proc_row *p = it->proc;
	char label[64];
	const char *s;
	double share;

	switch (c->kind) {
	case TOP_PID:
		if (p->overflow)
			snprintf(buf, len, "-");
		else
			snprintf(buf, len, "%u", p->pid);
		break;
	case TOP_TID:
		snprintf(buf, len, "%u", p->tid);
		break;
	case TOP_USER:
		snprintf(buf, len, "%s", it->user ? it->user : "-");
		break;
	case TOP_PROCS:
		/* processes of it without a row of their own (the counts map full) */
		snprintf(buf, len, "%u%s", it->cg->nr_procs_total,
			 it->cg->overflow_procs_total ? catalog__overflow()->title : "");
		break;
	case TOP_FIGURE:
		figure_cell(snap, it, c, buf, len);
		break;
	case TOP_COMMAND:
		snprintf(buf, len, "%s%s", p->comm, p->exited ? "*" : "");
		break;
	case TOP_CONTAINER:
		s = top_view__container(it->cg, label, sizeof(label));
		snprintf(buf, len, "%s", s ? s : "-");
		break;
	case TOP_CGROUP:
		s = p ? top_view__container(it->cg, label, sizeof(label)) : NULL;
		if (!s)
			s = p ? p->cgroup : it->cg->path;
		snprintf(buf, len, "%s", s ? s : "?");
		break;
	case TOP_HOT:
		snprintf(buf, len, "%s", p && p->hot ? p->hot : "-");
		break;
	case TOP_CPI:
		cpi_cell(v, it, buf, len);
		break;
	case TOP_SHARE:
		share = top_view__share(it, c->fd, c->inst);
		if (isfinite(share))
			snprintf(buf, len, "%.1f", share * 100);
		else
			snprintf(buf, len, "-");
		break;
	}
}

bool top_view__cpi_line(const struct top_view *v, const struct snapshot *snap,
			const struct top_item *it, char *buf, size_t len)
{
	const struct cpi_outlier *x = outlier_of(v, it);
	char t[32];
	size_t off;
	__u64 ns;
	int i;

	if (len)
		buf[0] = '\0';
	if (!x || !len)
		return false;
	off = snprintf(buf, len, "%s outlier: ", x->victim);
	if (off < len)
		off += cpi__describe(x, cpi_live__signal(v->cpi), buf + off, len - off);
	for (i = 0; i < x->nr_suspects && off < len; i++) {
		off += snprintf(buf + off, len - off, "%s%s (r %+.2f",
				i ? ", " : "; suspects: ", x->suspects[i].name, x->suspects[i].r);
		if (snap->delays_on && off < len) {
			ns = it->proc ? delay__proc_by(snap, it->proc->pid, it->proc->cgroup_id,
						       x->suspects[i].name) :
					delay__cgroup_by(snap, it->cg->id, x->suspects[i].name);
			off += snprintf(buf + off, len - off, ", delayed it %s",
					top_view__fmt_ns(t, sizeof(t), (double)ns));
		}
		if (off < len)
			off += snprintf(buf + off, len - off, ")");
	}
	if (!x->nr_suspects && off < len)
		snprintf(buf + off, len - off, "; no suspect: no other's CPU use rises with it");
	return true;
}

const char *top_view__delay_line(const struct snapshot *snap, const struct top_item *it, char *buf,
				 size_t len)
{
	static const char *const heads[] = { "Delayed by:", "Delayed:" };
	struct delay_sum d[3];
	char name[64], t[32];
	size_t n, i, off = 0;
	__u64 total;
	int side;

	buf[0] = '\0';
	if (!snap->delays_on || (!it->proc && !it->cg))
		return buf;
	for (side = DELAY_BY; side <= DELAY_OF; side++) {
		if (it->proc)
			n = delay__of_proc(snap, it->proc->pid, it->proc->cgroup_id, side, d, 3,
					   &total);
		else
			n = delay__of_cgroup(snap, it->cg->id, side, d, 3, &total);
		off += snprintf(buf + off, off < len ? len - off : 0, "%s%s", side ? "  " : "",
				heads[side]);
		if (!n)
			off += snprintf(buf + off, off < len ? len - off : 0, " -");
		for (i = 0; i < n; i++)
			off += snprintf(buf + off, off < len ? len - off : 0, "%s %s %s %.0f%%",
					i ? "," : "", delay__name(&d[i], name, sizeof(name)),
					top_view__fmt_ns(t, sizeof(t), (double)d[i].ns),
					total ? 100.0 * (double)d[i].ns / (double)total : 0);
	}
	return buf;
}
