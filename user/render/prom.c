// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Counters for Prometheus from interval snapshots: each snapshot's deltas
 * added to counters that only grow, for the cgroups, the processes and
 * threads that have series (which ones: prom_rank.c), the system and the
 * --delays pairs; series of dead processes and removed cgroups expire after
 * a grace period. A process's counters start when it gets its series.
 * Their text exposition (format 0.0.4) is prom_text.c's.
 *
 * What is exported is the figure catalog's (catalog.h): every figure with
 * OUT_PROM is a family below pmbpf_cgroup_, pmbpf_process_ and (--threads)
 * pmbpf_thread_ (HELP its help, TYPE its kind, ns in seconds), and every
 * self statistic with OUT_PROM is one series.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "catalog.h"
#include "delay.h"
#include "metrics.h"
#include "htab.h"
#include "prom.h"
#include "prom_state.h"

struct prom_state *prom__new(const struct prom_opts *opts)
{
	struct prom_state *ps = calloc(1, sizeof(*ps));
	const struct figure *figs;
	size_t i, nr;

	if (!ps)
		return NULL;
	ps->o = *opts;
	ps->procs.top_k = ps->threads.top_k = opts->top_k;
	ps->procs.grace_ns = ps->threads.grace_ns = opts->grace_ns;
	ps->procs.scale = ps->threads.scale = 1;
	figs = catalog__figures(&nr);
	for (i = 0; i < nr; i++) {
		int k = ev_slot(figs[i].src);

		if ((figs[i].outputs & OUT_PROM) && figs[i].prom && figs[i].kind == FIG_COUNTER &&
		    k >= 0 && !ps->ev_fig[k])
			ps->ev_fig[k] = &figs[i];
	}
	if (prom_families(ps)) {
		free(ps);
		return NULL;
	}
	return ps;
}

static void cg_free(struct prom_state *ps, struct cg *c)
{
	htab_del(&ps->cgroups, &c->node);
	free(c->path);
	free(c->labels);
	series_cache__free(c->cache);
	free(c);
}

static void free_cg_node(void *ps, struct hnode *n, __u64 now)
{
	cg_free(ps, (struct cg *)n);
}

static void free_dpair_node(void *ctx, struct hnode *n, __u64 now)
{
	struct prom_state *ps = ctx;

	(void)now;
	htab_del(&ps->dpairs, n);
	free(((struct dpair *)n)->cgroup);
	free(n);
}

void prom__free(struct prom_state *ps)
{
	if (!ps)
		return;
	ranking__free(&ps->procs);
	ranking__free(&ps->threads);
	htab_each(&ps->cgroups, free_cg_node, ps, 0);
	htab_each(&ps->dpairs, free_dpair_node, ps, 0);
	htab_free(&ps->cgroups);
	htab_free(&ps->dpairs);
	free(ps->fam_next);
	free(ps->fam_head);
	free(ps);
}

/* Add one interval's figures f to a's counters; f is also a's last interval. */
static void acc_add(struct prom_state *ps, struct acc *a, const struct snapshot *snap,
		    const struct figures *f)
{
	struct row_metrics m;
	int i, k;

	metrics__figures(snap, f, &m);
	for (i = 0; i < PMBPF_N_NR; i++)
		a->n[i] += f->n[i];
	for (i = 0; i < PMBPF_RUNQ_SLOTS; i++)
		a->runq_hist[i] += f->runq_hist[i];
	for (k = 0; k < EV_SRCS; k++) {
		const struct figure *fd = ps->ev_fig[k];

		for (i = 0; fd && i < snap->nr_events; i++) {
			double v;

			if (!event_counting(snap, i))
				continue;
			v = figure__value(fd, f, &m, i);
			/* enabled but never running: nothing was measured */
			if (!isfinite(v))
				continue;
			if (fd->src == SRC_EVENT)
				a->ev[k][i].d += v;
			else
				a->ev[k][i].u += (__u64)v;
		}
	}
	a->last = *f;
	a->last_update = ps->updates;
}

