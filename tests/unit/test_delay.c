// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * --delays' accounting (user/account/delay.c): cumulative kernel pairs into interval
 * deltas, the pairs of exited waiters handed back for deletion, re-made
 * entries, names, and the per-process and per-cgroup sums and rankings
 * that JSON, top and Prometheus show; top's delay line (top_view.c).
 */
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "delay.h"
#include "top_view.h"

static struct snapshot snap;

static struct proc_row *row(__u32 pid, __u64 cg, const char *comm, const char *path, bool exited)
{
	struct proc_row *r = snapshot__add_row(&snap);

	r->pid = pid;
	r->cgroup_id = cg;
	snprintf(r->comm, sizeof(r->comm), "%s", comm);
	r->cgroup = path;
	r->exited = exited;
	return r;
}

/*
 * The kernel's slots, as delay.bpf.h hands them out: a pair keeps its slot
 * until its deletion gives the slot back (finish()), and a new pair takes
 * the slot given back last, else the next never used.
 */
static struct pmbpf_delay_key slot_key[64];
static bool slot_used[64];
static __u32 slot_free[64], nr_free, next_slot;

static __u32 slot_of(const struct pmbpf_delay_key *k)
{
	__u32 i;

	for (i = 0; i < next_slot; i++)
		if (slot_used[i] && !memcmp(&slot_key[i], k, sizeof(*k)))
			return i;
	i = nr_free ? slot_free[--nr_free] : next_slot++;
	slot_key[i] = *k;
	slot_used[i] = true;
	return i;
}

static void slots_reset(void)
{
	memset(slot_used, 0, sizeof(slot_used));
	nr_free = next_slot = 0;
}

static void slots_delete(const struct delay_dead *dead, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++) {
		CHECK(dead[i].slot < next_slot && slot_used[dead[i].slot] &&
		      !memcmp(&slot_key[dead[i].slot], &dead[i].k, sizeof(dead[i].k)));
		slot_used[dead[i].slot] = false;
		slot_free[nr_free++] = dead[i].slot;
	}
}

/* A new accounting, and the kernel's slots all free. */
static struct delay_acct *acct_new(void)
{
	slots_reset();
	return delay_acct__new();
}

static void entry(struct delay_acct *a, __u32 tgid, __u64 cg, __u32 by, __u64 bycg, __u64 ns,
		  __u64 waits)
{
	struct pmbpf_delay_key k = {
		.tgid = tgid, .cgroup_id = cg, .by_tgid = by, .by_cgroup_id = bycg
	};
	struct pmbpf_delay_val v = { .ns = ns, .waits = waits };

	CHECK_EQ_INT(delay_acct__entry(a, slot_of(&k), &k, &v), 0);
}

static const char *path_of(void *ctx, __u64 id)
{
	(void)ctx;
	return id == 30 ? "/unseen" : NULL;
}

static void comm_of(void *ctx, __u32 pid, char *buf, size_t len)
{
	(void)ctx;
	snprintf(buf, len, "p%u", pid);
}

static const struct delay_pair *pair(__u32 pid, __u32 by)
{
	size_t i;

	for (i = 0; i < snap.nr_delays; i++)
		if (snap.delays[i].pid == pid && snap.delays[i].by_pid == by)
			return &snap.delays[i];
	return NULL;
}

static void finish(struct delay_acct *a, size_t want_dead)
{
	const struct delay_dead *dead;
	size_t nr_dead;

	CHECK_EQ_INT(delay_acct__finish(a, &snap, path_of, comm_of, NULL, &dead, &nr_dead), 0);
	CHECK_EQ_U64(nr_dead, want_dead);
	slots_delete(dead, nr_dead);
}

