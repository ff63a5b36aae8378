// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Open addressing with linear probing; deleted slots are reused on rehash. */
#include <stdlib.h>
#include <string.h>
#include "proctable.h"
#include "util.h"

enum { SLOT_EMPTY, SLOT_USED, SLOT_DELETED };

/*
 * By process (tgid) and thread (tid) alone, so that the entries of one in
 * several cgroups (it moved) sit in one probe run: proctable__next_of().
 * The idle task's and the overflow entries, one per cgroup, mix the cgroup
 * in.
 */
static size_t key_hash(const struct pmbpf_key *key)
{
	__u64 h = ((__u64)key->tid << 32 | key->tgid) * 0x9e3779b97f4a7c15ULL;

	if (!key->tgid || key->tgid == PMBPF_OVERFLOW_TGID)
		h ^= key->cgroup_id;
	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 29;
	return (size_t)h;
}

static bool key_eq(const struct pmbpf_key *a, const struct pmbpf_key *b)
{
	return a->tgid == b->tgid && a->tid == b->tid && a->cgroup_id == b->cgroup_id;
}

static struct proc_entry *probe(struct proc_entry *slots, size_t cap, const struct pmbpf_key *key,
				bool for_insert)
{
	size_t i = key_hash(key) & (cap - 1), n;
	struct proc_entry *first_free = NULL;

	for (n = 0; n < cap; n++, i = (i + 1) & (cap - 1)) {
		struct proc_entry *e = &slots[i];

		if (e->state == SLOT_EMPTY)
			return for_insert ? (first_free ? first_free : e) : NULL;
		if (e->state == SLOT_DELETED) {
			if (!first_free)
				first_free = e;
			continue;
		}
		if (key_eq(&e->key, key))
			return e;
	}
	return for_insert ? first_free : NULL;
}

static int grow(struct proctable *t)
{
	size_t cap = t->cap ? t->cap : 1024, i;
	struct proc_entry *slots;

	if (t->used * 2 >= cap)
		cap *= 2;
	slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return -1;
	for (i = 0; i < t->cap; i++) {
		if (t->slots[i].state != SLOT_USED)
			continue;
		*probe(slots, cap, &t->slots[i].key, true) = t->slots[i];
	}
	free(t->slots);
	t->slots = slots;
	t->cap = cap;
	t->deleted = 0;
	t->nr_prev = 0; /* its slots moved: no guess until the next sequence */
	return 0;
}

struct proc_entry *proctable__find(struct proctable *t, const struct pmbpf_key *key)
{
	if (!t->cap)
		return NULL;
	return probe(t->slots, t->cap, key, false);
}

/* Its key and its counts: the slot's every cache line. */
static void prefetch_slot(const struct proc_entry *slot)
{
	size_t off;

	for (off = 0; off < sizeof(*slot); off += 64)
		__builtin_prefetch((const char *)slot + off);
}

void proctable__prefetch(const struct proctable *t, const struct pmbpf_key *key)
{
	if (t->cap)
		prefetch_slot(&t->slots[key_hash(key) & (t->cap - 1)]);
}

struct proc_entry *proctable__get(struct proctable *t, const struct pmbpf_key *key)
{
	struct proc_entry *e = proctable__find(t, key);

	if (e)
		return e;
	if ((t->used + t->deleted + 1) * 10 > t->cap * 7 && grow(t))
		return NULL;
	e = probe(t->slots, t->cap, key, true);
	if (e->state == SLOT_DELETED)
		t->deleted--;
	memset(e, 0, sizeof(*e));
	e->key = *key;
	e->state = SLOT_USED;
	t->used++;
	return e;
}

void proctable__seq_begin(struct proctable *t)
{
	__u32 *p = t->prev;
	size_t cap = t->cap_prev;

	t->prev = t->seq;
	t->cap_prev = t->cap_seq;
	t->nr_prev = t->nr_seq;
	t->seq = p;
	t->cap_seq = cap;
	t->nr_seq = 0;
	t->cursor = 0;
}

struct proc_entry *proctable__get_seq(struct proctable *t, const struct pmbpf_key *key)
{
	struct proc_entry *e = NULL;
	__u32 *seq, i;

	if (t->cursor < t->nr_prev) {
		struct proc_entry *g = &t->slots[t->prev[t->cursor]];

		if (g->state == SLOT_USED && key_eq(&g->key, key))
			e = g;
	}
	if (!e) {
		e = proctable__get(t, key);
		if (!e)
			return NULL;
	}
	i = (__u32)(e - t->slots);
	/* found where the last sequence had it: the guess goes on from there */
	if (e->seq_pos < t->nr_prev && t->prev[e->seq_pos] == i)
		t->cursor = e->seq_pos + 1;
	seq = array__room(t->seq, t->nr_seq, &t->cap_seq, sizeof(*seq));
	if (seq) {
		/* (without room, the next sequence guesses from this one's start only) */
		t->seq = seq;
		e->seq_pos = (__u32)t->nr_seq;
		t->seq[t->nr_seq++] = i;
	}
	return e;
}

bool proctable__prefetch_seq(const struct proctable *t, size_t ahead)
{
	if (t->cursor + ahead >= t->nr_prev)
		return false;
	prefetch_slot(&t->slots[t->prev[t->cursor + ahead]]);
	return true;
}

void proctable__remove(struct proctable *t, struct proc_entry *e)
{
	e->state = SLOT_DELETED;
	t->used--;
	t->deleted++;
}

struct proc_entry *proctable__next(struct proctable *t, struct proc_entry *prev)
{
	size_t i = prev ? (size_t)(prev - t->slots) + 1 : 0;

	for (; i < t->cap; i++)
		if (t->slots[i].state == SLOT_USED)
			return &t->slots[i];
	return NULL;
}

struct proc_entry *proctable__next_of(struct proctable *t, __u32 tgid, __u32 tid,
				      struct proc_entry *prev)
{
	struct pmbpf_key key = { .tgid = tgid, .tid = tid };
	size_t i, n;

	if (!t->cap || !tgid || tgid == PMBPF_OVERFLOW_TGID)
		return NULL;
	/* the probe run of their hash: from its start, or after prev, to an empty slot */
	i = prev ? (size_t)(prev - t->slots) + 1 : key_hash(&key);
	for (n = 0; n < t->cap; n++, i++) {
		struct proc_entry *e = &t->slots[i & (t->cap - 1)];

		if (e->state == SLOT_EMPTY)
			return NULL;
		if (e->state == SLOT_USED && e->key.tgid == tgid && e->key.tid == tid)
			return e;
	}
	return NULL;
}

void proctable__free(struct proctable *t)
{
	free(t->slots);
	free(t->seq);
	free(t->prev);
	memset(t, 0, sizeof(*t));
}
