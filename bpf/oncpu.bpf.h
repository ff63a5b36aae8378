/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * On-CPU time from the scheduler's own figures (se.sum_exec_runtime),
 * and the spans whose switch-in was not seen.
 *
 * Part of pmbpf.bpf.c. Includes the headers it uses; vmlinux.h, bpf_helpers.h,
 * bpf_core_read.h and bpf_tracing.h come first.
 */
#ifndef __PMBPF_ONCPU_BPF_H
#define __PMBPF_ONCPU_BPF_H

#include "state.bpf.h"
#include "rq_clock.bpf.h"

/* The process and thread ids of current (prev at sched_switch): two loads on tp_btf, not a helper call. */
static __always_inline void current_ids(struct task_struct *prev, __u32 *tgid, __u32 *pid,
					const bool btf)
{
	__u64 id;

	if (btf) {
		*tgid = prev->tgid;
		*pid = prev->pid;
		return;
	}
	id = bpf_get_current_pid_tgid();
	*tgid = id >> 32;
	*pid = (__u32)id;
}

/*
 * The idle task's span on an offline run queue (CPU hotplug, rq_offline()):
 * no row's, its time PMBPF_STAT_OFFLINE_NS.
 */
static __always_inline bool span_offline(struct cpu_state *st, struct task_struct *idle, __u32 pid,
					 __u64 know, const bool btf)
{
	if (pid || !rq_offline(idle, btf))
		return false;
	offline_span(st, know);
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
 * A task can come on CPU with no sched_switch event (a CPU going offline or
 * online; on the sandbox VM pmbpf is developed on, after any thread of its
 * init, pid 1, whose events reach no consumer: docs/findings.md), so this
 * CPU's last attribution point can be older than the span of the task now
 * leaving (without a filter, the previous switch; with one, unmonitored
 * tasks are not followed, and on_switch() moves that point forward at the
 * first switch of every tick). The span's time is then the task's own time
 * on the CPU since it switched in, as the scheduler recorded it, the rest of
 * the span going to the task the CPU saw switch in (span_owner(); nobody's
 * when the filter leaves that task out), and the counters' deltas since that
 * point are split between them in proportion to time (attribute()). Returns
 * 0 when the span is exact. (Crediting the whole span to the task leaving,
 * as without a filter before, put 0.1-0.3% too much in a cgroup of churning
 * threads against its cpu.stat.)
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
	if (sched_info_kept && TASK_HAS_SCHED_INFO(t)) {
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

#endif /* __PMBPF_ONCPU_BPF_H */