static void test_deltas_and_exits(void)
{
	struct delay_acct *a = acct_new();
	const struct delay_pair *p;
	const struct delay_dead *dead;
	size_t nr_dead;

	/* read 1: 10 waited 1000 ns while 20 ran, 300 ns while the idle task ran */
	snapshot__reset(&snap);
	row(10, 1, "victim", "/v", false);
	row(20, 2, "spin", "/a", false);
	entry(a, 10, 1, 20, 2, 1000, 4);
	entry(a, 10, 1, 0, 9, 300, 1);
	finish(a, 0);
	CHECK(snap.delays_on);
	CHECK_EQ_U64(snap.nr_delays, 2);
	p = pair(10, 20);
	CHECK(p && p->ns == 1000 && p->waits == 4);
	CHECK(p && !strcmp(p->comm, "victim") && !strcmp(p->by_comm, "spin"));
	CHECK(p && p->cgroup && !strcmp(p->cgroup, "/v") && !strcmp(p->by_cgroup, "/a"));
	p = pair(10, 0);
	CHECK(p && !strcmp(p->by_comm, "[idle]"));

	/* read 2: only the first pair grew; a runner that has no row (filtered) */
	snapshot__reset(&snap);
	row(10, 1, "victim", "/v", false);
	entry(a, 10, 1, 20, 2, 1500, 6);
	entry(a, 10, 1, 0, 9, 300, 1);
	entry(a, 10, 1, 77, 30, 50, 1);
	finish(a, 0);
	CHECK_EQ_U64(snap.nr_delays, 2);
	p = pair(10, 20);
	CHECK(p && p->ns == 500 && p->waits == 2);
	/* named from the cached row of this read? 20 ran, but has no row here: /proc's name */
	CHECK(p && !strcmp(p->by_comm, "p20") && p->by_cgroup == NULL);
	p = pair(10, 77);
	CHECK(p && p->ns == 50 && !strcmp(p->by_comm, "p77") && p->by_cgroup &&
	      !strcmp(p->by_cgroup, "/unseen"));
	CHECK(pair(10, 0) == NULL);

	/* read 3: the victim exited: its pairs' last deltas, then handed back */
	snapshot__reset(&snap);
	row(10, 1, "victim", "/v", true);
	entry(a, 10, 1, 20, 2, 1600, 7);
	entry(a, 10, 1, 0, 9, 300, 1);
	entry(a, 10, 1, 77, 30, 50, 1);
	entry(a, 11, 1, 20, 2, 5, 1);
	CHECK_EQ_INT(delay_acct__finish(a, &snap, path_of, comm_of, NULL, &dead, &nr_dead), 0);
	CHECK_EQ_U64(nr_dead, 3);
	CHECK(nr_dead == 3 && dead[0].k.tgid == 10 && dead[1].k.tgid == 10 &&
	      dead[2].k.tgid == 10);
	slots_delete(dead, nr_dead);
	p = pair(10, 20);
	CHECK(p && p->ns == 100 && p->waits == 1);
	CHECK(pair(11, 20) && pair(11, 20)->ns == 5);

	/* read 4: deleted, and made again by a new process with the same tgid: all new */
	snapshot__reset(&snap);
	entry(a, 10, 1, 20, 2, 40, 1);
	entry(a, 11, 1, 20, 2, 5, 1);
	finish(a, 0);
	CHECK_EQ_U64(snap.nr_delays, 1);
	p = pair(10, 20);
	CHECK(p && p->ns == 40 && p->waits == 1);

	/* read 5: an entry smaller than before was re-made between reads: taken whole */
	snapshot__reset(&snap);
	entry(a, 10, 1, 20, 2, 30, 1);
	entry(a, 11, 1, 20, 2, 5, 1);
	finish(a, 0);
	p = pair(10, 20);
	CHECK(p && p->ns == 30);
	delay_acct__free(a);
}

