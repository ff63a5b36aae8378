// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The accounting (user/account/account.c) against a model of the kernel side: a
 * per-CPU counts map keyed by (tgid, cgroup id), exit records summed over
 * CPUs as the BPF program sums them, the PMBPF_F_DEAD mark when a record is
 * lost, and the overflow entry. Every figure checked is worked out by hand
 * in the comments; each test also checks that what the rows add up to is
 * what the model credited (conservation).
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "account.h"

#define NCPU	 2
#define MAXKEYS	 32
#define MAXRING	 16
#define MAXPROCS 32

/* Event i of the snapshot is counter slot SLOT[i]: 0 -> 1, 1 -> not counting, 2 -> 0. */
static const int SLOT[3] = { 1, -1, 0 };

/* The model kernel: the counts map, the ring buffer, the read generation. */
struct kentry {
	bool used;
	struct pmbpf_key key;
	struct pmbpf_counts c[NCPU];
};
static struct kentry kmap[MAXKEYS];
static struct pmbpf_exit ring[MAXRING];
static int nr_ring;
static __u64 read_gen;

/* What the model credited, and what the rows reported, per process and in all. */
struct tally {
	__u32 tgid;
	__u64 start_ns;
	__u64 n[PMBPF_N_NR];
	__u64 ev[2]; /* counter slots */
	__u64 hist0;
	__u64 folded;
};
static struct tally added[MAXPROCS], reported[MAXPROCS];
static int nr_added, nr_reported;

/* The cgroup tree; the callback hands out pointers into it, as the cache does. */
static const struct {
	__u64 id;
	const char *path;
} TREE[] = { { 1, "/" }, { 10, "/a" }, { 11, "/a/x" }, { 20, "/b" } };
#define NR_TREE (sizeof(TREE) / sizeof(TREE[0]))
static char tree_path[NR_TREE][32];
static int path_calls;

static struct account *acct;
static struct snapshot snap;
static __u64 gen;
static struct pmbpf_key dels[MAXKEYS]; /* deletions asked for at the latest read */
static int nr_dels;

static const char *fake_path(void *ctx, __u64 id)
{
	size_t i;

	path_calls++;
	for (i = 0; i < NR_TREE; i++)
		if (TREE[i].id == id)
			return tree_path[i];
	return NULL;
}

static __u64 fake_parent(void *ctx, const char *path, int *depth)
{
	const char *slash = strrchr(path, '/'), *p;
	size_t i, len;
	int d = 0;

	for (p = path; *p; p++)
		if (*p == '/' && p[1])
			d++;
	*depth = d;
	if (!strcmp(path, "/") || !slash)
		return 0;
	len = slash == path ? 1 : (size_t)(slash - path);
	for (i = 0; i < NR_TREE; i++)
		if (strlen(tree_path[i]) == len && !strncmp(tree_path[i], path, len))
			return TREE[i].id;
	return 0;
}

static bool fake_comm(void *ctx, __u32 pid, char *buf, size_t len);
static bool fake_running(void *ctx, __u32 pid, __u32 tid, __u64 start_ns);

/* threads: entries are threads (account_opts.threads), processes named by fake_comm */
static void setup_with(bool threads)
{
	struct account_opts o = {
		.nr_cpus = NCPU,
		.stride = sizeof(struct pmbpf_counts),
		.nr_events = 3,
		.cgroup_path = fake_path,
		.cgroup_parent = fake_parent,
		.process_comm = threads ? fake_comm : NULL,
		.thread_running = threads ? fake_running : NULL,
		.threads = threads,
	};
	size_t i;

	memcpy(o.slot, SLOT, sizeof(SLOT));
	memset(kmap, 0, sizeof(kmap));
	nr_ring = nr_added = nr_reported = nr_dels = path_calls = 0;
	memset(added, 0, sizeof(added));
	memset(reported, 0, sizeof(reported));
	for (i = 0; i < NR_TREE; i++)
		snprintf(tree_path[i], sizeof(tree_path[i]), "%s", TREE[i].path);
	gen = 0;
	read_gen = 1; /* as session__open sets it */
	acct = account__new(&o);
	if (!acct) {
		perror("account__new");
		exit(2);
	}
}

static void setup(void)
{
	setup_with(false);
}

static void teardown(void)
{
	account__free(acct);
	acct = NULL;
	snapshot__free(&snap);
}

static struct tally *tally_get(struct tally *t, int *nr, __u32 tgid, __u64 start_ns)
{
	int i;

	for (i = 0; i < *nr; i++)
		if (t[i].tgid == tgid && t[i].start_ns == start_ns)
			return &t[i];
	if (*nr == MAXPROCS) {
		fprintf(stderr, "tally full\n");
		exit(2);
	}
	t[*nr].tgid = tgid;
	t[*nr].start_ns = start_ns;
	return &t[(*nr)++];
}

static struct kentry *k_find(__u32 tgid, __u64 cgid)
{
	int i;

	for (i = 0; i < MAXKEYS; i++)
		if (kmap[i].used && kmap[i].key.tgid == tgid && kmap[i].key.cgroup_id == cgid)
			return &kmap[i];
	return NULL;
}

/* The entry of a process in a cgroup, created on cpu as the BPF program does. */
static struct kentry *k_get(__u32 tgid, __u64 cgid, __u64 start_ns, int cpu)
{
	struct kentry *e = k_find(tgid, cgid);
	int i;

	if (e)
		return e;
	for (i = 0; i < MAXKEYS && kmap[i].used; i++)
		;
	if (i == MAXKEYS) {
		fprintf(stderr, "model map full\n");
		exit(2);
	}
	e = &kmap[i];
	memset(e, 0, sizeof(*e));
	e->used = true;
	e->key.tgid = tgid;
	e->key.cgroup_id = cgid;
	e->c[cpu].start_ns = start_ns;
	e->c[cpu].comm_ns = start_ns;
	snprintf(e->c[cpu].comm, sizeof(e->c[cpu].comm), "p%u", tgid);
	return e;
}

/*
 * One span of ns on cpu credited to the process (tgid, start_ns) in cgroup
 * cgid: count i grows by ns x (i + 1), counter slot 0 by 3 ns, slot 1 by
 * 5 ns (both enabled and running ns), one run-queue wait of ns in bucket 0.
 */
static void k_credit(__u32 tgid, __u64 cgid, __u64 start_ns, int cpu, __u64 ns)
{
	struct pmbpf_counts *c = &k_get(tgid, cgid, start_ns, cpu)->c[cpu];
	struct tally *t = tally_get(added, &nr_added, tgid, start_ns);
	int i;

	for (i = 0; i < PMBPF_N_NR; i++) {
		c->n[i] += ns * (i + 1);
		t->n[i] += ns * (i + 1);
	}
	c->ev[0].value += 3 * ns;
	c->ev[1].value += 5 * ns;
	for (i = 0; i < 2; i++) {
		c->ev[i].enabled += ns;
		c->ev[i].running += ns;
	}
	t->ev[0] += 3 * ns;
	t->ev[1] += 5 * ns;
	c->runq_hist[0]++;
	t->hist0++;
	if (c->runq_max_gen != read_gen) {
		c->runq_max_gen = read_gen;
		c->runq_max_ns = ns;
	} else if (ns > c->runq_max_ns) {
		c->runq_max_ns = ns;
	}
}

