// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Interval rows from cumulative counts and exit records (account.h): which
 * difference each process gets, and when its entry is done with.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "account.h"
#include "proctable.h"
#include "rollup.h"
#include "util.h"

#define GRAVE_GENS  5 /* reads during which an exited process is remembered */
#define VANISH_GENS 3 /* reads an entry may be missing before it is dropped */

/*
 * A process known to be gone. In limbo (PID reused before its exit record
 * was read) its kernel entry still has to be diffed against cum; otherwise
 * the kernel entry is gone and any entry of it that shows up again is a
 * residue that counts from zero.
 */
struct grave {
	struct pmbpf_key key;
	__u64 start_ns;
	__u64 gen;
	bool limbo;
	struct pmbpf_counts cum; /* last cumulative counts seen */
};

struct account {
	struct account_opts o;
	struct proctable table;
	struct snapshot *cur; /* the snapshot being filled */
	__u64 gen;
	/* exit records of this read */
	struct pmbpf_exit *exits;
	size_t nr_exits, cap_exits;
	struct grave *graves;
	size_t nr_graves, cap_graves;
	/* entries the kernel marked dead in this read (PMBPF_F_DEAD) */
	struct pmbpf_exit *marked;
	size_t nr_marked, cap_marked;
	/* keys for the caller to delete from the map */
	struct pmbpf_key *dels;
	size_t nr_dels, cap_dels;
	/*
	 * --threads: processes whose main thread left while they live (exit
	 * record, or its id taken by exec), and the read it was seen in:
	 * retire_gone_threads()
	 */
	__u64 seen; /* entries of the table read in this read (gen == the read's) */
	struct leaderless {
		__u32 tgid;
		__u64 gen;
	} * leaderless;
	size_t nr_leaderless, cap_leaderless;
	__u64 vanished;
};

struct account *account__new(const struct account_opts *o)
{
	struct account *a = calloc(1, sizeof(*a));

	if (a)
		a->o = *o;
	return a;
}

void account__free(struct account *a)
{
	if (!a)
		return;
	proctable__free(&a->table);
	free(a->exits);
	free(a->graves);
	free(a->leaderless);
	free(a->marked);
	free(a->dels);
	free(a);
}

void account__begin(struct account *a, struct snapshot *snap, __u64 gen)
{
	a->cur = snap;
	a->gen = gen;
	a->seen = 0;
	proctable__seq_begin(&a->table);
}

/* e was read in this read. */
static void entry_seen(struct account *a, struct proc_entry *e)
{
	if (e->gen != a->gen) {
		e->gen = a->gen;
		a->seen++;
	}
}

/* e is gone from the table. */
static void entry_remove(struct account *a, struct proc_entry *e)
{
	if (e->gen == a->gen)
		a->seen--;
	proctable__remove(&a->table, e);
}

const struct pmbpf_key *account__deletions(const struct account *a, size_t *nr)
{
	*nr = a->nr_dels;
	return a->dels;
}

void account__deletions_clear(struct account *a)
{
	a->nr_dels = 0;
}

size_t account__tracked(const struct account *a)
{
	return a->table.used;
}

__u64 account__vanished(const struct account *a)
{
	return a->vanished;
}

static int delete_key(struct account *a, const struct pmbpf_key *key)
{
	struct pmbpf_key *dels = array__room(a->dels, a->nr_dels, &a->cap_dels, sizeof(*dels));

	if (!dels)
		return -ENOMEM;
	a->dels = dels;
	a->dels[a->nr_dels++] = *key;
	return 0;
}

static void counts_sub(struct pmbpf_counts *d, const struct pmbpf_counts *a,
		       const struct pmbpf_counts *b)
{
	int i;

	for (i = 0; i < PMBPF_N_NR; i++)
		d->n[i] = a->n[i] - b->n[i];
	d->runq_max_ns = a->runq_max_ns; /* already scoped to this interval */
	for (i = 0; i < PMBPF_RUNQ_SLOTS; i++)
		d->runq_hist[i] = a->runq_hist[i] - b->runq_hist[i];
	d->folded = a->folded - b->folded;
	for (i = 0; i < PMBPF_MAX_EVENTS; i++) {
		d->ev[i].value = a->ev[i].value - b->ev[i].value;
		d->ev[i].enabled = a->ev[i].enabled - b->ev[i].enabled;
		d->ev[i].running = a->ev[i].running - b->ev[i].running;
	}
}