static void test_sums(void)
{
	struct delay_sum d[DELAY_TOP];
	struct delay_acct *a = acct_new();
	struct top_item it = {};
	struct cgroup_row *c;
	char buf[512];
	__u64 total;
	size_t n;

	snapshot__reset(&snap);
	row(10, 1, "v1", "/v", false);
	row(11, 1, "v2", "/v", false);
	row(20, 2, "a1", "/a", false);
	row(21, 2, "a2", "/a", false);
	row(30, 3, "b", "/b", false);
	entry(a, 10, 1, 20, 2, 100000, 1);
	entry(a, 10, 1, 21, 2, 300000, 2);
	entry(a, 10, 1, 30, 3, 200000, 1);
	entry(a, 11, 1, 20, 2, 50000, 1);
	entry(a, 20, 2, 10, 1, 7000, 1);
	finish(a, 0);

	/* process 10: by 21 (300 us), 30 (200 us), 20 (100 us) */
	n = delay__of_proc(&snap, 10, 1, DELAY_BY, d, DELAY_TOP, &total);
	CHECK_EQ_U64(n, 3);
	CHECK_EQ_U64(total, 600000);
	CHECK(n == 3 && d[0].pid == 21 && d[0].ns == 300000 && d[1].pid == 30 && d[2].pid == 20);
	CHECK(n == 3 && !strcmp(d[0].comm, "a2") && !strcmp(d[0].cgroup, "/a"));
	/* at most max */
	CHECK_EQ_U64(delay__of_proc(&snap, 10, 1, DELAY_BY, d, 2, NULL), 2);
	/* whom 20 delayed: 10 (100 us) and 11 (50 us) */
	n = delay__of_proc(&snap, 20, 2, DELAY_OF, d, DELAY_TOP, &total);
	CHECK(n == 2 && d[0].pid == 10 && d[0].ns == 100000 && d[1].pid == 11 && total == 150000);

	/* cgroup /v: by /a 450 us (100 + 300 + 50) and /b 200 us, as cgroups */
	n = delay__of_cgroup(&snap, 1, DELAY_BY, d, DELAY_TOP, &total);
	CHECK(n == 2 && d[0].cgroup_id == 2 && d[0].ns == 450000 && d[0].waits == 4 && !d[0].comm);
	CHECK(n == 2 && d[1].cgroup_id == 3 && d[1].ns == 200000 && total == 650000);
	/* whom /a delayed: /v 450 us */
	n = delay__of_cgroup(&snap, 2, DELAY_OF, d, DELAY_TOP, &total);
	CHECK(n == 1 && d[0].cgroup_id == 1 && d[0].ns == 450000);
	/* and /a was delayed by /v: 7 us */
	n = delay__of_cgroup(&snap, 2, DELAY_BY, d, DELAY_TOP, &total);
	CHECK(n == 1 && d[0].ns == 7000 && total == 7000);

	/* the indexed lookups give what a scan of every pair gives */
	{
		size_t *x0 = snap.delay_index[0], *x1 = snap.delay_index[1];
		struct delay_sum e[DELAY_TOP];
		__u64 t2;
		size_t m, j;
		int side;

		CHECK(x0 && x1);
		for (side = DELAY_BY; side <= DELAY_OF; side++) {
			for (j = 0; j < 4; j++) {
				__u64 cg = j + 1;

				n = delay__of_cgroup(&snap, cg, side, d, DELAY_TOP, &total);
				snap.delay_index[0] = snap.delay_index[1] = NULL;
				m = delay__of_cgroup(&snap, cg, side, e, DELAY_TOP, &t2);
				snap.delay_index[0] = x0;
				snap.delay_index[1] = x1;
				CHECK(n == m && total == t2 && !memcmp(d, e, n * sizeof(*d)));
			}
		}
		n = delay__of_proc(&snap, 21, 2, DELAY_OF, d, DELAY_TOP, &total);
		CHECK(n == 1 && d[0].pid == 10 && d[0].ns == 300000 && total == 300000);
		CHECK_EQ_U64(delay__of_proc(&snap, 22, 2, DELAY_OF, d, DELAY_TOP, NULL), 0);
	}

	/* top's line for process 10 and for cgroup /v */
	it.proc = &snap.rows[0];
	top_view__delay_line(&snap, &it, buf, sizeof(buf));
	CHECK(strstr(buf, "Delayed by: a2 (21) 300us 50%, b (30) 200us 33%, a1 (20) 100us 17%") ==
	      buf);
	CHECK(strstr(buf, "  Delayed: a1 (20) 7us 100%") != NULL);
	c = snapshot__add_cgroup(&snap);
	c->id = 1;
	c->path = "/v";
	it.proc = NULL;
	it.cg = c;
	top_view__delay_line(&snap, &it, buf, sizeof(buf));
	CHECK(!strcmp(buf, "Delayed by: /a 450us 69%, /b 200us 31%  Delayed: /a 7us 100%"));
	snap.delays_on = false;
	top_view__delay_line(&snap, &it, buf, sizeof(buf));
	CHECK(!strcmp(buf, ""));
	delay_acct__free(a);
}

/*
 * A collection without a single pair (the first, or a quiet host): no array
 * to sort, and qsort takes no NULL one (make sanitize's UBSan aborted here).
 */
static void test_no_pairs(void)
{
	struct delay_acct *a = acct_new();

	if (!CHECK(a))
		return;
	snapshot__reset(&snap);
	finish(a, 0);
	CHECK_EQ_U64(snap.nr_delays, 0);
	snapshot__reset(&snap);
	row(10, 1, "victim", "/v", false);
	finish(a, 0);
	CHECK_EQ_U64(snap.nr_delays, 0);
	delay_acct__free(a);
}

