// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Counters for Prometheus from interval snapshots, and their text
 * exposition (format 0.0.4). Which processes get series: the top K live
 * processes (and those that exited in the interval) by an exponentially
 * weighted average of their CPU rate over SCORE_TAU_S; a process that has
 * a series keeps it until another ranks twice as high (INCUMBENT_BONUS), so
 * that processes with similar small figures do not take turns and churn
 * series (a new process at 100% of a CPU takes the place of one at a steady
 * 40% in about 30 s). A process's counters start when it gets its series.
 * A process that leaves the top K, or exits, keeps its series (its final
 * value) for the grace period, but at most K such lingering series are
 * kept, so a scrape holds at most 2 x K process series whatever the churn.
 * With --threads (prom_opts.threads) threads are ranked apart by the same
 * rules, a top K of their own: at most 2 x K thread series more.
 *
 * What is exported is the figure catalog's (catalog.h): every figure with
 * OUT_PROM is a family below pmbpf_cgroup_, pmbpf_process_ and (--threads)
 * pmbpf_thread_ (HELP its help, TYPE its kind, ns in seconds), and every
 * self statistic with OUT_PROM is one series.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "catalog.h"
#include "delay.h"
#include "metrics.h"
#include "htab.h"
#include "json_writer.h"
#include "outbuf.h"
#include "prom.h"
#include "util.h"

/* Time constant of the CPU ranking average, in seconds. */
#define SCORE_TAU_S 20.0
/* A process in the top K stays until another ranks this many times higher. */
#define INCUMBENT_BONUS 2.0

void prom__label_value(struct strbuf *sb, const char *v)
{
	const unsigned char *s = (const unsigned char *)v;

	strbuf__putc(sb, '"');
	while (*s) {
		const unsigned char *q = s;
		int n;

		/* printable ASCII but '\\' and '"' as it is */
		while (*q >= 0x20 && *q < 0x7f && *q != '\\' && *q != '"')
			q++;
		if (q > s) {
			strbuf__add(sb, (const char *)s, q - s);
			s = q;
			continue;
		}
		n = utf8_len(s);

		if (!n) {
			strbuf__printf(sb, "?");
			s++;
		} else if (*s != '\n' && !text__char((const char *)s, false, &n)) {
			/* a control character: no escape sequence for a terminal reading it */
			strbuf__printf(sb, TEXT_REPLACEMENT);
			s += n;
		} else if (*s == '\\' || *s == '"') {
			strbuf__printf(sb, "\\%c", *s);
			s++;
		} else if (*s == '\n') {
			strbuf__printf(sb, "\\n");
			s++;
		} else {
			strbuf__add(sb, (const char *)s, n);
			s += n;
		}
	}
	strbuf__putc(sb, '"');
}

/*
 * Per-event counters (catalog sources SRC_EVENT to SRC_EVENT_RUNNING) are
 * accumulated by source and event: the scaled count is fractional, the
 * others are whole numbers kept exact.
 */
#define EV_SRCS (SRC_EVENT_RUNNING - SRC_EVENT + 1)
_Static_assert(SRC_EVENT_RAW == SRC_EVENT + 1 && SRC_EVENT_ENABLED == SRC_EVENT + 2 &&
		       SRC_EVENT_RUNNING == SRC_EVENT + 3,
	       "per-event counter sources are consecutive in enum fig_src");

/* The accumulator of a per-event counter source, or -1. */
static int ev_slot(enum fig_src src)
{
	return src >= SRC_EVENT && src <= SRC_EVENT_RUNNING ? (int)(src - SRC_EVENT) : -1;
}

union evsum {
	__u64 u;
	double d; /* SRC_EVENT */
};

/* Counters accumulated from interval deltas, and the last interval for gauges. */
struct acc {
	__u64 n[PMBPF_N_NR]; /* enum pmbpf_count */
	__u64 runq_hist[PMBPF_RUNQ_SLOTS];
	union evsum ev[EV_SRCS][PMBPF_MAX_EVENTS];
	__u64 cg[CGS_NR]; /* a cgroup's own file figures (SRC_CGROUP) */
	__u32 cg_have; /* those with a value since the series began */
	struct figures last; /* what was counted in the last interval it was seen */
	__u64 last_update; /* the update that interval was: its gauges are current */
};

/*
 * The text of one series set's samples, family by family, as last
 * rendered: a set whose counters did not move since is copied, not
 * rendered again (a refresh costs in proportion to the sets that changed).
 */
struct series_cache {
	struct strbuf text;
	size_t *off; /* off[k]: where the samples of the k-th family rendered begin */
	size_t nr_off, cap_off;
	__u64 acc_update; /* the acc's last_update when rendered */
	__u64 shape; /* prom_state.shape when rendered */
	bool current; /* its gauges were current (the set was seen in that update) */
	bool valid;
	bool building; /* being rendered again in this exposition */
	char *labels; /* a process's or thread's labels, rendered for comm */
	char comm[PMBPF_COMM_LEN];
};

static void cache_free(struct series_cache *c)
{
	if (!c)
		return;
	strbuf__free(&c->text);
	free(c->off);
	free(c->labels);
	free(c);
}

