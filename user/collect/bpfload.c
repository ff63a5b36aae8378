// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "bpfload.h"
#include "snapshot.h"
#include "util.h"

#ifndef ENOTSUPP
#define ENOTSUPP 524 /* the kernel's own, returned as is by the bpf syscall */
#endif

#define CHUNK	  256 /* entries in a first batch */
#define MAX_CHUNK (1U << 20)

/*
 * The verifier gives up with EAGAIN at a pending signal, and libbpf's
 * retries with it: a stop signal (or the stop timer it starts, every
 * 100 ms) failed both flavours, with a false "using raw_tp" on the way.
 * Held until the programs are loaded, it stops pmbpf as one just after
 * the load does.
 */
static int load_stop_held(struct bpfload *bl, bpfload_fn load, void *ctx)
{
	sigset_t stop, old;
	int err;

	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &stop, &old);
	err = load(bl, ctx);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return err;
}

int bpfload__load(struct bpfload *bl, bool try_tp_btf, bpfload_fn load, void *ctx)
{
	int err;

	if (try_tp_btf) {
		bl->tp_btf = true;
		err = load_stop_held(bl, load, ctx);
		if (!err)
			return 0;
		pr_err("tp_btf programs failed to load (%s); using raw_tp\n", strerror(-err));
	}
	bl->tp_btf = false;
	err = load_stop_held(bl, load, ctx);
	if (err)
		pr_err("cannot load BPF programs: %s (run with -v for the verifier log)\n",
		       strerror(-err));
	return err;
}

__u64 bpfload__map_memlock(int fd)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	return file__key_u64(path, "memlock: %llu");
}

int bpfload__opened(const void *skel)
{
	int err = -errno;

	if (skel)
		return 0;
	pr_err("cannot open BPF object: %s\n", strerror(-err));
	return err;
}

int bpfload__choose(struct bpfload *bl, const struct prog_pair *pairs, int nr)
{
	int i;

	if (nr > BPFLOAD_MAX_PAIRS)
		return -E2BIG;
	for (i = 0; i < nr; i++) {
		bpf_program__set_autoload(pairs[i].btf, bl->tp_btf && !pairs[i].off);
		bpf_program__set_autoload(pairs[i].raw, !bl->tp_btf && !pairs[i].off);
		bl->pairs[i] = pairs[i];
	}
	bl->nr_pairs = nr;
	return 0;
}

int bpfload__attach(struct bpfload *bl)
{
	int i, err;

	for (i = 0; i < bl->nr_pairs; i++) {
		struct bpf_program *prog = bl->tp_btf ? bl->pairs[i].btf : bl->pairs[i].raw;
		struct bpf_link *link;

		if (bl->pairs[i].off)
			continue;
		link = bpf_program__attach(prog);
		if (!link) {
			err = -errno;
			pr_err("cannot attach %s: %s\n", bpf_program__name(prog), strerror(-err));
			return err;
		}
		bl->attached[bl->nr_links] = prog;
		bl->links[bl->nr_links++] = link;
	}
	return 0;
}

void bpfload__detach(struct bpfload *bl)
{
	int i;

	for (i = 0; i < bl->nr_links; i++)
		bpf_link__destroy(bl->links[i]);
	bl->nr_links = 0;
}

void map_reader__free(struct map_reader *r)
{
	free(r->keys);
	free(r->vals);
	free(r->token);
	r->keys = r->vals = r->token = NULL;
}

int map_reader__init(struct map_reader *r, int fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	bool percpu;

	memset(r, 0, sizeof(*r));
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	percpu = info.type == BPF_MAP_TYPE_PERCPU_HASH || info.type == BPF_MAP_TYPE_LRU_PERCPU_HASH;
	r->fd = fd;
	r->key_size = info.key_size;
	r->stride = info.value_size;
	r->nr_values = 1;
	if (percpu) {
		/* the kernel lays per-CPU values out 8-byte aligned */
		r->stride = (r->stride + 7) & ~(size_t)7;
		r->nr_values = libbpf_num_possible_cpus();
		if (r->nr_values <= 0)
			return r->nr_values ? r->nr_values : -EINVAL;
	}
	r->max_entries = info.max_entries;
	r->chunk = CHUNK;
	r->keys = malloc((size_t)r->key_size * r->chunk);
	r->vals = malloc(r->stride * r->nr_values * r->chunk);
	/* a hash map's batch token is a bucket number; other maps' a key */
	r->token = calloc(1, r->key_size > sizeof(__u64) ? r->key_size : sizeof(__u64));
	if (!r->keys || !r->vals || !r->token) {
		map_reader__free(r);
		return -ENOMEM;
	}
	return 0;
}

static int reader_grow(struct map_reader *r, bool vals)
{
	__u32 chunk = r->chunk * 2;
	void *p;

	p = realloc(r->keys, (size_t)r->key_size * chunk);
	if (!p)
		return -ENOMEM;
	r->keys = p;
	if (vals) {
		p = realloc(r->vals, r->stride * r->nr_values * chunk);
		if (!p)
			return -ENOMEM;
		r->vals = p;
	}
	r->chunk = chunk;
	return 0;
}

/*
 * Without batches: every key first, then each entry looked up. The walk
 * cannot interleave with fn, which may delete its entry, and a next key
 * asked from a deleted one starts over from the first.
 */
