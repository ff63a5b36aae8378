/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * An intrusive chained hash table: the caller embeds a struct hnode in its
 * entries, sets hnode.hash and compares keys itself (serve's processes and
 * threads, prom_rank.c; its cgroups and delay pairs, prom.c). Power-of-two buckets, grown at load 1.
 */
#ifndef __PMBPF_HTAB_H
#define __PMBPF_HTAB_H

#include <stddef.h>
#include <string.h>
#include <linux/types.h>

struct hnode {
	struct hnode *next;
	__u64 hash;
};

struct htab {
	struct hnode **b;
	size_t nr_buckets;
	size_t nr;
};

/* FNV-1a over n bytes, from h (0xcbf29ce484222325ULL to start). */
static inline __u64 hash_bytes(__u64 h, const void *p, size_t n)
{
	const unsigned char *s = p;

	while (n--)
		h = (h ^ *s++) * 0x100000001b3ULL;
	return h;
}

static inline __u64 str_hash(const char *s)
{
	return hash_bytes(0xcbf29ce484222325ULL, s, strlen(s));
}

/* The bucket chain where a node of hash h is, or NULL (an empty table). */
static inline struct hnode *htab_chain(const struct htab *t, __u64 h)
{
	return t->nr_buckets ? t->b[h & (t->nr_buckets - 1)] : NULL;
}

/* Add n (n->hash set); -ENOMEM when the table cannot hold it. */
int htab_add(struct htab *t, struct hnode *n);
/* Remove n, which is in t. */
void htab_del(struct htab *t, struct hnode *n);
/* Visit every node; fn may delete the node it is given. */
void htab_each(struct htab *t, void (*fn)(void *ctx, struct hnode *, __u64), void *ctx, __u64 now);
/* Free the buckets (not the nodes). */
void htab_free(struct htab *t);

#endif
