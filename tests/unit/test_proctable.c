// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The (tgid, cgroup) hash table: insert, find, remove, re-insert, iterate. */
#include <string.h>
#include "check.h"
#include "proctable.h"

#define NR_KEYS 100000

/*
 * Distinct keys that share tgids across cgroups and cgroups across tgids,
 * tgid 0 (the idle tasks) and the overflow tgid included.
 */
static struct pmbpf_key key_of(unsigned int i)
{
	struct pmbpf_key k;

	memset(&k, 0, sizeof(k));
	if (i == 0) {
		k.tgid = PMBPF_OVERFLOW_TGID;
		return k;
	}
	k.tgid = i / 4;
	k.cgroup_id = i % 4 ? 0x100000000ULL * (i % 4) + 1 : 1;
	return k;
}

static bool key_same(const struct pmbpf_key *a, const struct pmbpf_key *b)
{
	return a->tgid == b->tgid && a->cgroup_id == b->cgroup_id;
}

static bool counts_zero(const struct proc_entry *e)
{
	static const struct pmbpf_counts zero;

	return !memcmp(&e->cum, &zero, sizeof(zero)) && !e->gen && !e->row_gen && !e->row;
}

static size_t count_entries(struct proctable *t)
{
	struct proc_entry *e = NULL;
	size_t n = 0;

	while ((e = proctable__next(t, e)))
		n++;
	return n;
}

/* Report the first of many per-key failures only, but count every key once. */
static int failures;

static void fail_once(bool ok, const char *what, unsigned int i)
{
	if (!ok && !failures++)
		fprintf(stderr, "  %s failed first at key %u\n", what, i);
}

static void test_empty(void)
{
	struct proctable t = {};
	struct pmbpf_key k = key_of(1);

	CHECK(!proctable__find(&t, &k));
	CHECK(!proctable__next(&t, NULL));
	proctable__free(&t);
	CHECK(!t.slots && !t.cap && !t.used);
}

static void test_many(void)
{
	struct proctable t = {};
	struct proc_entry *e;
	struct pmbpf_key k;
	unsigned int i;
	size_t cap;

	failures = 0;
	for (i = 0; i < NR_KEYS; i++) {
		k = key_of(i);
		e = proctable__get(&t, &k);
		fail_once(e && key_same(&e->key, &k) && counts_zero(e), "insert", i);
		if (e)
			e->cum.n[PMBPF_N_ONCPU_NS] = i + 1;
	}
	CHECK_EQ_INT(failures, 0);
	CHECK_EQ_U64(t.used, NR_KEYS);
	CHECK_EQ_U64(count_entries(&t), NR_KEYS);
	/* a power of two at most 70% full */
	CHECK(t.cap && !(t.cap & (t.cap - 1)));
	CHECK(t.used * 10 <= t.cap * 7);

	failures = 0;
	for (i = 0; i < NR_KEYS; i++) {
		k = key_of(i);
		e = proctable__find(&t, &k);
		fail_once(e && key_same(&e->key, &k) && e->cum.n[PMBPF_N_ONCPU_NS] == i + 1, "find",
			  i);
	}
	CHECK_EQ_INT(failures, 0);

	/* keys never inserted */
	k = key_of(NR_KEYS);
	CHECK(!proctable__find(&t, &k));
	k = key_of(5);
	k.cgroup_id = 12345;
	CHECK(!proctable__find(&t, &k));

	/* get of a present key returns it, counts kept, nothing added */
	k = key_of(77);
	e = proctable__get(&t, &k);
	CHECK(e && e->cum.n[PMBPF_N_ONCPU_NS] == 78);
	CHECK_EQ_U64(t.used, NR_KEYS);

	/* remove the even keys */
	for (i = 0; i < NR_KEYS; i += 2) {
		k = key_of(i);
		e = proctable__find(&t, &k);
		if (e)
			proctable__remove(&t, e);
	}
	CHECK_EQ_U64(t.used, NR_KEYS / 2);
	failures = 0;
	for (i = 0; i < NR_KEYS; i++) {
		k = key_of(i);
		e = proctable__find(&t, &k);
		if (i % 2)
			fail_once(e && key_same(&e->key, &k) && e->cum.n[PMBPF_N_ONCPU_NS] == i + 1,
				  "find after remove", i);
		else
			fail_once(!e, "removed key gone", i);
	}
	CHECK_EQ_INT(failures, 0);

	/* iteration sees exactly the odd keys */
	failures = 0;
	i = 0;
	for (e = proctable__next(&t, NULL); e; e = proctable__next(&t, e), i++) {
		unsigned int idx = (unsigned int)e->cum.n[PMBPF_N_ONCPU_NS] - 1;

		k = key_of(idx);
		fail_once(idx % 2 && key_same(&e->key, &k), "iterate", i);
	}
	CHECK_EQ_INT(failures, 0);
	CHECK_EQ_U64(i, NR_KEYS / 2);

	/* re-insert the even keys: new entries with zero counts */
	failures = 0;
	for (i = 0; i < NR_KEYS; i += 2) {
		k = key_of(i);
		e = proctable__get(&t, &k);
		fail_once(e && key_same(&e->key, &k) && counts_zero(e), "re-insert", i);
		if (e)
			e->cum.n[PMBPF_N_ONCPU_NS] = i + 1;
	}
	CHECK_EQ_INT(failures, 0);
	CHECK_EQ_U64(t.used, NR_KEYS);
	CHECK_EQ_U64(count_entries(&t), NR_KEYS);
	failures = 0;
	for (i = 0; i < NR_KEYS; i++) {
		k = key_of(i);
		e = proctable__find(&t, &k);
		fail_once(e && e->cum.n[PMBPF_N_ONCPU_NS] == i + 1, "find after re-insert", i);
	}
	CHECK_EQ_INT(failures, 0);

	/*
	 * Churn: short-lived processes come and go. Deleted slots are reclaimed
	 * by rehashing, so the table does not keep growing.
	 */
	cap = t.cap;
	failures = 0;
	for (i = NR_KEYS; i < 6 * NR_KEYS; i++) {
		k = key_of(i);
		e = proctable__get(&t, &k);
		fail_once(e && counts_zero(e), "churn insert", i);
		if (e)
			proctable__remove(&t, e);
	}
	CHECK_EQ_INT(failures, 0);
	CHECK_EQ_U64(t.cap, cap);
	CHECK_EQ_U64(t.used, NR_KEYS);
	CHECK_EQ_U64(count_entries(&t), NR_KEYS);
	k = key_of(NR_KEYS + 3);
	CHECK(!proctable__find(&t, &k));
	k = key_of(NR_KEYS - 1);
	e = proctable__find(&t, &k);
	CHECK(e && e->cum.n[PMBPF_N_ONCPU_NS] == NR_KEYS);

	/* removing each entry while iterating visits every entry once */
	i = 0;
	for (e = proctable__next(&t, NULL); e; e = proctable__next(&t, e), i++)
		proctable__remove(&t, e);
	CHECK_EQ_U64(i, NR_KEYS);
	CHECK_EQ_U64(t.used, 0);
	CHECK(!proctable__next(&t, NULL));

	proctable__free(&t);
	CHECK(!t.slots && !t.cap && !t.used && !t.deleted);
}

