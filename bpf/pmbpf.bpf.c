// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Exact per-process attribution of per-CPU perf counters.
 *
 * Userspace opens every counter once per CPU (pid = -1). At each
 * sched_switch this program reads the CPU's counters and credits the delta
 * since the previous attribution point on this CPU to the task that was
 * running (prev), so the sum over all entries, idle included, is the
 * system-wide count. Userspace makes every CPU credit its current task
 * before each read (flush, run through BPF_PROG_TEST_RUN on that CPU).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "pmbpf.h"

#define TASK_RUNNING	     0
#define TASK_INTERRUPTIBLE   0x1
#define TASK_UNINTERRUPTIBLE 0x2
#define TASK_DEAD	     0x80
#define TASK_NOLOAD	     0x400
#define TASK_RTLOCK_WAIT     0x1000
#define PF_EXITING	     0x4
#define EEXIST		     17

char LICENSE[] SEC("license") = "Dual BSD/GPL";

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
const volatile __u32 filter_tgid = 0;
const volatile __u64 filter_cgroup_id = 0; /* only tasks in this cgroup's subtree */
const volatile __u32 filter_cgroup_level = 0; /* its depth: root is 0 */

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
	/* attribute_full()'s arguments (now, runtime, know, ran of attribute()) */
	__u64 arg_now;
	__u64 arg_runtime;
	__u64 arg_know;
	__u64 arg_ran;
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
	__u32 pad;
	__u64 listed_gen; /* ran_drain: the list_gen whose ran list holds this thread */
	__u64 counts_cgid;
	struct pmbpf_counts counts; /* start_ns, comm, flags unused */
};

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
 * map full too goes to the counts map's cgroup-less overflow entry.
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

/*
 * The clock of every time figure (on-CPU, off-CPU, run-queue waits, the
 * clock events' spans, --delays): the scheduler's clock of the run queue,
 * rq->clock (sched_clock_cpu()), where it is fresh. try_to_wake_up() and
 * wake_up_new_task() update it before their tracepoints, __schedule()
 * before sched_switch: there it is three loads instead of a clock read
 * (bpf_ktime_get_ns() costs 67 ns in this VM).
 *
 * But __schedule() skips the update when a wakeup on this run queue has
 * just updated the clock and asked for the switch (rq_clock_skip_update():
 * a preempting wakeup; 41% of the switches of the pinned pipe benchmark):
 * the clock is then the wakeup's, and the run-queue wait of a preempting
 * wakeup would read 0 (the kernel's own schedstat run_delay does). So each
 * wakeup leaves the clock it read for its CPU (wake_clocks), and a switch
 * that finds this CPU's clock unchanged since takes bpf_ktime_get_ns()
 * instead, moved onto the run-queue clock by a pair of both readings that a
 * wakeup took on this CPU's run queue (at most once per ms per CPU). A
 * wakeup's clock is always fresh; a switch's is not known to be: an update
 * between the wakeup and a skipped switch (the tick) makes the switch read
 * that update's clock, unlike the wakeup's, and it is then timed at that
 * update, at most a tick early, as the kernel times it.
 *
 * The run queue is reached from a task on it, through its fair-class queue
 * (se.cfs_rq, set for every task of every class when it is placed on a
 * CPU): the task group's per-CPU queue points to it (FAIR_GROUP_SCHED),
 * otherwise the run queue embeds it. (runqueues, the per-CPU variable, is
 * a ksym only with CONFIG_KALLSYMS_ALL, which this host's kernel lacks.)
 */
#define CLOCK_PAIR_NS 1000000ULL

/*
 * Without wakeup programs (sched_info below), the switches themselves tell
 * a stale clock: the task switched in was queued by the wakeup that read
 * it (its sched_info.last_queued is this clock). The pairs then come from
 * the other switches, at most one candidate per ms per CPU. A candidate's
 * clock can be stale too (a tick's update after a preempting wakeup of
 * another task, or between a wakeup and its switch): its offset (ktime
 * less clock) is then larger than the true one by that much, never
 * smaller. So a candidate is taken only when its offset is at most the
 * pair's plus what the two clocks can drift apart since (1/1024 of the
 * pair's age, ~1000 ppm, twice the most NTP slews by, plus 2 us): the
 * offset tracks the lowest seen, and a stale candidate gets in only after
 * a second without a fresh one, off by at most 1/1024 of that time.
 */
#define CLOCK_DRIFT_SHIFT 10
#define CLOCK_SLACK_NS	  2000

/*
 * Each CPU's run queue clocks (written under its lock): the last clock a
 * wakeup read, a pair of the clock and bpf_ktime_get_ns(), and when the
 * last pair candidate was tried (sched_info). A cache line each.
 */
struct wake_clock {
	__u64 clock;
	__u64 pair_rq;
	__u64 pair_kt;
	__u64 cand_rq;
	__u64 pad[4];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1); /* possible CPUs: set by userspace */
	__type(key, __u32);
	__type(value, struct wake_clock);
} wake_clocks SEC(".maps");

/* The run queue p is on. btf: p is a trusted pointer (plain loads). */
static __always_inline struct rq *task_rq(struct task_struct *p, const bool btf)
{
	struct cfs_rq *cfs;

	if (bpf_core_field_exists(((struct cfs_rq *)0)->rq)) {
		if (btf)
			return p->se.cfs_rq->rq;
		return BPF_CORE_READ(p, se.cfs_rq, rq);
	}
	cfs = BPF_CORE_READ(p, se.cfs_rq);
	return (struct rq *)((void *)cfs - bpf_core_field_offset(struct rq, cfs));
}

/*
 * CPU hotplug: a run queue is offline from the CPU's deactivation as it goes
 * down (sched_cpu_deactivate()) to its reactivation once back
 * (sched_cpu_activate(), run by the CPU's hotplug thread after its first
 * switches). Tracepoints do not fire on a CPU marked offline, so its last
 * switch (the stopper to the idle task) is not seen: at its first switch
 * once back the span since the stopper's switch-in holds the whole time the
 * CPU was off. The idle task's spans on an offline run queue are not idle
 * time and the stopper did not run then: their run-queue clock time is
 * PMBPF_STAT_OFFLINE_NS, no row's (the stopper's last few microseconds
 * with it).
 */
static __always_inline bool rq_offline(struct task_struct *idle, const bool btf)
{
	if (btf && bpf_core_field_exists(((struct cfs_rq *)0)->rq))
		return !task_rq(idle, btf)->online;
	return !BPF_CORE_READ(task_rq(idle, btf), online);
}

static __always_inline void offline_span(struct cpu_state *st, __u64 know)
{
	if (st->valid && know > st->klast)
		stat_add(PMBPF_STAT_OFFLINE_NS, know - st->klast);
}

/* The clock of p's run queue; its CPU in *cpu when cpu is not NULL. */
static __always_inline __u64 task_rq_clock(struct task_struct *p, __u32 *cpu, const bool btf)
{
	struct rq *rq = task_rq(p, btf);

	if (btf && bpf_core_field_exists(((struct cfs_rq *)0)->rq)) {
		if (cpu)
			*cpu = rq->cpu;
		return rq->clock;
	}
	if (cpu)
		*cpu = BPF_CORE_READ(rq, cpu);
	return BPF_CORE_READ(rq, clock);
}

/* bpf_ktime_get_ns() on a run queue's clock (by its pair in wc), never before rq_now. */
static __always_inline __u64 clock_estimate(const struct wake_clock *wc, __u64 rq_now)
{
	__u64 est;

	if (!wc || !wc->pair_kt)
		return rq_now;
	est = wc->pair_rq + (bpf_ktime_get_ns() - wc->pair_kt);
	return (__s64)(est - rq_now) > 0 ? est : rq_now;
}

/* At sched_wakeup(_new): the clock of the run queue p was just queued on. */
static __always_inline __u64 wakeup_clock(struct task_struct *p, const bool btf)
{
	struct wake_clock *wc;
	__u32 cpu = 0;
	__u64 now = task_rq_clock(p, &cpu, btf);

	wc = bpf_map_lookup_elem(&wake_clocks, &cpu);
	if (!wc)
		return now;
	wc->clock = now;
	if (now - wc->pair_rq >= CLOCK_PAIR_NS) {
		wc->pair_rq = now;
		wc->pair_kt = bpf_ktime_get_ns();
	}
	return now;
}

/*
 * The run-queue clock at which p was last queued and not yet run (0: it is
 * not waiting), and its run-queue waits so far: the scheduler's own
 * sched_info (CONFIG_SCHED_INFO), which it updates after sched_switch.
 */
