// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "snapshot.h"
#include "util.h"

struct proc_row *snapshot__add_row(struct snapshot *snap)
{
	struct proc_row *rows =
		array__room(snap->rows, snap->nr_rows, &snap->cap_rows, sizeof(*rows));
	struct proc_row *row;

	if (!rows)
		return NULL;
	snap->rows = rows;
	row = &snap->rows[snap->nr_rows++];
	memset(row, 0, sizeof(*row));
	return row;
}

struct cgroup_row *snapshot__add_cgroup(struct snapshot *snap)
{
	struct cgroup_row *rows =
		array__room(snap->cgroups, snap->nr_cgroups, &snap->cap_cgroups, sizeof(*rows));
	struct cgroup_row *row;

	if (!rows)
		return NULL;
	snap->cgroups = rows;
	row = &snap->cgroups[snap->nr_cgroups++];
	memset(row, 0, sizeof(*row));
	return row;
}

void figures__add(struct figures *dst, const struct figures *src)
{
	int i;

	for (i = 0; i < PMBPF_N_NR; i++)
		dst->n[i] += src->n[i];
	if (src->runq_max_ns > dst->runq_max_ns)
		dst->runq_max_ns = src->runq_max_ns;
	for (i = 0; i < PMBPF_RUNQ_SLOTS; i++)
		dst->runq_hist[i] += src->runq_hist[i];
	for (i = 0; i < PMBPF_MAX_EVENTS; i++) {
		dst->ev[i].value += src->ev[i].value;
		dst->ev[i].enabled += src->ev[i].enabled;
		dst->ev[i].running += src->ev[i].running;
	}
}

double figures__runq_pct(const struct figures *f, double q)
{
	__u64 n = 0, target, seen = 0;
	int i;

	for (i = 0; i < PMBPF_RUNQ_SLOTS; i++)
		n += f->runq_hist[i];
	if (!n || q <= 0 || q > 1)
		return NAN;
	target = (__u64)ceil(q * (double)n);
	for (i = 0; i < PMBPF_RUNQ_SLOTS; i++) {
		seen += f->runq_hist[i];
		if (seen >= target)
			break;
	}
	if (i >= PMBPF_RUNQ_SLOTS - 1)
		return (double)f->runq_max_ns;
	/* upper bound of slot i, but never above the largest latency seen */
	{
		double bound = (double)pmbpf_runq_slot_upper_ns(i);

		if (f->runq_max_ns && bound > (double)f->runq_max_ns)
			bound = (double)f->runq_max_ns;
		return bound;
	}
}

/* Blocks of strings, newest first; the oldest is kept across resets. */
struct snapshot_strings {
	struct snapshot_strings *next;
	size_t used, size;
	char buf[];
};

#define STRINGS_BLOCK 16384

const char *snapshot__strdup(struct snapshot *snap, const char *s)
{
	struct snapshot_strings *b = snap->strings;
	size_t len = strlen(s) + 1;
	char *p;

	if (!b || b->size - b->used < len) {
		size_t size = len > STRINGS_BLOCK ? len : STRINGS_BLOCK;

		b = malloc(sizeof(*b) + size);
		if (!b)
			return NULL;
		b->next = snap->strings;
		b->used = 0;
		b->size = size;
		snap->strings = b;
	}
	p = b->buf + b->used;
	memcpy(p, s, len);
	b->used += len;
	return p;
}

static void strings_free(struct snapshot *snap, bool keep_oldest)
{
	struct snapshot_strings *b = snap->strings, *next;

	for (; b && (b->next || !keep_oldest); b = next) {
		next = b->next;
		free(b);
	}
	if (b)
		b->used = 0;
	snap->strings = b;
}

void snapshot__reset(struct snapshot *snap)
{
	snap->nr_rows = 0;
	snap->nr_threads = 0;
	snap->threads_on = false;
	snap->nr_cgroups = 0;
	snap->nr_delays = 0;
	memset(snap->system, 0, sizeof(snap->system));
	strings_free(snap, true);
}

