/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ABI shared by the BPF programs and the userspace loader.
 * Fixed-width fields only, explicit padding: these structs are map keys and
 * values and cross the kernel/user boundary unchanged.
 */
#ifndef __PMBPF_H
#define __PMBPF_H

#include "runq_slot.h"

#define PMBPF_MAX_EVENTS 8
#define PMBPF_COMM_LEN	 16
/*
 * The counting events of the shared counts map (counts_shared), and so of a
 * thread's counts in its task storage (struct task_state): with more,
 * switches credit the per-CPU map.
 */
#define PMBPF_SHARED_EVENTS 4

/* tgid of the entry that collects processes that found the map full */
#define PMBPF_OVERFLOW_TGID 0xffffffffU

/* One counter reading, or the delta between two: bpf_perf_event_value. */
struct pmbpf_reading {
	__u64 value;
	__u64 enabled;
	__u64 running;
};

/*
 * A process in one cgroup. tgid 0 is the idle task of every CPU. With
 * per-thread counting (--threads) an entry is one thread of it: tid is the
 * thread's id; otherwise tid is 0.
 */
struct pmbpf_key {
	__u32 tgid;
	__u32 tid;
	__u64 cgroup_id;
};

/*
 * The plain counts of a process: pmbpf_counts.n[] and figures.n[]. The
 * kernel only adds to them; userspace sums them over CPUs, diffs them
 * between reads and adds them into cgroups by looping over this list. What
 * each one is called, its unit and help, and which outputs show it, is its
 * entry in the figure catalog (user/account/catalog.c): a new count is a line here,
 * the BPF code that fills it, and that entry.
 */
enum pmbpf_count {
	PMBPF_N_ONCPU_NS, /* on-CPU time */
	PMBPF_N_OFFCPU_NS, /* switch-out (or wakeup of a thread first seen waiting) to switch-in */
	PMBPF_N_NVCSW, /* voluntary switches out */
	PMBPF_N_NIVCSW, /* involuntary switches out */
	PMBPF_N_RUNQ_COUNT, /* waits: wakeup (or preemption) to running */
	PMBPF_N_RUNQ_TOTAL_NS, /* their total length */
	PMBPF_N_MIGRATIONS, /* switch-ins on another CPU than the thread's last switch-out */
	/*
	 * The off-CPU time split by the state the thread left in:
	 * OFFCPU_NS = OFFCPU_SLEEP_NS + OFFCPU_BLOCKED_NS + RUNQ_TOTAL_NS +
	 * OFFCPU_OTHER_NS, exactly, per thread.
	 */
	PMBPF_N_OFFCPU_SLEEP_NS, /* switch-out to wakeup, left asleep (S, or D|NOLOAD: idle) */
	PMBPF_N_OFFCPU_BLOCKED_NS, /* switch-out to wakeup, left uninterruptible (D) */
	PMBPF_N_OFFCPU_OTHER_NS, /* the rest: stopped, traced, parked, a wakeup not seen */
	PMBPF_N_NR,
};

/* Entry flags (per-CPU slot). */
#define PMBPF_F_DEAD 0x1 /* process exited but its exit record was lost */
/* --threads: the thread was its process's last (with PMBPF_F_DEAD, or in an exit record) */
#define PMBPF_F_PROC_EXIT 0x2

/*
 * Cumulative counts of one process in one cgroup, per CPU. The kernel only
 * adds to them; userspace diffs two snapshots, so nothing is lost between
 * reads. start_ns, comm and comm_ns are written only in the slot of the CPU
 * that created the entry or saw the exec (userspace takes the newest).
 */
struct pmbpf_counts {
	__u64 start_ns; /* group leader's start time: tells PID reuse apart */
	__u64 n[PMBPF_N_NR]; /* enum pmbpf_count */
	__u64 runq_max_ns; /* largest in read generation runq_max_gen */
	__u64 runq_max_gen;
	__u64 comm_ns; /* when comm was written (insert or exec) */
	__u64 folded; /* overflow entry only: processes folded into it */
	__u32 flags;
	__u32 state; /* counts_slots: the slot's, PMBPF_SLOT_* (added to only); else 0 */
	char comm[PMBPF_COMM_LEN]; /* the group leader's; --threads: the thread's */
	__u32 runq_hist[PMBPF_RUNQ_SLOTS];
	struct pmbpf_reading ev[PMBPF_MAX_EVENTS];
};

/* Ring buffer record: a process's (--threads: a thread's) final counts, summed over CPUs. */
struct pmbpf_exit {
	struct pmbpf_key key;
	__u64 exit_ns;
	struct pmbpf_counts total;
};