static __always_inline __u64 task_queued(struct task_struct *p, __u64 *run_delay, const bool btf)
{
	if (!bpf_core_field_exists(p->sched_info))
		return 0;
	if (btf) {
		*run_delay = p->sched_info.run_delay;
		return p->sched_info.last_queued;
	}
	*run_delay = BPF_CORE_READ(p, sched_info.run_delay);
	return BPF_CORE_READ(p, sched_info.last_queued);
}

/*
 * At sched_switch on cpu (next is on its run queue): now, and the run
 * queue's clock itself in *raw; without wakeup programs, next's
 * sched_info in *queued and *run_delay (task_queued()).
 */
static __always_inline __u64 switch_clock(struct task_struct *next, __u32 cpu, __u64 *queued,
					  __u64 *run_delay, __u64 *raw, const bool btf)
{
	struct wake_clock *wc = bpf_map_lookup_elem(&wake_clocks, &cpu);
	__u64 now = task_rq_clock(next, NULL, btf), kt;
	__s64 off;

	*raw = now;
	if (!wc)
		return now;
	if (wakeup_progs) {
		if (wc->clock == now)
			return clock_estimate(wc, now); /* the update was skipped */
		return now;
	}
	*queued = task_queued(next, run_delay, btf);
	if (*queued == now)
		return clock_estimate(wc, now); /* next's wakeup read it; this switch did not */
	if (now - wc->cand_rq < CLOCK_PAIR_NS)
		return now;
	wc->cand_rq = now;
	kt = bpf_ktime_get_ns();
	off = (__s64)(kt - now);
	if (!wc->pair_kt || off <= (__s64)(wc->pair_kt - wc->pair_rq) +
					    (__s64)((now - wc->pair_rq) >> CLOCK_DRIFT_SHIFT) +
					    CLOCK_SLACK_NS) {
		wc->pair_rq = now;
		wc->pair_kt = kt;
	}
	return now;
}

/*
 * Outside the scheduler (flush, a task moving itself to another cgroup) the
 * run-queue clock can be a tick old, and on an idle CPU as old as its idle
 * time: the estimate. The two clocks drift apart by the NTP correction
 * (ppm) over the pair's age; a span that would start before the previous
 * one ended is cut to 0 (attribute()), so the time stays conserved.
 */
static __always_inline __u64 flush_clock(struct task_struct *current)
{
	__u32 cpu = bpf_get_smp_processor_id();

	return clock_estimate(bpf_map_lookup_elem(&wake_clocks, &cpu),
			      task_rq_clock(current, NULL, false));
}

#include "delay.bpf.h"

/* The cgroup of a task in sched_switch: plain loads with tp_btf. */
static __always_inline __u64 task_cgroup_id(struct task_struct *t, const bool btf)
{
	return btf ? t->cgroups->dfl_cgrp->kn->id : BPF_CORE_READ(t, cgroups, dfl_cgrp, kn, id);
}

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

/*
 * struct cgroup before 6.0 kept its ancestors' ids (ancestor_ids[], which
 * are kernfs ids, the ids pmbpf uses); commit 7f203bc89eb6 ("cgroup:
 * Replace cgroup->ancestor_ids[] with ->ancestors[]") keeps pointers.
 * As perf's bperf_cgroup.bpf.c: one flavour per layout, chosen by CO-RE.
 */
struct cgroup___new {
	int level;
	struct cgroup *ancestors[];
} __attribute__((preserve_access_index));

struct cgroup___old {
	int level;
	__u64 ancestor_ids[];
} __attribute__((preserve_access_index));

/* The id of cg's ancestor at level (cg itself at its own level). */
static __always_inline __u64 cgroup_ancestor_id(struct cgroup *cg, __u32 level)
{
	struct cgroup___new *cg_new = (void *)cg;
	struct cgroup___old *cg_old = (void *)cg;
	struct cgroup *anc = NULL;
	__u64 id = 0;

	if (bpf_core_field_exists(cg_new->ancestors)) {
		bpf_probe_read_kernel(&anc, sizeof(anc),
				      (void *)cg + bpf_core_field_offset(cg_new->ancestors) +
					      level * sizeof(anc));
		return anc ? BPF_CORE_READ(anc, kn, id) : 0;
	}
	bpf_probe_read_kernel(&id, sizeof(id),
			      (void *)cg + bpf_core_field_offset(cg_old->ancestor_ids) +
				      level * sizeof(id));
	return id;
}

/* In the subtree of filter_cgroup_id: its ancestor at the filter's level is the filter cgroup. */
static __always_inline bool in_cgroup_filter(struct task_struct *t, const bool btf)
{
	struct cgroup *cg;
	__u32 level = filter_cgroup_level;

	/* tp_btf: plain loads through trusted pointers instead of probe reads */
	cg = btf ? t->cgroups->dfl_cgrp : BPF_CORE_READ(t, cgroups, dfl_cgrp);
	if (!cg || (btf ? cg->level : BPF_CORE_READ(cg, level)) < (int)level || level > 4096)
		return false;
	return cgroup_ancestor_id(cg, level) == filter_cgroup_id;
}

static __always_inline bool wanted(struct task_struct *t, __u32 tgid, const bool btf)
{
	if (filter_tgid && tgid != filter_tgid)
		return false;
	if (filter_cgroup_id && !in_cgroup_filter(t, btf))
		return false;
	return true;
}

/*
 * The cgroup a span is credited to: the one recorded when it started, if it
 * was recorded for this thread; otherwise (a switch-in this CPU did not see)
 * the process's cgroup now.
 */
static __always_inline __u64 span_cgroup(struct cpu_state *st, __u32 pid, __u32 tgid)
{
	if (st->span_pid == pid && st->span_tgid == tgid)
		return st->span_cgid;
	return bpf_get_current_cgroup_id();
}

/*
 * Seen on 6.18 (ftrace's own sched_switch events show it too): now and then
 * a task comes on CPU with no sched_switch event, so this CPU's last
 * attribution point can be older than the span of the task now leaving
 * (without a filter, the previous switch; with one, unmonitored tasks are
 * not followed, and on_switch() moves that point forward at the first
 * switch of every tick). The span's time is then the task's own time on the
 * CPU since it switched in, as the scheduler recorded it, the rest of the
 * span going to the task the CPU saw switch in (span_owner()), and its
 * counters get the delta since that point (other tasks' counts of at most
 * the last span before it). Returns 0 when the span is exact. (Crediting
 * the whole span to the task leaving, as without a filter before, put
 * 0.1-0.3% too much in a cgroup of churning threads against its cpu.stat.)
 *
 * The switch-in is sched_info.last_arrival (the run queue's clock at
 * sched_info_arrive(), the clock now is on), where the kernel keeps it.
 * Otherwise the run time since the task was picked (CFS sets
 * prev_sum_exec_runtime in set_next_entity()); but set_next_task() of a
 * running task resets it without a switch: sched_move_task() in every
 * do_exit() with autogroup on (sched_autogroup_exit_task()), on a cpu
 * controller move, a nice or policy change. A burn of 100 ms whose
 * switch-in was not seen was credited 9 us at its exit that way, the rest
 * of its span going to nobody (tests/test_filter.py).
 */
static __always_inline __u64 unseen_span_runtime(struct cpu_state *st, struct task_struct *t,
						 __u32 pid, __u64 now, const bool btf)
{
	__u64 arrival, sum, prev_sum;

	if (!st->valid || st->span_pid == pid)
		return 0;
	stat_inc(PMBPF_STAT_SPAN_UNMATCHED);
	if (sched_info_kept && bpf_core_field_exists(t->sched_info)) {
		arrival = btf ? t->sched_info.last_arrival :
				BPF_CORE_READ(t, sched_info.last_arrival);
		if (arrival)
			return now > arrival ? now - arrival : 1;
	}
	if (btf) {
		sum = t->se.sum_exec_runtime;
		prev_sum = t->se.prev_sum_exec_runtime;
	} else {
		sum = BPF_CORE_READ(t, se.sum_exec_runtime);
		prev_sum = BPF_CORE_READ(t, se.prev_sum_exec_runtime);
	}
	/* at least 1 ns: 0 would mean "exact" to attribute() */
	return sum > prev_sum ? sum - prev_sum : 1;
}

/*
 * A task's on-CPU time is what the scheduler charges it, the time of
 * /proc/PID/schedstat, cgroup cpu.stat's usage_usec and getrusage: the
 * growth of its se.sum_exec_runtime over its span. sched_switch fires after
 * put_prev_task() brought prev's up to date (update_curr()) on every kernel
 * pmbpf loads on. It counts from the scheduler's own clock readings: a task
 * woken on an idle CPU from its wakeup's (a switch that skips the clock
 * update), and none of the host's steal time (rq->clock_task). RAN_SPAN:
 * the span's whole run-queue clock time, for the idle task (whose time the
 * scheduler does not keep) and a span whose switch-in this CPU did not see.
 */
