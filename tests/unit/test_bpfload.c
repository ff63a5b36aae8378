// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The map reader and the per-CPU array sum on real kernel maps (needs
 * CAP_BPF): every entry once with its per-CPU values, in batches and by
 * keys, with the callback deleting entries as it goes.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "check.h"
#include "bpfload.h"

#define NR_ENTRIES 3000 /* more than one batch */

struct key {
	__u32 id;
	__u32 pad;
	__u64 tag;
};

/* 12 bytes: a per-CPU map lays each CPU's value out 16 bytes apart */
struct value {
	__u32 a, b, c;
};

static int ncpu;

struct seen {
	unsigned char count[NR_ENTRIES];
	int fd;
	bool percpu;
	bool delete_odd;
	int bad;
	int stop_after; /* return -EINTR after this many entries, 0: never */
	int calls;
};

static int on_entry(void *ctx, const void *k, const void *v, size_t stride)
{
	const struct key *key = k;
	struct seen *s = ctx;
	int cpu, n = s->percpu ? ncpu : 1;

	if (s->stop_after && ++s->calls > s->stop_after)
		return -EINTR;
	if (key->id >= NR_ENTRIES || key->tag != key->id * 3ULL) {
		s->bad++;
		return 0;
	}
	s->count[key->id]++;
	for (cpu = 0; cpu < n; cpu++) {
		const struct value *val = (const void *)((const char *)v + cpu * stride);

		if (val->a != key->id || val->b != (__u32)cpu || val->c != 7)
			s->bad++;
	}
	if (s->delete_odd && key->id % 2)
		bpf_map_delete_elem(s->fd, key);
	return 0;
}

static int fill(int fd, bool percpu)
{
	size_t stride = percpu ? 16 : sizeof(struct value);
	int n = percpu ? ncpu : 1, cpu;
	char *vals = calloc(n, stride);
	__u32 i;

	if (!vals)
		return -ENOMEM;
	for (i = 0; i < NR_ENTRIES; i++) {
		struct key key = { .id = i, .tag = i * 3ULL };

		for (cpu = 0; cpu < n; cpu++) {
			struct value *v = (void *)(vals + cpu * stride);

			v->a = i;
			v->b = cpu;
			v->c = 7;
		}
		if (bpf_map_update_elem(fd, &key, vals, BPF_NOEXIST)) {
			free(vals);
			return -errno;
		}
	}
	free(vals);
	return 0;
}

static int map_count(int fd)
{
	struct key k, next;
	int n = 0;

	while (!bpf_map_get_next_key(fd, n ? &k : NULL, &next)) {
		k = next;
		n++;
	}
	return n;
}

static void all_once(const struct seen *s)
{
	int i, wrong = 0;

	for (i = 0; i < NR_ENTRIES; i++)
		wrong += s->count[i] != 1;
	CHECK_EQ_INT(wrong, 0);
	CHECK_EQ_INT(s->bad, 0);
}

static void test_map(enum bpf_map_type type, bool batch)
{
	bool percpu = type == BPF_MAP_TYPE_PERCPU_HASH;
	struct map_reader r;
	struct seen s = { .percpu = percpu };
	int fd, err;

	fd = bpf_map_create(type, "test", sizeof(struct key), sizeof(struct value), NR_ENTRIES,
			    NULL);
	if (!CHECK(fd >= 0)) {
		fprintf(stderr, "bpf_map_create: %s (needs root)\n", strerror(errno));
		return;
	}
	s.fd = fd;
	CHECK_EQ_INT(fill(fd, percpu), 0);
	CHECK_EQ_INT(map_reader__init(&r, fd), 0);
	CHECK_EQ_U64(r.stride, percpu ? 16 : sizeof(struct value));
	CHECK_EQ_INT(r.nr_values, percpu ? ncpu : 1);
	r.no_batch = !batch;

	/* twice: the buffers a first read grew serve the second */
	err = map_reader__for_each(&r, on_entry, &s);
	CHECK_EQ_INT(err, 0);
	all_once(&s);
	memset(s.count, 0, sizeof(s.count));
	err = map_reader__for_each(&r, on_entry, &s);
	CHECK_EQ_INT(err, 0);
	all_once(&s);
	/* this kernel reads hash maps in batches: the fallback was not taken */
	CHECK_EQ_INT(r.no_batch, !batch);

	/* deleting the entry in hand neither skips nor repeats any other */
	memset(s.count, 0, sizeof(s.count));
	s.delete_odd = true;
	err = map_reader__for_each(&r, on_entry, &s);
	CHECK_EQ_INT(err, 0);
	all_once(&s);
	CHECK_EQ_INT(map_count(fd), NR_ENTRIES / 2);

	/* the callback's error stops the walk */
	s.delete_odd = false;
	s.stop_after = 10;
	err = map_reader__for_each(&r, on_entry, &s);
	CHECK_EQ_INT(err, -EINTR);
	CHECK_EQ_INT(s.calls, 11);

	map_reader__free(&r);
	close(fd);
}

static void test_empty(void)
{
	struct map_reader r;
	struct seen s = {};
	int fd, batch;

	fd = bpf_map_create(BPF_MAP_TYPE_HASH, "empty", sizeof(struct key), sizeof(struct value),
			    16, NULL);
	if (!CHECK(fd >= 0))
		return;
	CHECK_EQ_INT(map_reader__init(&r, fd), 0);
	for (batch = 0; batch < 2; batch++) {
		r.no_batch = !batch;
		CHECK_EQ_INT(map_reader__for_each(&r, on_entry, &s), 0);
		CHECK_EQ_INT(s.calls + s.bad, 0);
	}
	map_reader__free(&r);
	close(fd);
}

static void test_percpu_array_sum(void)
{
	__u64 *vals = calloc(ncpu, sizeof(*vals)), sums[4] = { 1, 1, 1, 1 };
	__u32 i;
	int fd, cpu;

	fd = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, "stats", sizeof(__u32), sizeof(__u64), 3,
			    NULL);
	if (!CHECK(fd >= 0) || !CHECK(vals)) {
		free(vals);
		return;
	}
	for (i = 0; i < 3; i++) {
		for (cpu = 0; cpu < ncpu; cpu++)
			vals[cpu] = (i + 1) * 100 + cpu;
		CHECK_EQ_INT(bpf_map_update_elem(fd, &i, vals, BPF_ANY), 0);
	}
	/* entry 3 is past the end: read as 0 */
	CHECK_EQ_INT(percpu_array__sum(fd, sums, 4), 0);
	for (i = 0; i < 3; i++)
		CHECK_EQ_U64(sums[i], (i + 1) * 100ULL * ncpu + (__u64)ncpu * (ncpu - 1) / 2);
	CHECK_EQ_U64(sums[3], 0);
	free(vals);
	close(fd);
}

int main(void)
{
	ncpu = libbpf_num_possible_cpus();
	if (!CHECK(ncpu > 0))
		return check_summary();
	test_map(BPF_MAP_TYPE_PERCPU_HASH, true);
	test_map(BPF_MAP_TYPE_PERCPU_HASH, false);
	test_map(BPF_MAP_TYPE_HASH, true);
	test_map(BPF_MAP_TYPE_HASH, false);
	test_empty();
	test_percpu_array_sum();
	return check_summary();
}
