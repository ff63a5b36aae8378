/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ABI shared by the BPF programs and the userspace loader.
 * Fixed-width fields only, explicit padding: these structs are map keys and
 * values and cross the kernel/user boundary unchanged.
 */
#ifndef __PMBPF_H
#define __PMBPF_H

#define PMBPF_MAX_EVENTS 8
#define PMBPF_COMM_LEN	 16
/* Run-queue latency histogram: slot k counts [2^k, 2^(k+1)) us; slot 0 is < 2 us. */
#define PMBPF_RUNQ_SLOTS 24

/* tgid of the entry that collects processes that found the map full */
#define PMBPF_OVERFLOW_TGID 0xffffffffU

/* One counter reading, or the delta between two: bpf_perf_event_value. */
struct pmbpf_reading {
	__u64 value;
	__u64 enabled;
	__u64 running;
};

/* A process in one cgroup. tgid 0 is the idle task of every CPU. */
struct pmbpf_key {
	__u32 tgid;
	__u32 pad;
	__u64 cgroup_id;
};

/* Entry flags (per-CPU slot). */
#define PMBPF_F_DEAD 0x1 /* process exited but its exit record was lost */

/*
 * Cumulative counts of one process in one cgroup, per CPU. The kernel only
 * adds to them; userspace diffs two snapshots, so nothing is lost between
 * reads. start_ns, comm and comm_ns are written only in the slot of the CPU
 * that created the entry or saw the exec (userspace takes the newest).
 */
struct pmbpf_counts {
	__u64 start_ns; /* group leader's start time: tells PID reuse apart */
	__u64 oncpu_ns;
	__u64 offcpu_ns; /* switch-out to switch-in, credited at switch-in */
	__u64 nvcsw;
	__u64 nivcsw;
	__u64 runq_count; /* wakeup (or preemption) to running */
	__u64 runq_total_ns;
	__u64 runq_max_ns; /* largest in read generation runq_max_gen */
	__u64 runq_max_gen;
	__u64 comm_ns; /* when comm was written (insert or exec) */
	__u64 folded; /* overflow entry only: processes folded into it */
	__u32 flags;
	__u32 pad;
	char comm[PMBPF_COMM_LEN];
	__u32 runq_hist[PMBPF_RUNQ_SLOTS];
	struct pmbpf_reading ev[PMBPF_MAX_EVENTS];
};

/* Ring buffer record: a process's final counts, summed over CPUs. */
struct pmbpf_exit {
	struct pmbpf_key key;
	__u64 exit_ns;
	struct pmbpf_counts total;
};

/* Per-CPU self statistics (indices into the stats array). */
enum pmbpf_stat {
	PMBPF_STAT_READ_ERRORS, /* bpf_perf_event_read_value failures */
	PMBPF_STAT_OVERFLOW, /* credits that went to the overflow entry */
	PMBPF_STAT_EXITS, /* exit records sent */
	PMBPF_STAT_EXITS_LOST, /* exit records the ring buffer had no room for */
	PMBPF_STAT_FLUSHES, /* userspace-triggered flushes */
	PMBPF_STAT_WAKEUPS, /* sched_wakeup and sched_wakeup_new calls */
	PMBPF_STAT_WAIT_UNMATCHED, /* run-queue/off-CPU waits dropped: task not the one expected */
	PMBPF_STAT_SPAN_UNMATCHED, /* spans whose start this CPU did not see for this task */
	PMBPF_STAT_NR,
};

#endif /* __PMBPF_H */
