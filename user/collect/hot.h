/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * --hot: the hottest function of each process, from a low-rate per-CPU
 * cpu-clock sample (the hot_sample program of bpf/hot.bpf.c counts user
 * addresses per process in the hot_ips map; here they become function
 * names).
 */
#ifndef __PMBPF_HOT_H
#define __PMBPF_HOT_H

#include <stdbool.h>
#include <linux/types.h>
#include "snapshot.h"

#define HOT_DEFAULT_HZ 19
#define HOT_MAX_HZ     999

struct hot;

#ifndef PMBPF_MINIMAL
/*
 * Load the sampler (bpf/hot.bpf.c) for the process tgid and the cgroup
 * subtree cgroup (0 and NULL: every task), open a cpu-clock sampling event
 * at hz on each online CPU and attach it. Returns 0 or a negative errno
 * (printed).
 */
int hot__open(struct hot **hp, __u32 hz, __u32 tgid, const char *cgroup, const bool *online,
	      int nr_cpus);
/* Kernel memory of the sampler's maps (memlock). */
__u64 hot__map_bytes(const struct hot *h);
/* Read and empty the map: each row of snap gets its process's hottest function. */
int hot__collect(struct hot *h, struct snapshot *snap);
void hot__free(struct hot *h);
#else
#include <errno.h>
#include "util.h"

/* Static builds (the VM guests' record/stat/doctor) have no symbolizer (libdw). */
static inline int hot__open(struct hot **hp, __u32 hz, __u32 tgid, const char *cgroup,
			    const bool *online, int nr_cpus)
{
	(void)hz, (void)tgid, (void)cgroup, (void)online, (void)nr_cpus;
	*hp = NULL;
	pr_err("--hot needs the full build (libdw, libiberty); this static build has no symbolizer\n");
	return -EOPNOTSUPP;
}

static inline int hot__collect(struct hot *h, struct snapshot *snap)
{
	(void)h, (void)snap;
	return 0;
}

static inline __u64 hot__map_bytes(const struct hot *h)
{
	(void)h;
	return 0;
}

static inline void hot__free(struct hot *h)
{
	(void)h;
}
#endif

#endif