#define RAN_SPAN (~0ULL)

static __always_inline __u64 task_sum(struct task_struct *t, const bool btf)
{
	return btf ? t->se.sum_exec_runtime : BPF_CORE_READ(t, se.sum_exec_runtime);
}

/* The run time of thread pid, whose se.sum_exec_runtime is sum, since the last attribution point. */
static __always_inline __u64 oncpu_ran(const struct cpu_state *st, __u32 pid, __u64 sum)
{
	if (!pid || st->span_pid != pid)
		return RAN_SPAN;
	return st->pend_oncpu_ns + (sum > st->run_base ? sum - st->run_base : 0);
}

/*
 * Outside the scheduler (flush, a cgroup move) current's sum_exec_runtime is
 * as of its last update_curr() (the tick, a wakeup): add the time since, on
 * the scheduler's task clock moved to now by the run-queue clock's estimate.
 * The next switch's figure starts from this one; where the estimate ran
 * ahead, oncpu_ran() gives 0 and the excess stays (at most the estimate's
 * error, nanoseconds to microseconds).
 */
static __always_inline __u64 task_sum_now(struct task_struct *t, __u64 now)
{
	struct rq *rq = task_rq(t, false);
	__u64 clock = BPF_CORE_READ(rq, clock), clock_task = BPF_CORE_READ(rq, clock_task);
	__u64 sum = BPF_CORE_READ(t, se.sum_exec_runtime);
	__u64 start = BPF_CORE_READ(t, se.exec_start);
	__u64 task_now = clock_task + (now > clock ? now - clock : 0);

	return sum + (task_now > start ? task_now - start : 0);
}

/*
 * --threads: a thread names itself (pthread_setname_np) after its entry was
 * made: the name of task, when it changed. btf: task is a trusted pointer,
 * two plain loads instead of a helper call; otherwise task is current.
 */
static __always_inline void thread_comm_refresh(struct pmbpf_counts *c, struct task_struct *task,
						const bool btf)
{
	__u64 comm[PMBPF_COMM_LEN / 8];

	if (btf) {
		comm[0] = *(__u64 *)&task->comm[0];
		comm[1] = *(__u64 *)&task->comm[8];
	} else {
		bpf_get_current_comm(comm, sizeof(comm));
	}
	if (comm[0] == *(__u64 *)c->comm && comm[1] == *(__u64 *)&c->comm[8])
		return;
	__builtin_memcpy(c->comm, comm, sizeof(comm));
	c->comm_ns = bpf_ktime_get_ns();
}

/*
 * Look up, or create, the entry of task's process (--threads: of its
 * thread tid) in its cgroup. With --threads and not btf, task is current.
 */
static __always_inline struct pmbpf_counts *entry_get(__u32 tgid, __u32 tid, __u64 cgid,
						      struct task_struct *task, __u32 scratch_idx,
						      const bool btf)
{
	struct pmbpf_key key = {};
	struct pmbpf_counts *c;
	struct pmbpf_exit *tmp;
	struct task_struct *leader;
	__u32 zero = 0;
	__u64 id;
	long err;

	key.tgid = tgid;
	key.tid = per_thread ? tid : 0;
	key.cgroup_id = cgid;
	c = bpf_map_lookup_elem(&counts, &key);
	if (c) {
		if (per_thread)
			thread_comm_refresh(c, task, btf);
		return c;
	}

	tmp = bpf_map_lookup_elem(&scratch, &scratch_idx);
	if (!tmp)
		return NULL;
	__builtin_memset(&tmp->total, 0, sizeof(tmp->total));
	leader = BPF_CORE_READ(task, group_leader);
	tmp->total.start_ns = BPF_CORE_READ(leader, start_time);
	tmp->total.comm_ns = bpf_ktime_get_ns();
	/* --threads: the thread's own name */
	BPF_CORE_READ_STR_INTO(&tmp->total.comm, per_thread ? task : leader, comm);
	err = bpf_map_update_elem(&counts, &key, &tmp->total, BPF_NOEXIST);
	if (!err || err == -EEXIST)
		return bpf_map_lookup_elem(&counts, &key);

	/*
	 * Map full: fold into the overflow entry of the cgroup (else the
	 * cgroup-less one), counting each process once.
	 */
	stat_inc(PMBPF_STAT_OVERFLOW);
	id = ((__u64)(per_thread ? tid : tgid) << 32) ^ tmp->total.start_ns;
	c = bpf_map_lookup_elem(&overflow, &cgid);
	if (!c) {
		__builtin_memset(&tmp->total, 0, sizeof(tmp->total));
		bpf_map_update_elem(&overflow, &cgid, &tmp->total, BPF_NOEXIST);
		c = bpf_map_lookup_elem(&overflow, &cgid);
	}
	if (!c) {
		key.tgid = PMBPF_OVERFLOW_TGID;
		key.tid = 0;
		key.cgroup_id = 0;
		c = bpf_map_lookup_elem(&counts, &key);
	}
	if (!c)
		return NULL;
	if (!bpf_map_update_elem(&folded_seen, &id, &zero, BPF_NOEXIST)) {
		if (counts_shared)
			__sync_fetch_and_add(&c->folded, 1);
		else
			c->folded++;
	}
	return c;
}

/*
 * Add src's counts to dst's; the run-queue maximum only of the current read
 * generation. atomic: dst is a shared entry that threads folding on other
 * CPUs add to at the same time (the maximum is a plain compare and store:
 * two folds at once may keep the smaller).
 */
static __always_inline void counts_add(struct pmbpf_counts *dst, const struct pmbpf_counts *src,
				       const bool atomic)
{
	__u32 i;

	for (i = 0; i < PMBPF_N_NR; i++) {
		if (!atomic)
			dst->n[i] += src->n[i];
		else
			__sync_fetch_and_add(&dst->n[i], src->n[i]);
	}
	/*
	 * atomic: src is a thread's or a span's counts not read yet (reset at
	 * each fold), so its maximum is this read's even when credited before
	 * read_gen moved: a thread folded by the drain and credited again
	 * before the read ends keeps the old generation (its histogram was
	 * added to this read, its maximum was dropped: test_runq_max_is_each_intervals_own).
	 */
	if ((atomic ? src->runq_max_gen != 0 : src->runq_max_gen == read_gen) &&
	    (dst->runq_max_gen != read_gen || src->runq_max_ns > dst->runq_max_ns)) {
		dst->runq_max_ns = src->runq_max_ns;
		dst->runq_max_gen = read_gen;
	}
	for (i = 0; i < PMBPF_RUNQ_SLOTS; i++) {
		if (!atomic)
			dst->runq_hist[i] += src->runq_hist[i];
		else
			__sync_fetch_and_add(&dst->runq_hist[i], src->runq_hist[i]);
	}
	for (i = 0; i < PMBPF_MAX_EVENTS; i++) {
		if (i >= nr_events)
			break; /* a counts map value ends there */
		if (!atomic) {
			dst->ev[i].value += src->ev[i].value;
			dst->ev[i].enabled += src->ev[i].enabled;
			dst->ev[i].running += src->ev[i].running;
			continue;
		}
		__sync_fetch_and_add(&dst->ev[i].value, src->ev[i].value);
		__sync_fetch_and_add(&dst->ev[i].enabled, src->ev[i].enabled);
		__sync_fetch_and_add(&dst->ev[i].running, src->ev[i].running);
	}
}

/* counts_shared: this CPU's counts of the idle task, in the cgroup it is in. */
static __always_inline struct pmbpf_counts *idle_get(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&idle_counts, &zero);
}

/* counts_shared: a scratch record for credits to a shared entry, zeroed. */
static __always_inline struct pmbpf_counts *credit_scratch(__u32 idx)
{
	struct pmbpf_exit *tmp = bpf_map_lookup_elem(&scratch, &idx);

	if (!tmp)
		return NULL;
	__builtin_memset(&tmp->total, 0, sizeof(tmp->total));
	return &tmp->total;
}

/*
 * counts_shared: the credits a span left in a scratch record (credit_scratch())
 * to entry dst (NULL: the owner of this span's rest is gone, or the overflow
 * entry too is missing: lost, counted as overflow).
 */
static __noinline void credit_shared(struct pmbpf_counts *dst, const struct pmbpf_counts *src)
{
	if (dst && src)
		counts_add(dst, src, true);
}

/*
 * The entry of the task whose switch-in this CPU saw last, when it is
 * monitored: it ran from there until the switch that was not seen.
 */
static __always_inline struct pmbpf_counts *span_owner(struct cpu_state *st)
{
	struct pmbpf_key key = {};

	if (!st->valid || !st->span_want)
		return NULL;
	key.tgid = st->span_tgid;
	key.tid = per_thread ? st->span_pid : 0;
	key.cgroup_id = st->span_cgid;
	return bpf_map_lookup_elem(&counts, &key);
}

