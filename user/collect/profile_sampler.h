/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * pmbpf profile's sampler: the BPF object of profile.bpf.c loaded, attached
 * (a perf event per CPU, a tracepoint, or the switch programs for
 * --off-cpu), its ring buffers read (new processes, --call-graph dwarf's
 * copied stacks, unwound here), and at the end its stack counts read and
 * symbolized into folded stacks. profile.c (the command) drives it.
 */
#ifndef __PMBPF_PROFILE_SAMPLER_H
#define __PMBPF_PROFILE_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>
#include "profile.h"
#include "bpfload.h"
#include "events.h"
#include "folded.h"

/* Samples per second on each CPU without -F or -c. */
#define PROFILE_DEFAULT_FREQ 99

struct profile_bpf;
struct bpf_link;
struct ring_buffer;
struct symbolizer;
struct unwinder;

struct profile_opts {
	struct event_spec event;
	bool event_given;
	unsigned long long freq;
	unsigned long long period;
	__u64 duration_ns;
	pid_t pid;
	char **argv; /* -- COMMAND: run it and profile it and its children */
	const char *cgroup;
	char cgroup_path[4096];
	const char *output;
	bool svg;
	bool folded; /* --folded given */
	bool offcpu;
	bool raw_tp;
	const char *title;
	bool verbose;
	bool dwarf; /* --call-graph dwarf */
	unsigned int dwarf_size; /* bytes of user stack copied per sample */
};

/* -e sys:name: a tracepoint, sampled at every hit by a tracepoint program */
static inline bool profile_opts__tracepoint(const struct profile_opts *o)
{
	return o->event_given && o->event.type == PERF_TYPE_TRACEPOINT;
}

/*
 * A process's mappings are read at its first sample (and the first after an
 * exec), which may come while the dynamic loader is still mapping its
 * libraries: they are read again a little later, while it lives.
 */
#define RECHECKS 1024

struct recheck {
	pid_t tgid;
	unsigned int round;
	__u64 due_ns;
};

/*
 * --call-graph dwarf: the samples' stacks as unwound in userspace, counted
 * by (process, cgroup, user pcs, kernel stack) like the kernel's counts map.
 */
#define DSTACK_BUCKETS 16384

struct dstack {
	struct dstack *next;
	__u64 hash;
	__u64 weight;
	__u64 cgroup_id;
	__u32 tgid;
	__s32 kern_stack_id;
	char comm[PROFILE_COMM_LEN];
	bool truncated;
	int nr;
	__u64 pcs[];
};

struct dwarf_state {
	struct unwinder *unw;
	struct dstack *buckets[DSTACK_BUCKETS];
	size_t nr_stacks;
	__u64 *pcs; /* UNWIND_MAX_DEPTH, scratch */
	__u64 samples; /* unwound */
	__u64 truncated; /* of them, cut at SIZE (or UNWIND_MAX_DEPTH frames) */
	__u64 lost; /* not counted: out of memory */
	__u64 unwind_ns; /* time spent unwinding */
};

struct profile {
	struct profile_opts *o;
	struct recheck rechecks[RECHECKS]; /* a ring */
	unsigned int nr_rechecks, recheck_head;
	struct profile_bpf *skel;
	struct bpfload bl; /* the sched programs */
	struct bpf_link **links; /* sampling: one per CPU */
	int *fds;
	int nr_links;
	int nr_cpus;
	struct ring_buffer *rb;
	struct symbolizer *sym;
	struct dwarf_state dw;
	__u64 stats[PROFILE_STAT_NR];
};

/*
 * Open, load and attach everything o asks for, on the CPUs online[] says
 * are online; nothing passes a cgroup filter until it is set. Returns 0 or
 * a negative errno, said in one line.
 */
int profile__open(struct profile *p, bool *online);
/* -- COMMAND: let the command's cgroup (o->cgroup) through the filter. */
int profile__set_cgroup_filter(struct profile *p);
/* Re-read the mappings of processes due for it; returns the poll timeout left (ms). */
int profile__recheck_due(struct profile *p, int timeout);
/* Read the ring buffers: poll up to timeout_ms, or what is there now; <0 a libbpf error. */
int profile__poll(struct profile *p, int timeout_ms);
int profile__consume(struct profile *p);
/* A descriptor that is readable when a ring buffer has data (cmdrun__wait()). */
int profile__epoll_fd(const struct profile *p);
/* Stop sampling and the switch programs; the counts stay readable. */
void profile__detach(struct profile *p);
/* After the detach: the last ring buffer records, then the statistics into p->stats. */
void profile__read_stats(struct profile *p);
/*
 * The stack counts read and symbolized: one line per stack, not merged, in
 * the kernel's weights (samples, or nanoseconds off the CPU). The caller
 * frees each line's stack and the array.
 */
int profile__fold(struct profile *p, struct folded **out, size_t *nr_out);
void profile__close(struct profile *p);

#endif