/*
 * Reads of the slots that grew only (delay_read.c's walk): a pair a
 * read does not give keeps its base, its next growth is its delta; a pair
 * given twice counts once, as the later one; an exited waiter's pairs are handed back even
 * those this read did not give.
 */
static void test_changed_pairs_only(void)
{
	struct delay_acct *a = acct_new();
	const struct delay_dead *dead;
	const struct delay_pair *p;
	size_t nr_dead;

	if (!CHECK(a))
		return;
	/* read 1: every pair */
	snapshot__reset(&snap);
	row(10, 1, "victim", "/v", false);
	row(12, 1, "other", "/v", false);
	entry(a, 10, 1, 20, 2, 1000, 4);
	entry(a, 10, 1, 0, 9, 300, 1);
	entry(a, 12, 1, 0, 9, 70, 1);
	finish(a, 0);
	CHECK_EQ_U64(snap.nr_delays, 3);

	/* read 2: nothing grew, nothing given */
	snapshot__reset(&snap);
	row(10, 1, "victim", "/v", false);
	finish(a, 0);
	CHECK_EQ_U64(snap.nr_delays, 0);

	/* read 3: one pair grew (given twice, as after a read that failed half-way: the later is newer), a new one */
	snapshot__reset(&snap);
	row(10, 1, "victim", "/v", false);
	entry(a, 10, 1, 0, 9, 340, 2);
	entry(a, 11, 1, 0, 9, 5, 1);
	entry(a, 10, 1, 0, 9, 350, 2);
	finish(a, 0);
	CHECK_EQ_U64(snap.nr_delays, 2);
	p = pair(10, 0);
	CHECK(p && p->ns == 50 && p->waits == 1);
	CHECK(pair(11, 0) && pair(11, 0)->ns == 5);
	CHECK(pair(10, 20) == NULL);

	/* read 4: 10 exited, only (10, 20) given: all three of its pairs go */
	snapshot__reset(&snap);
	row(10, 1, "victim", "/v", true);
	entry(a, 10, 1, 20, 2, 1100, 5);
	CHECK_EQ_INT(delay_acct__finish(a, &snap, path_of, comm_of, NULL, &dead, &nr_dead), 0);
	CHECK_EQ_U64(snap.nr_delays, 1);
	p = pair(10, 20);
	CHECK(p && p->ns == 100 && p->waits == 1);
	CHECK_EQ_U64(nr_dead, 2);
	CHECK(nr_dead == 2 && dead[0].k.tgid == 10 && dead[1].k.tgid == 10 &&
	      dead[0].k.by_tgid != dead[1].k.by_tgid);
	slots_delete(dead, nr_dead);

	/* read 5: 10's pairs were forgotten, 12's kept: its growth is its delta */
	snapshot__reset(&snap);
	entry(a, 10, 1, 20, 2, 40, 1);
	entry(a, 12, 1, 0, 9, 90, 2);
	finish(a, 0);
	CHECK_EQ_U64(snap.nr_delays, 2);
	CHECK(pair(10, 20) && pair(10, 20)->ns == 40);
	CHECK(pair(12, 0) && pair(12, 0)->ns == 20 && pair(12, 0)->waits == 1);
	delay_acct__free(a);
}

/* A waiter delayed by more runners than sums() holds on its stack (32): all summed, ranked. */
static void test_many_runners(void)
{
	struct delay_acct *a = acct_new();
	struct delay_sum d[DELAY_TOP];
	__u64 total = 0;
	size_t n, i;

	if (!CHECK(a))
		return;
	snapshot__reset(&snap);
	row(10, 1, "victim", "/v", false);
	for (i = 0; i < 40; i++)
		entry(a, 10, 1, 100 + i, 2, (i + 1) * 1000, 1);
	finish(a, 0);
	n = delay__of_proc(&snap, 10, 1, DELAY_BY, d, DELAY_TOP, &total);
	CHECK_EQ_U64(n, DELAY_TOP);
	CHECK_EQ_U64(total, 820000);
	for (i = 0; i < n; i++)
		CHECK(d[i].pid == 139 - i && d[i].ns == (40 - i) * 1000 && d[i].waits == 1);
	n = delay__of_cgroup(&snap, 1, DELAY_BY, d, DELAY_TOP, &total);
	CHECK(n == 1 && d[0].cgroup_id == 2 && d[0].ns == 820000 && d[0].waits == 40);
	delay_acct__free(a);
}

/*
 * Ties in the ranking: 60 runners of 10 values of ns in 2 cgroups, in no
 * order; the top ones by ns, then pid, then cgroup, as a sort of all gives.
 */
