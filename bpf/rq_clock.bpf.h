/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The run-queue clock: the clock every time figure is read on, at
 * wakeups, switches and flushes.
 *
 * Part of pmbpf.bpf.c. Includes the headers it uses; vmlinux.h, bpf_helpers.h,
 * bpf_core_read.h and bpf_tracing.h come first.
 */
#ifndef __PMBPF_RQ_CLOCK_BPF_H
#define __PMBPF_RQ_CLOCK_BPF_H

#include "core_fixes.bpf.h"
#include "state.bpf.h"

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
	if (btf && CFS_RQ_HAS_RQ)
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

	if (btf && CFS_RQ_HAS_RQ) {
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
	if (!TASK_HAS_SCHED_INFO(p))
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

#endif /* __PMBPF_RQ_CLOCK_BPF_H */