/*
 * A kernel entry's counts only grow: one below what was read before is a new
 * entry under the same key and start (its old one went with an exit record
 * not read yet, and the same id came back: a residue, or with --threads a
 * thread id reused within its process, whose start the entry carries).
 */
static bool counts_below(const struct pmbpf_counts *cur, const struct pmbpf_counts *prev)
{
	int i;

	for (i = 0; i < PMBPF_N_NR; i++)
		if (cur->n[i] < prev->n[i])
			return true;
	for (i = 0; i < PMBPF_MAX_EVENTS; i++)
		if (cur->ev[i].value < prev->ev[i].value ||
		    cur->ev[i].enabled < prev->ev[i].enabled)
			return true;
	return false;
}

/*
 * Nothing counted between prev and cur: counts_sub()'s difference all zero
 * (its run-queue histogram and running times move only with the rest).
 */
static bool counts_same(const struct pmbpf_counts *cur, const struct pmbpf_counts *prev)
{
	int i;

	if (cur->folded != prev->folded)
		return false;
	for (i = 0; i < PMBPF_N_NR; i++)
		if (cur->n[i] != prev->n[i])
			return false;
	for (i = 0; i < PMBPF_MAX_EVENTS; i++)
		if (cur->ev[i].value != prev->ev[i].value ||
		    cur->ev[i].enabled != prev->ev[i].enabled)
			return false;
	return true;
}

static void counts_sum_cpus(const struct account *a, const char *vals, int nr_cpus, size_t stride,
			    struct pmbpf_counts *sum, bool fast)
{
	size_t size = a->o.value_size && a->o.value_size < sizeof(struct pmbpf_counts) ?
			      a->o.value_size :
			      sizeof(struct pmbpf_counts);
	struct pmbpf_counts slot;
	int cpu, i;

	if (nr_cpus == 1 && fast) {
		/* the shared map's one value: the loop below, without the copies */
		memcpy(sum, vals, size);
		memset((char *)sum + size, 0, sizeof(*sum) - size);
		if (sum->runq_max_gen != a->gen)
			sum->runq_max_ns = 0;
		sum->runq_max_gen = 0;
		sum->state = 0; /* the slot's */
		if (!sum->comm[0]) {
			sum->comm_ns = 0;
			memset(sum->comm, 0, sizeof(sum->comm));
		}
		return;
	}
	memset(sum, 0, sizeof(*sum));
	memset(&slot, 0, sizeof(slot));
	for (cpu = 0; cpu < nr_cpus; cpu++) {
		const struct pmbpf_counts *c = &slot;

		/* the slots past the counting ones are not in the map's value: zero */
		memcpy(&slot, vals + cpu * stride, size);

		for (i = 0; i < PMBPF_N_NR; i++)
			sum->n[i] += c->n[i];
		if (c->runq_max_gen == a->gen && c->runq_max_ns > sum->runq_max_ns)
			sum->runq_max_ns = c->runq_max_ns;
		for (i = 0; i < PMBPF_RUNQ_SLOTS; i++)
			sum->runq_hist[i] += c->runq_hist[i];
		sum->folded += c->folded;
		sum->flags |= c->flags;
		if (c->start_ns)
			sum->start_ns = c->start_ns;
		if (c->comm_ns >= sum->comm_ns && c->comm[0]) {
			sum->comm_ns = c->comm_ns;
			memcpy(sum->comm, c->comm, sizeof(sum->comm));
		}
		for (i = 0; i < PMBPF_MAX_EVENTS; i++) {
			sum->ev[i].value += c->ev[i].value;
			sum->ev[i].enabled += c->ev[i].enabled;
			sum->ev[i].running += c->ev[i].running;
		}
	}
}

void account__sum_cpus(const struct account *a, const void *vals, int nr_cpus, size_t stride,
		       struct pmbpf_counts *sum, bool fast)
{
	counts_sum_cpus(a, vals, nr_cpus, stride, sum, fast);
}