/*
 * The shared counts map's entries (counts_slots, an array that userspace
 * maps into its memory and reads without a system call): the key, then
 * the counts, whose state says whether the slot is read. counts_index maps
 * a key to its slot. A slot is written from a struct pmbpf_exit 8 bytes in
 * (the key over the end of its key and exit_ns, then its counts).
 */
struct pmbpf_slot {
	struct pmbpf_key key;
	struct pmbpf_counts c;
};

_Static_assert(__builtin_offsetof(struct pmbpf_slot, c) + 8 ==
		       __builtin_offsetof(struct pmbpf_exit, total),
	       "a slot is written from a struct pmbpf_exit, 8 bytes in");

/*
 * A slot's state: 0 unused (or being made), LIVE once indexed (a
 * compare-and-swap from 0: slot_live()), at least FREED once out of the
 * index (added: the programs that load on 5.10 free slots too). Making it
 * again writes 0 first.
 */
/* slot_live()'s 64-bit word: flags, then state in its upper half */
_Static_assert(__builtin_offsetof(struct pmbpf_counts, state) ==
			       __builtin_offsetof(struct pmbpf_counts, flags) + 4 &&
		       __builtin_offsetof(struct pmbpf_counts, flags) % 8 == 0,
	       "flags and state share a 64-bit word");
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "slot_live() takes state as the upper half of a little-endian word"
#endif

#define PMBPF_SLOT_LIVE	 1
#define PMBPF_SLOT_FREED 2

/* Per-CPU self statistics (indices into the stats array). */
enum pmbpf_stat {
	PMBPF_STAT_READ_ERRORS, /* bpf_perf_event_read_value failures */
	PMBPF_STAT_OVERFLOW, /* credits that went to the overflow entry */
	PMBPF_STAT_EXITS, /* exit records sent */
	PMBPF_STAT_EXITS_DROPPED, /* exit records the ring buffer had no room for (entry kept) */
	PMBPF_STAT_FLUSHES, /* userspace-triggered flushes */
	PMBPF_STAT_WAKEUPS, /* sched_wakeup and sched_wakeup_new calls */
	PMBPF_STAT_WAIT_UNMATCHED, /* run-queue/off-CPU waits dropped: task not the one expected */
	PMBPF_STAT_SPAN_UNMATCHED, /* spans whose start this CPU did not see for this task */
	PMBPF_STAT_DELAY_DROPPED, /* --delays: credits that found the delays map full */
	PMBPF_STAT_EXITS_LOST, /* dropped exit records whose entry was gone: counts lost */
	PMBPF_STAT_ONCPU_GAP_NS, /* run-queue clock time of monitored spans the scheduler charged no task */
	PMBPF_STAT_OFFLINE_NS, /* run-queue clock time of idle spans on an offline run queue (CPU hotplug) */
	PMBPF_STAT_RAN_FULL, /* folds at a switch: its CPU's list of threads that ran was full */
	PMBPF_STAT_WAKEUP_UNSEEN, /* wakeup programs: switch-ins after a seen sleep with no wakeup seen */
	PMBPF_STAT_NR,
};

/* --hot: samples of one user address of one process (key of the hot_ips map). */
struct pmbpf_hot_key {
	__u32 tgid;
	__u32 pad;
	__u64 ip; /* 0: the sample was in the kernel, with no user address known */
};

/*
 * --delays: the run-queue waits of a process in a cgroup, credited to the
 * process (in its cgroup) that ran on the waiting task's CPU meanwhile
 * (key of the delays map; cumulative, only added to by the kernel).
 */
struct pmbpf_delay_key {
	__u32 tgid; /* the process that waited */
	__u32 by_tgid; /* the one that ran: 0 is the idle task */
	__u64 cgroup_id;
	__u64 by_cgroup_id;
};

struct pmbpf_delay_val {
	__u64 ns; /* waiting time while by ran */
	__u64 waits; /* waits in which by ran */
};

/* A delay slot's state: 0 while unused or being made, then LIVE, FREED once out of the index. */
#define PMBPF_DELAY_LIVE  1
#define PMBPF_DELAY_FREED 2

/*
 * --delays: a pair's slot of the delays map (delay_slots: an array that
 * userspace maps and walks; delay_index maps a key to its slot).
 */
struct pmbpf_delay_slot {
	struct pmbpf_delay_key k;
	struct pmbpf_delay_val v;
	__u32 gen; /* delay_gen (its low 32 bits) when last added to: a read takes the pairs that grew */
	__u32 state; /* PMBPF_DELAY_* */
};

#endif /* __PMBPF_H */
