/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ABI of the stack profiler (profile.bpf.c) shared with user/cmd/profile.c.
 * Fixed-width fields only, explicit padding: these are map keys and values.
 */
#ifndef __PMBPF_PROFILE_H
#define __PMBPF_PROFILE_H

#define PROFILE_COMM_LEN  16
#define PROFILE_MAX_DEPTH 127 /* PERF_MAX_STACK_DEPTH */
/* --call-graph dwarf,SIZE: at most this many bytes of user stack per sample. */
#define PROFILE_DWARF_MAX_SIZE 32768

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

/*
 * --call-graph dwarf: user registers as DWARF numbers them, for the unwinder.
 * x86_64: ip, sp, bp. arm64: pc, sp, x29 (frame pointer), x30 (link register).
 */
enum profile_reg {
	PROFILE_REG_IP,
	PROFILE_REG_SP,
	PROFILE_REG_FP,
	PROFILE_REG_LR, /* arm64 only */
	PROFILE_NR_REGS,
};

/* struct profile_ustack flags */
#define PROFILE_USTACK_CLAMPED 1 /* the copy stops at the end of the stack mapping */

/*
 * Ring buffer record of --call-graph dwarf: one sample, with the user
 * registers and size bytes of user stack from regs[PROFILE_REG_SP]; the
 * record is the header and the requested size (userspace's stack_size).
 */
struct profile_ustack {
	__u32 tgid;
	__u32 tid;
	__u64 cgroup_id;
	__s32 kern_stack_id; /* stack map id, or a negative errno */
	__u32 size; /* bytes of stack copied (fewer when clamped or unreadable) */
	__u32 flags;
	__u32 pad;
	__u64 regs[PROFILE_NR_REGS];
	char comm[PROFILE_COMM_LEN];
	__u8 stack[];
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
	PROFILE_STAT_USTACKS_LOST, /* dwarf: stack copies the ring buffer had no room for */
	PROFILE_STAT_USTACKS_UNREAD, /* dwarf: user stacks that could not be read at all */
	PROFILE_STAT_NR,
};

#endif /* __PMBPF_PROFILE_H */