/* The process's last thread exits in cgroup cgid: its record, summed over CPUs (sum_cpu). */
static void k_exit(__u32 tgid, __u64 cgid)
{
	struct kentry *e = k_find(tgid, cgid);
	struct pmbpf_exit *x = &ring[nr_ring++];
	int cpu, i;

	memset(x, 0, sizeof(*x));
	x->key = e->key;
	for (cpu = 0; cpu < NCPU; cpu++) {
		const struct pmbpf_counts *c = &e->c[cpu];

		for (i = 0; i < PMBPF_N_NR; i++)
			x->total.n[i] += c->n[i];
		if (c->runq_max_gen == read_gen && c->runq_max_ns > x->total.runq_max_ns) {
			x->total.runq_max_ns = c->runq_max_ns;
			x->total.runq_max_gen = read_gen;
		}
		for (i = 0; i < PMBPF_RUNQ_SLOTS; i++)
			x->total.runq_hist[i] += c->runq_hist[i];
		if (c->start_ns)
			x->total.start_ns = c->start_ns;
		if (c->comm_ns > x->total.comm_ns) {
			x->total.comm_ns = c->comm_ns;
			memcpy(x->total.comm, c->comm, sizeof(c->comm));
		}
		for (i = 0; i < PMBPF_MAX_EVENTS; i++) {
			x->total.ev[i].value += c->ev[i].value;
			x->total.ev[i].enabled += c->ev[i].enabled;
			x->total.ev[i].running += c->ev[i].running;
		}
	}
	e->used = false;
}

/* The ring buffer had no room: the entry stays, marked dead on cpu. */
static void k_exit_lost(__u32 tgid, __u64 cgid, int cpu)
{
	k_find(tgid, cgid)->c[cpu].flags |= PMBPF_F_DEAD;
}

/* A process folded into the overflow entry on cpu for the first time, running ns. */
static void k_overflow(int cpu, __u32 tgid, __u64 start_ns, __u64 ns)
{
	k_credit(PMBPF_OVERFLOW_TGID, 0, 0, cpu, ns);
	k_find(PMBPF_OVERFLOW_TGID, 0)->c[cpu].folded++;
	tally_get(added, &nr_added, PMBPF_OVERFLOW_TGID, 0)->folded++;
}

static void apply_deletions(void)
{
	const struct pmbpf_key *keys;
	size_t i, n;

	keys = account__deletions(acct, &n);
	for (i = 0; i < n; i++) {
		struct kentry *e = k_find(keys[i].tgid, keys[i].cgroup_id);

		CHECK(e != NULL); /* only keys the map holds */
		if (e)
			e->used = false;
		if (nr_dels < MAXKEYS)
			dels[nr_dels++] = keys[i];
	}
	account__deletions_clear(acct);
}

/* A read, in session__collect's order: the map, then the exit records. */
static void read_map(void)
{
	int i;

	snapshot__reset(&snap);
	nr_dels = 0;
	account__begin(acct, &snap, ++gen);
	for (i = 0; i < MAXKEYS; i++) {
		if (!kmap[i].used)
			continue;
		CHECK_EQ_INT(account__entry(acct, &kmap[i].key, kmap[i].c), 0);
		apply_deletions();
	}
}

static void read_exits(void)
{
	size_t r;
	int i;

	for (i = 0; i < nr_ring; i++)
		CHECK_EQ_INT(account__exit(acct, &ring[i], sizeof(ring[i])), 0);
	nr_ring = 0;
	CHECK_EQ_INT(account__settle(acct), 0);
	apply_deletions();
	read_gen = gen + 1;
	CHECK_EQ_INT(account__finish(acct), 0);
	for (r = 0; r < snap.nr_rows; r++) {
		const struct proc_row *row = &snap.rows[r];
		struct tally *t = tally_get(reported, &nr_reported, row->pid, row->start_ns);

		for (i = 0; i < PMBPF_N_NR; i++)
			t->n[i] += row->f.n[i];
		t->ev[1] += row->f.ev[0].value;
		t->ev[0] += row->f.ev[2].value;
		t->hist0 += row->f.runq_hist[0];
		t->folded += row->folded;
	}
}

static void do_read(void)
{
	read_map();
	read_exits();
}

static const struct proc_row *row_of(__u32 tgid, __u64 start_ns, __u64 cgid)
{
	size_t r;

	for (r = 0; r < snap.nr_rows; r++)
		if (snap.rows[r].pid == tgid && snap.rows[r].start_ns == start_ns &&
		    snap.rows[r].cgroup_id == cgid)
			return &snap.rows[r];
	return NULL;
}

static int rows_of(__u32 tgid)
{
	size_t r;
	int n = 0;

	for (r = 0; r < snap.nr_rows; r++)
		n += snap.rows[r].pid == tgid;
	return n;
}

static const struct cgroup_row *cg_of(__u64 id)
{
	size_t i;

	for (i = 0; i < snap.nr_cgroups; i++)
		if (snap.cgroups[i].id == id)
			return &snap.cgroups[i];
	return NULL;
}

static bool deleted(__u32 tgid, __u64 cgid)
{
	int i;

	for (i = 0; i < nr_dels; i++)
		if (dels[i].tgid == tgid && dels[i].cgroup_id == cgid)
			return true;
	return false;
}

/* A row of a process that ran ns in all since the previous read: every figure follows. */
static void check_row(const struct proc_row *row, __u64 ns, bool exited, int line)
{
	int i;

	if (!check_record(row != NULL, __FILE__, line, "row present"))
		return;
	for (i = 0; i < PMBPF_N_NR; i++)
		check_record(row->f.n[i] == ns * (i + 1), __FILE__, line, "n[%d]: %llu != %llu", i,
			     (unsigned long long)row->f.n[i], (unsigned long long)(ns * (i + 1)));
	check_record(row->f.ev[0].value == 5 * ns, __FILE__, line, "event 0 is slot 1: %llu",
		     (unsigned long long)row->f.ev[0].value);
	check_record(row->f.ev[1].value == 0 && row->f.ev[1].enabled == 0, __FILE__, line,
		     "event 1 does not count");
	check_record(row->f.ev[2].value == 3 * ns && row->f.ev[2].running == ns, __FILE__, line,
		     "event 2 is slot 0: %llu", (unsigned long long)row->f.ev[2].value);
	check_record(row->exited == exited, __FILE__, line, "exited %d", row->exited);
}
#define CHECK_ROW(row, ns, exited) check_row(row, ns, exited, __LINE__)

/* What every process's rows add up to is what the model credited it. */
static void check_conserved(int line)
{
	int i, k;

	check_record(nr_added > 0 && nr_reported == nr_added, __FILE__, line,
		     "processes credited %d, reported %d", nr_added, nr_reported);
	for (i = 0; i < nr_added; i++) {
		const struct tally *a = &added[i];
		const struct tally *r = tally_get(reported, &nr_reported, a->tgid, a->start_ns);
		bool same = a->ev[0] == r->ev[0] && a->ev[1] == r->ev[1] && a->hist0 == r->hist0 &&
			    a->folded == r->folded;

		for (k = 0; k < PMBPF_N_NR; k++)
			same = same && a->n[k] == r->n[k];
		check_record(same, __FILE__, line,
			     "pid %u start %llu: credited %llu ns, reported %llu ns", a->tgid,
			     (unsigned long long)a->start_ns, (unsigned long long)a->n[0],
			     (unsigned long long)r->n[0]);
	}
}
#define CHECK_CONSERVED() check_conserved(__LINE__)

