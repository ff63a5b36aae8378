// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * --hot: hot_ips entries (process, user address, samples) become, per
 * process, the function with most samples this interval and its share.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "pmbpf.h"
#include "hot.skel.h"
#include "bpfload.h"
#include "cgroup.h"
#include "hot.h"
#include "symbolize.h"
#include "util.h"

/* Processes whose mappings the symbolizer holds, before it starts afresh. */
#define HOT_MAX_KNOWN 1024

struct hot_sample {
	__u32 tgid;
	char *name;
	__u64 n;
};

struct hot_known {
	__u32 tgid;
	__u64 gen; /* the collection that last recorded its mappings */
};

struct hot {
	struct hot_bpf *skel;
	int nr_cpus;
	int *fds;
	struct bpf_link **links;
	int nr_links;
	struct map_reader reader;
	struct symbolizer *sym;
	struct hot_known *known; /* sorted by tgid */
	size_t nr_known, cap_known;
	struct hot_sample *samples;
	size_t nr_samples, cap_samples;
	__u64 gen;
	int err;
};

/* Open and load the sampler's object (bpf/hot.bpf.c) with the filter's knobs. */
static int hot_load(struct hot *h, __u32 tgid, const char *cgroup)
{
	int err;

	h->skel = hot_bpf__open();
	err = bpfload__opened(h->skel);
	if (err)
		return err;
	h->skel->rodata->filter_tgid = tgid;
	if (cgroup) {
		h->skel->rodata->filter_cgroup_id = cgroup__id_of(cgroup);
		h->skel->rodata->filter_cgroup_level = cgroup__level(cgroup);
	}
	h->skel->rodata->hot_task_regs =
		libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_task_pt_regs, NULL) == 1;
	err = hot_bpf__load(h->skel);
	if (err)
		pr_err("--hot: cannot load its BPF program: %s\n", strerror(-err));
	return err;
}

int hot__open(struct hot **hp, __u32 hz, __u32 tgid, const char *cgroup, const bool *online,
	      int nr_cpus)
{
	struct hot *h = calloc(1, sizeof(*h));
	struct bpf_program *prog;
	int cpu, err;

	if (!h)
		return -ENOMEM;
	err = hot_load(h, tgid, cgroup);
	if (err)
		goto fail;
	prog = h->skel->progs.hot_sample;
	h->nr_cpus = nr_cpus;
	h->fds = malloc(nr_cpus * sizeof(*h->fds));
	h->links = calloc(nr_cpus, sizeof(*h->links));
	h->sym = symbolizer__new();
	if (!h->fds || !h->links || !h->sym) {
		err = -ENOMEM;
		goto fail;
	}
	for (cpu = 0; cpu < nr_cpus; cpu++)
		h->fds[cpu] = -1;
	err = map_reader__init(&h->reader, bpf_map__fd(h->skel->maps.hot_ips));
	if (err)
		goto fail;
	for (cpu = 0; cpu < nr_cpus; cpu++) {
		struct perf_event_attr attr = {
			.size = sizeof(attr),
			.type = PERF_TYPE_SOFTWARE,
			.config = PERF_COUNT_SW_CPU_CLOCK,
			.freq = 1,
			.sample_freq = hz,
			.disabled = 1,
		};
		struct bpf_link *link;
		long fd;

		if (!online[cpu])
			continue;
		fd = perf_event_open(&attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			if (errno == ENODEV)
				continue; /* went offline */
			err = -errno;
			pr_err("--hot: cannot open cpu-clock on CPU %d: %s\n", cpu, strerror(-err));
			goto fail;
		}
		h->fds[cpu] = (int)fd;
		link = bpf_program__attach_perf_event(prog, (int)fd);
		if (!link) {
			err = -errno;
			pr_err("--hot: cannot attach to cpu-clock on CPU %d: %s\n", cpu,
			       strerror(-err));
			goto fail;
		}
		h->links[h->nr_links++] = link;
	}
	*hp = h;
	return 0;
fail:
	hot__free(h);
	return err;
}

static int cmp_known(const void *a, const void *b)
{
	const struct hot_known *x = a, *y = b;

	return x->tgid < y->tgid ? -1 : x->tgid > y->tgid;
}

/*
 * Record tgid's mappings the first time it is seen, and again (once per
 * collection) when an address of it has no name: it may have exec'd or
 * mapped a library since.
 */
static void hot_learn(struct hot *h, __u32 tgid, bool again)
{
	struct hot_known want = { .tgid = tgid }, *k, *p;
	size_t i;

	/* bsearch and qsort take no NULL array, even an empty one (C11 7.22.5) */
	k = h->nr_known ? bsearch(&want, h->known, h->nr_known, sizeof(*k), cmp_known) : NULL;
	if (k) {
		if (!again || k->gen == h->gen)
			return;
		k->gen = h->gen;
		symbolizer__add_process(h->sym, (pid_t)tgid);
		return;
	}
	p = array__room(h->known, h->nr_known, &h->cap_known, sizeof(*p));
	if (!p)
		return;
	h->known = p;
	for (i = h->nr_known; i > 0 && h->known[i - 1].tgid > tgid; i--)
		h->known[i] = h->known[i - 1];
	h->known[i] = (struct hot_known){ tgid, h->gen };
	h->nr_known++;
	symbolizer__add_process(h->sym, (pid_t)tgid);
}

