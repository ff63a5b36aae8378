// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Live CPI outliers from snapshots (cpi_live.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cpi_live.h"
#include "metrics.h"

/* "PID comm" */
#define PROC_NAME_LEN (11 + PMBPF_COMM_LEN)

struct cpi_live {
	struct cpi_opts o;
	enum cpi_signal signal;
	struct cpi_detector *cg, *proc; /* proc: NULL unless asked */
	struct cpi_sample *s; /* scratch: one interval's samples */
	char (*names)[PROC_NAME_LEN]; /* scratch: their process names */
	size_t cap;
	__u32 *out_pid; /* pid of each of proc's outliers */
	size_t cap_out;
};

struct cpi_live *cpi_live__new(const struct cpi_opts *o, bool procs)
{
	struct cpi_live *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->o = *o;
	l->cg = cpi__new(o);
	if (l->cg && procs)
		l->proc = cpi__new(o);
	if (!l->cg || (procs && !l->proc)) {
		int err = errno;

		cpi_live__free(l);
		errno = err;
		return NULL;
	}
	return l;
}

void cpi_live__free(struct cpi_live *l)
{
	if (!l)
		return;
	cpi__free(l->cg);
	cpi__free(l->proc);
	free(l->s);
	free(l->names);
	free(l->out_pid);
	free(l);
}

void cpi_live__figures(const struct snapshot *snap, const struct figures *f,
		       struct cpi_figures *out)
{
	int cyc = events__find_kind(snap->events, snap->nr_events, EVENT_CYCLES);
	int ins = events__find_kind(snap->events, snap->nr_events, EVENT_INSTRUCTIONS);
	struct row_metrics m;

	metrics__figures(snap, f, &m);
	out->interval_s = snap->interval_ns / 1e9;
	out->oncpu_ns = (double)f->n[PMBPF_N_ONCPU_NS];
	out->cycles = cyc >= 0 ? m.count[cyc] : NAN;
	out->instructions = ins >= 0 ? m.count[ins] : NAN;
	out->runq_avg_ns = m.runq_avg_ns;
}

static int reserve(struct cpi_live *l, size_t n)
{
	struct cpi_sample *s;
	char(*names)[PROC_NAME_LEN];

	if (n <= l->cap)
		return 0;
	s = realloc(l->s, n * sizeof(*s));
	if (!s)
		return -ENOMEM;
	l->s = s;
	names = realloc(l->names, n * sizeof(*names));
	if (!names)
		return -ENOMEM;
	l->names = names;
	l->cap = n;
	return 0;
}

static int update_cgroups(struct cpi_live *l, const struct snapshot *snap)
{
	struct cpi_figures f;
	size_t i;
	int n = 0;

	for (i = 0; i < snap->nr_cgroups; i++) {
		const struct cgroup_row *cg = &snap->cgroups[i];

		/* a slice without processes of its own is neither victim nor suspect */
		if (!cg->path || !cg->nr_procs)
			continue;
		cpi_live__figures(snap, &cg->self, &f);
		cpi__sample(&l->s[n++], cg->path, &f, l->signal);
	}
	return cpi__interval(l->cg, l->s, n);
}

static int update_procs(struct cpi_live *l, const struct snapshot *snap)
{
	struct cpi_figures f;
	size_t i;
	int n = 0, err;

	for (i = 0; i < snap->nr_rows; i++) {
		const struct proc_row *row = &snap->rows[i];

		if (row->overflow || !row->pid)
			continue;
		snprintf(l->names[n], sizeof(l->names[n]), "%u %s", row->pid, row->comm);
		cpi_live__figures(snap, &row->f, &f);
		cpi__sample(&l->s[n], l->names[n], &f, l->signal);
		n++;
	}
	err = cpi__interval(l->proc, l->s, n);
	if (err)
		return err;
	n = cpi__nr_outliers(l->proc);
	if ((size_t)n > l->cap_out) {
		__u32 *p = realloc(l->out_pid, n * sizeof(*p));

		if (!p)
			return -ENOMEM;
		l->out_pid = p;
		l->cap_out = n;
	}
	for (i = 0; i < (size_t)n; i++)
		l->out_pid[i] = (__u32)strtoul(cpi__outlier(l->proc, i)->victim, NULL, 10);
	return 0;
}

int cpi_live__update(struct cpi_live *l, const struct snapshot *snap)
{
	int cyc = events__find_kind(snap->events, snap->nr_events, EVENT_CYCLES);
	int ins = events__find_kind(snap->events, snap->nr_events, EVENT_INSTRUCTIONS);
	int err;

	l->signal = cpi__signal(cyc >= 0, ins >= 0);
	err = reserve(l, snap->nr_rows > snap->nr_cgroups ? snap->nr_rows : snap->nr_cgroups);
	if (!err)
		err = update_cgroups(l, snap);
	if (!err && l->proc)
		err = update_procs(l, snap);
	return err;
}

enum cpi_signal cpi_live__signal(const struct cpi_live *l)
{
	return l->signal;
}

const struct cpi_opts *cpi_live__opts(const struct cpi_live *l)
{
	return &l->o;
}

const struct cpi_detector *cpi_live__cgroups(const struct cpi_live *l)
{
	return l->cg;
}

const struct cpi_outlier *cpi_live__cgroup(const struct cpi_live *l, const char *path)
{
	int i;

	for (i = 0; path && i < cpi__nr_outliers(l->cg); i++)
		if (!strcmp(cpi__outlier(l->cg, i)->victim, path))
			return cpi__outlier(l->cg, i);
	return NULL;
}

const struct cpi_outlier *cpi_live__process(const struct cpi_live *l, __u32 pid)
{
	int i;

	for (i = 0; l->proc && i < cpi__nr_outliers(l->proc); i++)
		if (l->out_pid[i] == pid)
			return cpi__outlier(l->proc, i);
	return NULL;
}
