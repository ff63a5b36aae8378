// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Which processes get series: the top K live processes (and those that
 * exited in the interval) by an exponentially weighted average of their CPU
 * rate over SCORE_TAU_S; a process that has a series keeps it until another
 * ranks twice as high (INCUMBENT_BONUS), so that processes with similar
 * small figures do not take turns and churn series (a new process at 100%
 * of a CPU takes the place of one at a steady 40% in about 30 s). A process
 * that leaves the top K, or exits, keeps its series (its final value) for
 * the grace period, but at most K such lingering series are kept, so a
 * scrape holds at most 2 x K process series whatever the churn. With
 * --threads threads are ranked apart by the same rules, a top K of their
 * own.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "prom_state.h"

/* Time constant of the CPU ranking average, in seconds. */
#define SCORE_TAU_S 20.0

/* A process in the top K stays until another ranks this many times higher. */
#define INCUMBENT_BONUS 2.0

/* How far ahead a proc an update will read is prefetched: rows, buckets. */
#define ROWS_AHEAD 16

/* What an update reads of p: its first two cache lines (it may start mid-line). */
static void prefetch_proc(const struct proc *p)
{
	__builtin_prefetch(p);
	__builtin_prefetch((const char *)p + 64);
	__builtin_prefetch((const char *)p + 127);
}

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

static void proc_free(struct ranking *r, struct proc *p)
{
	size_t i;

	/* no pointer to it is left in row_proc (the next update's hints) */
	if (p->rows_dup) {
		for (i = 0; i < r->nr_rows; i++)
			if (r->row_proc[i] == p)
				r->row_proc[i] = NULL;
	} else if (p->row < r->nr_rows && r->row_proc[p->row] == p) {
		r->row_proc[p->row] = NULL;
	}
	if (p->exp < r->nr_exp && r->exp[p->exp] == p)
		r->exp[p->exp] = NULL;
	htab_del(&r->procs, &p->node);
	htab_del(&r->series, &p->snode);
	if (p->exported)
		r->nr_exported--;
	free(p->cgroup);
	free(p->acc);
	series_cache__free(p->cache);
	free(p);
}

static void free_proc_node(void *r, struct hnode *n, __u64 now)
{
	proc_free(r, (struct proc *)n);
}

void ranking__free(struct ranking *r)
{
	htab_each(&r->procs, free_proc_node, r, 0);
	htab_free(&r->procs);
	htab_free(&r->series);
	free(r->rank);
	free(r->row_proc);
	free(r->prev_proc);
	free(r->exp);
	free(r->cand);
}

static __u64 row_hash(const struct proc_row *row)
{
	return proc_hash(row->pid, row->tid, row->cgroup_id, row->start_ns);
}

/*
 * p is the process or thread of row. A thread that exited before this
 * update is not the row's: its TID was reused in the same process (which a
 * PID reused is not: a new process has a new start time). At most one proc
 * is a row's: proc_get() adds one only when none is, and one that stops
 * being a row's (an exited thread, at the next update) never is again.
 */
static bool proc_is(const struct proc *p, const struct proc_row *row, __u64 now)
{
	return p->pid == row->pid && p->tid == row->tid && p->cgroup_id == row->cgroup_id &&
	       p->start_ns == row->start_ns && !(p->tid && p->exited && p->last_seen != now);
}

/* The process or thread of row (proc_is()), by its hash h. */
static struct proc *proc_find(struct ranking *r, const struct proc_row *row, __u64 h, __u64 now)
{
	struct hnode *n;

	for (n = htab_chain(&r->procs, h); n; n = n->next)
		if (n->hash == h && proc_is((struct proc *)n, row, now))
			return (struct proc *)n;
	return NULL;
}

