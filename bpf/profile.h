/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ABI of the stack profiler (profile.bpf.c) shared with user/profile.c.
 * Fixed-width fields only, explicit padding: these are map keys and values.
 */
#ifndef __PMBPF_PROFILE_H
#define __PMBPF_PROFILE_H

#define PROFILE_COMM_LEN  16
#define PROFILE_MAX_DEPTH 127 /* PERF_MAX_STACK_DEPTH */

/* One aggregation point: a process in a cgroup with one pair of stacks. */
struct profile_key {
	__u32 tgid;
	__s32 user_stack_id; /* stack map id, or a negative errno */
	__s32 kern_stack_id; /* stack map id, or a negative errno */
	__u32 pad;
	__u64 cgroup_id;
};

/*
 * Weight of a key: samples when sampling on-CPU, nanoseconds off-CPU.
 * comm is the process's (group leader's) name when the entry was created.
 */
struct profile_value {
	__u64 weight;
	char comm[PROFILE_COMM_LEN];
};

/* Ring buffer record: a process seen for the first time (or after exec). */
struct profile_proc {
	__u32 tgid;
	__u32 pad;
};

/* Per-CPU self statistics (indices into the stats array). */
enum profile_stat {
	PROFILE_STAT_SAMPLES, /* on-CPU samples that passed the filters */
	PROFILE_STAT_WEIGHT, /* total weight added to counts (samples or ns) */
	PROFILE_STAT_LOST, /* weight dropped: counts map full */
	PROFILE_STAT_STACK_ERRORS, /* stacks not stored (stack map full or collision) */
	PROFILE_STAT_PROCS_LOST, /* new-process records the ring buffer had no room for */
	PROFILE_STAT_SWITCHES_OUT, /* off-CPU: switch-outs recorded */
	PROFILE_STAT_STARTS_LOST, /* off-CPU: switch-outs not recorded (map full) */
	PROFILE_STAT_NR,
};

#endif /* __PMBPF_PROFILE_H */