/*
 * Where the rest of a span goes (span_owner()). counts_shared: the idle
 * task's per-CPU counts, or, when the owner's entry exists, a scratch
 * record that goes to it after (credit_owner()).
 */
static __always_inline struct pmbpf_counts *span_rest(struct cpu_state *st)
{
	if (!counts_shared)
		return span_owner(st);
	if (!st->valid || !st->span_want)
		return NULL;
	if (!st->span_tgid)
		return idle_get();
	return span_owner(st) ? credit_scratch(SCRATCH_REST) : NULL;
}

/* counts_shared: a span's rest, from span_rest()'s scratch record, to its owner's entry. */
static __always_inline void credit_owner(struct cpu_state *st, const struct pmbpf_counts *rest)
{
	if (rest && st->span_tgid)
		credit_shared(span_owner(st), rest);
}

static __always_inline __u32 event_index(const struct cpu_state *st, __u32 i, __u32 cpu)
{
	return ((st->bank & 1) * nr_events + i) * nr_cpus + cpu;
}

/*
 * Credit everything since this CPU's last attribution point to c (when not
 * NULL; owner: its process, --threads: its thread), and make now the new
 * attribution point (know: the same point as the scheduler's clock read
 * it). ran is the task's on-CPU time in the span (oncpu_ran()); the rest of
 * the span on that clock is no task's (PMBPF_STAT_ONCPU_GAP_NS). runtime,
 * when not 0, is the task's own run time in a span whose start was not
 * seen: c is credited that much time (on-CPU time, cpu-clock, task-clock)
 * and rest, when not NULL, the remainder.
 */
static __always_inline void attribute(struct cpu_state *st, struct pmbpf_counts *c,
				      struct pmbpf_counts *rest, __u32 owner, __u32 cpu, __u64 now,
				      __u64 runtime, __u64 know, __u64 ran)
{
	struct bpf_perf_event_value v;
	__u64 span, mine, kspan, kmine, lim, switches = st->pend_nvcsw + st->pend_nivcsw;
	__u32 i;

	if (now < st->last_ns)
		now = st->last_ns; /* a flush's estimate ran ahead (flush_clock()) */
	span = now - st->last_ns;
	mine = span;
	kspan = know > st->klast ? know - st->klast : 0;
	lim = runtime ? runtime : ran;
	kmine = lim < kspan ? lim : kspan;

	if (runtime && runtime < span)
		mine = runtime;
	if (rest && st->valid)
		rest->n[PMBPF_N_ONCPU_NS] += kspan - kmine;
	else if (st->valid)
		st->gap_ns += kspan - kmine;
	/*
	 * The clock events keep perf's semantics: every span is some task's.
	 * With no owner for the rest (the task seen switching in is gone), the
	 * task leaving keeps it, as before on-CPU time came from the scheduler
	 * (without this, test_conservation's cpu-clock was 34 ms short of the
	 * CPUs' counters in a 0.5 s interval).
	 */
	if (!rest)
		mine = span;
	if (c && st->valid) {
		c->n[PMBPF_N_ONCPU_NS] += kmine;
		c->n[PMBPF_N_NVCSW] += st->pend_nvcsw;
		c->n[PMBPF_N_NIVCSW] += st->pend_nivcsw;
	}
	/*
	 * Seen on 6.18: rarely, the task switched in is not the one switched
	 * out next on this CPU. Its wait is dropped rather than misattributed.
	 */
	if (c && st->valid && (st->pend_runq || st->pend_offcpu_ns || st->pend_migrations) &&
	    st->pend_tgid != owner) {
		stat_inc(PMBPF_STAT_WAIT_UNMATCHED);
	} else if (c && st->valid) {
		c->n[PMBPF_N_OFFCPU_NS] += st->pend_offcpu_ns;
		c->n[PMBPF_N_OFFCPU_SLEEP_NS] += st->pend_split[OFF_SLEEP];
		c->n[PMBPF_N_OFFCPU_BLOCKED_NS] += st->pend_split[OFF_BLOCKED];
		c->n[PMBPF_N_OFFCPU_OTHER_NS] += st->pend_split[OFF_OTHER];
		c->n[PMBPF_N_MIGRATIONS] += st->pend_migrations;
		if (st->pend_runq) {
			__u64 lat = st->pend_runq_ns;
			__u64 slot = pmbpf_runq_slot(lat);

			c->n[PMBPF_N_RUNQ_COUNT]++;
			c->n[PMBPF_N_RUNQ_TOTAL_NS] += lat;
			if (c->runq_max_gen != read_gen) {
				c->runq_max_gen = read_gen;
				c->runq_max_ns = lat;
			} else if (lat > c->runq_max_ns) {
				c->runq_max_ns = lat;
			}
			/* checked again on the register used: 6.1's verifier loses the bound */
			barrier_var(slot);
			if (slot < PMBPF_RUNQ_SLOTS)
				c->runq_hist[slot]++;
		}
	}
	st->pend_nvcsw = 0;
	st->pend_nivcsw = 0;
	st->pend_offcpu_ns = 0;
	st->pend_split[OFF_SLEEP] = 0;
	st->pend_split[OFF_BLOCKED] = 0;
	st->pend_split[OFF_OTHER] = 0;
	st->pend_runq = 0;
	st->pend_migrations = 0;
	st->pend_oncpu_ns = 0;
	st->last_ns = now;
	st->klast += kspan;

	for (i = 0; i < PMBPF_MAX_EVENTS; i++) {
		if (i >= nr_events)
			break;
		if (ev_clock[i] || ev_switches[i]) {
			v.counter = st->last[i].value + (ev_clock[i] ? span : switches);
			v.enabled = st->last[i].enabled + span;
			v.running = st->last[i].running + span;
		} else if (ev_timed[i]) {
			if (bpf_perf_event_read_value(&events, event_index(st, i, cpu), &v,
						      sizeof(v))) {
				stat_inc(PMBPF_STAT_READ_ERRORS);
				continue;
			}
		} else {
			/* errors come back as -errno in the value */
			v.counter = bpf_perf_event_read(&events, event_index(st, i, cpu));
			if ((__s64)v.counter < 0 && (__s64)v.counter >= -4095) {
				stat_inc(PMBPF_STAT_READ_ERRORS);
				continue;
			}
			v.enabled = st->last[i].enabled + span;
			v.running = st->last[i].running + span;
		}
		if (c && st->valid && ev_clock[i]) {
			c->ev[i].value += mine;
			c->ev[i].enabled += mine;
			c->ev[i].running += mine;
			if (rest) {
				rest->ev[i].value += span - mine;
				rest->ev[i].enabled += span - mine;
				rest->ev[i].running += span - mine;
			}
		} else if (c && st->valid) {
			c->ev[i].value += v.counter - st->last[i].value;
			c->ev[i].enabled += v.enabled - st->last[i].enabled;
			c->ev[i].running += v.running - st->last[i].running;
		}
		st->last[i].value = v.counter;
		st->last[i].enabled = v.enabled;
		st->last[i].running = v.running;
	}
	st->valid = 1;
}

/*
 * attribute() where c and rest are whole struct pmbpf_counts (task storage,
 * the idle task's, scratch; not a counts map value, cut after nr_events):
 * a global function, verified once, not for each path to it. Its scalars
 * come in st's arg_* (at most five arguments, and no stack: 6.1 allows 512
 * bytes for a chain of calls together).
 */
__noinline int attribute_full(struct cpu_state *st, struct pmbpf_counts *c,
			      struct pmbpf_counts *rest)
{
	__u64 id = bpf_get_current_pid_tgid();

	if (st)
		attribute(st, c, rest, per_thread ? (__u32)id : id >> 32,
			  bpf_get_smp_processor_id(), st->arg_now, st->arg_runtime, st->arg_know,
			  st->arg_ran);
	return 0;
}

static long sum_cpu(__u32 cpu, void *ctx)
{
	struct pmbpf_exit *e;
	struct pmbpf_counts *c;
	__u32 idx = SCRATCH_SWITCH;

	e = bpf_map_lookup_elem(&scratch, &idx);
	if (!e)
		return 1;
	c = bpf_map_lookup_percpu_elem(&counts, &e->key, cpu);
	if (!c)
		return 0;
	counts_add(&e->total, c, false);
	if (c->start_ns)
		e->total.start_ns = c->start_ns;
	if (c->comm_ns > e->total.comm_ns) {
		e->total.comm_ns = c->comm_ns;
		__builtin_memcpy(e->total.comm, c->comm, sizeof(c->comm));
	}
	return 0;
}

/*
 * Take a thread's counts: true when taken. The fold iterator can be
 * preempted while it holds them; a switch that finds them held credits its
 * span to the entry itself.
 */
