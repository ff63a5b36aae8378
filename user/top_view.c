// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* pmbpf top: rows, columns and cells of the view, from one snapshot. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "output.h"
#include "top_view.h"

void top_view__init(struct top_view *v)
{
	memset(v, 0, sizeof(*v));
	v->sort[0].kind = TOP_CPU;
	v->sort[1].kind = TOP_CPU;
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
	c->ev = -1;
	snprintf(c->title, sizeof(c->title), "%s", title);
	c->width = width > n ? width : n;
	c->prio = prio;
	c->text = kind == TOP_USER || kind == TOP_COMMAND || kind == TOP_CONTAINER ||
		  kind == TOP_CGROUP;
	return c;
}

static bool counting(const struct snapshot *snap, int i)
{
	return i >= 0 && i < snap->nr_events && snap->events[i].state == EVENT_COUNTING;
}

/*
 * Columns that can only show '-' (events this host cannot count) are the
 * first to go on a narrow terminal; then raw miss counts, whose MPKI says
 * more; then the scheduler figures.
 */
static void figure_columns(struct top_view *v, const struct snapshot *snap)
{
	int cyc = events__find_kind(snap->events, snap->nr_events, EVENT_CYCLES);
	int ins = events__find_kind(snap->events, snap->nr_events, EVENT_INSTRUCTIONS);
	char title[48];
	struct top_col *c;
	int i;

	col_add(v, TOP_CPU, "CPU%", 6, 95);
	col_add(v, TOP_IPC, "IPC", 5, cyc >= 0 && ins >= 0 ? 85 : 8);
	for (i = 0; i < snap->nr_events; i++) {
		__u32 kind = snap->events[i].spec.kind;
		int prio = 65;

		if (!counting(snap, i))
			prio = 5;
		else if (kind & EVENT_MISS)
			prio = 35;
		else if (kind & (EVENT_CYCLES | EVENT_INSTRUCTIONS))
			prio = 60;
		snprintf(title, sizeof(title), "%.32s/s", snap->events[i].spec.name);
		c = col_add(v, TOP_RATE, title, 8, prio);
		c->ev = i;
	}
	for (i = 0; i < snap->nr_events; i++) {
		const char *name = snap->events[i].spec.name;

		if (!(snap->events[i].spec.kind & EVENT_MISS))
			continue;
		snprintf(title, sizeof(title), "%.*s-MPKI", (int)strcspn(name, "-"), name);
		c = col_add(v, TOP_MPKI, title, 9, counting(snap, i) && ins >= 0 ? 75 : 6);
		c->ev = i;
	}
	col_add(v, TOP_SWITCHES, "CSW/s", 6, 50);
	col_add(v, TOP_RUNQ_P99, "RUNQ-p99", 8, 45);
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
		figure_columns(v, snap);
		col_add(v, TOP_CONTAINER, "CONTAINER", 19, containers ? 40 : 4);
		col_add(v, TOP_CGROUP, "CGROUP", 16, 100)->flex = true;
	} else {
		col_add(v, TOP_PID, "PID", 7, 100);
		col_add(v, TOP_USER, "USER", 8, 55);
		figure_columns(v, snap);
		col_add(v, TOP_COMMAND, "COMMAND", 15, 98);
		col_add(v, TOP_CGROUP, "CGROUP", 16, 70)->flex = true;
	}
}

int top_view__sort_col(const struct top_view *v)
{
	const struct top_sort *s = &v->sort[v->by_cgroup];
	int i;

	for (i = 0; i < v->nr_cols; i++)
		if (v->cols[i].kind == s->kind && (v->cols[i].ev == s->ev || v->cols[i].ev < 0))
			return i;
	return 0;
}