/*
 * A process in one cgroup, identified by its start time across PID reuse;
 * or (tid set) one thread of it.
 */
struct proc {
	struct hnode node; /* first: a node is a proc */
	struct hnode snode; /* in ranking.series, by pid and tid */
	__u32 pid;
	__u32 tid; /* a thread's; 0 for a process */
	__u64 cgroup_id;
	__u64 start_ns;
	char comm[PMBPF_COMM_LEN];
	char *cgroup; /* path below the cgroup2 mount, or NULL */
	struct acc *acc; /* from its first export on: untracked processes stay small */
	struct series_cache *cache; /* its series' text, once rendered */
	double score; /* average CPU seconds per second, over about SCORE_TAU_S */
	double rank; /* score, with the bonus of a process in the top K */
	__u64 last_seen;
	__u64 linger_since; /* when it left the top K or exited; 0 while in it */
	__u64 top_gen; /* the last update that ranked it in the top K */
	bool exported;
	bool exited;
};

/* A cgroup, by path: a cgroup removed and made again continues its series. */
struct cg {
	struct hnode node;
	char *path;
	char *labels; /* rendered label pairs */
	struct acc acc;
	struct series_cache *cache;
	__u64 last_seen;
	__u64 removed_since; /* 0 while it exists */
};

/* --delays: the delay of a cgroup's processes while another's ran. */
struct dpair {
	struct hnode node;
	char *cgroup; /* NUL, then by: both paths in one allocation */
	const char *by;
	__u64 ns;
	__u64 last_seen;
	__u64 removed_since; /* 0 while both cgroups exist */
};

/* The processes, or the threads, ranked for series: a top K of their own. */
struct ranking {
	struct htab procs;
	struct htab series; /* the same procs by pid and tid (snode): who shares a series */
	struct proc **rank;
	__u64 gen;
	size_t cap_rank;
	size_t nr_exported;
	unsigned int top_k;
	__u64 grace_ns;
};

struct prom_state {
	struct prom_opts o;
	struct htab dpairs;
	bool delays_on;
	/* the catalog's Prometheus counter of each per-event source, or NULL */
	const struct figure *ev_fig[EV_SRCS];
	__u64 updates;
	struct ranking procs;
	struct ranking threads; /* --threads */
	struct htab cgroups;
	struct acc idle;
	double system_ev[PMBPF_MAX_EVENTS];
	/* what the families and their samples depend on in a snapshot: events, metrics */
	__u64 shape;
};

static __u64 proc_hash(__u32 pid, __u32 tid, __u64 cgroup_id, __u64 start_ns)
{
	__u64 h = 0xcbf29ce484222325ULL;

	h = hash_bytes(h, &pid, sizeof(pid));
	if (tid)
		h = hash_bytes(h, &tid, sizeof(tid));
	h = hash_bytes(h, &cgroup_id, sizeof(cgroup_id));
	return hash_bytes(h, &start_ns, sizeof(start_ns));
}

static __u64 series_hash(__u32 pid, __u32 tid)
{
	__u64 h = 0xcbf29ce484222325ULL;

	h = hash_bytes(h, &pid, sizeof(pid));
	return hash_bytes(h, &tid, sizeof(tid));
}

static struct proc *snode_proc(struct hnode *n)
{
	return (struct proc *)((char *)n - offsetof(struct proc, snode));
}

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
	figs = catalog__figures(&nr);
	for (i = 0; i < nr; i++) {
		int k = ev_slot(figs[i].src);

		if ((figs[i].outputs & OUT_PROM) && figs[i].prom && figs[i].kind == FIG_COUNTER &&
		    k >= 0 && !ps->ev_fig[k])
			ps->ev_fig[k] = &figs[i];
	}
	return ps;
}

static void proc_free(struct ranking *r, struct proc *p)
{
	htab_del(&r->procs, &p->node);
	htab_del(&r->series, &p->snode);
	if (p->exported)
		r->nr_exported--;
	free(p->cgroup);
	free(p->acc);
	cache_free(p->cache);
	free(p);
}

static void cg_free(struct prom_state *ps, struct cg *c)
{
	htab_del(&ps->cgroups, &c->node);
	free(c->path);
	free(c->labels);
	cache_free(c->cache);
	free(c);
}

