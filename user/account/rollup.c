// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A read's roll-ups (rollup.h), once account.c has made its rows: the
 * cgroups' figures up their hierarchy, and with --threads each process's
 * row as the sum of its threads'.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "container.h"
#include "rollup.h"

static struct cgroup_row *cgroup_row_get(struct snapshot *snap, __u64 id)
{
	size_t i;

	for (i = 0; i < snap->nr_cgroups; i++)
		if (snap->cgroups[i].id == id)
			return &snap->cgroups[i];
	return NULL;
}

/*
 * The path of cgroup id, copied into the snapshot: a rescan of the caller's
 * cache may free what it returned. NULL when unknown (or out of memory: *err).
 */
static const char *cgroup_path(struct snapshot *snap, const struct account_opts *o, __u64 id,
			       int *err)
{
	const char *path = id && o->cgroup_path ? o->cgroup_path(o->ctx, id) : NULL;
	const char *copy;

	if (!path)
		return NULL;
	copy = snapshot__strdup(snap, path);
	if (!copy)
		*err = -ENOMEM;
	return copy;
}

int rollup_cgroups(struct snapshot *snap, const struct account_opts *o)
{
	size_t r, n;
	int err = 0;

	for (r = 0; r < snap->nr_rows && !err; r++) {
		struct proc_row *row = &snap->rows[r];
		struct cgroup_row *cg;

		/* the cgroup-less overflow entry (the last resort) is no cgroup's */
		if (row->overflow && !row->cgroup_id) {
			row->cgroup = cgroup_path(snap, o, row->cgroup_id, &err);
			continue;
		}
		cg = cgroup_row_get(snap, row->cgroup_id);
		if (!cg) {
			cg = snapshot__add_cgroup(snap);
			if (!cg)
				return -ENOMEM;
			cg->id = row->cgroup_id;
			cg->path = cgroup_path(snap, o, row->cgroup_id, &err);
		}
		row->cgroup = cg->path;
		if (row->overflow) {
			/* a cgroup's overflow entry: its processes without a row of their own */
			cg->overflow_procs += row->folded;
			cg->overflow = true;
			figures__add(&cg->self, &row->f);
			continue;
		}
		if (row->pid == 0)
			continue;
		cg->nr_procs++;
		figures__add(&cg->self, &row->f);
	}
	/* Create missing ancestors; the array grows while we walk it. */
	for (n = 0; n < snap->nr_cgroups && !err; n++) {
		struct cgroup_row *cg = &snap->cgroups[n];
		__u64 parent;

		if (!cg->path)
			continue;
		container__parse(cg->path, &cg->ci);
		parent = 0;
		if (o->cgroup_parent)
			parent = o->cgroup_parent(o->ctx, cg->path, &cg->depth);
		cg->parent_id = parent;
		if (parent && !cgroup_row_get(snap, parent)) {
			struct cgroup_row *p = snapshot__add_cgroup(snap);

			if (!p)
				return -ENOMEM;
			p->id = parent;
			p->path = cgroup_path(snap, o, parent, &err);
		}
	}
	if (err)
		return err;
	for (n = 0; n < snap->nr_cgroups; n++) {
		struct cgroup_row *cg = &snap->cgroups[n], *anc;
		__u64 id;
		int guard = 0;

		/* add own figures to self and every ancestor's total */
		for (anc = cg; anc && guard < 4096; guard++) {
			figures__add(&anc->total, &cg->self);
			anc->nr_procs_total += cg->nr_procs;
			anc->overflow_total |= cg->overflow;
			anc->overflow_procs_total += cg->overflow_procs;
			id = anc->parent_id;
			anc = id ? cgroup_row_get(snap, id) : NULL;
		}
	}
	return 0;
}

/* Threads of one process in one cgroup compare equal. */
static int cmp_thread_proc(const struct proc_row *a, const struct proc_row *b)
{
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->cgroup_id != b->cgroup_id)
		return a->cgroup_id < b->cgroup_id ? -1 : 1;
	return a->start_ns < b->start_ns ? -1 : a->start_ns > b->start_ns;
}

static int cmp_thread(const void *x, const void *y)
{
	const struct proc_row *a = x, *b = y;
	int c = cmp_thread_proc(a, b);

	return c ? c : a->tid < b->tid ? -1 : a->tid > b->tid;
}

int rollup_threads(struct snapshot *snap, const struct account_opts *o)
{
	struct proc_row *t = snap->rows;
	size_t n = snap->nr_rows, cap = snap->cap_rows, i, j, k;

	snap->threads_on = true;
	snap->rows = snap->threads;
	snap->cap_rows = snap->cap_threads;
	snap->nr_rows = 0;
	snap->threads = t;
	snap->cap_threads = cap;
	snap->nr_threads = 0;
	if (n > 1)
		qsort(t, n, sizeof(*t), cmp_thread);
	for (i = 0; i < n; i = j) {
		struct proc_row *p = snapshot__add_row(snap);
		bool named = false;

		if (!p)
			return -ENOMEM;
		for (j = i; j < n && !cmp_thread_proc(&t[i], &t[j]); j++)
			;
		*p = t[i];
		if (!t[i].tid) { /* idle, overflow: the one row of their key */
			p->nr_threads = 0;
			continue;
		}
		p->tid = 0;
		p->exited = false;
		p->proc_end = false;
		memset(&p->f, 0, sizeof(p->f));
		for (k = i; k < j; k++) {
			figures__add(&p->f, &t[k].f);
			p->exited = p->exited || t[k].proc_end;
			if (t[k].tid == t[k].pid) {
				memcpy(p->comm, t[k].comm, sizeof(p->comm));
				named = true;
			}
			snap->threads[snap->nr_threads++] = t[k];
		}
		p->nr_threads = (__u32)(j - i);
		if (!named && o->process_comm) {
			char comm[PMBPF_COMM_LEN];

			if (o->process_comm(o->ctx, p->pid, comm, sizeof(comm)))
				memcpy(p->comm, comm, sizeof(p->comm));
		}
	}
	return 0;
}

void rollup_thread_cgroups(struct snapshot *snap)
{
	size_t i;

	for (i = 0; i < snap->nr_threads; i++) {
		const struct cgroup_row *cg = cgroup_row_get(snap, snap->threads[i].cgroup_id);

		if (cg)
			snap->threads[i].cgroup = cg->path;
	}
}