void snapshot__free(struct snapshot *snap)
{
	strings_free(snap, false);
	free(snap->rows);
	snap->rows = NULL;
	snap->nr_rows = snap->cap_rows = 0;
	free(snap->threads);
	snap->threads = NULL;
	snap->nr_threads = snap->cap_threads = 0;
	free(snap->cgroups);
	snap->cgroups = NULL;
	snap->nr_cgroups = snap->cap_cgroups = 0;
	free(snap->delays);
	free(snap->delay_index[0]);
	free(snap->delay_index[1]);
	free(snap->delay_keys[0]);
	free(snap->delay_keys[1]);
	free(snap->delay_hash[0]);
	free(snap->delay_hash[1]);
	snap->delay_hash[0] = snap->delay_hash[1] = NULL;
	snap->delay_hash_mask = 0;
	snap->delay_index[0] = snap->delay_index[1] = NULL;
	snap->delay_keys[0] = snap->delay_keys[1] = NULL;
	snap->cap_delay_index = 0;
	snap->delays = NULL;
	snap->nr_delays = snap->cap_delays = 0;
}

static int cmp_cpu(const void *a, const void *b)
{
	const struct proc_row *ra = a, *rb = b;

	if (ra->f.n[PMBPF_N_ONCPU_NS] != rb->f.n[PMBPF_N_ONCPU_NS])
		return ra->f.n[PMBPF_N_ONCPU_NS] < rb->f.n[PMBPF_N_ONCPU_NS] ? 1 : -1;
	if (ra->pid != rb->pid)
		return ra->pid < rb->pid ? -1 : 1;
	if (ra->tid != rb->tid)
		return ra->tid < rb->tid ? -1 : 1;
	return ra->cgroup_id < rb->cgroup_id ? -1 : ra->cgroup_id > rb->cgroup_id;
}

/*
 * rows in cmp_cpu()'s order by radix__order() (its keys: ~on-CPU time,
 * pid and tid, cgroup), then moved in place cycle by cycle: at 10,000 rows
 * qsort's comparisons and moves of the large rows cost more. 0, or -ENOMEM.
 */
static int sort_cpu_radix(struct proc_row *rows, size_t n)
{
	__u64 *keys = calloc(n, 3 * sizeof(*keys));
	size_t *order = malloc(n * sizeof(*order));
	struct proc_row tmp;
	size_t i, j, k;
	int err = -ENOMEM;

	if (!keys || !order)
		goto out;
	for (i = 0; i < n; i++) {
		keys[3 * i] = ~rows[i].f.n[PMBPF_N_ONCPU_NS];
		keys[3 * i + 1] = (__u64)rows[i].pid << 32 | rows[i].tid;
		keys[3 * i + 2] = rows[i].cgroup_id;
	}
	err = radix__order(keys, 3, n, order);
	if (err)
		goto out;
	/* row j takes row order[j]; order[j] = j marks j done */
	for (i = 0; i < n; i++) {
		if (order[i] == i)
			continue;
		tmp = rows[i];
		for (j = i;; j = k) {
			k = order[j];
			order[j] = j;
			if (k == i) {
				rows[j] = tmp;
				break;
			}
			rows[j] = rows[k];
		}
	}
out:
	free(keys);
	free(order);
	return err;
}

void snapshot__sort_cpu(struct snapshot *snap)
{
	/* qsort's array must not be NULL, even when empty (C11 7.22.5) */
	if (snap->nr_rows > 1 && sort_cpu_radix(snap->rows, snap->nr_rows))
		qsort(snap->rows, snap->nr_rows, sizeof(*snap->rows), cmp_cpu);
	if (snap->nr_threads > 1 && sort_cpu_radix(snap->threads, snap->nr_threads))
		qsort(snap->threads, snap->nr_threads, sizeof(*snap->threads), cmp_cpu);
}

static int cmp_path(const void *a, const void *b)
{
	const struct cgroup_row *ca = a, *cb = b;

	const unsigned char *a_ = (const void *)ca->path, *b_ = (const void *)cb->path;

	if (!a_ || !b_)
		return !a_ - !b_;
	/* '/' sorts first, so that a cgroup's children follow it directly */
	for (; *a_ && *a_ == *b_; a_++, b_++)
		;
	return (*a_ == '/' ? 1 : *a_ ? *a_ + 1 : 0) - (*b_ == '/' ? 1 : *b_ ? *b_ + 1 : 0);
}

void snapshot__sort_cgroups(struct snapshot *snap)
{
	if (snap->nr_cgroups > 1)
		qsort(snap->cgroups, snap->nr_cgroups, sizeof(*snap->cgroups), cmp_path);
}