static char *cg_labels(const char *path, const struct container_info *ci)
{
	struct strbuf sb = {};

	strbuf__printf(&sb, "cgroup=");
	prom__label_value(&sb, path);
	strbuf__printf(&sb, ",runtime=");
	prom__label_value(&sb, ci->runtime);
	strbuf__printf(&sb, ",container_id=");
	prom__label_value(&sb, ci->id);
	strbuf__printf(&sb, ",pod_uid=");
	prom__label_value(&sb, ci->pod_uid);
	if (sb.failed) {
		strbuf__free(&sb);
		return NULL;
	}
	return sb.buf;
}

static struct cg *cg_get(struct prom_state *ps, const struct cgroup_row *row)
{
	__u64 h = str_hash(row->path);
	struct hnode *n;
	struct cg *c;

	for (n = htab_chain(&ps->cgroups, h); n; n = n->next) {
		c = (struct cg *)n;
		if (n->hash == h && !strcmp(c->path, row->path))
			return c;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->node.hash = h;
	c->path = strdup(row->path);
	c->labels = cg_labels(row->path, &row->ci);
	if (!c->path || !c->labels || htab_add(&ps->cgroups, &c->node)) {
		free(c->path);
		free(c->labels);
		free(c);
		return NULL;
	}
	return c;
}

static void expire_cg(void *ctx, struct hnode *n, __u64 now)
{
	struct prom_state *ps = ctx;
	struct cg *c = (struct cg *)n;

	if (c->last_seen == now)
		return;
	if (!c->removed_since) {
		if (!ps->o.cgroup_exists || ps->o.cgroup_exists(c->path, ps->o.ctx))
			return;
		c->removed_since = now;
	}
	if (now - c->removed_since >= ps->o.grace_ns)
		cg_free(ps, c);
}

static struct dpair *dpair_get(struct prom_state *ps, const char *cgroup, const char *by)
{
	size_t lc = strlen(cgroup), lb = strlen(by);
	__u64 h = hash_bytes(str_hash(cgroup), by, lb + 1);
	struct hnode *n;
	struct dpair *d;