static bool unnamed(const char *name)
{
	return !strcmp(name, "[unknown]") || strstr(name, "+0x");
}

static int add_sample(struct hot *h, __u32 tgid, const char *name, __u64 n)
{
	struct hot_sample *s;

	if (h->nr_samples == h->cap_samples) {
		size_t cap = h->cap_samples ? h->cap_samples * 2 : 256;

		s = realloc(h->samples, cap * sizeof(*s));
		if (!s)
			return -ENOMEM;
		h->samples = s;
		h->cap_samples = cap;
	}
	s = &h->samples[h->nr_samples];
	s->name = strdup(name);
	if (!s->name)
		return -ENOMEM;
	s->tgid = tgid;
	s->n = n;
	h->nr_samples++;
	return 0;
}

/* One hot_ips entry: named, kept, and deleted from the map. */
static int on_ip(void *ctx, const void *key, const void *value, size_t stride)
{
	const struct pmbpf_hot_key *k = key;
	struct hot *h = ctx;
	char buf[256];
	const char *name = "[kernel]";
	__u64 n;

	memcpy(&n, value, sizeof(n));
	bpf_map_delete_elem(h->reader.fd, key);
	if (k->ip) {
		hot_learn(h, k->tgid, false);
		name = symbolizer__user(h->sym, (pid_t)k->tgid, k->ip, false, buf, sizeof(buf));
		if (unnamed(name)) {
			hot_learn(h, k->tgid, true);
			name = symbolizer__user(h->sym, (pid_t)k->tgid, k->ip, false, buf,
						sizeof(buf));
		}
	}
	h->err = add_sample(h, k->tgid, name, n);
	return h->err;
}

static int cmp_sample(const void *a, const void *b)
{
	const struct hot_sample *x = a, *y = b;

	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Per process, after the sort: the hottest function and the process's total. */
struct hot_result {
	__u32 tgid;
	const char *name;
	__u64 n, total;
};

static int cmp_result(const void *a, const void *b)
{
	const struct hot_result *x = a, *y = b;

	return x->tgid < y->tgid ? -1 : x->tgid > y->tgid;
}

static void samples_clear(struct hot *h)
{
	size_t i;

	for (i = 0; i < h->nr_samples; i++)
		free(h->samples[i].name);
	h->nr_samples = 0;
}

int hot__collect(struct hot *h, struct snapshot *snap)
{
	struct hot_result *res = NULL, *r;
	size_t i, j, nr = 0;
	int err;

	h->gen++;
	if (h->nr_known > HOT_MAX_KNOWN) {
		/* processes come and go: do not hold the mappings of all that ever ran */
		symbolizer__free(h->sym);
		h->sym = symbolizer__new();
		h->nr_known = 0;
		if (!h->sym)
			return -ENOMEM;
	}
	h->err = 0;
	err = map_reader__for_each(&h->reader, on_ip, h);
	if (err) {
		if (!h->err)
			pr_err("cannot read the hot_ips map: %s\n", strerror(-err));
		goto out;
	}
	if (h->nr_samples > 1)
		qsort(h->samples, h->nr_samples, sizeof(*h->samples), cmp_sample);
	res = calloc(h->nr_samples ? h->nr_samples : 1, sizeof(*res));
	if (!res) {
		err = -ENOMEM;
		goto out;
	}
	/* runs of one process, and within them of one name */
	for (i = 0; i < h->nr_samples; i = j) {
		__u64 n = 0;

		for (j = i; j < h->nr_samples && !cmp_sample(&h->samples[i], &h->samples[j]); j++)
			n += h->samples[j].n;
		if (!nr || res[nr - 1].tgid != h->samples[i].tgid)
			res[nr++] = (struct hot_result){ .tgid = h->samples[i].tgid };
		r = &res[nr - 1];
		r->total += n;
		if (n > r->n) {
			r->n = n;
			r->name = h->samples[i].name;
		}
	}
	for (i = 0; i < snap->nr_rows; i++) {
		struct proc_row *row = &snap->rows[i];
		struct hot_result want = { .tgid = row->pid };

		r = bsearch(&want, res, nr, sizeof(*res), cmp_result);
		if (!r || !r->n)
			continue;
		row->hot = snapshot__strdup(snap, r->name);
		if (!row->hot) {
			err = -ENOMEM;
			goto out;
		}
		row->hot_samples = r->n;
		row->hot_share = (double)r->n / (double)r->total;
	}
out:
	free(res);
	samples_clear(h);
	return err;
}

__u64 hot__map_bytes(const struct hot *h)
{
	const struct bpf_map *map;
	__u64 total = 0;

	bpf_object__for_each_map(map, h->skel->obj)
	{
		if (bpf_map__fd(map) >= 0)
			total += bpfload__map_memlock(bpf_map__fd(map));
	}
	return total;
}

void hot__free(struct hot *h)
{
	int i;

	if (!h)
		return;
	for (i = 0; i < h->nr_links; i++)
		bpf_link__destroy(h->links[i]);
	for (i = 0; h->fds && i < h->nr_cpus; i++)
		if (h->fds[i] >= 0)
			close(h->fds[i]);
	map_reader__free(&h->reader);
	hot_bpf__destroy(h->skel);
	symbolizer__free(h->sym);
	samples_clear(h);
	free(h->samples);
	free(h->known);
	free(h->links);
	free(h->fds);
	free(h);
}