static __always_inline bool thread_take(struct task_state *ps)
{
	return __sync_val_compare_and_swap(&ps->busy, 0, 1) == 0;
}

/* Full barrier (an atomic exchange): the counts' stores are seen before busy's. */
static __always_inline void thread_release(struct task_state *ps)
{
	__sync_lock_test_and_set(&ps->busy, 0);
}

/* Move a thread's counts (taken) to its process's entry in counts_cgid. */
static __always_inline void thread_fold_body(struct task_state *ps, __u32 tgid,
					     struct task_struct *task, __u32 scratch_idx)
{
	struct pmbpf_counts *c;

	if (!ps->has_counts)
		return;
	/* task: prev at a switch, or the iterator's: trusted pointers */
	c = entry_get(tgid, task->pid, ps->counts_cgid, task, scratch_idx, true);
	if (!c)
		return; /* kept for the next fold */
	credit_shared(c, &ps->counts);
	__builtin_memset(&ps->counts, 0, sizeof(ps->counts));
	ps->has_counts = 0;
}

static __noinline void thread_fold(struct task_state *ps, __u32 tgid, struct task_struct *task,
				   __u32 scratch_idx)
{
	thread_fold_body(ps, tgid, task, scratch_idx);
}

/*
 * thread_fold() at a switch, of the thread leaving (current): a global
 * function, verified once rather than at each of its callers in every path
 * of the switch program (bpf_get_current_task_btf(): 5.11, switch_btf only).
 */
__noinline int fold_current(struct task_state *ps)
{
	struct task_struct *task = bpf_get_current_task_btf();

	if (ps)
		thread_fold_body(ps, task->tgid, task, SCRATCH_SWITCH);
	return 0;
}

/*
 * Where a switch credits the span of prev (a thread of tgid, cgroup cgid):
 * its counts, taken, or NULL when the fold iterator holds them.
 */
static __always_inline struct pmbpf_counts *thread_counts(struct task_state *ps, __u64 cgid)
{
	if (!ps || !thread_take(ps))
		return NULL;
	if (ps->has_counts && ps->counts_cgid != cgid)
		fold_current(ps); /* it moved: the old cgroup's */
	if (ps->has_counts && ps->counts_cgid != cgid) {
		thread_release(ps);
		return NULL;
	}
	ps->counts_cgid = cgid;
	ps->has_counts = 1;
	return &ps->counts;
}

/*
 * The last thread of a process is gone (--threads: a thread is; proc_end:
 * the last one): send its final counts, drop it.
 * Summing another CPU's slot needs bpf_loop (5.17, commit e6f2dd0f8067)
 * and bpf_map_lookup_percpu_elem (5.19, commit 07343110b293); programs
 * built with sum false (for older kernels) hold neither, and leave the
 * entry marked dead for userspace to read and delete at its next read.
 */
static __always_inline void process_exit(__u32 tgid, __u32 tid, __u64 cgid, bool proc_end,
					 const bool sum)
{
	struct pmbpf_key key = {};
	struct pmbpf_counts *c;
	struct pmbpf_exit *e;
	__u32 idx = SCRATCH_SWITCH, end = proc_end ? PMBPF_F_PROC_EXIT : 0;

	key.tgid = tgid;
	key.tid = per_thread ? tid : 0;
	key.cgroup_id = cgid;
	c = bpf_map_lookup_elem(&counts, &key);
	if (!c)
		return; /* folded into the overflow entry, or filtered out */
	if (!sum && !counts_shared) {
		c->flags |= PMBPF_F_DEAD | end;
		return;
	}

	e = bpf_map_lookup_elem(&scratch, &idx);
	if (!e)
		return;
	__builtin_memset(e, 0, sizeof(*e));
	e->key = key;
	e->exit_ns = bpf_ktime_get_ns();
	if (counts_shared) {
		/* one value: copied as far as the map's value goes */
		counts_add(&e->total, c, false);
		e->total.start_ns = c->start_ns;
		e->total.comm_ns = c->comm_ns;
		__builtin_memcpy(e->total.comm, c->comm, sizeof(c->comm));
	} else if (sum) {
		/* compiled out of the mark programs: before 5.13 a bpf_loop call does not load */
		bpf_loop(nr_cpus, sum_cpu, NULL, 0);
	}
	e->total.flags = end;

	if (bpf_ringbuf_output(&exits, e, sizeof(*e), 0)) {
		c = bpf_map_lookup_elem(&counts, &key);
		/*
		 * Leave the entry for userspace to find and report as dead: the
		 * record is dropped, the exit is not lost. Lost only when the
		 * entry is gone too.
		 */
		if (c) {
			c->flags |= PMBPF_F_DEAD | end;
			stat_inc(PMBPF_STAT_EXITS_DROPPED);
		} else {
			stat_inc(PMBPF_STAT_EXITS_LOST);
		}
		return;
	}
	stat_inc(PMBPF_STAT_EXITS);
	bpf_map_delete_elem(&counts, &key);
}

/*
 * ran_drain: list the thread (its counts held) on its CPU's list of the
 * current generation at its first credit there; on a full list, fold it now.
 */
static __always_inline void ran_list_push(struct task_state *ps, __u32 pid, __u32 cpu)
{
	__u64 gen = list_gen;
	__u32 idx = cpu * 2 + (gen & 1), n;
	struct ran_list *l;

	if (!ran_drain || ps->listed_gen == gen)
		return;
	l = bpf_map_lookup_elem(&ran_lists, &idx);
	if (!l)
		return;
	n = l->n;
	if (n < RAN_LIST_LEN) {
		barrier_var(n);
		l->tid[n & (RAN_LIST_LEN - 1)] = pid;
		l->n = n + 1;
		ps->listed_gen = gen;
		return;
	}
	stat_inc(PMBPF_STAT_RAN_FULL);
	fold_current(ps);
}

/*
 * At a thread's last switch: fold its counts. The fold iterator skips exiting
 * threads, so it can hold this one only if it took it before the exit
 * began and is still preempted: then it folds it itself, late.
 */
static __always_inline void thread_fold_last(struct task_state *ps)
{
	int i;

	for (i = 0; i < 64; i++) {
		if (thread_take(ps)) {
			fold_current(ps);
			thread_release(ps);
			return;
		}
	}
}

/*
 * counts_shared, at a switch: a span's credits in a scratch record (src) to
 * the entry of the thread leaving (current), in cgroup cgid. Global: see
 * fold_current().
 */
__noinline int credit_current_entry(const struct pmbpf_counts *src, __u64 cgid)
{
	struct task_struct *task = bpf_get_current_task_btf();

	if (src)
		credit_shared(entry_get(task->tgid, task->pid, cgid, task, SCRATCH_SWITCH, true),
			      src);
	return 0;
}

/* process_exit() of switch_btf (it sums exits): global, scalars only. */
__noinline int exit_record(__u32 tgid, __u32 tid, __u64 cgid, bool proc_end)
{
	process_exit(tgid, tid, cgid, proc_end, true);
	return 0;
}

/* credit_owner() at a switch: global, see fold_current(). */
__noinline int credit_owner_global(struct cpu_state *st, const struct pmbpf_counts *rest)
{
	if (st)
		credit_owner(st, rest);
	return 0;
}

#define SPAN_WANT 0x1 /* the task leaving is monitored */
#define SPAN_DEAD 0x2 /* and this is its last switch */

/*
 * counts_shared, at a switch: credit the span of the task leaving (current;
 * ps its task storage, or NULL) up to now (know: on the scheduler's clock),
 * to its task storage, the idle task's per-CPU counts, or else (its last
 * switch, its counts held by a fold) a scratch record that goes to the
 * entry with atomics after; fold it at its last switch. A global function:
 * verified once, not once for every path of the switch program to it.
 * Needs pointer arguments (5.12) and bpf_get_current_task_btf() (5.11):
 * only switch_btf calls it, which loads on 5.19 and later.
 */