/* Rows are the difference between reads; nothing ran: no row. CPU slots are summed. */
static void test_interval_diff(void)
{
	setup();
	k_credit(100, 11, 1000, 0, 5);
	k_credit(100, 11, 1000, 1, 7);
	do_read();
	CHECK_EQ_U64(snap.nr_rows, 1);
	CHECK_ROW(row_of(100, 1000, 11), 12, false);
	CHECK_STR(snap.rows[0].comm, "p100");
	k_credit(100, 11, 1000, 1, 3);
	do_read();
	CHECK_ROW(row_of(100, 1000, 11), 3, false);
	do_read();
	CHECK_EQ_U64(snap.nr_rows, 0);
	CHECK_EQ_U64(account__tracked(acct), 1);
	CHECK_EQ_INT(nr_dels, 0);
	CHECK_CONSERVED();
	teardown();
}

/*
 * The same tgid with a new start time is another process. Here the PID is
 * reused before the old process's exit record was read: 200 (start 1) ran
 * 10, was read, ran 4 more and exited (record: 14); 200 (start 2) ran 6 in
 * the same cgroup. The read gives the new one 6 and the old one 14 - 10 = 4,
 * exited.
 */
static void test_pid_reuse(void)
{
	setup();
	k_credit(200, 10, 1, 0, 10);
	do_read();
	CHECK_ROW(row_of(200, 1, 10), 10, false);
	k_credit(200, 10, 1, 1, 4);
	k_exit(200, 10);
	k_credit(200, 10, 2, 0, 6);
	do_read();
	CHECK_EQ_INT(rows_of(200), 2);
	CHECK_ROW(row_of(200, 2, 10), 6, false);
	CHECK_ROW(row_of(200, 1, 10), 4, true);
	k_credit(200, 10, 2, 1, 1);
	do_read();
	CHECK_EQ_INT(rows_of(200), 1);
	CHECK_ROW(row_of(200, 2, 10), 1, false);
	/* and once the old record was read in time: the new one counts from zero */
	k_exit(200, 10);
	do_read();
	CHECK_ROW(row_of(200, 2, 10), 0, true);
	k_credit(200, 10, 3, 0, 8);
	do_read();
	CHECK_EQ_INT(rows_of(200), 1);
	CHECK_ROW(row_of(200, 3, 10), 8, false);
	CHECK_EQ_INT(nr_dels, 0);
	CHECK_CONSERVED();
	teardown();
}

/*
 * An entry that comes back with the same key and start before the old one's
 * exit record is read: a residue, or with --threads a thread id reused
 * within its process (a thread's entry carries its process's start). 400
 * ran 10, was read, ran 2 more and its entry went with its record (12),
 * read one read late; a new one under the same key ran 3, then 1. The new
 * entry's 3 is below the 10 read: no row then (its difference, 3 - 10,
 * wrapped to 2^64: seen once at load 20); the late record gives the old one
 * its 12 - 10 = 2, exited, and the new entry is then a residue: 4, exited.
 */
static void test_same_key_comes_back(void)
{
	struct pmbpf_exit late;

	setup();
	k_credit(400, 10, 4, 0, 10);
	do_read();
	CHECK_ROW(row_of(400, 4, 10), 10, false);
	k_credit(400, 10, 4, 1, 2);
	k_exit(400, 10);
	/* the record is read one read late (the ring buffer not drained yet) */
	late = ring[--nr_ring];
	k_credit(400, 10, 4, 0, 3);
	do_read();
	CHECK_EQ_INT(rows_of(400), 0);
	ring[nr_ring++] = late;
	k_credit(400, 10, 4, 1, 1);
	do_read();
	CHECK_EQ_INT(rows_of(400), 1);
	CHECK_ROW(row_of(400, 4, 10), 2, true);
	do_read();
	CHECK_EQ_INT(rows_of(400), 1);
	CHECK_ROW(row_of(400, 4, 10), 4, true);
	CHECK(deleted(400, 10));
	CHECK_CONSERVED();
	teardown();
}

/* Processes that exit between reads are reported once, with their final counts. */
static void test_exit_between_reads(void)
{
	setup();
	/* 300: born and gone between two reads, known only by its record (8) */
	k_credit(300, 20, 30, 0, 8);
	k_exit(300, 20);
	/* 301: read at 5, then 2 more and it exits before the next read */
	k_credit(301, 20, 31, 1, 5);
	/* 302: read at 4, then nothing, then it exits */
	k_credit(302, 20, 32, 0, 4);
	/* 303: its last entry and its record in the same read */
	k_credit(303, 20, 33, 0, 9);
	do_read();
	CHECK_EQ_INT(rows_of(300), 1);
	CHECK_ROW(row_of(300, 30, 20), 8, true);
	CHECK_STR(row_of(300, 30, 20)->comm, "p300");
	CHECK_ROW(row_of(301, 31, 20), 5, false);
	CHECK_ROW(row_of(302, 32, 20), 4, false);
	CHECK_ROW(row_of(303, 33, 20), 9, false);

	k_credit(301, 20, 31, 0, 2);
	k_exit(301, 20);
	k_exit(302, 20);
	k_credit(303, 20, 33, 1, 6);
	read_map(); /* sees 303 at 15: 6 more */
	k_credit(303, 20, 33, 1, 1);
	k_exit(303, 20); /* record: 16 */
	read_exits();
	CHECK_EQ_INT(rows_of(300), 0);
	CHECK_EQ_INT(rows_of(301), 1);
	CHECK_ROW(row_of(301, 31, 20), 2, true);
	/* nothing since the last read, but it is reported as gone */
	CHECK_EQ_INT(rows_of(302), 1);
	CHECK_ROW(row_of(302, 32, 20), 0, true);
	/* one row: the entry's 6 and the record's 1 more */
	CHECK_EQ_INT(rows_of(303), 1);
	CHECK_ROW(row_of(303, 33, 20), 7, true);
	CHECK_EQ_U64(account__tracked(acct), 0);
	do_read();
	CHECK_EQ_U64(snap.nr_rows, 0);
	CHECK_EQ_INT(nr_dels, 0);
	CHECK_EQ_U64(account__vanished(acct), 0);
	CHECK_CONSERVED();
	teardown();
}

/*
 * Counts credited after the exit record (a residue) land in a new entry of
 * the dead process: reported as exited, the entry deleted.
 */
static void test_residue(void)
{
	setup();
	k_credit(400, 11, 40, 0, 10);
	k_exit(400, 11);
	do_read();
	CHECK_ROW(row_of(400, 40, 11), 10, true);
	k_credit(400, 11, 40, 1, 3);
	do_read();
	CHECK_EQ_INT(rows_of(400), 1);
	CHECK_ROW(row_of(400, 40, 11), 3, true);
	CHECK_EQ_INT(nr_dels, 1);
	CHECK(deleted(400, 11));
	CHECK(!k_find(400, 11));
	CHECK_EQ_U64(account__tracked(acct), 0);
	/* a second residue while the process is still remembered */
	k_credit(400, 11, 40, 0, 2);
	do_read();
	CHECK_ROW(row_of(400, 40, 11), 2, true);
	CHECK(deleted(400, 11));
	do_read();
	CHECK_EQ_U64(snap.nr_rows, 0);
	CHECK_EQ_INT(nr_dels, 0);
	/*
	 * 401 was read at 7, ran 3 more and exited (record: 10), then a
	 * residue of 3 came, all before the next read. The map read sees the
	 * residue entry (3 < 7) before the record: the interval gets the
	 * record's 3, the residue is the next read's.
	 */
	k_credit(401, 11, 41, 0, 7);
	do_read();
	k_credit(401, 11, 41, 0, 3);
	k_exit(401, 11);
	k_credit(401, 11, 41, 1, 3);
	do_read();
	CHECK_EQ_INT(rows_of(401), 1);
	CHECK_ROW(row_of(401, 41, 11), 3, true);
	do_read();
	CHECK_EQ_INT(rows_of(401), 1);
	CHECK_ROW(row_of(401, 41, 11), 3, true);
	CHECK(deleted(401, 11));
	CHECK_EQ_U64(account__tracked(acct), 0);
	CHECK_CONSERVED();
	teardown();
}

