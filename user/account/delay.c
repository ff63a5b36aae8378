// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * --delays: the pairs of the kernel's delays map as interval deltas, and
 * their sums per process and per cgroup. Pure: no libbpf, no syscalls.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "delay.h"
#include "util.h"

/* The rows' hash: (pid, cgroup) to the row (index + 1; 0: empty), the cgroup in the row. */
struct row_slot {
	__u32 pid;
	__u32 row1;
};

/* What is known of a slot of the kernel's delays map: its pair, as of the last read that gave it. */
struct slot_state {
	struct pmbpf_delay_key k;
	__u64 ns, waits;
	size_t last; /* 1 + the index in cur of this read's last entry of the slot; 0: none */
	bool live; /* holds a pair (else forgotten: its waiter exited, or never seen) */
};

/* One entry of this read. */
struct cur_entry {
	struct pmbpf_delay_key k;
	struct pmbpf_delay_val v;
	__u32 slot;
};

/*
 * A read gives the slots that grew since the last, or every live one:
 * cur, in the order given; the state of every slot, by its number, holds
 * the figures of the last read that gave it, the base of its next delta.
 */
struct delay_acct {
	struct cur_entry *cur;
	size_t nr_cur, cap_cur;
	struct slot_state *st;
	size_t nr_st;
	struct delay_dead *dead;
	size_t nr_dead, cap_dead;
	struct row_slot *rows; /* the rows' hash (rows_index()) */
	size_t rows_mask;
};

struct delay_acct *delay_acct__new(void)
{
	return calloc(1, sizeof(struct delay_acct));
}

void delay_acct__free(struct delay_acct *a)
{
	if (!a)
		return;
	free(a->cur);
	free(a->st);
	free(a->dead);
	free(a->rows);
	free(a);
}

int delay_acct__entry(struct delay_acct *a, __u32 slot, const struct pmbpf_delay_key *k,
		      const struct pmbpf_delay_val *v)
{
	struct cur_entry *c = array__room(a->cur, a->nr_cur, &a->cap_cur, sizeof(*c));

	if (!c)
		return -ENOMEM;
	a->cur = c;
	c = &a->cur[a->nr_cur++];
	c->k = *k;
	c->v = *v;
	c->slot = slot;
	return 0;
}

static int cmp_u64(__u64 a, __u64 b)
{
	return a < b ? -1 : a > b;
}

static int key_cmp(const struct pmbpf_delay_key *a, const struct pmbpf_delay_key *b)
{
	return cmp_u64(a->tgid, b->tgid)		   ?:
		       cmp_u64(a->cgroup_id, b->cgroup_id) ?:
		       cmp_u64(a->by_tgid, b->by_tgid)	   ?:
		       cmp_u64(a->by_cgroup_id, b->by_cgroup_id);
}

static struct delay_pair *add_pair(struct snapshot *snap)
{
	struct delay_pair *p =
		array__room(snap->delays, snap->nr_delays, &snap->cap_delays, sizeof(*p));

	if (!p)
		return NULL;
	snap->delays = p;
	p = &snap->delays[snap->nr_delays++];
	memset(p, 0, sizeof(*p));
	return p;
}

/* Rows of snap sorted by (pid, cgroup) for the name lookups. */
static int cmp_row_ptr(const void *a, const void *b)
{
	const struct proc_row *x = *(const struct proc_row *const *)a;
	const struct proc_row *y = *(const struct proc_row *const *)b;

	return cmp_u64(x->pid, y->pid) ?: cmp_u64(x->cgroup_id, y->cgroup_id);
}