static void grave_add(struct account *a, const struct pmbpf_key *key,
		      const struct pmbpf_counts *cum, bool limbo)
{
	struct grave *g = array__room(a->graves, a->nr_graves, &a->cap_graves, sizeof(*g));

	if (!g)
		return;
	a->graves = g;
	g = &a->graves[a->nr_graves++];
	g->key = *key;
	g->start_ns = cum->start_ns;
	g->gen = a->gen;
	g->limbo = limbo;
	g->cum = *cum;
}

static struct grave *grave_find(struct account *a, const struct pmbpf_key *key, __u64 start_ns)
{
	size_t i;

	for (i = 0; i < a->nr_graves; i++)
		if (a->graves[i].key.tgid == key->tgid && a->graves[i].key.tid == key->tid &&
		    a->graves[i].key.cgroup_id == key->cgroup_id &&
		    a->graves[i].start_ns == start_ns)
			return &a->graves[i];
	return NULL;
}

static void grave_remove(struct account *a, struct grave *g)
{
	*g = a->graves[--a->nr_graves];
}

/* Process tgid's main thread left while it lives: retire_gone_threads() at the next read. */
static void leaderless_add(struct account *a, __u32 tgid)
{
	struct leaderless *x =
		array__room(a->leaderless, a->nr_leaderless, &a->cap_leaderless, sizeof(*x));

	if (x) {
		a->leaderless = x;
		a->leaderless[a->nr_leaderless].tgid = tgid;
		a->leaderless[a->nr_leaderless++].gen = a->gen;
	}
}

/*
 * --threads: an entry of a process's main thread found after that thread's
 * exit record, while a thread of that id and start time runs: a thread
 * that called exec took the id (de_thread() gives it the old main thread's
 * id and start time too). It is that thread, not a residue.
 */
static bool exec_took_id(struct account *a, const struct pmbpf_key *key, __u64 start_ns)
{
	if (!a->o.threads || !key->tid || key->tid != key->tgid || !a->o.thread_running ||
	    !a->o.thread_running(a->o.ctx, key->tgid, key->tid, start_ns))
		return false;
	leaderless_add(a, key->tgid);
	return true;
}

static void graves_expire(struct account *a)
{
	size_t i, j = 0;

	for (i = 0; i < a->nr_graves; i++)
		if (a->graves[i].gen + GRAVE_GENS > a->gen)
			a->graves[j++] = a->graves[i];
	a->nr_graves = j;
}

/* Kernel counts (by counter slot) to figures (by event index). */
static void counts_to_figures(const struct account *a, const struct pmbpf_counts *d,
			      struct figures *f)
{
	int i;

	memset(f, 0, sizeof(*f));
	memcpy(f->n, d->n, sizeof(f->n));
	f->runq_max_ns = d->runq_max_ns;
	memcpy(f->runq_hist, d->runq_hist, sizeof(f->runq_hist));
	for (i = 0; i < a->o.nr_events; i++) {
		int slot = a->o.slot[i];

		if (slot >= 0)
			f->ev[i] = d->ev[slot];
	}
}

/* A new row of key (cum: its cumulative counts), its figures yet zero. */
static struct proc_row *row_new(struct account *a, const struct pmbpf_key *key,
				const struct pmbpf_counts *cum, bool exited)
{
	struct proc_row *row = snapshot__add_row(a->cur);

	if (!row)
		return NULL;
	row->pid = key->tgid;
	row->tid = key->tid;
	row->cgroup_id = key->cgroup_id;
	row->exited = exited;
	row->proc_end = exited && (cum->flags & PMBPF_F_PROC_EXIT);
	row->overflow = key->tgid == PMBPF_OVERFLOW_TGID;
	row->start_ns = cum->start_ns;
	if (row->overflow)
		snprintf(row->comm, sizeof(row->comm), "[overflow]");
	else if (key->tgid == 0)
		snprintf(row->comm, sizeof(row->comm), "[idle]");
	else
		memcpy(row->comm, cum->comm, sizeof(row->comm));
	return row;
}

/* The row's cgroup path is filled in by account__finish. */
static int add_row(struct account *a, const struct pmbpf_key *key, const struct pmbpf_counts *cum,
		   const struct pmbpf_counts *d, bool exited)
{
	struct proc_row *row = row_new(a, key, cum, exited);

	if (!row)
		return -ENOMEM;
	row->folded = d->folded;
	counts_to_figures(a, d, &row->f);
	return 0;
}

