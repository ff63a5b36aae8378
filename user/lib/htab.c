// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include "htab.h"

static int htab_grow(struct htab *t)
{
	size_t nb = t->nr_buckets ? t->nr_buckets * 2 : 256, i;
	struct hnode **b = calloc(nb, sizeof(*b));

	if (!b)
		return -ENOMEM;
	for (i = 0; i < t->nr_buckets; i++) {
		struct hnode *n = t->b[i], *next;

		for (; n; n = next) {
			next = n->next;
			n->next = b[n->hash & (nb - 1)];
			b[n->hash & (nb - 1)] = n;
		}
	}
	free(t->b);
	t->b = b;
	t->nr_buckets = nb;
	return 0;
}

int htab_add(struct htab *t, struct hnode *n)
{
	struct hnode **head;

	if (t->nr >= t->nr_buckets && htab_grow(t) && !t->nr_buckets)
		return -ENOMEM;
	head = &t->b[n->hash & (t->nr_buckets - 1)];
	n->next = *head;
	*head = n;
	t->nr++;
	return 0;
}

void htab_del(struct htab *t, struct hnode *n)
{
	struct hnode **p = &t->b[n->hash & (t->nr_buckets - 1)];

	for (; *p; p = &(*p)->next) {
		if (*p == n) {
			*p = n->next;
			t->nr--;
			return;
		}
	}
}

void htab_each(struct htab *t, void (*fn)(void *ctx, struct hnode *, __u64), void *ctx, __u64 now)
{
	size_t i;

	for (i = 0; i < t->nr_buckets; i++) {
		struct hnode *n = t->b[i], *next;

		for (; n; n = next) {
			next = n->next;
			fn(ctx, n, now);
		}
	}
}

void htab_free(struct htab *t)
{
	free(t->b);
	t->b = NULL;
	t->nr_buckets = t->nr = 0;
}