/*
 * proctable__get_seq() is proctable__get() whatever the order: the same
 * order as the last sequence, keys gone and new ones among them, another
 * order, and a table that grows mid-sequence (its guesses then wrong).
 */
static void test_seq(void)
{
	struct proctable t = {};
	struct pmbpf_key k;
	struct proc_entry *e;
	unsigned int i, round, n = 3000;

	failures = 0;
	for (round = 0; round < 6; round++) {
		proctable__seq_begin(&t);
		for (i = 1; i <= n; i++) {
			/* round 2: every 7th key gone, a new one instead; round 4: reversed */
			unsigned int j = round == 4 ? n + 1 - i : i;
			bool fresh = round == 0 || (round == 2 && j % 7 == 0);

			if (round >= 2 && j % 7 == 0)
				j += 100000;
			k = key_of(j);
			e = proctable__get_seq(&t, &k);
			fail_once(e && key_same(&e->key, &k), "get_seq returns its key's entry", j);
			if (!e)
				continue;
			if (fresh)
				fail_once(e->cum.n[0] == 0, "a new entry has zero counts", j);
			else
				fail_once(e->cum.n[0] == round, "the entry of the previous round", j);
			e->cum.n[0] = round + 1;
			fail_once(proctable__find(&t, &k) == e, "find agrees with get_seq", j);
		}
		/* round 2's new keys: the ones they replaced are left over, remove them */
		if (round == 2)
			for (i = 7; i <= n; i += 7) {
				k = key_of(i);
				e = proctable__find(&t, &k);
				if (e)
					proctable__remove(&t, e);
			}
		/* round 3 ends with a table twice as large: round 4 begins with no valid guess */
		if (round == 3) {
			proctable__seq_begin(&t);
			for (i = 1; i <= n; i++) {
				k = key_of(n + 200000 + i);
				proctable__get_seq(&t, &k);
			}
			for (i = 1; i <= n; i++) {
				k = key_of(n + 200000 + i);
				proctable__remove(&t, proctable__find(&t, &k));
			}
		}
	}
	CHECK_EQ_INT(failures, 0);
	CHECK_EQ_U64(t.used, n);
	/* a guess for each place of the last sequence, none past it */
	proctable__seq_begin(&t);
	CHECK(proctable__prefetch_seq(&t, n - 1));
	CHECK(!proctable__prefetch_seq(&t, n));
	proctable__free(&t);
}

/* proctable__next_of(): a process's entries in every cgroup, and no other's. */
static void test_next_of(void)
{
	struct proctable t = {};
	struct pmbpf_key k;
	struct proc_entry *e, *next;
	unsigned int i, n, tgid;

	/* key_of(): tgid i / 4 in 4 cgroups; tgid 0's are the idle task's */
	for (i = 0; i < 4000; i++) {
		k = key_of(i);
		proctable__get(&t, &k);
	}
	failures = 0;
	for (tgid = 1; tgid < 1000; tgid++) {
		n = 0;
		for (e = proctable__next_of(&t, tgid, 0, NULL); e;
		     e = proctable__next_of(&t, tgid, 0, e), n++)
			fail_once(e->key.tgid == tgid && !e->key.tid, "next_of: its own entries", tgid);
		fail_once(n == 4, "next_of: all 4 cgroups", tgid);
	}
	CHECK_EQ_INT(failures, 0);
	/* removed while iterated: each entry once, then none */
	n = 0;
	for (e = proctable__next_of(&t, 7, 0, NULL); e; e = next, n++) {
		next = proctable__next_of(&t, 7, 0, e);
		proctable__remove(&t, e);
	}
	CHECK_EQ_INT(n, 4);
	CHECK(!proctable__next_of(&t, 7, 0, NULL));
	CHECK(proctable__next_of(&t, 8, 0, NULL));
	CHECK(!proctable__next_of(&t, 7, 1, NULL));
	CHECK(!proctable__next_of(&t, 0, 0, NULL));
	CHECK(!proctable__next_of(&t, PMBPF_OVERFLOW_TGID, 0, NULL));
	proctable__free(&t);
}

int main(void)
{
	test_next_of();
	test_empty();
	test_many();
	test_seq();
	return check_summary();
}