static const struct proc_row *find_row(struct proc_row **idx, size_t n, __u32 pid, __u64 cgid)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = cmp_u64(idx[mid]->pid, pid) ?: cmp_u64(idx[mid]->cgroup_id, cgid);

		if (!c)
			return idx[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Name a party from its row of this snapshot (row), else from the callbacks. */
static void name_party(struct snapshot *snap, const struct proc_row *row, __u32 pid, __u64 cgid,
		       char *comm, const char **cgroup,
		       const char *(*cgroup_path)(void *ctx, __u64 id),
		       void (*comm_of)(void *ctx, __u32 pid, char *buf, size_t len), void *ctx)
{
	const char *path;

	if (row) {
		memcpy(comm, row->comm, PMBPF_COMM_LEN);
		*cgroup = row->cgroup;
		return;
	}
	if (!pid)
		snprintf(comm, PMBPF_COMM_LEN, "[idle]");
	else if (comm_of)
		comm_of(ctx, pid, comm, PMBPF_COMM_LEN);
	path = cgroup_path ? cgroup_path(ctx, cgid) : NULL;
	*cgroup = path ? snapshot__strdup(snap, path) : NULL;
}

/* The index of one side: pairs by (cgroup, pid) of the waiter or of the runner. */
struct index_sort {
	const struct delay_pair *pairs;
	int side;
};

static void side_key(const struct delay_pair *p, int side, __u64 *cg, __u32 *pid)
{
	*cg = side == DELAY_BY ? p->cgroup_id : p->by_cgroup_id;
	*pid = side == DELAY_BY ? p->pid : p->by_pid;
}

static int cmp_index(const void *a, const void *b, void *ctx)
{
	const struct index_sort *x = ctx;
	__u64 ca, cb;
	__u32 pa, pb;

	side_key(&x->pairs[*(const size_t *)a], x->side, &ca, &pa);
	side_key(&x->pairs[*(const size_t *)b], x->side, &cb, &pb);
	return cmp_u64(ca, cb) ?: cmp_u64(pa, pb);
}

static size_t key_hash(__u64 cg, __u32 pid, size_t mask)
{
	return ((cg * 0x9e3779b97f4a7c15ULL) ^ ((__u64)pid * 0xc2b2ae3d27d4eb4fULL)) >> 17 & mask;
}

/*
 * snap->delay_hash[side]: each (cgroup, pid) run of the side's sorted keys
 * by its hash. -ENOMEM: snap->delay_hash[side] is NULL (the lookups search).
 */
static int build_hash(struct snapshot *snap, int side)
{
	const __u64 *k = snap->delay_keys[side];
	size_t n = snap->nr_delays, size = 64, i, lo, h;
	__u32 *t;

	while (size < 2 * n)
		size *= 2;
	if (size - 1 != snap->delay_hash_mask || !snap->delay_hash[side]) {
		free(snap->delay_hash[side]);
		snap->delay_hash[side] = NULL;
		t = calloc(size, 2 * sizeof(*t));
		if (!t)
			return -ENOMEM;
		snap->delay_hash[side] = t;
		if (side == 0) {
			free(snap->delay_hash[1]);
			snap->delay_hash[1] = NULL;
		}
		snap->delay_hash_mask = size - 1;
	} else {
		t = snap->delay_hash[side];
		memset(t, 0, size * 2 * sizeof(*t));
	}
	for (lo = 0; lo < n; lo = i) {
		for (i = lo + 1; i < n && k[2 * i] == k[2 * lo] && k[2 * i + 1] == k[2 * lo + 1];
		     i++)
			;
		for (h = key_hash(k[2 * lo], k[2 * lo + 1], size - 1); t[2 * h];
		     h = (h + 1) & (size - 1))
			;
		t[2 * h] = lo + 1;
		t[2 * h + 1] = i;
	}
	return 0;
}

/* Build snap's two indices of its pairs (the lookups per row are then logarithmic). */
static int build_index(struct snapshot *snap)
{
	size_t i, n = snap->nr_delays;
	__u64 *keys;
	int side;

	if (n > snap->cap_delay_index) {
		for (side = 0; side < 2; side++) {
			size_t *x = realloc(snap->delay_index[side], n * sizeof(*x));
			__u64 *k;

			if (!x)
				return -ENOMEM;
			snap->delay_index[side] = x;
			k = realloc(snap->delay_keys[side], n * 2 * sizeof(*k));
			if (!k)
				return -ENOMEM;
			snap->delay_keys[side] = k;
		}
		snap->cap_delay_index = n;
	}
	keys = n ? malloc(n * 2 * sizeof(*keys)) : NULL;
	for (side = 0; side < 2 && n; side++) {
		struct index_sort x = { snap->delays, side };
		__u32 pid;

		if (keys) {
			for (i = 0; i < n; i++) {
				side_key(&snap->delays[i], side, &keys[2 * i], &pid);
				keys[2 * i + 1] = pid;
			}
			if (!radix__order(keys, 2, n, snap->delay_index[side]))
				goto keys;
		}
		for (i = 0; i < n; i++)
			snap->delay_index[side][i] = i;
		qsort_r(snap->delay_index[side], n, sizeof(size_t), cmp_index, &x);
keys:
		for (i = 0; i < n; i++) {
			side_key(&snap->delays[snap->delay_index[side][i]], side,
				 &snap->delay_keys[side][2 * i], &pid);
			snap->delay_keys[side][2 * i + 1] = pid;
		}
		build_hash(snap, side);
	}
	free(keys);
	return 0;
}

/*
 * The first lookup of a snapshot's pairs builds their index (a cache of
 * the pairs, built by a lookup through a const snapshot): without it (out
 * of memory) the lookups scan every pair.
 */
static void index_pairs(struct snapshot *snap)
{
	snap->delay_indexed = true;
	if (!build_index(snap))
		return;
	free(snap->delay_index[0]);
	free(snap->delay_index[1]);
	snap->delay_index[0] = snap->delay_index[1] = NULL;
	snap->cap_delay_index = 0;
}

/* [*lo, *hi) of the side's index: the pairs whose that side is (cgid, pid) (pid ~0: any). */
static void index_range(const struct snapshot *snap, int side, __u64 cgid, __u32 pid, size_t *lo,
			size_t *hi)
{
	const __u64 *k = snap->delay_keys[side];
	const __u32 *t = snap->delay_hash[side];
	size_t a = 0, b = snap->nr_delays, m, h, mask = snap->delay_hash_mask;

	*lo = *hi = 0;
	if (!b)
		return;
	if (t && pid != ~0U) {
		for (h = key_hash(cgid, pid, mask); t[2 * h]; h = (h + 1) & mask) {
			m = t[2 * h] - 1;
			if (m < b && k[2 * m] == cgid && k[2 * m + 1] == pid) {
				*lo = m;
				*hi = t[2 * h + 1] < b ? t[2 * h + 1] : b;
				return;
			}
		}
		return;
	}
	/* first not below (cgid, pid or 0) */
	while (a < b) {
		m = a + (b - a) / 2;
		if (k[2 * m] < cgid || (k[2 * m] == cgid && pid != ~0U && k[2 * m + 1] < pid))
			a = m + 1;
		else
			b = m;
	}
	*lo = a;
	/* the end by a walk: sums() walks the range after anyway */
	while (a < snap->nr_delays && k[2 * a] == cgid && (pid == ~0U || k[2 * a + 1] == pid))
		a++;
	*hi = a;
}

/* idx = snap's rows by cmp_row_ptr()'s order, by radix__order(). -ENOMEM: nothing done (qsort then). */
static int sort_rows(const struct snapshot *snap, struct proc_row **idx)
{
	size_t i, n = snap->nr_rows, *order = malloc(n * sizeof(*order));
	__u64 *keys = malloc(n * 2 * sizeof(*keys));
	int err = -ENOMEM;

	if (order && keys) {
		for (i = 0; i < n; i++) {
			keys[2 * i] = snap->rows[i].pid;
			keys[2 * i + 1] = snap->rows[i].cgroup_id;
		}
		err = radix__order(keys, 2, n, order);
	}
	if (!err)
		for (i = 0; i < n; i++)
			idx[i] = &snap->rows[order[i]];
	free(keys);
	free(order);
	return err;
}

/*
 * The rows of this snapshot by (pid, cgroup), for the pairs' names and the
 * waiters that exited: a hash, or, when two rows share a key (a pid reused
 * in its cgroup within the interval), the rows sorted and searched as
 * before the hash (find_row() then names one of them, the same each time).
 */
struct rows {
	const struct snapshot *snap;
	const struct row_slot *t; /* NULL: idx */
	size_t mask;
	struct proc_row **idx; /* sorted (pid, cgroup) */
};

static const struct proc_row *rows_find(const struct rows *r, __u32 pid, __u64 cgid)
{
	size_t h;

	if (!r->t)
		return r->idx ? find_row(r->idx, r->snap->nr_rows, pid, cgid) : NULL;
	for (h = key_hash(cgid, pid, r->mask); r->t[h].row1; h = (h + 1) & r->mask)
		if (r->t[h].pid == pid && r->snap->rows[r->t[h].row1 - 1].cgroup_id == cgid)
			return &r->snap->rows[r->t[h].row1 - 1];
	return NULL;
}

/* The hash of snap's rows into a->rows; -EEXIST: two rows share a key; -ENOMEM. */
static int rows_hash(struct delay_acct *a, const struct snapshot *snap)
{
	size_t size = 64, i, h;
	struct row_slot *t;

	while (size < 2 * snap->nr_rows)
		size *= 2;
	if (size - 1 != a->rows_mask || !a->rows) {
		free(a->rows);
		a->rows = calloc(size, sizeof(*t));
		if (!a->rows)
			return -ENOMEM;
		a->rows_mask = size - 1;
	} else {
		memset(a->rows, 0, size * sizeof(*t));
	}
	t = a->rows;
	for (i = 0; i < snap->nr_rows; i++) {
		const struct proc_row *row = &snap->rows[i];

		for (h = key_hash(row->cgroup_id, row->pid, size - 1); t[h].row1;
		     h = (h + 1) & (size - 1))
			if (t[h].pid == row->pid &&
			    snap->rows[t[h].row1 - 1].cgroup_id == row->cgroup_id)
				return -EEXIST;
		t[h].pid = row->pid;
		t[h].row1 = i + 1;
	}
	return 0;
}

/* A waiter whose pairs go: its row (the one find_row() names) exited in this snapshot. */
struct gone {
	__u32 pid;
	__u64 cgroup_id;
};

static int dead_add(struct delay_acct *a, const struct pmbpf_delay_key *k, __u32 slot)
{
	struct delay_dead *d = array__room(a->dead, a->nr_dead, &a->cap_dead, sizeof(*d));

	if (!d)
		return -ENOMEM;
	a->dead = d;
	d = &a->dead[a->nr_dead++];
	d->k = *k;
	d->slot = slot;
	return 0;
}

static int cmp_gone(const void *x, const void *y)
{
	const struct gone *a = x, *b = y;

	return cmp_u64(a->pid, b->pid) ?: cmp_u64(a->cgroup_id, b->cgroup_id);
}

/* The slots whose waiter is gone (gone: in (pid, cgroup) order, gone_waiters()'s) handed back for deletion, forgotten. */
static int hand_back(struct delay_acct *a, const struct gone *gone, size_t nr_gone)
{
	struct gone w;
	size_t i;
	int err;

	for (i = 0; i < a->nr_st && nr_gone; i++) {
		struct slot_state *st = &a->st[i];

		if (!st->live)
			continue;
		w.pid = st->k.tgid;
		w.cgroup_id = st->k.cgroup_id;
		if (!bsearch(&w, gone, nr_gone, sizeof(*gone), cmp_gone))
			continue;
		err = dead_add(a, &st->k, i);
		if (err)
			return err;
		st->live = false;
	}
	return 0;
}

/* Room for the state of slots up to n - 1, the new ones unknown. */
static int st_room(struct delay_acct *a, size_t n)
{
	struct slot_state *t;
	size_t cap = a->nr_st ? a->nr_st : 1024;

	if (n <= a->nr_st)
		return 0;
	while (cap < n)
		cap *= 2;
	t = realloc(a->st, cap * sizeof(*t));
	if (!t)
		return -ENOMEM;
	memset(t + a->nr_st, 0, (cap - a->nr_st) * sizeof(*t));
	a->st = t;
	a->nr_st = cap;
	return 0;
}

/* The waiters whose pairs go: rows that rows_find() names and that exited, in (pid, cgroup) order. */
static struct gone *gone_waiters(const struct rows *rows, size_t *nr)
{
	const struct snapshot *snap = rows->snap;
	struct gone *g = NULL;
	size_t i, n = 0, cap = 0;

	for (i = 0; i < snap->nr_rows; i++) {
		const struct proc_row *r = rows->t ? &snap->rows[i] : rows->idx[i];

		if (!r->exited || (!rows->t && rows_find(rows, r->pid, r->cgroup_id) != r))
			continue;
		if (n == cap) {
			struct gone *t = realloc(g, (cap ? cap * 2 : 16) * sizeof(*t));

			if (!t) {
				free(g);
				return NULL;
			}
			g = t;
			cap = cap ? cap * 2 : 16;
		}
		g[n].pid = r->pid;
		g[n].cgroup_id = r->cgroup_id;
		n++;
	}
	/* the sorted rows give them in order already */
	if (rows->t && n > 1)
		qsort(g, n, sizeof(*g), cmp_gone);
	*nr = n;
	return g ? g : calloc(1, sizeof(*g));
}

int delay_acct__finish(struct delay_acct *a, struct snapshot *snap,
		       const char *(*cgroup_path)(void *ctx, __u64 id),
		       void (*comm_of)(void *ctx, __u32 pid, char *buf, size_t len), void *ctx,
		       const struct delay_dead **dead, size_t *nr_dead)
{
	struct proc_row **idx = NULL;
	struct rows rows = { .snap = snap };
	const struct proc_row *by = NULL;
	struct gone *gone = NULL;
	__u64 by_cgid = 0;
	__u32 by_pid = 0;
	size_t i, nr_gone = 0, top = 0;
	int err = 0;

	snap->delays_on = true;
	a->nr_dead = 0;
	*dead = a->dead;
	*nr_dead = 0;
	if (snap->nr_rows) {
		if (!rows_hash(a, snap)) {
			rows.t = a->rows;
			rows.mask = a->rows_mask;
		} else {
			idx = malloc(snap->nr_rows * sizeof(*idx));
			if (!idx)
				return -ENOMEM;
			if (sort_rows(snap, idx)) {
				for (i = 0; i < snap->nr_rows; i++)
					idx[i] = &snap->rows[i];
				qsort(idx, snap->nr_rows, sizeof(*idx), cmp_row_ptr);
			}
			rows.idx = idx;
		}
		gone = gone_waiters(&rows, &nr_gone);
		if (!gone) {
			free(idx);
			return -ENOMEM;
		}
	}
	for (i = 0; i < a->nr_cur; i++)
		if (a->cur[i].slot >= top)
			top = a->cur[i].slot + 1;
	err = st_room(a, top);
	/*
	 * A slot given twice (a read that failed half-way, then this one): the
	 * later entry, in read order, holds what it had added since.
	 */
	for (i = 0; i < a->nr_cur && !err; i++)
		a->st[a->cur[i].slot].last = i + 1;
	/* the entries of this read against their slot's base, which they become */
	for (i = 0; i < a->nr_cur && !err; i++) {
		const struct cur_entry *c = &a->cur[i];
		struct slot_state *st = &a->st[c->slot];
		__u64 ns = c->v.ns, waits = c->v.waits;
		const struct proc_row *victim;
		struct delay_pair *p;

		if (st->last != i + 1)
			continue;
		st->last = 0;
		/* a pair only grows; smaller means the kernel's slot was made again */
		if (st->live && !key_cmp(&st->k, &c->k) && st->ns <= ns && st->waits <= waits) {
			ns -= st->ns;
			waits -= st->waits;
		}
		if (ns || waits) {
			p = add_pair(snap);
			if (!p) {
				err = -ENOMEM;
				break;
			}
			p->pid = c->k.tgid;
			p->cgroup_id = c->k.cgroup_id;
			p->by_pid = c->k.by_tgid;
			p->by_cgroup_id = c->k.by_cgroup_id;
			p->ns = ns;
			p->waits = waits;
			victim = rows_find(&rows, c->k.tgid, c->k.cgroup_id);
			name_party(snap, victim, p->pid, p->cgroup_id, p->comm, &p->cgroup,
				   cgroup_path, comm_of, ctx);
			/* most runners are a few (the idle task): the last one's row again */
			if (!by || by_pid != p->by_pid || by_cgid != p->by_cgroup_id) {
				by_pid = p->by_pid;
				by_cgid = p->by_cgroup_id;
				by = rows_find(&rows, by_pid, by_cgid);
			}
			name_party(snap, by, p->by_pid, p->by_cgroup_id, p->by_comm, &p->by_cgroup,
				   cgroup_path, comm_of, ctx);
		}
		st->k = c->k;
		st->ns = c->v.ns;
		st->waits = c->v.waits;
		st->live = true;
	}
	/* the waiter exited: this was its pairs' last delta */
	if (!err && nr_gone)
		err = hand_back(a, gone, nr_gone);
	/* the index is built at the first lookup */
	snap->delay_indexed = false;
	free(gone);
	free(idx);
	for (i = 0; i < a->nr_cur; i++)
		if (a->cur[i].slot < a->nr_st)
			a->st[a->cur[i].slot].last = 0;
	a->nr_cur = 0;
	*dead = a->dead;
	*nr_dead = err ? 0 : a->nr_dead;
	return err;
}

static int cmp_sum(const void *a, const void *b)
{
	const struct delay_sum *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	return cmp_u64(x->pid, y->pid) ?: cmp_u64(x->cgroup_id, y->cgroup_id);
}

/* Parties summed on the stack before the heap: a cgroup's are a few cgroups. */
#define SUMS_ON_STACK 32

/* d into the first *n of out (ranked by cmp_sum(), at most max): the top max so far. */
static void top_insert(struct delay_sum *out, size_t *n, size_t max, const struct delay_sum *d)
{
	size_t k = *n;

	if (k == max && (!max || cmp_sum(d, &out[max - 1]) >= 0))
		return;
	if (k < max)
		(*n)++;
	else
		k--;
	for (; k > 0 && cmp_sum(d, &out[k - 1]) < 0; k--)
		out[k] = out[k - 1];
	out[k] = *d;
}

/*
 * Sum the pairs whose one side matches (pid, cgid) (pid ~0: any process of
 * cgroup cgid) per party of the other side (per cgroup when by_cgroup).
 * The pairs' keys are unique (delay_acct__finish() keeps one of each), so
 * of one process each party on the other side is one pair: ranked as they
 * come, with no sum and no sort of them all (JSON asks twice per row).
 */
static size_t sums(const struct snapshot *snap, __u32 pid, __u64 cgid, enum delay_side side,
		   bool by_cgroup, struct delay_sum *out, size_t max, __u64 *total)
{
	if (!snap->delay_indexed)
		index_pairs((struct snapshot *)snap);
	struct delay_sum stack[SUMS_ON_STACK], *all = stack;
	size_t n = 0, cap = SUMS_ON_STACK, i, k, lo = 0, hi = snap->nr_delays, top = 0;
	__u64 sum = 0;

	if (snap->delay_index[side])
		index_range(snap, side, cgid, pid, &lo, &hi);
	for (i = lo; i < hi; i++) {
		const struct delay_pair *p =
			&snap->delays[snap->delay_index[side] ? snap->delay_index[side][i] : i];
		__u32 me_pid = side == DELAY_BY ? p->pid : p->by_pid;
		__u64 me_cg = side == DELAY_BY ? p->cgroup_id : p->by_cgroup_id;
		struct delay_sum d = {
			.pid = by_cgroup ? 0 : (side == DELAY_BY ? p->by_pid : p->pid),
			.cgroup_id = side == DELAY_BY ? p->by_cgroup_id : p->cgroup_id,
			.cgroup = side == DELAY_BY ? p->by_cgroup : p->cgroup,
			.comm = by_cgroup ? NULL : (side == DELAY_BY ? p->by_comm : p->comm),
			.ns = p->ns,
			.waits = p->waits,
		};

		if (me_cg != cgid || (pid != ~0U && me_pid != pid))
			continue;
		sum += p->ns;
		if (!by_cgroup) {
			top_insert(out, &top, max, &d);
			continue;
		}
		for (k = 0; k < n; k++)
			if (all[k].pid == d.pid && all[k].cgroup_id == d.cgroup_id)
				break;
		if (k < n) {
			all[k].ns += d.ns;
			all[k].waits += d.waits;
			continue;
		}
		if (n == cap) {
			struct delay_sum *t = all == stack ? malloc(cap * 2 * sizeof(*t)) :
							     realloc(all, cap * 2 * sizeof(*t));

			if (!t)
				break;
			if (all == stack)
				memcpy(t, stack, sizeof(stack));
			all = t;
			cap *= 2;
		}
		all[n++] = d;
	}
	if (total)
		*total = sum;
	for (k = 0; k < n; k++)
		top_insert(out, &top, max, &all[k]);
	if (all != stack)
		free(all);
	return top;
}

size_t delay__of_proc(const struct snapshot *snap, __u32 pid, __u64 cgid, enum delay_side side,
		      struct delay_sum *out, size_t max, __u64 *total)
{
	return sums(snap, pid, cgid, side, false, out, max, total);
}

size_t delay__of_cgroup(const struct snapshot *snap, __u64 cgid, enum delay_side side,
			struct delay_sum *out, size_t max, __u64 *total)
{
	return sums(snap, ~0U, cgid, side, true, out, max, total);
}

const char *delay__name(const struct delay_sum *d, char *buf, size_t len)
{
	if (d->comm && d->pid)
		snprintf(buf, len, "%s (%u)", d->comm, d->pid);
	else if (d->comm)
		snprintf(buf, len, "[idle]");
	else
		snprintf(buf, len, "%s", d->cgroup ? d->cgroup : "?");
	return buf;
}

__u64 delay__cgroup_by(const struct snapshot *snap, __u64 cgid, const char *by)
{
	__u64 ns = 0;
	size_t i;

	for (i = 0; by && i < snap->nr_delays; i++) {
		const struct delay_pair *p = &snap->delays[i];

		if (p->cgroup_id == cgid && p->by_cgroup && !strcmp(p->by_cgroup, by))
			ns += p->ns;
	}
	return ns;
}

__u64 delay__proc_by(const struct snapshot *snap, __u32 pid, __u64 cgid, const char *by)
{
	unsigned long by_pid;
	char *end;
	__u64 ns = 0;
	size_t i;

	if (!by)
		return 0;
	by_pid = strtoul(by, &end, 10);
	if (end == by || (*end && *end != ' '))
		return 0;
	for (i = 0; i < snap->nr_delays; i++) {
		const struct delay_pair *p = &snap->delays[i];

		if (p->pid == pid && p->cgroup_id == cgid && p->by_pid == by_pid)
			ns += p->ns;
	}
	return ns;
}