__noinline int shared_span_end(struct cpu_state *st, struct task_state *ps, __u64 now, __u64 know,
			       __u32 span)
{
	struct task_struct *prev = bpf_get_current_task_btf();
	struct pmbpf_counts *c = NULL, *rest = NULL;
	__u32 tgid = prev->tgid, pid = prev->pid, cpu = bpf_get_smp_processor_id();
	__u64 cgid = 0, runtime = 0, ran = RAN_SPAN;
	bool dead = span & SPAN_DEAD, held = false, slow = false;

	if (!st)
		return 0;
	if (span & SPAN_WANT) {
		cgid = span_cgroup(st, pid, tgid);
		runtime = unseen_span_runtime(st, prev, pid, now, true);
		if (!tgid) {
			c = idle_get();
			if (idle_cgid != cgid)
				idle_cgid = cgid;
		} else {
			if (!dead)
				c = thread_counts(ps, cgid);
			held = c;
			if (!c) {
				c = credit_scratch(SCRATCH_CREDIT);
				slow = true;
			}
		}
		if (runtime)
			rest = span_rest(st);
		ran = oncpu_ran(st, pid, task_sum(prev, true));
		if (!pid && rq_offline(prev, true)) {
			offline_span(st, know);
			c = NULL;
			rest = NULL;
			runtime = 0; /* nor is it unattributed */
		}
	}
	st->arg_now = now;
	st->arg_runtime = runtime;
	st->arg_know = know;
	st->arg_ran = ran;
	attribute_full(st, c, rest);
	if (held && ps) {
		ran_list_push(ps, pid, cpu);
		thread_release(ps);
	}
	if (slow)
		credit_current_entry(c, cgid);
	credit_owner_global(st, rest);
	if (!dead)
		return 0;
	/* the thread's last switch: the rest of its counts to the entry, before an exit record */
	if (ps)
		thread_fold_last(ps);
	if (c) {
		bool proc_end = BPF_CORE_READ(prev, signal, live.counter) == 0;

		if (proc_end || per_thread)
			exit_record(tgid, pid, cgid, proc_end);
	}
	return 0;
}

/*
 * Without counts_shared, at a switch: credit the span of the task leaving
 * (prev, in cgroup cgid) up to st->arg_now (arg_know on the scheduler's
 * clock) to its process's (--threads: thread's) entry in the per-CPU counts
 * map; send its exit record at its last switch. Not inlined: on_switch()'s
 * stack stays small enough for the shared path's chain of global functions
 * (6.1 allows 512 bytes for a chain of calls together).
 */
static __always_inline void percpu_span_end_body(struct cpu_state *st, struct task_struct *prev,
						 __u64 cgid, __u32 span, const bool btf,
						 const bool sum_exits)
{
	struct pmbpf_counts *c = NULL, *rest = NULL;
	__u64 id, runtime = 0, ran = RAN_SPAN, now = st->arg_now, know = st->arg_know;
	__u32 tgid, pid;

	if (btf) {
		tgid = prev->tgid;
		pid = prev->pid;
	} else {
		id = bpf_get_current_pid_tgid();
		tgid = id >> 32;
		pid = (__u32)id;
	}
	if (span & SPAN_WANT) {
		runtime = unseen_span_runtime(st, prev, pid, now, btf);
		c = entry_get(tgid, pid, cgid, prev, SCRATCH_SWITCH, btf);
		if (runtime)
			rest = span_owner(st);
		ran = oncpu_ran(st, pid, task_sum(prev, btf));
		if (!pid && rq_offline(prev, btf)) {
			offline_span(st, know);
			c = NULL;
			rest = NULL;
			runtime = 0; /* nor is it unattributed */
		}
	}
	attribute(st, c, rest, per_thread ? pid : tgid, bpf_get_smp_processor_id(), now, runtime,
		  know, ran);
	if (c && (span & SPAN_DEAD)) {
		bool proc_end = BPF_CORE_READ(prev, signal, live.counter) == 0;

		if (proc_end || per_thread)
			process_exit(tgid, pid, cgid, proc_end, sum_exits);
	}
}

#define PERCPU_SPAN_END(name, btf, sum_exits)                                                   \
	static __noinline void name(struct cpu_state *st, struct task_struct *prev, __u64 cgid, \
				    __u32 span)                                                 \
	{                                                                                       \
		percpu_span_end_body(st, prev, cgid, span, btf, sum_exits);                     \
	}

/* one per switch program: btf and sum_exits are known when each is compiled */
PERCPU_SPAN_END(percpu_span_end_btf, true, true)
PERCPU_SPAN_END(percpu_span_end_raw, false, true)
PERCPU_SPAN_END(percpu_span_end_btf_mark, true, false)
PERCPU_SPAN_END(percpu_span_end_raw_mark, false, false)

static __always_inline void percpu_span_end(struct cpu_state *st, struct task_struct *prev,
					    __u64 cgid, __u32 span, const bool btf,
					    const bool sum_exits)
{
	if (btf && sum_exits)
		percpu_span_end_btf(st, prev, cgid, span);
	else if (sum_exits)
		percpu_span_end_raw(st, prev, cgid, span);
	else if (btf)
		percpu_span_end_btf_mark(st, prev, cgid, span);
	else
		percpu_span_end_raw_mark(st, prev, cgid, span);
}

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

static __always_inline int on_switch(bool preempt, struct task_struct *prev,
				     struct task_struct *next, unsigned int prev_state,
				     const bool btf, const bool sum_exits)
{
	struct cpu_state *st;
	struct task_state *ps = NULL;
	struct task_ts *ts;
	__u32 zero = 0, cpu, tgid, next_tgid, pid;
	__u64 cgid = 0, next_cgid, id, tick;
	bool dead = prev_state & TASK_DEAD, has_lat = false, want, next_want;
	/* sum_exits: switch_btf, loaded on 5.19 and later (shared_span_end()) */
	const bool shared = btf && sum_exits && counts_shared;
	__u64 now, raw, lat = 0, off = 0, queued = 0, run_delay = 0, next_sum;
	__u64 part = 0;
	__u32 migrated = 0, part_state = OFF_OTHER;

	/* prev is current: two loads on tp_btf instead of a helper call */
	if (btf) {
		tgid = prev->tgid;
		pid = prev->pid;
	} else {
		id = bpf_get_current_pid_tgid();
		tgid = id >> 32;
		pid = (__u32)id;
	}
	next_tgid = btf ? next->tgid : BPF_CORE_READ(next, tgid);
	want = wanted(prev, tgid, btf);
	next_want = wanted(next, next_tgid, btf);
	st = bpf_map_lookup_elem(&cpu_states, &zero);
	if (!st)
		return 0;
	cpu = bpf_get_smp_processor_id();
	/*
	 * Filtering: counters are read only where a monitored task's span
	 * starts or ends, and at the first switch of each tick, so that this
	 * CPU's attribution point is never old (see unseen_span_runtime());
	 * otherwise nothing is done between two others. Jiffies, not the
	 * clock: reading the clock here cost ~45 ns per switch.
	 */
	if (!want && !next_want) {
		now = 0;
		/* --delays: every span counts, monitored or not (the runner may be anyone) */
		if (delay_on) {
			now = switch_clock(next, cpu, &queued, &run_delay, &raw, btf);
			delay_span_end(tgid, bpf_get_current_cgroup_id(), now);
		}
		if (!st->valid)
			return 0;
		tick = bpf_jiffies64();
		if (tick == st->refresh_jiffies)
			return 0;
		st->refresh_jiffies = tick;
		if (!now)
			now = switch_clock(next, cpu, &queued, &run_delay, &raw, btf);
		attribute(st, NULL, NULL, 0, cpu, now, 0, raw, RAN_SPAN);
		st->span_pid = btf ? next->pid : BPF_CORE_READ(next, pid);
		st->run_base = task_sum(next, btf); /* it may be moved into the filter */
		st->span_want = 0;
		return 0;
	}

	now = switch_clock(next, cpu, &queued, &run_delay, &raw, btf);
	if (!preempt && prev_state != TASK_RUNNING)
		st->pend_nvcsw++;
	else
		st->pend_nivcsw++;

	/* prev goes off CPU; when still runnable it waits in the run queue from now */
	if (dead) {
		if (!btf)
			bpf_map_delete_elem(&task_ts_hash, &pid);
		else
			ps = (struct task_state *)ts_get(prev, false, btf);
	} else if (tgid && want) {
		ts = ts_get(prev, true, btf);
		if (btf)
			ps = (struct task_state *)ts;
		if (ts) {
			ts->offcpu_ns = now;
			ts->wakeup_ns = prev_state == TASK_RUNNING ? now : 0;
			ts->last_cpu = cpu + 1;
			ts->off_state = off_state(preempt, prev_state);
			ts->sum_out = task_sum(prev, btf);
		}
	}
	/* next comes on CPU: its wait ends */
	if (next_tgid && next_want) {
		/* without wakeup programs its timestamps start here */
		ts = ts_get(next, !wakeup_progs, btf);
		if (ts) {
			/* set on another run queue: its clock may be a little ahead */
			if (ts->wakeup_ns) {
				lat = now > ts->wakeup_ns ? now - ts->wakeup_ns : 0;
				has_lat = true;
				ts->wakeup_ns = 0;
			} else if (queued) {
				/* woken: queued since its wakeup's clock */
				lat = now > queued ? now - queued : 0;
				/*
				 * and before, on a run queue it was moved from
				 * while it waited: the kernel added that wait to
				 * run_delay there (sched_info_dequeue())
				 */
				if (ts->run_delay && run_delay + 1 > ts->run_delay)
					lat += run_delay + 1 - ts->run_delay;
				has_lat = true;
			}
			/* run_delay once the kernel has timed this wait (sched_info_arrive()), + 1 */
			if (!wakeup_progs)
				ts->run_delay =
					run_delay + (queued && raw > queued ? raw - queued : 0) + 1;
			/*
			 * Not when it ran since (its se.sum_exec_runtime grew):
			 * a switch-in and a switch-out of it came with no
			 * sched_switch event (seen on 6.18 under load), and
			 * that switch-out is stale: the span is lost, as
			 * another unseen switch's, not counted twice.
			 */
			if (ts->offcpu_ns && task_sum(next, btf) == ts->sum_out) {
				off = now > ts->offcpu_ns ? now - ts->offcpu_ns : 0;
				/* left in a state until woken (has_lat), then waited */
				part_state = has_lat ? ts->off_state : OFF_OTHER;
			}
			ts->offcpu_ns = 0;
			/*
			 * off-CPU at least its run-queue wait: a thread first
			 * seen waiting (a new one) has no switch-out, and the
			 * wakeup's clock can be a little ahead of another CPU's
			 */
			if (lat > off)
				off = lat;
			part = off - lat;
			migrated = ts->last_cpu && ts->last_cpu != cpu + 1;
		}
	}

	/*
	 * Between threads of one process in one cgroup (same css_set) the
	 * credit would go to the same entry: defer it to the next switch.
	 */
	if (!per_thread && !dead && !has_lat && want && st->valid && tgid == next_tgid &&
	    st->span_pid == pid &&
	    (btf ? prev->cgroups == next->cgroups :
		   BPF_CORE_READ(prev, cgroups) == BPF_CORE_READ(next, cgroups))) {
		st->pend_offcpu_ns += off;
		if (part_state < OFF_NR)
			st->pend_split[part_state] += part;
		st->pend_migrations += migrated;
		st->pend_oncpu_ns = oncpu_ran(st, pid, task_sum(prev, btf));
		st->span_pid = btf ? next->pid : BPF_CORE_READ(next, pid);
		st->run_base = task_sum(next, btf);
		return 0;
	}

	/*
	 * The span is credited to the cgroup the task was in when it started:
	 * a task that moves itself is split at the move (on_cgroup_attach).
	 */
	if (want)
		cgid = span_cgroup(st, pid, tgid);
	next_cgid = task_cgroup_id(next, btf);
	if (delay_on) {
		delay_span_end(tgid, want ? cgid : bpf_get_current_cgroup_id(), now);
		if (has_lat && next_want)
			delay_wait(next_tgid, next_cgid, lat, now);
	}

	next_sum = task_sum(next, btf);
	if (shared) {
		shared_span_end(st, ps, now, raw, (want ? SPAN_WANT : 0) | (dead ? SPAN_DEAD : 0));
	} else {
		st->arg_now = now;
		st->arg_know = raw;
		percpu_span_end(st, prev, cgid, (want ? SPAN_WANT : 0) | (dead ? SPAN_DEAD : 0),
				btf, sum_exits);
	}
	st->run_base = next_sum;
	st->pend_offcpu_ns = off;
	if (part_state < OFF_NR)
		st->pend_split[part_state] = part;
	st->pend_migrations = migrated;
	st->pend_runq_ns = lat;
	st->pend_runq = has_lat;
	st->span_pid = btf ? next->pid : BPF_CORE_READ(next, pid);
	st->pend_tgid = per_thread ? st->span_pid : next_tgid;
	st->span_cgid = next_cgid;
	st->span_tgid = next_tgid;
	st->span_want = next_want;
	return 0;
}