	for (n = htab_chain(&ps->dpairs, h); n; n = n->next) {
		d = (struct dpair *)n;
		if (n->hash == h && !strcmp(d->cgroup, cgroup) && !strcmp(d->by, by))
			return d;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->node.hash = h;
	d->cgroup = malloc(lc + lb + 2);
	if (!d->cgroup || htab_add(&ps->dpairs, &d->node)) {
		free(d->cgroup);
		free(d);
		return NULL;
	}
	memcpy(d->cgroup, cgroup, lc + 1);
	memcpy(d->cgroup + lc + 1, by, lb + 1);
	d->by = d->cgroup + lc + 1;
	return d;
}

/* The snapshot's pairs of processes, summed per pair of their cgroups. */
static int dpairs_update(struct prom_state *ps, const struct snapshot *snap, __u64 now)
{
	size_t i;

	ps->delays_on = true;
	for (i = 0; i < snap->nr_delays; i++) {
		const struct delay_pair *p = &snap->delays[i];
		struct dpair *d;

		if (!p->ns)
			continue;
		d = dpair_get(ps, p->cgroup ? p->cgroup : "", p->by_cgroup ? p->by_cgroup : "");
		if (!d)
			return -ENOMEM;
		d->ns += p->ns;
		d->last_seen = now;
		d->removed_since = 0;
	}
	return 0;
}

/* A pair goes a grace period after either of its cgroups was removed. */
static void expire_dpair(void *ctx, struct hnode *n, __u64 now)
{
	struct prom_state *ps = ctx;
	struct dpair *d = (struct dpair *)n;

	if (d->last_seen == now)
		return;
	if (!d->removed_since) {
		if (!ps->o.cgroup_exists || (ps->o.cgroup_exists(d->cgroup, ps->o.ctx) &&
					     ps->o.cgroup_exists(d->by, ps->o.ctx)))
			return;
		d->removed_since = now;
	}
	if (now - d->removed_since >= ps->o.grace_ns)
		free_dpair_node(ps, n, now);
}

/* Counters of the processes (or threads) with series, this interval included. */
static int acc_rows(struct prom_state *ps, struct ranking *r, const struct snapshot *snap,
		    const struct proc_row *rows, size_t nr, __u64 now)
{
	size_t i;

	for (i = 0; i < nr; i++) {
		const struct proc_row *row = &rows[i];
		struct proc *p;

		if (row->overflow || row->pid == 0)
			continue;
		p = ranking__row(r, rows, i, now);
		if (!p)
			continue;
		if (p->exported && !p->acc) {
			p->acc = calloc(1, sizeof(*p->acc));
			if (!p->acc)
				return -ENOMEM;
		}
		if (p->acc)
			acc_add(ps, p->acc, snap, &row->f);
	}
	return 0;
}

int prom__update(struct prom_state *ps, const struct snapshot *snap, __u64 now)
{
	double dt = snap->interval_ns > 0 ? snap->interval_ns / 1e9 : 1e-9;
	bool threads = ps->o.threads && snap->threads_on;
	struct figures idle = {};
	struct row_metrics sys;
	size_t r, i;

	ps->updates++;
	if (ranking__rows(&ps->procs, snap->rows, snap->nr_rows, dt, now) ||
	    (threads && ranking__rows(&ps->threads, snap->threads, snap->nr_threads, dt, now)))
		return -ENOMEM;
	for (r = 0; r < snap->nr_rows; r++)
		if (!snap->rows[r].overflow && snap->rows[r].pid == 0)
			figures__add(&idle, &snap->rows[r].f);
	acc_add(ps, &ps->idle, snap, &idle);
	metrics__system(snap, &sys);
	for (i = 0; i < (size_t)snap->nr_events; i++)
		if (event_counting(snap, i) && isfinite(sys.count[i]))
			ps->system_ev[i] += sys.count[i];
	for (r = 0; r < snap->nr_cgroups; r++) {
		const struct cgroup_row *row = &snap->cgroups[r];
		struct cg *c;

		if (!row->path)
			continue;
		c = cg_get(ps, row);
		if (!c)
			return -ENOMEM;
		/* the snapshot's cgroups hold no idle time (account.c) */
		acc_add(ps, &c->acc, snap, &row->total);
		for (i = 0; i < CGS_NR; i++)
			if (row->stat.have & (1u << i))
				c->acc.cg[i] += row->stat.v[i];
		c->acc.cg_have |= row->stat.have;
		c->overflow_procs += row->overflow_procs_total;
		c->last_seen = now;
		c->removed_since = 0;
	}
	if (ranking__select(&ps->procs, now) || (threads && ranking__select(&ps->threads, now)))
		return -ENOMEM;
	if (acc_rows(ps, &ps->procs, snap, snap->rows, snap->nr_rows, now) ||
	    (threads && acc_rows(ps, &ps->threads, snap, snap->threads, snap->nr_threads, now)))
		return -ENOMEM;
	if (snap->delays_on && dpairs_update(ps, snap, now))
		return -ENOMEM;
	ranking__expire(&ps->procs, now);
	ranking__expire(&ps->threads, now);
	htab_each(&ps->cgroups, expire_cg, ps, now);
	htab_each(&ps->dpairs, expire_dpair, ps, now);
	return 0;
}

void prom__counts(const struct prom_state *ps, size_t *procs, size_t *cgroups, size_t *tracked)
{
	*procs = ps->procs.nr_exported;
	*cgroups = ps->cgroups.nr;
	*tracked = ps->procs.procs.nr;
}

void prom__thread_counts(const struct prom_state *ps, size_t *threads, size_t *tracked)
{
	*threads = ps->threads.nr_exported;
	*tracked = ps->threads.procs.nr;
}

double prom__system_event(const struct prom_state *ps, int i)
{
	return ps->system_ev[i];
}

__u64 prom__idle_ns(const struct prom_state *ps)
{
	return ps->idle.n[PMBPF_N_ONCPU_NS];
}

bool prom__threads(const struct prom_state *ps)
{
	return ps->o.threads;
}

char *prom__cgroup_labels(const char *path, const struct container_info *ci)
{
	return cg_labels(path, ci);
}