/*
 * A process that moves has an entry in each cgroup. The old one stops
 * growing; when the process exits (in the new one) the old entry goes too.
 */
static void test_cgroup_move(void)
{
	const struct cgroup_row *a, *b;

	setup();
	k_credit(500, 11, 50, 0, 4);
	do_read();
	CHECK_ROW(row_of(500, 50, 11), 4, false);
	k_credit(500, 20, 50, 1, 6);
	do_read();
	CHECK_EQ_INT(rows_of(500), 1);
	CHECK_ROW(row_of(500, 50, 20), 6, false);
	b = cg_of(20);
	CHECK(b && b->nr_procs == 1 && b->self.n[PMBPF_N_ONCPU_NS] == 6);
	/* /a/x is not in this interval's cgroups: nothing of it ran */
	CHECK(!cg_of(11));
	CHECK_EQ_U64(account__tracked(acct), 2);
	k_credit(500, 20, 50, 0, 2);
	k_exit(500, 20);
	do_read();
	CHECK_EQ_INT(rows_of(500), 1);
	CHECK_ROW(row_of(500, 50, 20), 2, true);
	CHECK_EQ_INT(nr_dels, 1);
	CHECK(deleted(500, 11));
	CHECK(!k_find(500, 11));
	CHECK_EQ_U64(account__tracked(acct), 0);
	do_read();
	do_read();
	do_read();
	CHECK_EQ_U64(account__vanished(acct), 0);

	/* both cgroups in one interval: each has its own row, /a rolls up /a/x */
	k_credit(501, 11, 51, 0, 5);
	k_credit(501, 20, 51, 1, 2);
	do_read();
	a = cg_of(10);
	CHECK(a && a->nr_procs == 0 && a->nr_procs_total == 1);
	CHECK(a && a->total.n[PMBPF_N_ONCPU_NS] == 5 && a->self.n[PMBPF_N_ONCPU_NS] == 0);
	CHECK(cg_of(1) && cg_of(1)->total.n[PMBPF_N_ONCPU_NS] == 7);
	CHECK_CONSERVED();
	teardown();
}

/* The overflow entry: all folded processes' counts and how many were folded. */
static void test_overflow(void)
{
	const struct proc_row *row;

	setup();
	k_overflow(0, 700, 70, 5);
	k_overflow(0, 701, 71, 0);
	k_overflow(1, 702, 72, 3);
	k_credit(600, 20, 60, 0, 1);
	do_read();
	row = row_of(PMBPF_OVERFLOW_TGID, 0, 0);
	CHECK_ROW(row, 8, false);
	if (row) {
		CHECK(row->overflow);
		CHECK_EQ_U64(row->folded, 3);
		CHECK_STR(row->comm, "[overflow]");
		CHECK(row->cgroup == NULL);
	}
	/* not in any cgroup: / holds 600 alone */
	CHECK(cg_of(1) && cg_of(1)->total.n[PMBPF_N_ONCPU_NS] == 1);
	CHECK(cg_of(1) && cg_of(1)->nr_procs_total == 1);
	CHECK(!cg_of(0));
	/* a folded process that runs again is not folded again */
	k_credit(PMBPF_OVERFLOW_TGID, 0, 0, 1, 4);
	do_read();
	row = row_of(PMBPF_OVERFLOW_TGID, 0, 0);
	CHECK_ROW(row, 4, false);
	if (row)
		CHECK_EQ_U64(row->folded, 0);
	k_overflow(1, 703, 73, 0);
	do_read();
	row = row_of(PMBPF_OVERFLOW_TGID, 0, 0);
	CHECK_ROW(row, 0, false);
	if (row)
		CHECK_EQ_U64(row->folded, 1);
	do_read();
	CHECK_EQ_U64(snap.nr_rows, 0);
	CHECK_EQ_INT(nr_dels, 0);
	CHECK_CONSERVED();
	teardown();
}

/*
 * The exit record was lost: the entry is marked dead. It is reported as
 * exited once, deleted; so are its entries in other cgroups.
 */
static void test_lost_exit_record(void)
{
	setup();
	k_credit(800, 11, 80, 0, 5);
	do_read();
	k_credit(800, 11, 80, 1, 2);
	k_exit_lost(800, 11, 1);
	/* never seen before its mark */
	k_credit(801, 20, 81, 0, 9);
	k_exit_lost(801, 20, 0);
	k_credit(802, 11, 82, 0, 3);
	do_read();
	CHECK_EQ_INT(rows_of(800), 1);
	CHECK_ROW(row_of(800, 80, 11), 2, true);
	CHECK(deleted(800, 11));
	CHECK_ROW(row_of(801, 81, 20), 9, true);
	CHECK(deleted(801, 20));
	CHECK_ROW(row_of(802, 82, 11), 3, false);
	CHECK_EQ_INT(nr_dels, 2);
	CHECK(!k_find(800, 11) && !k_find(801, 20));
	/* 802 moved from /a/x to /b, its record lost in /b: both entries go */
	k_credit(802, 20, 82, 1, 4);
	k_exit_lost(802, 20, 1);
	do_read();
	CHECK_EQ_INT(rows_of(800) + rows_of(801), 0);
	CHECK_EQ_INT(rows_of(802), 1);
	CHECK_ROW(row_of(802, 82, 20), 4, true);
	CHECK(deleted(802, 20));
	CHECK(deleted(802, 11));
	CHECK_EQ_INT(nr_dels, 2);
	CHECK(!k_find(802, 11) && !k_find(802, 20));
	CHECK_EQ_U64(account__tracked(acct), 0);
	do_read();
	CHECK_EQ_U64(snap.nr_rows, 0);
	CHECK_CONSERVED();
	teardown();
}

/*
 * An entry gone from the map without a record (a vanished entry) is
 * forgotten after 3 reads without it.
 */
static void test_vanished(void)
{
	setup();
	k_credit(900, 20, 90, 0, 1);
	do_read();
	k_find(900, 20)->used = false;
	do_read();
	do_read();
	CHECK_EQ_U64(account__tracked(acct), 1);
	CHECK_EQ_U64(account__vanished(acct), 0);
	do_read();
	CHECK_EQ_U64(account__tracked(acct), 0);
	CHECK_EQ_U64(account__vanished(acct), 1);
	teardown();
}

/* Adding figures (stat's intervals, a cgroup's processes) sums counts, keeps the larger maximum. */
static void test_figures_add_runq_max(void)
{
	struct figures sum = {}, a = {}, b = {};

	a.n[PMBPF_N_RUNQ_COUNT] = 2;
	a.runq_max_ns = 5000;
	a.runq_hist[2] = 2;
	b.n[PMBPF_N_RUNQ_COUNT] = 3;
	b.runq_max_ns = 3000;
	b.runq_hist[1] = 3;
	figures__add(&sum, &a);
	figures__add(&sum, &b);
	CHECK_EQ_U64(sum.runq_max_ns, 5000);
	CHECK_EQ_U64(sum.n[PMBPF_N_RUNQ_COUNT], 5);
	CHECK_EQ_U64(sum.runq_hist[1] + sum.runq_hist[2], 5);
	memset(&sum, 0, sizeof(sum));
	figures__add(&sum, &b);
	figures__add(&sum, &a);
	CHECK_EQ_U64(sum.runq_max_ns, 5000);
}