void top_view__set_sort(struct top_view *v, int col)
{
	struct top_sort *s = &v->sort[v->by_cgroup];

	if (col < 0 || col >= v->nr_cols)
		return;
	s->kind = v->cols[col].kind;
	s->ev = v->cols[col].ev;
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
	/* systemd units and sessions are better told by their path */
	if (!cg || !cg->ci.runtime[0] || !cg->ci.id[0] || !strcmp(cg->ci.runtime, "systemd") ||
	    !strcmp(cg->ci.runtime, "session"))
		return NULL;
	snprintf(buf, len, "%s:%s", cg->ci.runtime, cg->ci.id);
	return buf;
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
		      contains(top_view__container(cg, label, sizeof(label)), filter));
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
	it->switches_s = ratio((double)(it->f->n[PMBPF_N_NVCSW] + it->f->n[PMBPF_N_NIVCSW]) * 1e9,
			       (double)snap->interval_ns);
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
			if (!top_view__in_scope(cg->path, v->scope) ||
			    !cg_match(cg, cg->path, v->cg_filter))
				continue;
			it = item_add(v);
			if (!it)
				return -ENOMEM;
			it->cg = cg;
			it->f = &cg->total;
			item_figures(it, snap);
		}
	} else {
		for (i = 0; i < snap->nr_rows; i++) {
			const struct proc_row *row = &snap->rows[i];
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
		double interval_s = snap->interval_ns / 1e9;

		it->key = NAN;
		it->skey = "";
		switch (s->kind) {
		case TOP_PID:
			it->key = it->proc->overflow ? 4294967296.0 : it->proc->pid;
			break;
		case TOP_PROCS:
			it->key = it->cg->nr_procs_total;
			break;
		case TOP_CPU:
			it->key = it->m.cpu_pct;
			break;
		case TOP_IPC:
			it->key = it->m.ipc;
			break;
		case TOP_RATE:
			it->key = ratio(it->m.count[s->ev], interval_s);
			break;
		case TOP_MPKI:
			it->key = it->m.mpki[s->ev];
			break;
		case TOP_SWITCHES:
			it->key = it->switches_s;
			break;
		case TOP_RUNQ_P99:
			it->key = it->m.runq_p99_ns;
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
		    s->kind == TOP_CGROUP;
	bool descending = !text && s->kind != TOP_PID;
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
	int i, total = -1, flex = -1;

	for (i = 0; i < v->nr_cols; i++) {
		shown[i] = true;
		total += v->cols[i].width + 1;
		if (v->cols[i].flex)
			flex = i;
	}
	while (total > width) {
		int drop = -1, left = 0;

		for (i = 0; i < v->nr_cols; i++) {
			if (!shown[i])
				continue;
			left++;
			if (drop < 0 || v->cols[i].prio < v->cols[drop].prio)
				drop = i;
		}
		if (left <= 1)
			break;
		shown[drop] = false;
		total -= v->cols[drop].width + 1;
	}
	if (flex < 0 || !shown[flex])
		return 0;
	return v->cols[flex].width + (width > total ? width - total : 0);
}

static void fmt_fixed(char *buf, size_t len, double v, int decimals)
{
	if (isfinite(v))
		snprintf(buf, len, "%.*f", decimals, v);
	else
		snprintf(buf, len, "-");
}

void top_view__cell(const struct top_view *v, const struct snapshot *snap,
		    const struct top_item *it, const struct top_col *c, char *buf, size_t len)
{
	const struct proc_row *p = it->proc;
	double interval_s = snap->interval_ns / 1e9, x;
	char label[64];
	const char *s;

	switch (c->kind) {
	case TOP_PID:
		if (p->overflow)
			snprintf(buf, len, "-");
		else
			snprintf(buf, len, "%u", p->pid);
		break;
	case TOP_USER:
		snprintf(buf, len, "%s", it->user ? it->user : "-");
		break;
	case TOP_PROCS:
		snprintf(buf, len, "%u", it->cg->nr_procs_total);
		break;
	case TOP_CPU:
		fmt_fixed(buf, len, it->m.cpu_pct, 1);
		break;
	case TOP_IPC:
		fmt_fixed(buf, len, it->m.ipc, 2);
		break;
	case TOP_RATE:
		x = ratio(it->m.count[c->ev], interval_s);
		if (!counting(snap, c->ev) || !isfinite(x))
			snprintf(buf, len, "-");
		else if (snap->events[c->ev].spec.kind & EVENT_TIME)
			top_view__fmt_ns(buf, len, x);
		else
			fmt_count(buf, len, x);
		break;
	case TOP_MPKI:
		fmt_fixed(buf, len, it->m.mpki[c->ev], 2);
		break;
	case TOP_SWITCHES:
		fmt_count(buf, len, it->switches_s);
		break;
	case TOP_RUNQ_P99:
		top_view__fmt_ns(buf, len, it->m.runq_p99_ns);
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
	}
}
