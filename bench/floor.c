// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The floor of a refresh: a plain batch read of another process's BPF maps
 * (every hash and array map it holds; an mmapable array through a mapping,
 * as pmbpf reads its counts slots), once an interval, nothing else.
 *
 *   floor PID [INTERVAL_MS]
 *
 * finds PID's maps in /proc/PID/fdinfo, prints their names and sizes, then
 * "refresh N entries" after each read; stops on SIGINT or SIGTERM. It only
 * looks (bpf_map_lookup_batch): PID's own reads and deletes go on.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#define MAX_MAPS 64

struct map {
	int fd;
	struct bpf_map_info info;
	void *keys, *values;
	size_t vsize; /* one value as the batch returns it (per-CPU: times CPUs) */
	const char *mem; /* an mmapable array, mapped: read without a system call */
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static bool batchable(__u32 type)
{
	switch (type) {
	case BPF_MAP_TYPE_HASH:
	case BPF_MAP_TYPE_PERCPU_HASH:
	case BPF_MAP_TYPE_LRU_HASH:
	case BPF_MAP_TYPE_LRU_PERCPU_HASH:
	case BPF_MAP_TYPE_ARRAY:
	case BPF_MAP_TYPE_PERCPU_ARRAY:
		return true;
	default:
		return false;
	}
}

static bool percpu(__u32 type)
{
	return type == BPF_MAP_TYPE_PERCPU_HASH || type == BPF_MAP_TYPE_LRU_PERCPU_HASH ||
	       type == BPF_MAP_TYPE_PERCPU_ARRAY;
}

/* The map ids PID holds, from its fdinfo. */
static int map_ids(int pid, __u32 *ids, int max)
{
	char path[320], line[256];
	struct dirent *de;
	int n = 0, i;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo", pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d)) && n < max) {
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/fdinfo/%s", pid, de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			unsigned int id;

			if (sscanf(line, "map_id: %u", &id) != 1)
				continue;
			for (i = 0; i < n && ids[i] != id; i++)
				;
			if (i == n)
				ids[n++] = id;
		}
		fclose(f);
	}
	closedir(d);
	return n;
}

/*
 * An mmapable array (pmbpf's counts_slots): its elements copied through
 * the mapping up to the first all-zero one (pmbpf takes its slots from the
 * start, and one never used is all zero); returns the elements copied.
 */
static long read_mapped(struct map *m)
{
	long i;

	for (i = 0; i < (long)m->info.max_entries; i++) {
		const char *e = m->mem + i * m->vsize;
		size_t j;

		for (j = 0; j < m->vsize && !e[j]; j++)
			;
		if (j == m->vsize)
			break;
		memcpy((char *)m->values + i * m->vsize, e, m->vsize);
	}
	return i;
}

/* Read every entry of m in batches; returns the entries read. */
static long read_map(struct map *m)
{
	__u32 batch = m->info.max_entries, count;
	__u64 in = 0, out = 0;
	void *inp = NULL;
	long total = 0;
	int err;

	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	if (m->mem)
		return read_mapped(m);
	for (;;) {
		count = batch - total;
		if (!count)
			break;
		err = bpf_map_lookup_batch(m->fd, inp, &out,
					   (char *)m->keys + total * m->info.key_size,
					   (char *)m->values + total * m->vsize, &count, &opts);
		total += count;
		if (err)
			break; /* ENOENT: the end */
		in = out;
		inp = &in;
	}
	return total;
}

int main(int argc, char **argv)
{
	__u32 ids[MAX_MAPS];
	struct map maps[MAX_MAPS];
	int nr = 0, n, i, pid, ncpus = libbpf_num_possible_cpus();
	long ms = argc > 2 ? atol(argv[2]) : 1000, refresh = 0;
	struct timespec period;

	if (argc < 2 || (pid = atoi(argv[1])) <= 0 || ms <= 0) {
		fprintf(stderr, "usage: floor PID [INTERVAL_MS]\n");
		return 2;
	}
	period = (struct timespec){ ms / 1000, (ms % 1000) * 1000000L };
	n = map_ids(pid, ids, MAX_MAPS);
	if (n < 0) {
		fprintf(stderr, "floor: /proc/%d/fdinfo: %s\n", pid, strerror(-n));
		return 1;
	}
	for (i = 0; i < n; i++) {
		struct map *m = &maps[nr];
		__u32 len = sizeof(m->info);

		memset(m, 0, sizeof(*m));
		m->fd = bpf_map_get_fd_by_id(ids[i]);
		if (m->fd < 0 || bpf_obj_get_info_by_fd(m->fd, &m->info, &len) ||
		    !batchable(m->info.type) || !m->info.max_entries) {
			if (m->fd >= 0)
				close(m->fd);
			continue;
		}
		m->vsize = ((m->info.value_size + 7) & ~7U) * (percpu(m->info.type) ? ncpus : 1);
		if (m->info.type == BPF_MAP_TYPE_ARRAY && (m->info.map_flags & BPF_F_MMAPABLE)) {
			size_t len = m->vsize * m->info.max_entries;
			void *p = mmap(NULL, len, PROT_READ, MAP_SHARED, m->fd, 0);

			if (p == MAP_FAILED) {
				fprintf(stderr, "floor: %s: mmap: %s\n", m->info.name,
					strerror(errno));
				return 1;
			}
			m->mem = p;
		}
		m->keys = calloc(m->info.max_entries, m->info.key_size);
		m->values = calloc(m->info.max_entries, m->vsize);
		if (!m->keys || !m->values) {
			fprintf(stderr, "floor: %s: out of memory\n", m->info.name);
			return 1;
		}
		printf("map %s type %u entries %u value %zu\n", m->info.name, m->info.type,
		       m->info.max_entries, m->vsize);
		nr++;
	}
	if (!nr) {
		fprintf(stderr, "floor: process %d holds no hash or array map\n", pid);
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	printf("ready\n");
	fflush(stdout);
	while (!stop) {
		long entries = 0;

		for (i = 0; i < nr; i++)
			entries += read_map(&maps[i]);
		printf("refresh %ld entries %ld\n", ++refresh, entries);
		fflush(stdout);
		nanosleep(&period, NULL);
	}
	return 0;
}
