/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The programs' knobs (rodata set by userspace before load), the state they
 * keep per CPU and per thread, their maps, and the self statistics.
 *
 * Part of pmbpf.bpf.c. Includes the headers it uses; vmlinux.h, bpf_helpers.h,
 * bpf_core_read.h and bpf_tracing.h come first.
 */
#ifndef __PMBPF_STATE_BPF_H
#define __PMBPF_STATE_BPF_H

#include "pmbpf.h"

/* Kernel constants vmlinux.h does not carry (macros, not types) */
#define TASK_RUNNING	     0 /* task states: sched_switch's prev_state */
#define TASK_INTERRUPTIBLE   0x1
#define TASK_UNINTERRUPTIBLE 0x2
#define TASK_DEAD	     0x80
#define TASK_NOLOAD	     0x400
#define TASK_RTLOCK_WAIT     0x1000
#define PF_EXITING	     0x4 /* task_struct::flags: in do_exit() */
#define EEXIST		     17
#define E2BIG		     7
#define EINVAL		     22

const volatile __u32 nr_cpus = 1;
const volatile __u32 nr_events = 0;
/*
 * 1 for counters the PMU may multiplex (hardware, cache, raw): read with
 * their enabled/running times. Software counters always run, and reading
 * them without times skips a clock read per counter.
 */
const volatile __u8 ev_timed[PMBPF_MAX_EVENTS] = {};
/*
 * 1 for cpu-clock and task-clock: on a per-CPU counter their delta between
 * two attribution points is the span's length, which is already measured
 * here; reading them would cost a perf read each for the same figure.
 */
const volatile __u8 ev_clock[PMBPF_MAX_EVENTS] = {};
/*
 * 1 for context-switches: the kernel adds 1 to it per switch-out of the
 * task (perf_event_task_sched_out(), right after sched_switch), which this
 * program sees; the same count without a perf read per switch.
 */
const volatile __u8 ev_switches[PMBPF_MAX_EVENTS] = {};
/*
 * tp_btf flavour: the counts map is one shared (not per-CPU) hash, its
 * memory not multiplied by CPUs. A switch credits the thread's task storage
 * (a thread runs on one CPU at a time: no atomics), and a thread's counts
 * move to its entry with atomic adds only when it folds: at its last
 * switch, at a cgroup move, and before each read (the fold iterator). The
 * idle task (tgid 0, one per CPU, no task storage) has per-CPU counts of its
 * own (idle_counts). false: the counts map is a per-CPU hash that the
 * switch credits directly (raw_tp flavour, no task storage; the fallback).
 */
const volatile bool counts_shared = false;
/*
 * The sched_wakeup programs are attached: they time each wakeup and leave
 * each CPU's last wakeup clock. false (tp_btf on a kernel with sched_info):
 * the switch program reads the scheduler's own record of when the task
 * switched in was queued, and no program runs at wakeups (one call less
 * per wakeup: about 150 ns of dispatch in this VM).
 */
const volatile bool wakeup_progs = true;
/* The kernel keeps each task's sched_info (kfeatures.h, FEAT_SCHED_INFO). */
const volatile bool sched_info_kept = false;
/*
 * --threads: an entry per thread (pmbpf_key.tid), its name in comm, an exit
 * record at every thread's last switch; no deferral between threads.
 */
const volatile bool per_thread = false;

/*
 * Counter fds, index (bank * nr_events + event) * nr_cpus + cpu; filled by
 * userspace. A CPU's counters die when it goes offline: userspace reopens
 * them in the CPU's other bank and runs rebase there.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} events SEC(".maps");

/*
 * How a thread left the CPU (sched_switch's prev_state), for the split of
 * its off-CPU time: the order of PMBPF_N_OFFCPU_SLEEP_NS and the two after
 * it. OFF_OTHER is also a preempted (still runnable) thread's: its time off
 * CPU is all run-queue wait, and any of it not timed as such is the rest.
 */
enum off_state {
	OFF_SLEEP, /* S; D|NOLOAD (TASK_IDLE: idle kernel threads, /proc's I) */
	OFF_BLOCKED, /* D without NOLOAD; TASK_RTLOCK_WAIT (a sleeping spinlock: /proc's D) */
	OFF_OTHER, /* R (preempted), stopped, traced, parked, frozen */
	OFF_NR,
};