/* Run-queue maxima count in the read generation they were seen in; comm is the newest. */
static void test_runq_max_and_comm(void)
{
	struct kentry *e;
	const struct proc_row *row;

	setup();
	k_credit(110, 20, 11, 0, 50);
	k_credit(110, 20, 11, 1, 30);
	e = k_find(110, 20);
	e->c[1].runq_max_gen = 0; /* an older generation's maximum: not this interval's */
	e->c[1].runq_max_ns = 90;
	snprintf(e->c[1].comm, sizeof(e->c[1].comm), "renamed");
	e->c[1].comm_ns = 20; /* exec after the insert (comm_ns 11) */
	do_read();
	row = row_of(110, 11, 20);
	CHECK(row && row->f.runq_max_ns == 50);
	CHECK_STR(row ? row->comm : NULL, "renamed");
	/* generation 2: only a wait credited in it counts */
	k_credit(110, 20, 11, 1, 7);
	do_read();
	row = row_of(110, 11, 20);
	CHECK(row && row->f.runq_max_ns == 7);
	/* two CPUs in one generation: the larger of the two, not their sum nor the last */
	k_credit(110, 20, 11, 0, 50);
	k_credit(110, 20, 11, 1, 30);
	do_read();
	row = row_of(110, 11, 20);
	CHECK(row && row->f.runq_max_ns == 50);
	k_credit(110, 20, 11, 0, 30);
	k_credit(110, 20, 11, 1, 50);
	do_read();
	row = row_of(110, 11, 20);
	CHECK(row && row->f.runq_max_ns == 50);
	/* an exit record carries the maximum of its own read generation */
	k_credit(110, 20, 11, 0, 2);
	k_exit(110, 20);
	do_read();
	row = row_of(110, 11, 20);
	CHECK(row && row->exited && row->f.runq_max_ns == 2);
	teardown();
}

/*
 * Cgroup rows: self is the cgroup's processes, total adds its descendants.
 * The idle task (tgid 0, in /) has its row but adds nothing to /.
 */
static void test_cgroups_and_idle(void)
{
	const struct cgroup_row *root, *a, *ax, *b;
	const struct proc_row *idle;
	size_t i;

	setup();
	k_credit(0, 1, 0, 0, 100);
	k_credit(0, 1, 0, 1, 50);
	k_credit(120, 11, 12, 0, 3);
	k_credit(121, 11, 13, 1, 4);
	k_credit(122, 20, 14, 0, 5);
	k_credit(123, 1, 15, 1, 6);
	do_read();
	idle = row_of(0, 0, 1);
	CHECK_ROW(idle, 150, false);
	CHECK_STR(idle ? idle->comm : NULL, "[idle]");
	CHECK_STR(idle ? idle->cgroup : NULL, "/");
	root = cg_of(1);
	a = cg_of(10);
	ax = cg_of(11);
	b = cg_of(20);
	CHECK_EQ_U64(snap.nr_cgroups, 4);
	if (!root || !a || !ax || !b)
		goto out;
	CHECK_STR(ax->path, "/a/x");
	CHECK_EQ_U64(ax->parent_id, 10);
	CHECK_EQ_INT(ax->depth, 2);
	CHECK_EQ_U64(a->parent_id, 1);
	CHECK_EQ_U64(root->parent_id, 0);
	CHECK_EQ_U64(ax->self.n[PMBPF_N_ONCPU_NS], 7);
	CHECK_EQ_U64(ax->total.n[PMBPF_N_ONCPU_NS], 7);
	CHECK_EQ_U64(ax->nr_procs, 2);
	CHECK_EQ_U64(a->self.n[PMBPF_N_ONCPU_NS], 0);
	CHECK_EQ_U64(a->total.n[PMBPF_N_ONCPU_NS], 7);
	CHECK_EQ_U64(a->total.ev[2].value, 21);
	CHECK_EQ_U64(b->total.n[PMBPF_N_OFFCPU_NS], 10);
	/* / is 123 itself and its descendants: 6 + 7 + 5, not the idle task's 150 */
	CHECK_EQ_U64(root->self.n[PMBPF_N_ONCPU_NS], 6);
	CHECK_EQ_U64(root->total.n[PMBPF_N_ONCPU_NS], 18);
	CHECK_EQ_U64(root->total.ev[0].value, 90);
	CHECK_EQ_U64(root->total.runq_hist[0], 4);
	CHECK_EQ_U64(root->nr_procs, 1);
	CHECK_EQ_U64(root->nr_procs_total, 4);
	/* every process but idle and the overflow entry is in /'s total */
	{
		__u64 sum = 0;

		for (i = 0; i < snap.nr_rows; i++)
			if (snap.rows[i].pid != 0 && !snap.rows[i].overflow)
				sum += snap.rows[i].f.n[PMBPF_N_ONCPU_NS];
		CHECK_EQ_U64(root->total.n[PMBPF_N_ONCPU_NS], sum);
	}
out:
	CHECK_CONSERVED();
	teardown();
}

/*
 * A rescan of the cgroup cache may free or rewrite the strings it handed
 * out: the rows keep their own copies until the next read.
 */
static void test_paths_outlive_rescan(void)
{
	const struct cgroup_row *ax;
	size_t i;

	setup();
	k_credit(130, 11, 13, 0, 1);
	k_credit(131, 20, 13, 0, 1);
	do_read();
	CHECK(path_calls > 0);
	for (i = 0; i < NR_TREE; i++)
		memset(tree_path[i], 'X', sizeof(tree_path[i]) - 1);
	CHECK_STR(row_of(130, 13, 11) ? row_of(130, 13, 11)->cgroup : NULL, "/a/x");
	CHECK_STR(row_of(131, 13, 20) ? row_of(131, 13, 20)->cgroup : NULL, "/b");
	ax = cg_of(11);
	CHECK_STR(ax ? ax->path : NULL, "/a/x");
	CHECK_STR(cg_of(10) ? cg_of(10)->path : NULL, "/a");
	CHECK_STR(cg_of(1) ? cg_of(1)->path : NULL, "/");
	/* a row and its cgroup share one copy */
	CHECK(ax && row_of(130, 13, 11) && ax->path == row_of(130, 13, 11)->cgroup);
	teardown();
}

/* Copies beyond one block of storage stay put; a reset starts over. */
static void test_snapshot_strings(void)
{
	static const char *copy[2000];
	struct snapshot s = {};
	char buf[32];
	int i, ok = 0;

	for (i = 0; i < 2000; i++) {
		snprintf(buf, sizeof(buf), "/cgroup/%d", i);
		copy[i] = snapshot__strdup(&s, buf);
	}
	for (i = 0; i < 2000; i++) {
		snprintf(buf, sizeof(buf), "/cgroup/%d", i);
		ok += copy[i] && !strcmp(copy[i], buf);
	}
	CHECK_EQ_INT(ok, 2000);
	snapshot__reset(&s);
	CHECK_STR(snapshot__strdup(&s, "/after/reset"), "/after/reset");
	snapshot__free(&s);
	CHECK(s.strings == NULL);
}

/*
 * All of the above at once, over several reads: whatever happens to a
 * process, its rows add up to what the kernel credited it.
 */