static void free_proc_node(void *r, struct hnode *n, __u64 now)
{
	proc_free(r, (struct proc *)n);
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

static void ranking_free(struct ranking *r)
{
	htab_each(&r->procs, free_proc_node, r, 0);
	htab_free(&r->procs);
	htab_free(&r->series);
	free(r->rank);
}

void prom__free(struct prom_state *ps)
{
	if (!ps)
		return;
	ranking_free(&ps->procs);
	ranking_free(&ps->threads);
	htab_each(&ps->cgroups, free_cg_node, ps, 0);
	htab_each(&ps->dpairs, free_dpair_node, ps, 0);
	htab_free(&ps->cgroups);
	htab_free(&ps->dpairs);
	free(ps);
}

static bool event_counting(const struct snapshot *snap, int i)
{
	return i < snap->nr_events && snap->events[i].state == EVENT_COUNTING;
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

static __u64 row_hash(const struct proc_row *row)
{
	return proc_hash(row->pid, row->tid, row->cgroup_id, row->start_ns);
}

/*
 * The process or thread of row. A thread that exited before this update
 * is not the row's: its TID was reused in the same process (which a PID
 * reused is not: a new process has a new start time).
 */
static struct proc *proc_find(struct ranking *r, const struct proc_row *row, __u64 h, __u64 now)
{
	struct hnode *n;
	struct proc *p;

	for (n = htab_chain(&r->procs, h); n; n = n->next) {
		p = (struct proc *)n;
		if (n->hash == h && p->pid == row->pid && p->tid == row->tid &&
		    p->cgroup_id == row->cgroup_id && p->start_ns == row->start_ns &&
		    !(p->tid && p->exited && p->last_seen != now))
			return p;
	}
	return NULL;
}

static struct proc *proc_get(struct ranking *r, const struct proc_row *row, __u64 now)
{
	__u64 h = row_hash(row);
	struct proc *p = proc_find(r, row, h, now);

	if (p)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->node.hash = h;
	p->pid = row->pid;
	p->tid = row->tid;
	p->cgroup_id = row->cgroup_id;
	p->start_ns = row->start_ns;
	if (row->cgroup) {
		p->cgroup = strdup(row->cgroup);
		if (!p->cgroup) {
			free(p);
			return NULL;
		}
	}
	p->snode.hash = series_hash(p->pid, p->tid);
	if (htab_add(&r->procs, &p->node)) {
		free(p->cgroup);
		free(p);
		return NULL;
	}
	if (htab_add(&r->series, &p->snode)) {
		htab_del(&r->procs, &p->node);
		free(p->cgroup);
		free(p);
		return NULL;
	}
	return p;
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

static int cmp_score(const void *a, const void *b)
{
	const struct proc *pa = *(struct proc *const *)a, *pb = *(struct proc *const *)b;

	if (pa->rank != pb->rank)
		return pa->rank < pb->rank ? 1 : -1;
	if (pa->pid != pb->pid)
		return pa->pid < pb->pid ? -1 : 1;
	if (pa->tid != pb->tid)
		return pa->tid < pb->tid ? -1 : 1;
	return pa->start_ns < pb->start_ns ? -1 : pa->start_ns > pb->start_ns;
}

static int cmp_linger(const void *a, const void *b)
{
	const struct proc *pa = *(struct proc *const *)a, *pb = *(struct proc *const *)b;

	if (pa->linger_since != pb->linger_since)
		return pa->linger_since < pb->linger_since ? -1 : 1;
	return cmp_score(a, b);
}

static int rank_reserve(struct ranking *r, size_t n)
{
	struct proc **rank;

	if (n <= r->cap_rank)
		return 0;
	rank = realloc(r->rank, n * sizeof(*rank));
	if (!rank)
		return -ENOMEM;
	r->rank = rank;
	r->cap_rank = n;
	return 0;
}

/*
 * Same series labels as p: an older process with the same PID in the same
 * cgroup (a thread: with the same TID too).
 */
static bool same_series(const struct proc *a, const struct proc *b)
{
	if (a->pid != b->pid || a->tid != b->tid)
		return false;
	if (!a->cgroup || !b->cgroup)
		return a->cgroup == b->cgroup && a->cgroup_id == b->cgroup_id;
	return !strcmp(a->cgroup, b->cgroup);
}

static void export(struct ranking *r, struct proc *p)
{
	struct hnode *m;

	/* a PID (TID) reused in the same cgroup: the newer one takes the series */
	for (m = htab_chain(&r->series, p->snode.hash); m; m = m->next) {
		struct proc *q = snode_proc(m);

		if (q != p && q->exported && same_series(p, q)) {
			q->exported = false;
			r->nr_exported--;
		}
	}
	p->exported = true;
	r->nr_exported++;
}

/* Sift rank[i] down the heap of rank[0..n) whose root ranks lowest (cmp_score). */
static void heap_down(struct proc **rank, size_t n, size_t i)
{
	for (;;) {
		size_t c = 2 * i + 1;
		struct proc *t;

		if (c >= n)
			return;
		if (c + 1 < n && cmp_score(&rank[c + 1], &rank[c]) > 0)
			c++;
		if (cmp_score(&rank[c], &rank[i]) <= 0)
			return;
		t = rank[i];
		rank[i] = rank[c];
		rank[c] = t;
		i = c;
	}
}

/*
 * The k highest of rank[0..n) (cmp_score), first and sorted, in O(n log k)
 * rather than sorting all n; returns how many (at most k).
 */
static size_t top_first(struct proc **rank, size_t n, size_t k)
{
	size_t i;

	if (n > k && k) {
		/* rank[0..k): a heap of the best k so far, its worst at the root */
		for (i = k / 2; i-- > 0;)
			heap_down(rank, k, i);
		for (i = k; i < n; i++) {
			if (cmp_score(&rank[i], &rank[0]) < 0) {
				struct proc *t = rank[0];

				rank[0] = rank[i];
				rank[i] = t;
				heap_down(rank, k, 0);
			}
		}
	}
	if (n > k)
		n = k;
	if (n > 1)
		qsort(rank, n, sizeof(*rank), cmp_score);
	return n;
}

static int select_top(struct ranking *r, __u64 now)
{
	size_t i, n = 0, k = r->top_k;
	struct hnode *node;

	if (rank_reserve(r, r->procs.nr))
		return -ENOMEM;
	for (i = 0; i < r->procs.nr_buckets; i++) {
		for (node = r->procs.b[i]; node; node = node->next) {
			struct proc *p = (struct proc *)node;
			bool incumbent = p->exported && p->top_gen == r->gen && !p->exited;

			p->rank = p->score * (incumbent ? INCUMBENT_BONUS : 1);
			/* live, or exited in this interval: its final counts are news */
			if (p->rank > 0 && (!p->exited || p->last_seen == now))
				r->rank[n++] = p;
		}
	}
	n = top_first(r->rank, n, k);
	r->gen++;
	for (i = 0; i < n && i < k; i++) {
		struct proc *p = r->rank[i];

		if (!p->exported)
			export(r, p);
		p->top_gen = r->gen;
		p->linger_since = p->exited ? now : 0;
	}
	/* Exported but not (or no longer live) in the top K: lingering. */
	n = 0;
	for (i = 0; i < r->procs.nr_buckets; i++) {
		for (node = r->procs.b[i]; node; node = node->next) {
			struct proc *p = (struct proc *)node;

			if (!p->exported || (p->top_gen == r->gen && !p->exited))
				continue;
			if (!p->linger_since)
				p->linger_since = now;
			r->rank[n++] = p;
		}
	}
	if (n > k) {
		/* the oldest lingering series go first */
		qsort(r->rank, n, sizeof(*r->rank), cmp_linger);
		for (i = 0; i < n - k; i++) {
			r->rank[i]->exported = false;
			r->nr_exported--;
		}
	}
	return 0;
}

static void expire_proc(void *ctx, struct hnode *n, __u64 now)
{
	struct ranking *r = ctx;
	struct proc *p = (struct proc *)n;

	if (p->exported) {
		if (p->linger_since && now - p->linger_since >= r->grace_ns)
			proc_free(r, p);
		return;
	}
	/* Not exported: forget it once it is gone, or idle for the grace period. */
	if (p->exited || now - p->last_seen >= r->grace_ns)
		proc_free(r, p);
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

/*
 * The CPU ranking of one interval's rows (processes, or threads): each
 * one's score (every score first decays by one interval), name, when seen.
 */
static int rank_rows(struct ranking *r, const struct proc_row *rows, size_t nr, double dt,
		     __u64 now)
{
	double decay = exp(-dt / SCORE_TAU_S);
	struct hnode *n;
	size_t i;

	for (i = 0; i < r->procs.nr_buckets; i++)
		for (n = r->procs.b[i]; n; n = n->next)
			((struct proc *)n)->score *= decay;
	for (i = 0; i < nr; i++) {
		const struct proc_row *row = &rows[i];
		struct proc *p;

		if (row->overflow || row->pid == 0)
			continue;
		p = proc_get(r, row, now);
		if (!p)
			return -ENOMEM;
		p->score += (1 - decay) * (row->f.n[PMBPF_N_ONCPU_NS] / 1e9) / dt;
		if (row->comm[0])
			memcpy(p->comm, row->comm, sizeof(p->comm));
		p->last_seen = now;
		if (row->exited)
			p->exited = true;
	}
	return 0;
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
		p = proc_find(r, row, row_hash(row), now);
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
	if (rank_rows(&ps->procs, snap->rows, snap->nr_rows, dt, now) ||
	    (threads && rank_rows(&ps->threads, snap->threads, snap->nr_threads, dt, now)))
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
		c->last_seen = now;
		c->removed_since = 0;
	}
	if (select_top(&ps->procs, now) || (threads && select_top(&ps->threads, now)))
		return -ENOMEM;
	if (acc_rows(ps, &ps->procs, snap, snap->rows, snap->nr_rows, now) ||
	    (threads && acc_rows(ps, &ps->threads, snap, snap->threads, snap->nr_threads, now)))
		return -ENOMEM;
	if (snap->delays_on && dpairs_update(ps, snap, now))
		return -ENOMEM;
	htab_each(&ps->procs.procs, expire_proc, &ps->procs, now);
	htab_each(&ps->threads.procs, expire_proc, &ps->threads, now);
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

/* Rendering */

/* " help", escaped for a HELP line. */
static void help_text(struct strbuf *sb, const char *help)
{
	const char *p;

	strbuf__printf(sb, " ");
	for (p = help; *p; p++) {
		size_t n = strcspn(p, "\\\n");

		strbuf__printf(sb, "%.*s", (int)n, p);
		p += n;
		if (!*p)
			break;
		strbuf__printf(sb, *p == '\\' ? "\\\\" : "\\n");
	}
}

static void family(struct strbuf *sb, const char *name, const char *type, const char *help)
{
	strbuf__printf(sb, "# HELP %s", name);
	help_text(sb, help);
	strbuf__printf(sb, "\n# TYPE %s %s\n", name, type);
}

static void put_double(struct strbuf *sb, double v)
{
	if (isnan(v)) {
		strbuf__add(sb, "NaN\n", 4);
	} else if (isinf(v)) {
		strbuf__puts(sb, v > 0 ? "+Inf\n" : "-Inf\n");
	} else if (v == floor(v) && fabs(v) < 1e15) {
		/* "%.0f" of a whole number: its digits, "-0" for -0.0 */
		if (signbit(v))
			strbuf__putc(sb, '-');
		strbuf__u64(sb, (__u64)fabs(v));
		strbuf__putc(sb, '\n');
	} else {
		strbuf__printf(sb, "%.15g\n", v);
	}
}

/* Nanoseconds as exact decimal seconds. */
static void put_ns(struct strbuf *sb, __u64 ns)
{
	__u64 frac = ns % 1000000000ULL;
	char *p;
	int k;

	strbuf__u64(sb, ns / 1000000000ULL);
	p = strbuf__room(sb, 11);
	if (!p)
		return;
	p[0] = '.';
	for (k = 9; k > 0; k--, frac /= 10)
		p[k] = '0' + frac % 10;
	p[10] = '\n';
	p[11] = '\0';
	sb->len += 11;
}

static void put_u64(struct strbuf *sb, __u64 v)
{
	strbuf__u64(sb, v);
	strbuf__putc(sb, '\n');
}

void prom__family(struct strbuf *sb, const char *name, const char *type, const char *help)
{
	family(sb, name, type, help);
}

void prom__value(struct strbuf *sb, double v)
{
	put_double(sb, v);
}

void prom__ns(struct strbuf *sb, __u64 ns)
{
	put_ns(sb, ns);
}

void prom__u64(struct strbuf *sb, __u64 v)
{
	put_u64(sb, v);
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

/* Upper bound of run-queue histogram slot k (< 2^(k+1) us), in seconds. */
static void put_le(struct strbuf *sb, int k)
{
	static char le[PMBPF_RUNQ_SLOTS][32];
	char *buf = le[k];
	size_t n;

	if (!buf[0]) {
		snprintf(buf, sizeof(le[k]), "%.6f", (double)pmbpf_runq_slot_upper_ns(k) / 1e9);
		n = strlen(buf);
		while (n > 1 && buf[n - 1] == '0')
			buf[--n] = '\0';
		if (buf[n - 1] == '.')
			buf[--n] = '\0';
	}
	strbuf__puts(sb, buf);
}

static bool is_ns(const struct figure *fd)
{
	return !strcmp(fd->unit, "ns");
}

/* Labels of instance i of a per-event or -M figure, after a ','. */
static void instance_labels(struct strbuf *sb, const struct figure *fd, const struct snapshot *snap,
			    int i)
{
	if (figure__per_event(fd)) {
		strbuf__add(sb, ",event=", 7);
		prom__label_value(sb, snap->events[i].spec.name);
	} else if (fd->src == SRC_METRIC) {
		const struct metric_use *mu = &snap->metrics->m[i / METRIC_MAX_VALUES];

		strbuf__printf(sb, ",metric=");
		prom__label_value(sb, mu->name);
		strbuf__printf(sb, ",figure=");
		prom__label_value(sb, metric_use__values(mu)[i % METRIC_MAX_VALUES]);
	}
}

/* One series set: a cgroup, a process or a thread. */
struct series {
	const char *labels;
	const struct acc *acc;
	struct series_cache *cache; /* NULL: render it every time */
};

/* Before an exposition: may s's cached text be copied, or must it be rendered (building)? */
static void cache_check(const struct prom_state *ps, struct series *s)
{
	struct series_cache *c = s->cache;

	if (!c || !s->acc)
		return;
	c->building =
		!(c->valid && c->acc_update == s->acc->last_update &&
		  c->current == (s->acc->last_update == ps->updates) && c->shape == ps->shape);
	if (c->building) {
		c->text.len = 0;
		c->text.failed = false;
		c->nr_off = 0;
	}
}

/* After it: what was built is valid from now on. */
static void cache_done(const struct prom_state *ps, struct series *s)
{
	struct series_cache *c = s->cache;

	if (!c || !s->acc || !c->building)
		return;
	c->building = false;
	c->valid = !c->text.failed;
	c->acc_update = s->acc->last_update;
	c->current = s->acc->last_update == ps->updates;
	c->shape = ps->shape;
}

/* The k-th family's samples of a valid cache, copied to out. */
static void cache_copy(struct strbuf *out, const struct series_cache *c, size_t k)
{
	size_t end;

	if (k >= c->nr_off)
		return;
	end = k + 1 < c->nr_off ? c->off[k + 1] : c->text.len;
	strbuf__add(out, c->text.buf + c->off[k], end - c->off[k]);
}

/* The k-th family's samples of a cache being built: out[start..) */
static void cache_keep(struct series_cache *c, const struct strbuf *out, size_t start)
{
	if (c->text.failed)
		return;
	if (c->nr_off == c->cap_off) {
		size_t cap = c->cap_off ? c->cap_off * 2 : 64;
		size_t *off = realloc(c->off, cap * sizeof(*off));

		if (!off) {
			c->text.failed = true;
			return;
		}
		c->off = off;
		c->cap_off = cap;
	}
	c->off[c->nr_off++] = c->text.len;
	if (!out->failed)
		strbuf__add(&c->text, out->buf + start, out->len - start);
}

/* Run-queue latency: a histogram (buckets, sum, count), or a summary (sum, count). */
static void runq_samples(struct strbuf *sb, const char *name, const char *labels,
			 const struct acc *a, bool buckets)
{
	__u64 cum = 0;
	int i;

	for (i = 0; i < PMBPF_RUNQ_SLOTS; i++) {
		cum += a->runq_hist[i];
		if (!buckets)
			continue;
		strbuf__puts(sb, name);
		strbuf__add(sb, "_bucket{", 8);
		strbuf__puts(sb, labels);
		strbuf__add(sb, ",le=\"", 5);
		if (i < PMBPF_RUNQ_SLOTS - 1)
			put_le(sb, i);
		else
			strbuf__add(sb, "+Inf", 4);
		strbuf__add(sb, "\"} ", 3);
		put_u64(sb, cum);
	}
	strbuf__puts(sb, name);
	strbuf__add(sb, "_sum{", 5);
	strbuf__puts(sb, labels);
	strbuf__add(sb, "} ", 2);
	put_ns(sb, a->n[PMBPF_N_RUNQ_TOTAL_NS]);
	strbuf__puts(sb, name);
	strbuf__add(sb, "_count{", 7);
	strbuf__puts(sb, labels);
	strbuf__add(sb, "} ", 2);
	put_u64(sb, cum);
}

/*
 * The sample of instance i of figure fd for a series set; none for an event
 * that does not count, a gauge not counted in the last interval (a -M metric
 * not supported here is never counted), a gauge of a set not seen in the
 * last interval (m NULL: else its figures then).
 */
static void sample(struct strbuf *sb, const struct snapshot *snap, const char *name,
		   const struct series *s, const struct row_metrics *m, const struct figure *fd,
		   int i)
{
	const struct acc *a = s->acc;
	double v = NAN;
	int k = ev_slot(fd->src);

	if (!figure__applies(fd, snap, i) || (figure__per_event(fd) && !event_counting(snap, i)))
		return;
	if (fd->kind == FIG_GAUGE) {
		v = m ? figure__value(fd, &a->last, m, i) : NAN;
		if (!isfinite(v))
			return;
	} else if (fd->src == SRC_CGROUP) {
		if (!(a->cg_have & (1u << fd->index)))
			return; /* never read, or no such file here */
	} else if (fd->src != SRC_COUNT && k < 0) {
		return; /* a counter prom.c does not accumulate: tests/unit/test_prom.c fails */
	}
	strbuf__puts(sb, name);
	strbuf__putc(sb, '{');
	strbuf__puts(sb, s->labels);
	if (fd->prom_labels) {
		strbuf__putc(sb, ',');
		strbuf__puts(sb, fd->prom_labels);
	}
	instance_labels(sb, fd, snap, i);
	strbuf__add(sb, "} ", 2);
	if (fd->kind == FIG_GAUGE)
		put_double(sb, is_ns(fd) ? v / 1e9 : v);
	else if (fd->src == SRC_EVENT)
		put_double(sb, is_ns(fd) || figure__ns(fd, snap, i) ? a->ev[k][i].d / 1e9 :
								      a->ev[k][i].d);
	else if (is_ns(fd))
		put_ns(sb, fd->src == SRC_COUNT	 ? a->n[fd->index] :
			   fd->src == SRC_CGROUP ? a->cg[fd->index] :
						   a->ev[k][i].u);
	else
		put_u64(sb, fd->src == SRC_COUNT  ? a->n[fd->index] :
			    fd->src == SRC_CGROUP ? a->cg[fd->index] :
						    a->ev[k][i].u);
}

static bool same_family(const struct figure *a, const struct figure *b)
{
	return (b->outputs & OUT_PROM) && b->prom && !strcmp(a->prom, b->prom);
}

/*
 * The family of catalog figure figs[f] below pmbpf_<what>_, with the figures
 * after it that share it (their own prom_labels tell them apart). A family's
 * samples are contiguous: set by set, figure by figure.
 */
static void render_family(struct strbuf *out, const struct prom_state *ps,
			  const struct snapshot *snap, const char *what, const struct figure *figs,
			  size_t nr, size_t f, const struct series *s, size_t ns, bool clock,
			  size_t fam)
{
	bool cgroup = !strcmp(what, "cgroup"), hist = figs[f].src == SRC_RUNQ_HIST;
	bool gauges = false;
	struct row_metrics m;
	const char *type;
	char name[128];
	size_t i, j;
	int k;

	snprintf(name, sizeof(name), "pmbpf_%s_%s", what, clock ? figs[f].prom_time : figs[f].prom);
	/* cardinality: run-queue buckets per cgroup, sum and count per process (thread) */
	if (hist)
		type = cgroup ? "histogram" : "summary";
	else
		type = figs[f].kind == FIG_COUNTER ? "counter" : "gauge";
	strbuf__printf(out, "# HELP %s", name);
	for (j = f; j < nr; j++) {
		if (!same_family(&figs[f], &figs[j]))
			continue;
		help_text(out, figs[j].help);
		gauges |= figs[j].kind == FIG_GAUGE;
	}
	if (hist && !cgroup)
		strbuf__printf(out, " Sum and count only.");
	strbuf__printf(out, "\n# TYPE %s %s\n", name, type);
	for (i = 0; i < ns; i++) {
		size_t start = out->len;
		bool current;

		if (!s[i].acc)
			continue;
		if (s[i].cache && !s[i].cache->building) {
			cache_copy(out, s[i].cache, fam);
			continue;
		}
		if (hist) {
			runq_samples(out, name, s[i].labels, s[i].acc, cgroup);
		} else {
			/* gauges: the figures of the last interval, if the set was seen in it */
			current = gauges && s[i].acc->last_update == ps->updates;
			if (current)
				metrics__figures(snap, &s[i].acc->last, &m);
			for (j = f; j < nr; j++) {
				if (!same_family(&figs[f], &figs[j]))
					continue;
				for (k = 0; k < figure__instances(&figs[j], snap); k++)
					if (!figs[j].prom_time ||
					    figure__ns(&figs[j], snap, k) == clock)
						sample(out, snap, name, &s[i], current ? &m : NULL,
						       &figs[j], k);
			}
		}
		if (s[i].cache)
			cache_keep(s[i].cache, out, start);
	}
}

bool prom__has_clock_event(const struct snapshot *snap)
{
	int i;

	for (i = 0; i < snap->nr_events; i++)
		if (snap->events[i].spec.kind & EVENT_TIME)
			return true;
	return false;
}

/* Every Prometheus family of the catalog, for cgroups, processes or threads. */
static void render_sets(struct strbuf *out, const struct prom_state *ps,
			const struct snapshot *snap, const char *what, struct series *s, size_t ns)
{
	bool cgroup = !strcmp(what, "cgroup");
	const struct figure *figs;
	size_t nr, f, j, fam = 0;

	for (j = 0; j < ns; j++)
		cache_check(ps, &s[j]);
	figs = catalog__figures(&nr);
	for (f = 0; f < nr; f++) {
		if (!(figs[f].outputs & OUT_PROM) || !figs[f].prom ||
		    (!cgroup && figs[f].prom_cgroup_only))
			continue;
		/* rendered with the first figure of its family */
		for (j = 0; j < f && !same_family(&figs[f], &figs[j]); j++)
			;
		if (j < f)
			continue;
		render_family(out, ps, snap, what, figs, nr, f, s, ns, false, fam++);
		if (figs[f].prom_time && prom__has_clock_event(snap))
			render_family(out, ps, snap, what, figs, nr, f, s, ns, true, fam++);
	}
	for (j = 0; j < ns; j++)
		cache_done(ps, &s[j]);
}

static void proc_labels(struct strbuf *sb, const struct proc *p)
{
	strbuf__printf(sb, "pid=\"%u\",", p->pid);
	if (p->tid)
		strbuf__printf(sb, "tid=\"%u\",", p->tid);
	strbuf__printf(sb, "comm=");
	prom__label_value(sb, p->comm);
	strbuf__printf(sb, ",cgroup=");
	prom__label_value(sb, p->cgroup ? p->cgroup : "");
}

static int cmp_cg_path(const void *a, const void *b)
{
	return strcmp((*(struct cg *const *)a)->path, (*(struct cg *const *)b)->path);
}

static int cmp_dpair(const void *a, const void *b)
{
	const struct dpair *x = *(struct dpair *const *)a, *y = *(struct dpair *const *)b;

	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	return strcmp(x->cgroup, y->cgroup) ?: strcmp(x->by, y->by);
}

/*
 * --delays: the top delay_pairs (cgroup, by) pairs by their delay so far.
 * A pair that leaves the top stops being exported; its counter goes on
 * (rate() over a gap sees the growth when it comes back).
 */
static void render_dpairs(struct prom_state *ps, struct strbuf *out)
{
	const struct figure *fd = catalog__delay();
	struct dpair **all;
	size_t i, n = 0, max = ps->o.delay_pairs ? ps->o.delay_pairs : 100;
	struct hnode *h;
	char name[128];

	if (!ps->delays_on)
		return;
	all = calloc(ps->dpairs.nr + 1, sizeof(*all));
	if (!all) {
		out->failed = true;
		return;
	}
	for (i = 0; i < ps->dpairs.nr_buckets; i++)
		for (h = ps->dpairs.b[i]; h; h = h->next)
			all[n++] = (struct dpair *)h;
	if (n > 1)
		qsort(all, n, sizeof(*all), cmp_dpair);
	if (n > max)
		n = max;
	snprintf(name, sizeof(name), "pmbpf_cgroup_%s", fd->prom);
	family(out, name, "counter", fd->help);
	for (i = 0; i < n; i++) {
		strbuf__printf(out, "%s{cgroup=", name);
		prom__label_value(out, all[i]->cgroup);
		strbuf__printf(out, ",by=");
		prom__label_value(out, all[i]->by);
		strbuf__printf(out, "} ");
		put_ns(out, all[i]->ns);
	}
	free(all);
}

/* The families of the processes (or threads) with series, by CPU ranking. */
/* The cache of a series set, made on first use; NULL when out of memory. */
static struct series_cache *cache_of(struct series_cache **c)
{
	if (!*c)
		*c = calloc(1, sizeof(**c));
	return *c;
}

/* p's labels, rendered again only when its comm changed. */
static const char *cached_labels(struct series_cache *c, const struct proc *p)
{
	struct strbuf lb = {};

	if (c->labels && !memcmp(c->comm, p->comm, sizeof(c->comm)))
		return c->labels;
	proc_labels(&lb, p);
	strbuf__putc(&lb, '\0');
	if (lb.failed) {
		strbuf__free(&lb);
		return NULL;
	}
	free(c->labels);
	c->labels = lb.buf;
	memcpy(c->comm, p->comm, sizeof(c->comm));
	c->valid = false;
	return c->labels;
}

/* The families of the processes (or threads) with series, by CPU ranking. */
static void render_ranked(struct prom_state *ps, struct ranking *r, const struct snapshot *snap,
			  const char *what, struct strbuf *out)
{
	struct series *s = calloc(r->nr_exported + 1, sizeof(*s));
	size_t i, np = 0;
	struct hnode *n;

	if (!s || rank_reserve(r, r->nr_exported)) {
		out->failed = true;
		goto out;
	}
	for (i = 0; i < r->procs.nr_buckets; i++)
		for (n = r->procs.b[i]; n; n = n->next)
			if (((struct proc *)n)->exported && np < r->nr_exported)
				r->rank[np++] = (struct proc *)n;
	if (np > 1)
		qsort(r->rank, np, sizeof(*r->rank), cmp_score);
	for (i = 0; i < np; i++) {
		struct proc *p = r->rank[i];

		if (!p->acc)
			continue;
		s[i].cache = cache_of(&p->cache);
		s[i].labels = s[i].cache ? cached_labels(s[i].cache, p) : NULL;
		if (!s[i].labels) {
			out->failed = true;
			goto out;
		}
		s[i].acc = p->acc;
	}
	render_sets(out, ps, snap, what, s, np);
out:
	free(s);
}

static void render_figures(struct prom_state *ps, const struct snapshot *snap, struct strbuf *out)
{
	size_t i, nc = 0;
	struct series *s = calloc(ps->cgroups.nr + 1, sizeof(*s));
	struct cg **cgs = calloc(ps->cgroups.nr + 1, sizeof(*cgs));
	struct hnode *n;

	if (!s || !cgs) {
		out->failed = true;
		goto out;
	}
	for (i = 0; i < ps->cgroups.nr_buckets; i++)
		for (n = ps->cgroups.b[i]; n; n = n->next)
			cgs[nc++] = (struct cg *)n;
	if (nc > 1)
		qsort(cgs, nc, sizeof(*cgs), cmp_cg_path);
	for (i = 0; i < nc; i++)
		s[i] = (struct series){ cgs[i]->labels, &cgs[i]->acc, cache_of(&cgs[i]->cache) };
	render_sets(out, ps, snap, "cgroup", s, nc);
	render_ranked(ps, &ps->procs, snap, "process", out);
	if (ps->o.threads)
		render_ranked(ps, &ps->threads, snap, "thread", out);
	render_dpairs(ps, out);
out:
	free(cgs);
	free(s);
}

/* What the families and samples depend on in snap, but the sets' counters: the events and metrics. */
static __u64 shape(const struct snapshot *snap)
{
	__u64 h = 0xcbf29ce484222325ULL;
	int i;

	h = hash_bytes(h, &snap->nr_events, sizeof(snap->nr_events));
	for (i = 0; i < snap->nr_events; i++) {
		h = hash_bytes(h, snap->events[i].spec.name, strlen(snap->events[i].spec.name));
		h = hash_bytes(h, &snap->events[i].spec.kind, sizeof(snap->events[i].spec.kind));
		h = hash_bytes(h, &snap->events[i].state, sizeof(snap->events[i].state));
	}
	h = hash_bytes(h, &snap->metrics, sizeof(snap->metrics));
	for (i = 0; snap->metrics && i < snap->metrics->nr; i++)
		h = hash_bytes(h, &snap->metrics->m[i].def, sizeof(snap->metrics->m[i].def));
	return h;
}

void prom__render(struct prom_state *ps, const struct snapshot *snap, const struct prom_self *self,
		  struct strbuf *out)
{
	size_t samples = 0;
	const char *p, *end;

	out->len = 0;
	out->failed = false;
	ps->shape = shape(snap);
	render_figures(ps, snap, out);
	prom__render_self(ps, snap, self, out);
	if (ps->o.more)
		ps->o.more(out, ps->o.ctx);
	if (out->failed || !out->buf)
		return;
	/* Size of the exposition itself, so that cardinality is visible. */
	for (p = out->buf, end = out->buf + out->len; p < end; p++) {
		const char *nl = memchr(p, '\n', end - p);

		if (*p != '#')
			samples++;
		if (!nl)
			break;
		p = nl;
	}
	prom__samples(out, samples + 1);
}