/* How prev left the CPU: enum off_state (the kernel's task_state_index(), folded). */
static __always_inline __u32 off_state(bool preempt, unsigned int prev_state)
{
	if (preempt || prev_state == TASK_RUNNING)
		return OFF_OTHER;
	if (prev_state & TASK_UNINTERRUPTIBLE)
		return prev_state & TASK_NOLOAD ? OFF_SLEEP : OFF_BLOCKED;
	if (prev_state & TASK_INTERRUPTIBLE)
		return OFF_SLEEP;
	if (prev_state & TASK_RTLOCK_WAIT)
		return OFF_BLOCKED;
	return OFF_OTHER;
}

/*
 * pend_* belong to the task that has run on this CPU since last_ns (or to
 * its process, across a same-process handoff): credited at the next
 * attribution point together with the counter deltas.
 */
struct cpu_state {
	__u64 last_ns;
	__u64 pend_nvcsw;
	__u64 pend_nivcsw;
	__u64 pend_offcpu_ns;
	__u64 pend_split[OFF_NR]; /* pend_offcpu_ns by state (PMBPF_N_OFFCPU_SLEEP_NS + i) */
	__u64 pend_runq_ns;
	__u32 pend_runq;
	__u32 pend_tgid; /* whose pend_offcpu_ns, pend_runq, pend_migrations: process (--threads: thread) */
	__u64 span_cgid; /* cgroup of the running task when its span started */
	__u32 span_tgid; /* the process span_cgid was taken for */
	__u32 span_pid; /* the thread whose switch-in started the span */
	__u32 valid;
	__u32 span_want; /* that thread was monitored when its span started */
	__u32 bank; /* which half of events holds this CPU's counters (rebase) */
	__u32 pend_migrations;
	__u64 refresh_jiffies; /* tick of the last refresh between unmonitored tasks */
	/*
	 * On-CPU time is the scheduler's (oncpu_ran()): the run-queue clock
	 * of the last attribution point as the scheduler charges time (the
	 * switch's own clock, not the estimate of a skipped update), span_pid's
	 * se.sum_exec_runtime there, and the run time of the threads of a
	 * same-process handoff not credited yet.
	 */
	__u64 klast;
	__u64 run_base;
	__u64 pend_oncpu_ns;
	__u64 gap_ns; /* PMBPF_STAT_ONCPU_GAP_NS not yet in stats: moved there at the flush */
	/*
	 * Arguments that do not fit in registers (five at most): attribute()'s
	 * now, runtime, know, ran and owner for attribute_full(); the task
	 * leaving's ids and se.sum_exec_runtime for shared_span_end(), which
	 * then reads the task only on rare paths (a helper call, and so a
	 * return, fewer per switch: each costs here, SRSO's safe RET).
	 */
	__u64 arg_now;
	__u64 arg_runtime;
	__u64 arg_know;
	__u64 arg_ran;
	__u64 arg_sum;
	__u32 arg_owner;
	__u32 arg_tgid;
	__u32 arg_pid;
	__u32 arg_pad;
	struct pmbpf_reading last[PMBPF_MAX_EVENTS];
};

/* Per-thread timestamps for run-queue latency and off-CPU time. */
struct task_ts {
	__u64 wakeup_ns; /* woken, or preempted while runnable */
	__u64 offcpu_ns; /* switched out */
	__u32 last_cpu; /* + 1, of that switch-out; 0: not seen */
	__u32 off_state; /* enum off_state of that switch-out */
	__u64 run_delay; /* !wakeup_progs: + 1, sched_info.run_delay after its last switch-in; 0: none seen */
	__u64 sum_out; /* its se.sum_exec_runtime at that switch-out */
};

/*
 * tp_btf flavour: a thread's timestamps, and the counts of its spans that
 * are not in its process's entry yet (counts, for the cgroup counts_cgid).
 * A switch adds to them instead of looking the entry up in the counts map:
 * the fold iterator moves every thread's counts to the entries before each
 * read, and a thread's last switch moves its own. busy is 1 while one of
 * them adds to or moves them.
 */