static void test_conservation(void)
{
	int round;

	setup();
	for (round = 0; round < 6; round++) {
		__u64 r = (__u64)round;

		k_credit(0, 1, 0, round & 1, 100 + r);
		k_credit(10, 11, 100, 0, 1 + r);
		/* PID reuse: 20 exits, its PID comes back before the read (limbo from round 1) */
		k_credit(20, 20, 200 + r, 1, 2 + r);
		k_exit(20, 20);
		if (round < 5)
			k_credit(20, 20, 201 + r, 0, 3);
		/* an exit, and a residue of the previous round's */
		k_credit(30 + round, 11, 300, 0, 4);
		k_credit(30 + round, 11, 300, 1, 5);
		k_exit(30 + round, 11);
		if (round)
			k_credit(30 + round - 1, 11, 300, 1, 1);
		/* a mover: /a/x and /b, exits in /b in round 3 */
		if (round < 3) {
			k_credit(40, 11, 400, 0, 6);
			k_credit(40, 20, 400, 1, 7);
		} else if (round == 3) {
			k_credit(40, 20, 400, 1, 7);
			k_exit(40, 20);
		}
		/* the overflow entry */
		k_overflow(round & 1, 50 + round, 500, 8 + r);
		/* a lost record every other round */
		if (!(round & 1)) {
			k_credit(60, 10, 600 + r, 1, 9);
			k_exit_lost(60, 10, 1);
		}
		if (round == 2) {
			/* its last entry read, then its exit record in the same read */
			k_credit(70, 20, 700, 0, 12);
			read_map();
			k_credit(70, 20, 700, 1, 13);
			k_exit(70, 20);
			read_exits();
			CHECK_ROW(row_of(70, 700, 20), 25, true);
		} else {
			do_read();
		}
		CHECK_CONSERVED();
	}
	do_read();
	do_read();
	CHECK_CONSERVED();
	/* idle, 10 and the overflow entry remain: every other entry was deleted */
	CHECK_EQ_U64(account__tracked(acct), 3);
	CHECK(k_find(0, 1) && k_find(10, 11) && k_find(PMBPF_OVERFLOW_TGID, 0));
	CHECK_EQ_U64(account__vanished(acct), 0);
	teardown();
}

/* --threads: a process's name when its leader has no row. */
static bool fake_comm(void *ctx, __u32 pid, char *buf, size_t len)
{
	snprintf(buf, len, "proc%u", pid);
	return true;
}

/* Threads no longer there (or zombies), by id; every other thread runs. */
static __u32 gone_tid[8];
static int nr_gone;

static bool fake_running(void *ctx, __u32 pid, __u32 tid, __u64 start_ns)
{
	int i;

	(void)ctx;
	for (i = 0; i < nr_gone; i++)
		if (gone_tid[i] == tid)
			return false;
	return !start_ns || start_ns == 1000 + pid;
}

/* One thread entry as the kernel holds it: on-CPU ns split over the CPUs, a name. */
static void t_entry(__u32 tgid, __u32 tid, __u64 cgid, __u64 ns, const char *comm,
		    __u32 flags)
{
	struct pmbpf_counts c[NCPU];
	struct pmbpf_key key = { .tgid = tgid, .tid = tid, .cgroup_id = cgid };

	memset(c, 0, sizeof(c));
	c[0].start_ns = 1000 + tgid;
	c[0].comm_ns = 1;
	snprintf(c[0].comm, sizeof(c[0].comm), "%s", comm);
	c[0].n[PMBPF_N_ONCPU_NS] = ns - ns / 3;
	c[1].n[PMBPF_N_ONCPU_NS] = ns / 3;
	c[0].n[PMBPF_N_NVCSW] = ns / 10;
	c[0].ev[0].value = 2 * ns;
	c[0].flags = flags;
	CHECK_EQ_INT(account__entry(acct, &key, c), 0);
}

/* A thread's exit record: its cumulative total. */
static void t_exit(__u32 tgid, __u32 tid, __u64 cgid, __u64 ns, const char *comm, __u32 flags)
{
	struct pmbpf_exit x;

	memset(&x, 0, sizeof(x));
	x.key = (struct pmbpf_key){ .tgid = tgid, .tid = tid, .cgroup_id = cgid };
	x.total.start_ns = 1000 + tgid;
	snprintf(x.total.comm, sizeof(x.total.comm), "%s", comm);
	x.total.n[PMBPF_N_ONCPU_NS] = ns;
	x.total.n[PMBPF_N_NVCSW] = ns / 10;
	x.total.ev[0].value = 2 * ns;
	x.total.flags = flags;
	CHECK_EQ_INT(account__exit(acct, &x, sizeof(x)), 0);
}

static void t_read(void)
{
	account__begin(acct, &snap, ++gen);
	snapshot__reset(&snap);
}

static int t_settle(void)
{
	size_t nr;
	int err = account__settle(acct) ?: account__finish(acct);

	account__deletions(acct, &nr);
	nr_dels = (int)nr;
	account__deletions_clear(acct);
	return err;
}

static const struct proc_row *t_row(const struct proc_row *rows, size_t n, __u32 pid, __u32 tid,
				    __u64 cgid)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (rows[i].pid == pid && rows[i].tid == tid && rows[i].cgroup_id == cgid)
			return &rows[i];
	return NULL;
}

/*
 * --threads: entries are threads; a process's row (per cgroup) is the sum
 * of its threads', named after its leader (else by the callback); a thread
 * that exits is reported once, and the exit of one thread drops no other
 * thread's entry (not even one in another cgroup); the process is exited
 * only with a record that ended it (PMBPF_F_PROC_EXIT).
 */
static void test_threads_rollup(void)
{
	const struct proc_row *r;
	const struct cgroup_row *cg;
	size_t i;

	setup_with(true);

	/* read 1: threads 100 and 101 in /a, 102 in /a/x; the idle task */
	t_read();
	t_entry(100, 100, 10, 30, "main", 0);
	t_entry(100, 101, 10, 70, "w1", 0);
	t_entry(100, 102, 11, 9, "w2", 0);
	t_entry(0, 0, 1, 500, "swapper", 0);
	CHECK_EQ_INT(t_settle(), 0);
	CHECK(snap.threads_on);
	CHECK_EQ_U64(snap.nr_threads, 3);
	CHECK_EQ_U64(snap.nr_rows, 3); /* (100, /a), (100, /a/x), idle */
	r = t_row(snap.rows, snap.nr_rows, 100, 0, 10);
	CHECK(r && r->f.n[PMBPF_N_ONCPU_NS] == 100 && r->nr_threads == 2);
	CHECK(r && r->f.n[PMBPF_N_NVCSW] == 3 + 7 && r->f.ev[2].value == 200);
	CHECK(r && !strcmp(r->comm, "main") && !r->exited);
	r = t_row(snap.rows, snap.nr_rows, 100, 0, 11);
	CHECK(r && r->f.n[PMBPF_N_ONCPU_NS] == 9 && r->nr_threads == 1);
	CHECK(r && !strcmp(r->comm, "proc100")); /* its leader ran in /a only */
	r = t_row(snap.rows, snap.nr_rows, 0, 0, 1);
	CHECK(r && r->nr_threads == 0 && r->f.n[PMBPF_N_ONCPU_NS] == 500);
	CHECK(!t_row(snap.threads, snap.nr_threads, 0, 0, 1)); /* idle: no thread */
	r = t_row(snap.threads, snap.nr_threads, 100, 101, 10);
	CHECK(r && !strcmp(r->comm, "w1") && r->f.n[PMBPF_N_ONCPU_NS] == 70);
	CHECK(r && r->cgroup && !strcmp(r->cgroup, "/a"));
	r = t_row(snap.threads, snap.nr_threads, 100, 102, 11);
	CHECK(r && r->cgroup && !strcmp(r->cgroup, "/a/x"));
	for (i = 0, cg = NULL; i < snap.nr_cgroups; i++)
		if (snap.cgroups[i].id == 10)
			cg = &snap.cgroups[i];
	CHECK(cg && cg->self.n[PMBPF_N_ONCPU_NS] == 100 && cg->total.n[PMBPF_N_ONCPU_NS] == 109);

	/* read 2: 101 exits (+20 since), 100 runs +50, 102 idle */
	t_read();
	t_entry(100, 100, 10, 80, "main", 0);
	t_entry(100, 102, 11, 9, "w2", 0);
	t_exit(100, 101, 10, 90, "w1", 0);
	CHECK_EQ_INT(t_settle(), 0);
	CHECK_EQ_U64(snap.nr_threads, 2);
	r = t_row(snap.threads, snap.nr_threads, 100, 101, 10);
	CHECK(r && r->exited && !r->proc_end && r->f.n[PMBPF_N_ONCPU_NS] == 20);
	r = t_row(snap.rows, snap.nr_rows, 100, 0, 10);
	CHECK(r && r->f.n[PMBPF_N_ONCPU_NS] == 70 && r->nr_threads == 2 && !r->exited);
	CHECK(!t_row(snap.rows, snap.nr_rows, 100, 0, 11)); /* nothing new in /a/x */
	CHECK_EQ_INT(nr_dels, 0); /* 102's entry in /a/x stays */

	/* read 3: 102 runs +4; 100 exits, the last: the process ends */
	t_read();
	t_entry(100, 102, 11, 13, "w2", 0);
	t_exit(100, 100, 10, 85, "main", PMBPF_F_PROC_EXIT);
	CHECK_EQ_INT(t_settle(), 0);
	r = t_row(snap.threads, snap.nr_threads, 100, 102, 11);
	CHECK(r && !r->exited && r->f.n[PMBPF_N_ONCPU_NS] == 4);
	r = t_row(snap.rows, snap.nr_rows, 100, 0, 10);
	CHECK(r && r->exited && r->f.n[PMBPF_N_ONCPU_NS] == 5 && r->nr_threads == 1);
	CHECK(r && !strcmp(r->comm, "main"));
	/* 102's entry is its own (its exit record ends it), not a moved one of 100's */
	CHECK_EQ_INT(nr_dels, 0);
	teardown();
}