/*
 * add_row() of the difference cur - prev (counts_sub()), written into the
 * row's figures as counts_to_figures() would: a read's every row without
 * the difference's copy.
 */
static int add_row_diff(struct account *a, const struct pmbpf_key *key,
			const struct pmbpf_counts *cur, const struct pmbpf_counts *prev,
			bool exited)
{
	struct proc_row *row = row_new(a, key, cur, exited);
	struct figures *f;
	int i;

	if (!row)
		return -ENOMEM;
	f = &row->f; /* zero (snapshot__add_row()) */
	row->folded = cur->folded - prev->folded;
	for (i = 0; i < PMBPF_N_NR; i++)
		f->n[i] = cur->n[i] - prev->n[i];
	f->runq_max_ns = cur->runq_max_ns;
	for (i = 0; i < PMBPF_RUNQ_SLOTS; i++)
		f->runq_hist[i] = cur->runq_hist[i] - prev->runq_hist[i];
	for (i = 0; i < a->o.nr_events; i++) {
		int slot = a->o.slot[i];

		if (slot < 0)
			continue;
		f->ev[i].value = cur->ev[slot].value - prev->ev[slot].value;
		f->ev[i].enabled = cur->ev[slot].enabled - prev->ev[slot].enabled;
		f->ev[i].running = cur->ev[slot].running - prev->ev[slot].running;
	}
	return 0;
}

/* An exit record (cum, its counts since the entry's row: d) into that row. */
static void row_merge(const struct account *a, struct proc_row *row, const struct pmbpf_counts *cum,
		      const struct pmbpf_counts *d)
{
	struct figures f;

	counts_to_figures(a, d, &f);
	figures__add(&row->f, &f);
	row->exited = true;
	row->proc_end = row->proc_end || (cum->flags & PMBPF_F_PROC_EXIT);
}

/*
 * A process whose main thread left while it lives: that thread exited
 * alone (pthread_exit()), or another thread called exec and took its id
 * (de_thread()), and then the exec'ing thread's old id gets no more counts
 * and no exit record. At the next read, every thread of such a process
 * that is not there any more and still has its entry is reported exited,
 * with its counts so far, and the entry dropped. Not at once: a thread
 * leaves /proc (release_task()) just before its last switch sends its exit
 * record. Should the record still come, it is diffed against those counts
 * (a grave in limbo).
 */
static int retire_gone_threads(struct account *a)
{
	struct proc_entry *e, *next;
	size_t i, j = 0;
	int err;

	for (i = 0; i < a->nr_leaderless; i++) {
		if (a->leaderless[i].gen == a->gen) {
			a->leaderless[j++] = a->leaderless[i]; /* next read's */
			continue;
		}
		for (e = proctable__next(&a->table, NULL); e; e = next) {
			next = proctable__next(&a->table, e);
			if (e->key.tgid != a->leaderless[i].tgid || !e->key.tid ||
			    e->key.tid == e->key.tgid ||
			    a->o.thread_running(a->o.ctx, e->key.tgid, e->key.tid, 0))
				continue;
			if (e->row_gen == a->gen) {
				a->cur->rows[e->row].exited = true;
			} else {
				struct pmbpf_counts zero = {};

				err = add_row(a, &e->key, &e->cum, &zero, true);
				if (err)
					return err;
			}
			err = delete_key(a, &e->key);
			if (err)
				return err;
			grave_add(a, &e->key, &e->cum, true);
			entry_remove(a, e);
		}
	}
	a->nr_leaderless = j;
	return 0;
}

/*
 * A process the kernel marked dead instead of sending its exit record (lost
 * record, or a kernel that cannot sum it): its entries in other cgroups go
 * too (drop_moved_entries).
 */
static void marked_add(struct account *a, const struct pmbpf_key *key,
		       const struct pmbpf_counts *cum)
{
	struct pmbpf_exit *m = array__room(a->marked, a->nr_marked, &a->cap_marked, sizeof(*m));

	if (!m)
		return;
	a->marked = m;
	a->marked[a->nr_marked].key = *key;
	a->marked[a->nr_marked].total.start_ns = cum->start_ns;
	a->nr_marked++;
}