static void test_ranking_ties(void)
{
	struct delay_acct *a = acct_new();
	struct delay_sum d[DELAY_TOP];
	__u64 total = 0;
	size_t n, i;

	if (!CHECK(a))
		return;
	snapshot__reset(&snap);
	row(10, 1, "victim", "/v", false);
	/* pid 100 + i % 30 in cgroup 2 + i / 30; ns 1000 x (i x 7 % 10): 9000 at i = 7, 17, 27... */
	for (i = 0; i < 60; i++)
		entry(a, 10, 1, 100 + (i * 13) % 30, 2 + i / 30, (i * 7 % 10) * 1000, 1);
	finish(a, 0);
	n = delay__of_proc(&snap, 10, 1, DELAY_BY, d, DELAY_TOP, &total);
	CHECK_EQ_U64(n, DELAY_TOP);
	CHECK_EQ_U64(total, 60 * 4500);
	for (i = 0; i < n; i++)
		CHECK(d[i].ns == 9000 && d[i].waits == 1);
	/* those with 9000 (i = 7, 17, 27, 37, 47, 57) by pid, then cgroup */
	CHECK(n == 5 && d[0].pid == 101 && d[0].cgroup_id == 2 && d[1].pid == 101 &&
	      d[1].cgroup_id == 3 && d[2].pid == 111 && d[2].cgroup_id == 2 && d[3].pid == 111 &&
	      d[3].cgroup_id == 3 && d[4].pid == 121 && d[4].cgroup_id == 2);
	/* each runner's side, by the index and by a scan of every pair: the same */
	{
		size_t *x0 = snap.delay_index[0], *x1 = snap.delay_index[1], m, bad = 0;
		struct delay_sum e[DELAY_TOP];
		__u64 t2;

		CHECK(x0 && x1 && snap.delay_keys[0] && snap.delay_keys[1]);
		for (i = 0; i < 64; i++) {
			__u32 pid = 99 + i % 32;
			__u64 cg = 1 + i / 32 + (i % 32 ? 1 : 0);

			n = delay__of_proc(&snap, pid, cg, DELAY_OF, d, DELAY_TOP, &total);
			snap.delay_index[0] = snap.delay_index[1] = NULL;
			m = delay__of_proc(&snap, pid, cg, DELAY_OF, e, DELAY_TOP, &t2);
			snap.delay_index[0] = x0;
			snap.delay_index[1] = x1;
			bad += n != m || total != t2 || memcmp(d, e, n * sizeof(*d));
			bad += pid >= 100 && pid < 130 && n != 1;
		}
		CHECK_EQ_U64(bad, 0);
	}
	delay_acct__free(a);
}

/*
 * Two rows of one (pid, cgroup) (the pid reused in its cgroup within the
 * interval): the rows are searched sorted, not hashed, and the row that
 * names the waiter is the one whose exit hands its pairs back.
 */
static void test_rows_sharing_a_key(void)
{
	struct delay_acct *a = acct_new();
	const struct delay_dead *dead;
	const struct delay_pair *p;
	size_t nr_dead;
	int trial;

	if (!CHECK(a))
		return;
	for (trial = 0; trial < 2; trial++) {
		snapshot__reset(&snap);
		row(10, 1, trial ? "new" : "old", "/v", !trial);
		row(20, 2, "spin", "/a", false);
		row(10, 1, trial ? "old" : "new", "/v", trial);
		entry(a, 10, 1, 20, 2, 1000 * (trial + 1), trial + 1);
		CHECK_EQ_INT(delay_acct__finish(a, &snap, path_of, comm_of, NULL, &dead, &nr_dead),
			     0);
		p = pair(10, 20);
		CHECK(p && p->ns == 1000 && !strcmp(p->by_comm, "spin"));
		CHECK(p && (!strcmp(p->comm, "old") || !strcmp(p->comm, "new")));
		/* handed back exactly when the row that named it exited */
		CHECK(p && nr_dead == (size_t)!strcmp(p->comm, "old"));
		slots_delete(dead, nr_dead);
		if (nr_dead)
			break;
	}
	delay_acct__free(a);
}

int main(void)
{
	test_no_pairs();
	test_rows_sharing_a_key();
	test_changed_pairs_only();
	test_deltas_and_exits();
	test_sums();
	test_ranking_ties();
	test_many_runners();
	snapshot__free(&snap);
	return check_summary();
}