struct task_state {
	struct task_ts ts; /* first: ts_get() returns its address */
	__u64 busy; /* 64-bit: 32-bit atomics need -mcpu=v3 */
	__u32 has_counts;
	__u32 slot1; /* counts_shared: + 1, the slot its last fold went to (slot_kept()); 0: none */
	__u64 listed_gen; /* ran_drain: the list_gen whose ran list holds this thread */
	__u64 counts_cgid;
	/*
	 * A struct pmbpf_counts (start_ns, comm, flags unused; thread_counts_of())
	 * whose events stop at PMBPF_SHARED_EVENTS: counts_shared has no more
	 * (nr_events), and every access to an event is bounded by nr_events,
	 * a constant to the verifier. The struct is 408 bytes rather than
	 * 504: with the kernel's local storage element (its data at 72
	 * bytes) 480 rather than 576, a 512-byte allocation per thread
	 * rather than 1,024 (issue 35: 50,000 threads).
	 */
	__u64 counts[(__builtin_offsetof(struct pmbpf_counts, ev) +
		      PMBPF_SHARED_EVENTS * sizeof(struct pmbpf_reading)) /
		     sizeof(__u64)];
};

/* a thread's task storage in a 512-byte allocation (above) */
_Static_assert(sizeof(struct task_state) <= 512 - 72, "task_state outgrew kmalloc-512");

static __always_inline struct pmbpf_counts *thread_counts_of(struct task_state *ps)
{
	return (struct pmbpf_counts *)ps->counts;
}

/* tp_btf flavour: freed with the task. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct task_state);
} task_ts_storage SEC(".maps");

/* raw_tp flavour (no trusted task pointers): by pid, deleted at the thread's last switch. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, struct task_ts);
} task_ts_hash SEC(".maps");

/* Bumped by userspace before each read: scopes runq_max_ns to one interval. */
volatile __u64 read_gen;

/*
 * counts_shared with ran_drain (bpf_task_from_pid, 6.2): the threads that
 * ran, without a walk of every task. A thread's first credit in a list
 * generation pushes its id on its CPU's list of that generation's parity;
 * before a read userspace bumps list_gen (from 1), flushes every CPU (after
 * which no switch still pushes to the old parity: a flush runs between
 * switches) and runs the drain iterator, which folds the old parity's
 * threads and empties their lists. A full list: the thread folds at that
 * switch (PMBPF_STAT_RAN_FULL). Without ran_drain the fold iterator walks
 * every task instead.
 */
const volatile bool ran_drain = false;
volatile __u64 list_gen;

/*
 * counts_shared with ran_drain: a thread that is its entry's only writer
 * (--threads, or the one thread of its process) and whose entry's slot it
 * knows (slot1) credits its spans there itself, with plain adds, as a
 * thread does its task storage: nothing to fold, list or drain for it
 * (direct_counts()). Other writers of such an entry go through its task
 * storage instead (owner_credit()).
 */
const volatile bool direct_credit = false;

#define RAN_LIST_LEN 4096 /* a power of 2 */

struct ran_list {
	__u32 n;
	__u32 pad;
	__u32 tid[RAN_LIST_LEN];
};

/* [cpu * 2 + (list_gen & 1)]; 2 x possible CPUs (userspace), truly per-CPU state */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct ran_list);
} ran_lists SEC(".maps");