static int for_each_key(struct map_reader *r, map_entry_fn fn, void *ctx)
{
	char *keys;
	__u32 n = 0, i;
	int err;

	for (;;) {
		keys = r->keys;
		if (n == r->max_entries ||
		    bpf_map_get_next_key(r->fd, n ? keys + (size_t)(n - 1) * r->key_size : NULL,
					 keys + (size_t)n * r->key_size))
			break;
		if (++n == r->chunk) {
			err = reader_grow(r, false);
			if (err)
				return err;
		}
	}
	if (n < r->max_entries && errno != ENOENT)
		return -errno;
	for (i = 0; i < n; i++) {
		const char *key = (const char *)r->keys + (size_t)i * r->key_size;

		if (bpf_map_lookup_elem(r->fd, key, r->vals))
			continue; /* deleted in between */
		err = fn(ctx, key, r->vals, r->stride);
		if (err)
			return err;
	}
	return 0;
}

static bool batch_unsupported(int err)
{
	return err == -EINVAL || err == -ENOTSUP || err == -EOPNOTSUPP || err == -ENOTSUPP;
}

int map_reader__for_each(struct map_reader *r, map_entry_fn fn, void *ctx)
{
	size_t entry_size = r->stride * r->nr_values;
	bool first = true;
	__u32 count, i;
	int err;

	if (r->no_batch)
		return for_each_key(r, fn, ctx);
	for (;;) {
		LIBBPF_OPTS(bpf_map_batch_opts, opts);

		count = r->chunk;
		err = bpf_map_lookup_batch(r->fd, first ? NULL : r->token, r->token, r->keys,
					   r->vals, &count, &opts);
		if (err)
			err = -errno;
		if (err && err != -ENOENT) {
			if (first && batch_unsupported(err)) {
				r->no_batch = true;
				return for_each_key(r, fn, ctx);
			}
			/* a bucket holds more entries than the buffers: retried from it */
			if (err == -ENOSPC && r->chunk < MAX_CHUNK) {
				err = reader_grow(r, true);
				if (err)
					return err;
				continue;
			}
			return err;
		}
		for (i = 0; i < count; i++) {
			err = fn(ctx, (const char *)r->keys + (size_t)i * r->key_size,
				 (const char *)r->vals + i * entry_size, r->stride);
			if (err)
				return err;
		}
		if (err == -ENOENT) /* that was the last batch */
			return 0;
		first = false;
	}
}

int percpu_array__sum(int fd, __u64 *sums, __u32 nr)
{
	int ncpu = libbpf_num_possible_cpus(), cpu;
	__u64 *vals;
	__u32 i;

	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	vals = calloc(ncpu, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	for (i = 0; i < nr; i++) {
		sums[i] = 0;
		if (bpf_map_lookup_elem(fd, &i, vals))
			continue;
		for (cpu = 0; cpu < ncpu; cpu++)
			sums[i] += vals[cpu];
	}
	free(vals);
	return 0;
}

int prog_stats__read(struct bpf_program *const *progs, int nr, struct prog_stat *out, int max)
{
	int i, n = 0;

	for (i = 0; i < nr && n < max; i++) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);

		/* bpf_obj_get_info_by_fd: libbpf before 1.2 has no bpf_prog_get_info_by_fd */
		if (bpf_obj_get_info_by_fd(bpf_program__fd(progs[i]), &info, &len))
			continue;
		snprintf(out[n].name, sizeof(out[n].name), "%s", bpf_program__name(progs[i]));
		out[n].run_time_ns = info.run_time_ns;
		out[n].run_cnt = info.run_cnt;
		out[n].recursion_misses = info.recursion_misses;
		n++;
	}
	return n;
}

int iter_reader__attach(struct iter_reader *r, struct bpf_program *prog, struct bpf_map *map)
{
	union bpf_iter_link_info linfo = { .map.map_fd = map ? bpf_map__fd(map) : -1 };
	LIBBPF_OPTS(bpf_iter_attach_opts, opts, .link_info = &linfo,
		    .link_info_len = sizeof(linfo));
	int err;

	r->link = bpf_program__attach_iter(prog, map ? &opts : NULL);
	if (r->link)
		return 0;
	err = -errno;
	pr_err("cannot attach %s: %s\n", bpf_program__name(prog), strerror(-err));
	return err;
}

int iter_reader__run(struct iter_reader *r, size_t *len)
{
	ssize_t n;
	int fd, err = 0;

	*len = 0;
	fd = bpf_iter_create(bpf_link__fd(r->link));
	if (fd < 0)
		return -errno;
	for (;;) {
		if (r->cap - *len < 65536) {
			size_t cap = r->cap ? 2 * r->cap : 1 << 16;
			char *p = realloc(r->buf, cap);

			if (!p) {
				err = -ENOMEM;
				break;
			}
			r->buf = p;
			r->cap = cap;
		}
		n = read(fd, r->buf + *len, r->cap - *len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? -errno : 0;
			break;
		}
		*len += n;
	}
	close(fd);
	return err;
}

void iter_reader__free(struct iter_reader *r)
{
	bpf_link__destroy(r->link);
	free(r->buf);
	memset(r, 0, sizeof(*r));
}