/*
 * Two reads of process tgid: its main thread (main_ns) and thread tgid + 1
 * (w_ns); then thread tgid + 1 is gone from /proc (it called exec, or is
 * exiting), and the main thread's exit record (main_total) comes.
 */
static void t_leader_leaves(__u32 tgid, __u64 main_ns, __u64 w_ns, __u64 main_total)
{
	t_read();
	t_entry(tgid, tgid, 10, main_ns, "main", 0);
	t_entry(tgid, tgid + 1, 10, w_ns, "w", 0);
	CHECK_EQ_INT(t_settle(), 0);
	gone_tid[nr_gone++] = tgid + 1;
	t_read();
	t_entry(tgid, tgid + 1, 10, w_ns, "w", 0);
	t_exit(tgid, tgid, 10, main_total, "main", 0);
	CHECK_EQ_INT(t_settle(), 0);
}

/*
 * --threads: a thread other than the main one calls exec (de_thread()):
 * the old main thread's exit record comes while the process lives, and the
 * exec'ing thread then runs under the main thread's id with its start
 * time. That entry is the live thread, not a residue; the exec'ing
 * thread's old id, gone without an exit record, is reported exited once,
 * at the next read. A main thread that exits alone (pthread_exit())
 * retires no live thread, and its residue is still one. A thread retired
 * so whose exit record comes after all is reported its remainder.
 */
static void test_threads_exec(void)
{
	const struct proc_row *r;

	setup_with(true);
	nr_gone = 0;

	/* reads 1-2: 201 called exec; the old main thread's record (+5) */
	t_leader_leaves(200, 30, 40, 35);
	r = t_row(snap.threads, snap.nr_threads, 200, 200, 10);
	CHECK(r && r->exited && !r->proc_end && r->f.n[PMBPF_N_ONCPU_NS] == 5);
	CHECK(!t_row(snap.threads, snap.nr_threads, 200, 201, 10)); /* at the next read */
	CHECK_EQ_INT(nr_dels, 0); /* the kernel deleted 200's */
	r = t_row(snap.rows, snap.nr_rows, 200, 0, 10);
	CHECK(r && !r->exited && r->f.n[PMBPF_N_ONCPU_NS] == 5);

	/* read 3: the program exec'd runs as 200, same start time; 201 retired */
	t_read();
	t_entry(200, 200, 10, 50, "exe", 0);
	t_entry(200, 201, 10, 40, "w", 0);
	CHECK_EQ_INT(t_settle(), 0);
	r = t_row(snap.threads, snap.nr_threads, 200, 200, 10);
	CHECK(r && !r->exited && r->f.n[PMBPF_N_ONCPU_NS] == 50 && !strcmp(r->comm, "exe"));
	r = t_row(snap.threads, snap.nr_threads, 200, 201, 10);
	CHECK(r && r->exited && !r->proc_end && r->f.n[PMBPF_N_ONCPU_NS] == 0);
	CHECK_EQ_INT(nr_dels, 1); /* 201's */
	r = t_row(snap.rows, snap.nr_rows, 200, 0, 10);
	CHECK(r && !r->exited && r->f.n[PMBPF_N_ONCPU_NS] == 50 && r->nr_threads == 2);
	t_read();
	t_entry(200, 200, 10, 80, "exe", 0);
	CHECK_EQ_INT(t_settle(), 0);
	r = t_row(snap.threads, snap.nr_threads, 200, 200, 10);
	CHECK(r && !r->exited && r->f.n[PMBPF_N_ONCPU_NS] == 30);
	CHECK(!t_row(snap.threads, snap.nr_threads, 200, 201, 10));

	/* read 5: process 300's main thread exits alone; its thread 301 runs on */
	t_read();
	t_entry(300, 301, 10, 7, "w", 0);
	t_exit(300, 300, 10, 3, "main", 0);
	CHECK_EQ_INT(t_settle(), 0);
	r = t_row(snap.threads, snap.nr_threads, 300, 301, 10);
	CHECK(r && !r->exited && r->f.n[PMBPF_N_ONCPU_NS] == 7);
	CHECK_EQ_INT(nr_dels, 0);

	/* read 6: a late credit to the main thread, a zombie now: a residue */
	gone_tid[nr_gone++] = 300;
	t_read();
	t_entry(300, 300, 10, 1, "main", 0);
	t_entry(300, 301, 10, 9, "w", 0);
	CHECK_EQ_INT(t_settle(), 0);
	r = t_row(snap.threads, snap.nr_threads, 300, 300, 10);
	CHECK(r && r->exited && r->f.n[PMBPF_N_ONCPU_NS] == 1);
	r = t_row(snap.threads, snap.nr_threads, 300, 301, 10);
	CHECK(r && !r->exited && r->f.n[PMBPF_N_ONCPU_NS] == 2);
	CHECK_EQ_INT(nr_dels, 1); /* the residue's */

	/* reads 7-10: 400's main thread exits alone while 401 leaves /proc ... */
	t_leader_leaves(400, 10, 20, 12);
	CHECK_EQ_INT(nr_dels, 0);
	t_read();
	t_entry(400, 401, 10, 20, "w", 0);
	CHECK_EQ_INT(t_settle(), 0);
	r = t_row(snap.threads, snap.nr_threads, 400, 401, 10);
	CHECK(r && r->exited && r->f.n[PMBPF_N_ONCPU_NS] == 0);
	CHECK_EQ_INT(nr_dels, 1);
	/* ... and its exit record comes after all: the remainder only */
	t_read();
	t_exit(400, 401, 10, 23, "w", PMBPF_F_PROC_EXIT);
	CHECK_EQ_INT(t_settle(), 0);
	r = t_row(snap.threads, snap.nr_threads, 400, 401, 10);
	CHECK(r && r->exited && r->proc_end && r->f.n[PMBPF_N_ONCPU_NS] == 3);
	r = t_row(snap.rows, snap.nr_rows, 400, 0, 10);
	CHECK(r && r->exited && r->f.n[PMBPF_N_ONCPU_NS] == 3);
	nr_gone = 0;
	teardown();
}