/*
 * sched_switch passes prev_state since 5.18 (commit fa2c3254d7cf,
 * "sched/tracing: Don't re-read p->state when emitting sched_switch
 * event"); before, the programs read it from the task, whose field was
 * state until 5.14 (commit 2f064a59a11f, "sched: Change task_struct::state").
 * The fourth argument is only touched where it exists: the verifier drops
 * the other branch, and with it the access beyond the tracepoint's arguments.
 */
const volatile bool switch_has_prev_state = true;

struct task_struct___old {
	long state;
} __attribute__((preserve_access_index));

static __always_inline unsigned int switch_prev_state(unsigned long long *ctx)
{
	struct task_struct *prev = (void *)ctx[1];

	if (switch_has_prev_state)
		return ctx[3];
	if (bpf_core_field_exists(prev->__state))
		return BPF_CORE_READ(prev, __state);
	return BPF_CORE_READ((struct task_struct___old *)prev, state);
}

#define SWITCH_ARGS(ctx) (bool)(ctx)[0], (void *)(ctx)[1], (void *)(ctx)[2], switch_prev_state(ctx)

/* Exits summed here and sent through the ring buffer (5.19 and later). */
SEC("tp_btf/sched_switch")
int switch_btf(unsigned long long *ctx)
{
	return on_switch(SWITCH_ARGS(ctx), true, true);
}

SEC("raw_tp/sched_switch")
int switch_raw(unsigned long long *ctx)
{
	return on_switch(SWITCH_ARGS(ctx), false, true);
}

/* Exits marked dead for userspace: kernels without bpf_loop or percpu lookups. */
SEC("tp_btf/sched_switch")
int switch_btf_mark(unsigned long long *ctx)
{
	return on_switch(SWITCH_ARGS(ctx), true, false);
}

SEC("raw_tp/sched_switch")
int switch_raw_mark(unsigned long long *ctx)
{
	return on_switch(SWITCH_ARGS(ctx), false, false);
}