/* This CPU's last attribution point; owned by the programs, never cleared. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cpu_state);
} cpu_states SEC(".maps");

/*
 * Cumulative counts per (tgid, cgroup). Entries are created here and deleted
 * here at process exit (after the exit record is sent); userspace only reads,
 * and deletes only entries of processes it knows are dead.
 *
 * counts_shared: a plain hash (userspace sets the type), one value per
 * entry, added to with atomics at folds only. Otherwise a per-CPU hash.
 * A value is a struct pmbpf_counts cut after its nr_events counting slots
 * (userspace sets value_size): the slots no event uses were half of it.
 * No BTF type: its size would not match. ev[] is only touched below
 * nr_events.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 10240);
	__uint(key_size, sizeof(struct pmbpf_key));
	__uint(value_size, sizeof(struct pmbpf_counts));
} counts SEC(".maps");

/*
 * counts_shared: the entries, in slots of an array that userspace maps
 * into its memory (a read walks them without a system call: a batch read
 * of a hash copies each bucket to user memory in a call of its own).
 * counts_index maps a key to its slot; a new entry takes a slot given back
 * on free_slots, else the next never used (next_slot). An entry leaves
 * counts_index at its process's exit (or when userspace deletes a dead
 * one), and its slot goes back on free_slots at once (entry_delete()).
 * Userspace sets the sizes (max_procs; 1 in the per-CPU mode) and the
 * slots' value size.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, struct pmbpf_key);
	__type(value, __u32);
} counts_index SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct pmbpf_slot));
} counts_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK);
	__uint(max_entries, 1);
	__uint(value_size, sizeof(__u32));
} free_slots SEC(".maps");

/* counts_shared: slots below it have been used; userspace reads up to it. */
volatile __u64 next_slot;
/* counts_shared: counts_slots' size (max_procs) */
const volatile __u32 max_slots = 0;

/*
 * counts_shared: the idle task's counts, per CPU (it has no task storage,
 * and it is the one task that runs on every CPU at once). Userspace reads
 * them as the entry (0, 0, idle_cgid).
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pmbpf_counts);
} idle_counts SEC(".maps");

/* The idle task's cgroup (the root): written when it changes, so never in practice. */
volatile __u64 idle_cgid;

/* Final counts of exited processes; consumed by userspace at each read. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} exits SEC(".maps");

/* Self statistics, enum pmbpf_stat; only ever incremented. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PMBPF_STAT_NR);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

/*
 * The credits of processes (--threads: threads) that found the counts map
 * full, per cgroup (key: cgroup id): userspace reads each as the entry
 * (PMBPF_OVERFLOW_TGID, 0, cgroup id), so they stay in their cgroup. Same
 * type and value as counts (userspace sets both). A cgroup that finds this
 * map full too goes to the cgroup-less overflow entry, key 0 (no cgroup has
 * id 0), made by userspace at start: in this map, not in counts, whose
 * max_procs entries make max_procs buckets (a hash of 65,537 entries has
 * 131,072, and a read walks every one).
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 64);
	__uint(key_size, sizeof(__u64));
	__uint(value_size, sizeof(struct pmbpf_counts));
} overflow SEC(".maps");

/* Processes already counted as folded into an overflow entry. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, __u8);
} folded_seen SEC(".maps");

/*
 * Scratch space for records too big for the BPF stack: SCRATCH_SWITCH for
 * the scheduler's and flush's programs, SCRATCH_FOLD for the fold iterator,
 * which a switch on its CPU can preempt. counts_shared: SCRATCH_CREDIT and
 * SCRATCH_REST take a span's credits that go to a shared entry (not to task
 * storage), added to it with atomics afterwards.
 */
#define SCRATCH_SWITCH 0
#define SCRATCH_FOLD   1
#define SCRATCH_CREDIT 2
#define SCRATCH_REST   3

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, struct pmbpf_exit);
} scratch SEC(".maps");

static __always_inline void stat_add(__u32 idx, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &idx);

	if (v)
		*v += n;
}

static __always_inline void stat_inc(__u32 idx)
{
	stat_add(idx, 1);
}

/* The cgroup of a task in sched_switch: plain loads with tp_btf. */
static __always_inline __u64 task_cgroup_id(struct task_struct *t, const bool btf)
{
	return btf ? t->cgroups->dfl_cgrp->kn->id : BPF_CORE_READ(t, cgroups, dfl_cgrp, kn, id);
}

/* A thread's timestamps: task storage on tp_btf, else by pid; created if create. */
static __always_inline struct task_ts *ts_get(struct task_struct *t, bool create, const bool btf)
{
	struct task_ts zero = {}, *ts;
	__u32 pid;

	if (btf)
		return (struct task_ts *)bpf_task_storage_get(
			&task_ts_storage, t, 0, create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
	pid = BPF_CORE_READ(t, pid);
	ts = bpf_map_lookup_elem(&task_ts_hash, &pid);
	if (ts || !create)
		return ts;
	bpf_map_update_elem(&task_ts_hash, &pid, &zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(&task_ts_hash, &pid);
}

#endif /* __PMBPF_STATE_BPF_H */