/* How far ahead of the entry found last key's is guessed to be (the caller's own distance). */
#define PREFETCH_SEQ 6

void account__prefetch(const struct account *a, const struct pmbpf_key *key)
{
	/* the last read's order (no hash) if there is one, key's hash slot otherwise */
	if (!proctable__prefetch_seq(&a->table, PREFETCH_SEQ))
		proctable__prefetch(&a->table, key);
}

int account__entry(struct account *a, const struct pmbpf_key *key, const void *vals)
{
	return account__entry_cpus(a, key, vals, a->o.nr_cpus, a->o.stride);
}

int account__entry_cpus(struct account *a, const struct pmbpf_key *key, const void *vals,
			int nr_cpus, size_t stride)
{
	struct pmbpf_counts cur;
	const struct pmbpf_counts *prev;
	struct proc_entry *e;
	struct grave *g;
	bool dead;

	counts_sum_cpus(a, vals, nr_cpus, stride, &cur, true);
	e = proctable__get_seq(&a->table, key);
	if (!e)
		return -ENOMEM;
	if (e->gen && e->cum.start_ns != cur.start_ns) {
		/* PID reused before the old process's exit record was read. */
		grave_add(a, key, &e->cum, true);
		memset(&e->cum, 0, sizeof(e->cum));
		if (e->gen == a->gen)
			a->seen--;
		e->gen = 0;
	}
	/*
	 * Below what was read before: the old entry went with an exit record
	 * not read yet. No row (its difference would wrap to 2^64): the
	 * record settles the old entry against what was read, and this one is
	 * then new (a residue's path).
	 */
	if (e->gen && !(cur.flags & PMBPF_F_DEAD) && counts_below(&cur, &e->cum)) {
		entry_seen(a, e);
		return 0;
	}
	/* only a new entry can be the residue of a process already gone */
	g = e->gen ? NULL : grave_find(a, key, cur.start_ns);
	if (g && g->limbo)
		g = NULL; /* (cannot happen: the kernel entry now has the new start) */
	if (g && exec_took_id(a, key, cur.start_ns)) {
		grave_remove(a, g);
		g = NULL;
	}
	prev = &e->cum; /* zero for a new entry, residues included */
	dead = (cur.flags & PMBPF_F_DEAD) || (g && key->tgid != PMBPF_OVERFLOW_TGID);
	if (!counts_same(&cur, prev) || dead) {
		/* its row: what was counted since prev */
		int err = add_row_diff(a, key, &cur, prev, dead);

		e->cum = cur;
		entry_seen(a, e);
		if (err)
			return err;
		e->row_gen = a->gen;
		e->row = a->cur->nr_rows - 1;
	} else {
		e->cum = cur;
		entry_seen(a, e);
	}
	if (cur.flags & PMBPF_F_DEAD)
		marked_add(a, key, &cur);
	if (dead) {
		/* A dead process's entry (residue after its exit record, or lost record). */
		if (delete_key(a, key))
			return -ENOMEM;
		if (g)
			g->gen = a->gen;
		else
			grave_add(a, key, &cur, false);
		entry_remove(a, e);
	}
	return 0;
}

int account__exit(struct account *a, const void *data, size_t len)
{
	struct pmbpf_exit *x;

	if (len < sizeof(*x))
		return 0;
	x = array__room(a->exits, a->nr_exits, &a->cap_exits, sizeof(*x));
	if (!x)
		return -ENOMEM;
	a->exits = x;
	memcpy(&a->exits[a->nr_exits++], data, sizeof(struct pmbpf_exit));
	return 0;
}

/*
 * A process that moved between cgroups left entries in its old cgroups;
 * the kernel deletes only the one it exited in. Drop the others.
 */
struct exited_proc {
	__u32 tgid;
	__u32 tid;
	__u64 start_ns;
	__u64 cgroup_id; /* the entry the kernel deleted */
};

static int cmp_exited(const void *a, const void *b)
{
	const struct exited_proc *x = a, *y = b;

	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return x->cgroup_id < y->cgroup_id ? -1 : x->cgroup_id > y->cgroup_id;
}

