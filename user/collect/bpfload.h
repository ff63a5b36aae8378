/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What every collector does with its BPF object: load it with tp_btf
 * programs where the kernel takes them and raw_tp ones otherwise, attach
 * the flavour loaded, read hash maps entry by entry (in batches where the
 * kernel can), sum per-CPU statistics arrays and read the programs' own
 * run-time statistics.
 */
#ifndef __PMBPF_BPFLOAD_H
#define __PMBPF_BPFLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct bpf_link;
struct bpf_program;

#define BPFLOAD_MAX_PAIRS 8

/* A program in its two flavours: one of them is loaded and attached. */
struct prog_pair {
	struct bpf_program *btf; /* SEC("tp_btf/...") */
	struct bpf_program *raw; /* SEC("raw_tp/...") */
	bool off; /* neither flavour is loaded */
};

struct bpfload {
	bool tp_btf; /* the flavour being loaded, then the one loaded */
	struct prog_pair pairs[BPFLOAD_MAX_PAIRS];
	int nr_pairs;
	struct bpf_program *attached[BPFLOAD_MAX_PAIRS]; /* in attach order */
	struct bpf_link *links[BPFLOAD_MAX_PAIRS];
	int nr_links;
};

/*
 * The caller's part of a load, for the flavour bl->tp_btf: open its
 * skeleton, set rodata, map sizes and other programs' autoload, name its
 * pairs with bpfload__choose(), load. Returns 0, or a negative errno with
 * nothing left open.
 */
typedef int (*bpfload_fn)(struct bpfload *bl, void *ctx);

/*
 * Load with tp_btf programs when try_tp_btf (the kernel has them and raw_tp
 * is not forced), falling back to raw_tp when they fail to load. Returns 0
 * or a negative errno; the messages have been printed.
 */
int bpfload__load(struct bpfload *bl, bool try_tp_btf, bpfload_fn load, void *ctx);
/* Kernel memory of a map (its fdinfo's memlock), 0 when not known. */
__u64 bpfload__map_memlock(int fd);
/* 0 for a skeleton that opened, else the message and a negative errno. */
int bpfload__opened(const void *skel);
/* Autoload the flavour bl->tp_btf of each pair that is not off, and neither of the others. */
int bpfload__choose(struct bpfload *bl, const struct prog_pair *pairs, int nr);
/* Attach the loaded flavour of each pair, in order. Returns 0 or a negative errno (printed). */
int bpfload__attach(struct bpfload *bl);
void bpfload__detach(struct bpfload *bl);

/*
 * Called for each entry of a map: its key and its value, or for a per-CPU
 * map one value per possible CPU, stride bytes apart. A non-zero return
 * stops the walk and is returned by map_reader__for_each().
 */
typedef int (*map_entry_fn)(void *ctx, const void *key, const void *value, size_t stride);

struct map_reader {
	int fd;
	__u32 key_size;
	size_t stride; /* bytes from one CPU's value to the next */
	int nr_values; /* values in an entry: possible CPUs for a per-CPU map, else 1 */
	__u32 max_entries;
	__u32 chunk; /* entries the buffers hold */
	void *keys;
	void *vals;
	void *token; /* where a batch read resumes */
	bool no_batch; /* the kernel cannot read this map in batches */
};

/* A reader for the hash map fd. Returns 0 or a negative errno. */
int map_reader__init(struct map_reader *r, int fd);
/*
 * Every entry of the map, read with BPF_MAP_LOOKUP_BATCH or, on kernels
 * without it for this map, by keys and lookups. fn may delete the entry it
 * is given. Returns 0, fn's non-zero return or a negative errno.
 */
int map_reader__for_each(struct map_reader *r, map_entry_fn fn, void *ctx);
void map_reader__free(struct map_reader *r);

/*
 * Entries 0..nr-1 of a per-CPU array of __u64, each summed over the
 * possible CPUs into sums[]; an entry that cannot be read is 0. Returns 0
 * or a negative errno.
 */
int percpu_array__sum(int fd, __u64 *sums, __u32 nr);

/* A BPF iterator run from userspace: its link, and the output of its last run. */
struct iter_reader {
	struct bpf_link *link;
	char *buf;
	size_t cap;
};

/*
 * Attach prog as an iterator over map's elements (map NULL: an iterator of
 * its own kind, such as tasks). Returns 0 or a negative errno, said.
 */
int iter_reader__attach(struct iter_reader *r, struct bpf_program *prog, struct bpf_map *map);
/*
 * Run it once, to its end: its whole output in r->buf, *len bytes (read
 * before it is used: a caller that deletes entries while an iterator walks
 * a bucket could make it skip one). Returns 0 or a negative errno.
 */
int iter_reader__run(struct iter_reader *r, size_t *len);
void iter_reader__free(struct iter_reader *r);

struct prog_stat; /* snapshot.h */

/* The statistics of up to max programs into out; returns how many were read. */
int prog_stats__read(struct bpf_program *const *progs, int nr, struct prog_stat *out, int max);

#endif