/* The order of snapshot__sort_cpu(): on-CPU time down, then pid, tid, cgroup up. */
static int cmp_cpu_want(const void *a, const void *b)
{
	const struct proc_row *x = a, *y = b;
	__u64 cx = x->f.n[PMBPF_N_ONCPU_NS], cy = y->f.n[PMBPF_N_ONCPU_NS];

	if (cx != cy)
		return cx < cy ? 1 : -1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->cgroup_id < y->cgroup_id ? -1 : x->cgroup_id > y->cgroup_id;
}

/* 5,000 rows with ties in every key but the last: sorted as a comparison sort does, rows whole. */
static void test_sort_cpu(void)
{
	struct snapshot s = {};
	struct proc_row *want;
	unsigned int seed = 3;
	size_t i, n = 5000, bad = 0;

	for (i = 0; i < n; i++) {
		struct proc_row *r = snapshot__add_row(&s);

		if (!CHECK(r))
			return;
		r->f.n[PMBPF_N_ONCPU_NS] = i % 3 ? (__u64)(rand_r(&seed) % 50) : (__u64)rand_r(&seed) << 20;
		r->pid = rand_r(&seed) % 200;
		r->tid = rand_r(&seed) % 3;
		r->cgroup_id = i; /* unique: one right order */
		r->f.n[PMBPF_N_NVCSW] = i;
		snprintf(r->comm, sizeof(r->comm), "r%zu", i);
	}
	want = malloc(n * sizeof(*want));
	if (!CHECK(want))
		return;
	memcpy(want, s.rows, n * sizeof(*want));
	qsort(want, n, sizeof(*want), cmp_cpu_want);
	snapshot__sort_cpu(&s);
	for (i = 0; i < n; i++)
		bad += !!memcmp(&want[i], &s.rows[i], sizeof(*want));
	CHECK_EQ_U64(bad, 0);
	CHECK(s.rows[0].f.n[PMBPF_N_ONCPU_NS] >= s.rows[n - 1].f.n[PMBPF_N_ONCPU_NS]);
	free(want);
	snapshot__free(&s);
}

/* Every field of two sums, one by one (padding, if any, aside). */
static void check_counts_equal(const struct pmbpf_counts *x, const struct pmbpf_counts *y,
			       const char *what)
{
	int i;

	check_record(x->start_ns == y->start_ns, __FILE__, __LINE__, "%s: start_ns", what);
	for (i = 0; i < PMBPF_N_NR; i++)
		check_record(x->n[i] == y->n[i], __FILE__, __LINE__, "%s: n[%d]", what, i);
	check_record(x->runq_max_ns == y->runq_max_ns, __FILE__, __LINE__, "%s: runq_max_ns", what);
	check_record(x->runq_max_gen == y->runq_max_gen, __FILE__, __LINE__, "%s: runq_max_gen",
		     what);
	check_record(x->comm_ns == y->comm_ns, __FILE__, __LINE__, "%s: comm_ns", what);
	check_record(x->folded == y->folded, __FILE__, __LINE__, "%s: folded", what);
	check_record(x->flags == y->flags, __FILE__, __LINE__, "%s: flags", what);
	check_record(x->state == y->state, __FILE__, __LINE__, "%s: state", what);
	check_record(!memcmp(x->comm, y->comm, sizeof(x->comm)), __FILE__, __LINE__, "%s: comm",
		     what);
	for (i = 0; i < PMBPF_RUNQ_SLOTS; i++)
		check_record(x->runq_hist[i] == y->runq_hist[i], __FILE__, __LINE__,
			     "%s: runq_hist[%d]", what, i);
	for (i = 0; i < PMBPF_MAX_EVENTS; i++)
		check_record(x->ev[i].value == y->ev[i].value &&
				     x->ev[i].enabled == y->ev[i].enabled &&
				     x->ev[i].running == y->ev[i].running,
			     __FILE__, __LINE__, "%s: ev[%d]", what, i);
}

/*
 * The shared map's one value is copied (account__sum_cpus()'s fast path),
 * not summed slot by slot: the two must read every field alike, whatever
 * the value holds. Each field set to a distinct value (then the cases the
 * fast path treats apart: a run-queue maximum of this read generation or
 * of an older one, no comm, a value cut after its counting slots), both
 * sums compared field by field.
 */
static void test_one_value_fast_path(void)
{
	static const size_t cuts[] = { 0, offsetof(struct pmbpf_counts, ev[2]),
				       offsetof(struct pmbpf_counts, ev[0]) };
	struct pmbpf_counts v, fast, slots;
	unsigned char *b = (unsigned char *)&v;
	size_t i, c;
	int k;

	for (c = 0; c < sizeof(cuts) / sizeof(cuts[0]); c++) {
		struct account_opts o = { .nr_cpus = 1,
					  .stride = sizeof(struct pmbpf_counts),
					  .value_size = cuts[c],
					  .nr_events = 0 };
		struct account *a = account__new(&o);
		struct snapshot sn = {};

		if (!a) {
			perror("account__new");
			exit(2);
		}
		account__begin(a, &sn, 7);
		for (k = 0; k < 4; k++) {
			char what[64];

			/* every byte its own: a field read from the wrong place shows */
			for (i = 0; i < sizeof(v); i++)
				b[i] = (unsigned char)(i * 37 + k * 11 + 1);
			memcpy(v.comm, "worker", 7);
			v.runq_max_gen = k == 1 ? 6 : 7; /* 1: an older generation's maximum */
			if (k == 2)
				memset(v.comm, 0, sizeof(v.comm)); /* no comm: nor its time */
			if (k == 3)
				v.comm[0] = '\0'; /* no comm, bytes after the NUL */
			memset(&fast, 0xa5, sizeof(fast));
			memset(&slots, 0x5a, sizeof(slots));
			account__sum_cpus(a, &v, 1, sizeof(v), &fast, true);
			account__sum_cpus(a, &v, 1, sizeof(v), &slots, false);
			snprintf(what, sizeof(what), "value_size %zu, case %d", cuts[c], k);
			check_counts_equal(&fast, &slots, what);
			/* not vacuous: the sum has the value's figures */
			CHECK_EQ_U64(slots.n[0], v.n[0]);
			CHECK_EQ_U64(slots.runq_max_ns, k == 1 ? 0 : v.runq_max_ns);
		}
		account__free(a);
		snapshot__free(&sn);
	}
}

int main(void)
{
	test_interval_diff();
	test_pid_reuse();
	test_same_key_comes_back();
	test_exit_between_reads();
	test_residue();
	test_cgroup_move();
	test_overflow();
	test_lost_exit_record();
	test_vanished();
	test_runq_max_and_comm();
	test_figures_add_runq_max();
	test_cgroups_and_idle();
	test_paths_outlive_rescan();
	test_snapshot_strings();
	test_conservation();
	test_threads_rollup();
	test_threads_exec();
	test_sort_cpu();
	test_one_value_fast_path();
	return check_summary();
}