static __always_inline int on_wakeup(struct task_struct *p, const bool btf)
{
	struct task_ts *ts;
	__u64 now;

	stat_inc(PMBPF_STAT_WAKEUPS);
	now = wakeup_clock(p, btf); /* every wakeup: it may leave a switch's clock stale */
	if (filter_tgid && BPF_CORE_READ(p, tgid) != filter_tgid)
		return 0;
	ts = ts_get(p, true, btf);
	if (ts)
		ts->wakeup_ns = now;
	return 0;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(wakeup_btf, struct task_struct *p)
{
	return on_wakeup(p, true);
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(wakeup_new_btf, struct task_struct *p)
{
	return on_wakeup(p, true);
}

SEC("raw_tp/sched_wakeup")
int BPF_PROG(wakeup_raw, struct task_struct *p)
{
	return on_wakeup(p, false);
}

SEC("raw_tp/sched_wakeup_new")
int BPF_PROG(wakeup_new_raw, struct task_struct *p)
{
	return on_wakeup(p, false);
}

static __always_inline int on_exec(void)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct pmbpf_key key = {};
	struct pmbpf_counts *c;

	key.tgid = id >> 32;
	key.tid = per_thread ? (__u32)id : 0;
	key.cgroup_id = bpf_get_current_cgroup_id();
	c = bpf_map_lookup_elem(&counts, &key);
	if (!c)
		return 0;
	bpf_get_current_comm(c->comm, sizeof(c->comm));
	c->comm_ns = bpf_ktime_get_ns();
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(exec_btf)
{
	return on_exec();
}

SEC("raw_tp/sched_process_exec")
int BPF_PROG(exec_raw)
{
	return on_exec();
}

/*
 * Credit the current task up to now, without counting a switch. moved: the
 * task has just moved itself to another cgroup.
 */
static __always_inline int credit_current(bool moved)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct pmbpf_counts *c = NULL, *rest = NULL;
	struct cpu_state *st;
	__u32 zero = 0, tgid, pid;
	__u64 cgid = 0, id, runtime, now, sum = 0;

	st = bpf_map_lookup_elem(&cpu_states, &zero);
	if (!st)
		return 0;
	id = bpf_get_current_pid_tgid();
	tgid = id >> 32;
	pid = (__u32)id;
	if (!wanted(task, tgid, false))
		return 0; /* the next monitored task's switch-in sets the starting point */
	now = flush_clock(task);
	runtime = unseen_span_runtime(st, task, pid, now, false);
	/*
	 * A task that has just moved itself into the filter's subtree ran
	 * outside it until now: nothing to credit (with no filter, span_want
	 * is always 1 and the span goes to the cgroup it started in). Nor when
	 * this CPU did not see it switch in (runtime): its time since then was
	 * in a cgroup no longer known, and the move is mostly into the filter
	 * (stat's command, a container's first process); the span's start, up
	 * to that switch-in, is dropped with it (other tasks' time, rare).
	 */
	if (!(moved && (runtime || !st->span_want))) {
		cgid = span_cgroup(st, pid, tgid);
		/*
		 * counts_shared: the idle task's per-CPU counts, or a scratch
		 * record that goes to the shared entry with atomics after (no
		 * trusted task pointer here for the thread's task storage)
		 */
		if (counts_shared)
			c = tgid ? credit_scratch(SCRATCH_CREDIT) : idle_get();
		else
			c = entry_get(tgid, pid, cgid, task, SCRATCH_SWITCH, false);
		if (runtime)
			rest = span_rest(st);
	}
	if (pid) {
		sum = task_sum_now(task, now);
	} else if (rq_offline(task, false)) {
		offline_span(st, now);
		c = NULL;
		rest = NULL;
		runtime = 0;
	}
	attribute(st, c, rest, per_thread ? pid : tgid, bpf_get_smp_processor_id(), now, runtime,
		  now, oncpu_ran(st, pid, sum));
	if (counts_shared && tgid && c)
		credit_shared(entry_get(tgid, pid, cgid, task, SCRATCH_SWITCH, false), c);
	if (counts_shared)
		credit_owner(st, rest);
	st->span_cgid = bpf_get_current_cgroup_id();
	st->span_tgid = tgid;
	st->span_pid = pid;
	st->run_base = sum;
	st->span_want = 1;
	return 0;
}

/*
 * Run by userspace on each CPU (BPF_PROG_TEST_RUN, BPF_F_TEST_RUN_ON_CPU)
 * before a read: credits the task running there up to now, so that a task
 * that never switches out is not shown as zero and then a spike.
 */
SEC("raw_tp")
int flush(void *ctx)
{
	struct cpu_state *st;
	__u32 zero = 0;

	stat_inc(PMBPF_STAT_FLUSHES);
	if (delay_on)
		delay_drain();
	credit_current(false);
	st = bpf_map_lookup_elem(&cpu_states, &zero);
	if (st && st->gap_ns) {
		stat_add(PMBPF_STAT_ONCPU_GAP_NS, st->gap_ns);
		st->gap_ns = 0;
	}
	return 0;
}

/*
 * counts_shared, run by userspace after the flush and before each read:
 * every thread's counts to its process's entry. Exiting threads fold their
 * own at their last switch (thread_fold_last). Counts that a switch on
 * another CPU holds are free within nanoseconds: tried a few times, then
 * left for the next read.
 */
SEC("iter/task")
int fold(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	struct task_state *ps;
	int i;

	/* most tasks of a host have no local storage: no helper call for them */
	if (!task || (task->flags & PF_EXITING) || !task->bpf_storage)
		return 0;
	ps = bpf_task_storage_get(&task_ts_storage, task, 0, 0);
	if (!ps || !ps->has_counts)
		return 0;
	for (i = 0; i < 64; i++) {
		if (thread_take(ps)) {
			thread_fold(ps, task->tgid, task, SCRATCH_FOLD);
			thread_release(ps);
			break;
		}
	}
	return 0;
}

extern struct task_struct *bpf_task_from_pid(s32 pid) __ksym __weak;
extern void bpf_task_release(struct task_struct *p) __ksym __weak;

/* The drain of one listed thread: its counts to its entry, unless it is exiting (it folds them). */
static long drain_one(__u32 i, void *ctx)
{
	__u32 idx = *(__u32 *)ctx;
	struct ran_list *l = bpf_map_lookup_elem(&ran_lists, &idx);
	struct task_struct *task;
	struct task_state *ps;
	int k;

	if (!l)
		return 1;
	/* i < n <= RAN_LIST_LEN; the mask kept for the verifier */
	barrier_var(i);
	task = bpf_task_from_pid(l->tid[i & (RAN_LIST_LEN - 1)]);
	if (!task)
		return 0; /* gone: folded at its last switch */
	ps = bpf_task_storage_get(&task_ts_storage, task, 0, 0);
	if (ps && ps->has_counts && !(task->flags & PF_EXITING)) {
		for (k = 0; k < 64; k++) {
			if (thread_take(ps)) {
				thread_fold(ps, task->tgid, task, SCRATCH_FOLD);
				thread_release(ps);
				break;
			}
		}
	}
	bpf_task_release(task);
	return 0;
}

/*
 * ran_drain, run by userspace over ran_lists after it bumped list_gen and
 * flushed every CPU: each CPU's list of the previous generation, folded and
 * emptied.
 */
SEC("iter/bpf_map_elem")
int drain(struct bpf_iter__bpf_map_elem *ctx)
{
	__u32 *key = ctx->key, idx, n;
	struct ran_list *l;

	if (!key)
		return 0;
	idx = *key;
	if ((idx & 1) == (list_gen & 1))
		return 0; /* the current generation's */
	l = bpf_map_lookup_elem(&ran_lists, &idx);
	if (!l)
		return 0;
	n = l->n;
	bpf_loop(n < RAN_LIST_LEN ? n : RAN_LIST_LEN, drain_one, &idx, 0);
	l->n = 0;
	return 0;
}

/* What rebase read from the new counters; userspace's system-wide baseline. */
struct pmbpf_reading rebase_readings[PMBPF_MAX_EVENTS];

/*
 * Run by userspace (BPF_PROG_TEST_RUN on the CPU, where no switch can
 * interleave) after it opened a returning CPU's counters in its other bank:
 * switch to them, and make their current readings the starting point, so
 * that the next delta is neither negative nor the counts of the dead ones.
 * Clock events are spans measured here: their starting points stay.
 */
SEC("raw_tp")
int rebase(void *ctx)
{
	struct bpf_perf_event_value v;
	struct cpu_state *st;
	__u32 zero = 0, cpu = bpf_get_smp_processor_id(), i;

	st = bpf_map_lookup_elem(&cpu_states, &zero);
	if (!st)
		return 1;
	st->bank ^= 1;
	for (i = 0; i < PMBPF_MAX_EVENTS; i++) {
		if (i >= nr_events)
			break;
		__builtin_memset(&v, 0, sizeof(v));
		if (ev_switches[i])
			continue; /* no counter */
		if (bpf_perf_event_read_value(&events, event_index(st, i, cpu), &v, sizeof(v)))
			stat_inc(PMBPF_STAT_READ_ERRORS);
		rebase_readings[i].value = v.counter;
		rebase_readings[i].enabled = v.enabled;
		rebase_readings[i].running = v.running;
		if (ev_clock[i] || ev_switches[i])
			continue;
		st->last[i].value = v.counter;
		if (ev_timed[i]) {
			st->last[i].enabled = v.enabled;
			st->last[i].running = v.running;
		}
	}
	return 0;
}

/*
 * A process that moves itself to another cgroup (echo $$ > cgroup.procs):
 * what it ran so far belongs to the old cgroup. Moves of tasks running
 * elsewhere are split at their next switch or flush.
 */
static __always_inline int on_cgroup_attach(__u32 moved_tgid)
{
	if (moved_tgid != bpf_get_current_pid_tgid() >> 32)
		return 0;
	return credit_current(true);
}

SEC("tp_btf/cgroup_attach_task")
int BPF_PROG(attach_btf, struct cgroup *dst, const char *path, struct task_struct *task,
	     bool threadgroup)
{
	return on_cgroup_attach(BPF_CORE_READ(task, tgid));
}

SEC("raw_tp/cgroup_attach_task")
int BPF_PROG(attach_raw, struct cgroup *dst, const char *path, struct task_struct *task,
	     bool threadgroup)
{
	return on_cgroup_attach(BPF_CORE_READ(task, tgid));
}

/*
 * --hot: a low-rate per-CPU cpu-clock sample counts the user address the
 * monitored process was at. Userspace reads and deletes the entries at each
 * collection. hot_task_regs (5.15+, bpf_task_pt_regs) lets a sample taken in
 * the kernel count where the process entered it; without it such a sample
 * counts as kernel (ip 0).
 */
const volatile bool hot_task_regs = false;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, struct pmbpf_hot_key);
	__type(value, __u64);
} hot_ips SEC(".maps");

SEC("perf_event")
int hot_sample(struct bpf_perf_event_data *ctx)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct pmbpf_hot_key key = {};
	__u64 *n, one = 1, ip;

	key.tgid = bpf_get_current_pid_tgid() >> 32;
	if (!key.tgid || !wanted(task, key.tgid, false))
		return 0;
	/* user addresses are the lower half on 64-bit: the sign bit is clear */
	ip = PT_REGS_IP(&ctx->regs);
	if ((__s64)ip <= 0) {
		ip = 0;
		if (hot_task_regs) {
			struct pt_regs *regs =
				(struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());

			ip = PT_REGS_IP_CORE(regs);
			if ((__s64)ip <= 0)
				ip = 0;
		}
	}
	key.ip = ip;
	n = bpf_map_lookup_elem(&hot_ips, &key);
	if (n)
		__sync_fetch_and_add(n, 1);
	else
		bpf_map_update_elem(&hot_ips, &key, &one, BPF_NOEXIST);
	return 0;
}