struct proc *ranking__find(struct ranking *r, const struct proc_row *row, __u64 now)
{
	return proc_find(r, row, row_hash(row), now);
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

/* Room for n in the array *a of capacity *cap. */
static int procs_reserve(struct proc ***a, size_t *cap, size_t n)
{
	struct proc **p;

	if (n <= *cap)
		return 0;
	p = realloc(*a, n * sizeof(*p));
	if (!p)
		return -ENOMEM;
	*a = p;
	*cap = n;
	return 0;
}

static int rank_reserve(struct ranking *r, size_t n)
{
	return procs_reserve(&r->rank, &r->cap_rank, n);
}

/* A proc's score (its stored one times the decays so far, r->scale). */
static double score_of(const struct ranking *r, const struct proc *p)
{
	return p->score * r->scale;
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

/* What ranking__expire() forgets (expire_proc()), or may once select exports more. */
static bool may_expire(const struct ranking *r, const struct proc *p, __u64 now)
{
	return p->exported || p->exited || now - p->last_seen >= r->grace_ns;
}

/* ranking__select()'s look at p: its rank, and the lists it goes in (r->rank[*n], r->cand[*nc]). */
static void rank_one(struct ranking *r, struct proc *p, __u64 now, size_t *n, size_t *nc)
{
	bool incumbent = p->exported && p->top_gen == r->gen && !p->exited;

	p->rank = score_of(r, p) * (incumbent ? INCUMBENT_BONUS : 1);
	/* live, or exited in this interval: its final counts are news */
	if (p->rank > 0 && (!p->exited || p->last_seen == now))
		r->rank[(*n)++] = p;
	if (may_expire(r, p, now))
		r->cand[(*nc)++] = p;
}

int ranking__select(struct ranking *r, __u64 now)
{
	size_t i, n = 0, k = r->top_k, nc = 0;
	struct hnode *node;

	r->exp_gen = 0;
	if (rank_reserve(r, r->procs.nr) || procs_reserve(&r->cand, &r->cap_cand, r->procs.nr) ||
	    procs_reserve(&r->exp, &r->cap_exp, r->procs.nr))
		return -ENOMEM;
	/*
	 * One walk: the candidates for the top K, and the procs that may
	 * linger or expire (every exported one among them) in r->cand. When
	 * every proc had a row in the last ranking__rows(), the walk is of
	 * row_proc (in order, prefetched), each proc at its last row;
	 * otherwise of the buckets. The order does not matter: top_first() and
	 * the lingering's sort order by cmp_score(), cmp_linger().
	 */
	if (r->rows && r->nr_seen == r->procs.nr) {
		for (i = 0; i < r->nr_rows; i++) {
			struct proc *p = r->row_proc[i];

			if (i + ROWS_AHEAD < r->nr_rows && r->row_proc[i + ROWS_AHEAD])
				prefetch_proc(r->row_proc[i + ROWS_AHEAD]);
			if (p && p->row == i)
				rank_one(r, p, now, &n, &nc);
		}
	} else {
		for (i = 0; i < r->procs.nr_buckets; i++) {
			if (i + ROWS_AHEAD < r->procs.nr_buckets && r->procs.b[i + ROWS_AHEAD])
				prefetch_proc((struct proc *)r->procs.b[i + ROWS_AHEAD]);
			for (node = r->procs.b[i]; node; node = node->next)
				rank_one(r, (struct proc *)node, now, &n, &nc);
		}
	}
	n = top_first(r->rank, n, k);
	r->gen++;
	r->nr_exp = 0;
	for (i = 0; i < n && i < k; i++) {
		struct proc *p = r->rank[i];

		/* an exited one exported now is in r->cand already (may_expire()) */
		if (!p->exported)
			export(r, p);
		p->top_gen = r->gen;
		p->linger_since = p->exited ? now : 0;
		/* the exported: these, and the ones in r->cand (every one exported before) */
		p->exp = r->nr_exp;
		r->exp[r->nr_exp++] = p;
	}
	r->nr_cand = nc;
	r->cand_gen = r->gen;
	r->exp_gen = r->gen;
	/* Exported but not (or no longer live) in the top K: lingering. */
	n = 0;
	for (i = 0; i < nc; i++) {
		struct proc *p = r->cand[i];

		if (p->exported && p->top_gen != r->gen) {
			p->exp = r->nr_exp;
			r->exp[r->nr_exp++] = p;
		}
		if (!p->exported || (p->top_gen == r->gen && !p->exited))
			continue;
		if (!p->linger_since)
			p->linger_since = now;
		r->rank[n++] = p;
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

void ranking__expire(struct ranking *r, __u64 now)
{
	size_t i;

	if (r->cand_gen != r->gen || !r->gen) {
		htab_each(&r->procs, expire_proc, r, now);
		return;
	}
	/* only the procs ranking__select() listed can go (may_expire()) */
	for (i = 0; i < r->nr_cand; i++)
		expire_proc(r, &r->cand[i]->node, now);
	r->nr_cand = 0;
	r->cand_gen = 0;
}

/* Below this, the stored scores are brought back to scale 1 (a walk of all). */
#define SCALE_MIN 1e-200

int ranking__rows(struct ranking *r, const struct proc_row *rows, size_t nr, double dt, __u64 now)
{
	double decay = exp(-dt / SCORE_TAU_S);
	struct proc **prev;
	size_t i, j = 0, nr_prev;
	struct hnode *n;

	r->scale *= decay;
	if (r->scale < SCALE_MIN) {
		for (i = 0; i < r->procs.nr_buckets; i++)
			for (n = r->procs.b[i]; n; n = n->next)
				((struct proc *)n)->score *= r->scale;
		r->scale = 1;
	}
	/* the last update's procs by row become the hints (prev_proc) */
	prev = r->row_proc;
	r->row_proc = r->prev_proc;
	r->prev_proc = prev;
	i = r->cap_row_proc;
	r->cap_row_proc = r->cap_prev_proc;
	r->cap_prev_proc = i;
	nr_prev = prev ? r->nr_rows : 0;
	r->rows = NULL;
	r->nr_rows = 0;
	r->nr_seen = 0;
	r->rows_gen++;
	if (procs_reserve(&r->row_proc, &r->cap_row_proc, nr))
		return -ENOMEM;
	for (i = 0; i < nr; i++) {
		const struct proc_row *row = &rows[i];
		struct proc *p = NULL;

		r->row_proc[i] = NULL;
		if (row->overflow || row->pid == 0)
			continue;
		/*
		 * The rows come in the last update's order, but for processes
		 * that came or went: try the proc after the last one found
		 * first, the hash otherwise.
		 */
		if (j + ROWS_AHEAD < nr_prev && prev[j + ROWS_AHEAD])
			prefetch_proc(prev[j + ROWS_AHEAD]);
		if (j < nr_prev && prev[j] && proc_is(prev[j], row, now))
			p = prev[j];
		else if (!(p = proc_get(r, row, now)))
			return -ENOMEM;
		if (p->rows_gen != r->rows_gen && p->row < nr_prev && prev[p->row] == p)
			j = p->row + 1;
		r->nr_seen += p->rows_gen != r->rows_gen;
		p->rows_dup = p->rows_gen == r->rows_gen;
		p->rows_gen = r->rows_gen;
		p->row = i;
		r->row_proc[i] = p;
		p->score += (1 - decay) * (row->f.n[PMBPF_N_ONCPU_NS] / 1e9) / dt / r->scale;
		if (row->comm[0])
			memcpy(p->comm, row->comm, sizeof(p->comm));
		p->last_seen = now;
		if (row->exited)
			p->exited = true;
	}
	r->rows = rows;
	r->nr_rows = nr;
	return 0;
}

struct proc *ranking__row(struct ranking *r, const struct proc_row *rows, size_t i, __u64 now)
{
	if (rows == r->rows && i < r->nr_rows) {
		/* the caller goes through the rows in order */
		if (i + ROWS_AHEAD < r->nr_rows && r->row_proc[i + ROWS_AHEAD])
			prefetch_proc(r->row_proc[i + ROWS_AHEAD]);
		return r->row_proc[i];
	}
	return ranking__find(r, &rows[i], now);
}

int ranking__exported(struct ranking *r, struct proc ***rank, size_t *nr)
{
	size_t i, np = 0;
	struct hnode *n;

	if (rank_reserve(r, r->nr_exported))
		return -ENOMEM;
	if (r->exp_gen && r->exp_gen == r->gen) {
		/* the last ranking__select()'s list: the exported are among it */
		for (i = 0; i < r->nr_exp; i++)
			if (r->exp[i] && r->exp[i]->exported && np < r->nr_exported)
				r->rank[np++] = r->exp[i];
	} else {
		for (i = 0; i < r->procs.nr_buckets; i++)
			for (n = r->procs.b[i]; n; n = n->next)
				if (((struct proc *)n)->exported && np < r->nr_exported)
					r->rank[np++] = (struct proc *)n;
	}
	if (np > 1)
		qsort(r->rank, np, sizeof(*r->rank), cmp_score);
	*rank = r->rank;
	*nr = np;
	return 0;
}