static int drop_moved_entries(struct account *a)
{
	struct proc_entry *e, *next;
	struct exited_proc *gone;
	size_t i, n = a->nr_exits + a->nr_marked;
	int err = 0;

	/* the exits sorted, to tell whether one was in an entry's cgroup */
	gone = malloc(n * sizeof(*gone));
	if (!gone)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const struct pmbpf_exit *x =
			i < a->nr_exits ? &a->exits[i] : &a->marked[i - a->nr_exits];

		gone[i].tgid = x->key.tgid;
		gone[i].tid = x->key.tid;
		gone[i].start_ns = x->total.start_ns;
		gone[i].cgroup_id = x->key.cgroup_id;
	}
	qsort(gone, n, sizeof(*gone), cmp_exited);
	/* each exited one's entries in any cgroup (one probe run): not in any of its exits' cgroups */
	for (i = 0; i < n && !err; i++) {
		if (i && !cmp_exited(&gone[i - 1], &gone[i]))
			continue;
		for (e = proctable__next_of(&a->table, gone[i].tgid, gone[i].tid, NULL); e;
		     e = next) {
			struct exited_proc key = { .tgid = e->key.tgid,
						   .tid = e->key.tid,
						   .start_ns = e->cum.start_ns,
						   .cgroup_id = e->key.cgroup_id };

			next = proctable__next_of(&a->table, gone[i].tgid, gone[i].tid, e);
			if (e->cum.start_ns != gone[i].start_ns ||
			    bsearch(&key, gone, n, sizeof(*gone), cmp_exited))
				continue;
			err = delete_key(a, &e->key);
			if (err)
				break;
			grave_add(a, &e->key, &e->cum, false);
			entry_remove(a, e);
		}
	}
	free(gone);
	return err;
}

int account__settle(struct account *a)
{
	size_t i;
	int err;

	if (a->nr_exits || a->nr_marked) {
		err = drop_moved_entries(a);
		if (err)
			return err;
	}
	a->nr_marked = 0;

	for (i = 0; i < a->nr_exits; i++) {
		struct pmbpf_exit *x = &a->exits[i];
		struct proc_entry *e = proctable__find(&a->table, &x->key);
		struct pmbpf_counts d, zero = {};
		const struct pmbpf_counts *prev = &zero;
		struct grave *g;

		g = grave_find(a, &x->key, x->total.start_ns);
		if (a->o.threads && a->o.thread_running && x->key.tid &&
		    x->key.tid == x->key.tgid && !(x->total.flags & PMBPF_F_PROC_EXIT))
			leaderless_add(a, x->key.tgid);
		if (e && e->cum.start_ns == x->total.start_ns)
			prev = &e->cum;
		else if (g && g->limbo)
			prev = &g->cum;
		/* else: first seen at its exit, or a residue entry's own exit: from zero */
		counts_sub(&d, &x->total, prev);
		if (e && e->cum.start_ns == x->total.start_ns && e->row_gen == a->gen) {
			row_merge(a, &a->cur->rows[e->row], &x->total, &d);
		} else {
			err = add_row(a, &x->key, &x->total, &d, true);
			if (err)
				return err;
		}
		if (g) {
			g->limbo = false;
			g->gen = a->gen;
		} else {
			grave_add(a, &x->key, &x->total, false);
		}
		if (e && e->cum.start_ns == x->total.start_ns)
			entry_remove(a, e);
	}
	a->nr_exits = 0;
	return retire_gone_threads(a);
}

int account__finish(struct account *a)
{
	struct proc_entry *e, *next;
	int err;

	if (a->o.threads) {
		err = rollup_threads(a->cur, &a->o);
		if (err)
			return err;
	}
	err = rollup_cgroups(a->cur, &a->o);
	if (err)
		return err;
	if (a->o.threads)
		rollup_thread_cgroups(a->cur);
	/* Entries gone from the map without an exit record: none when the read saw them all. */
	for (e = a->seen == a->table.used ? NULL : proctable__next(&a->table, NULL); e; e = next) {
		next = proctable__next(&a->table, e);
		if (e->gen + VANISH_GENS <= a->gen) {
			a->vanished++;
			entry_remove(a, e);
		}
	}
	graves_expire(a);
	return 0;
}
