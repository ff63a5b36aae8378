/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The end of the span of the task leaving a CPU at a switch: credited
 * through the shared counts map (shared_span_end()) or the per-CPU one
 * (percpu_span_end()).
 *
 * Part of pmbpf.bpf.c. Includes the headers it uses; vmlinux.h, bpf_helpers.h,
 * bpf_core_read.h and bpf_tracing.h come first.
 */
#ifndef __PMBPF_SPAN_END_BPF_H
#define __PMBPF_SPAN_END_BPF_H

#include "state.bpf.h"
#include "oncpu.bpf.h"
#include "counts.bpf.h"
#include "attribute.bpf.h"
#include "fold.bpf.h"

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
	struct pmbpf_counts *c = NULL, *rest = NULL;
	__u32 tgid, pid, cpu = bpf_get_smp_processor_id();
	__u64 cgid = 0, runtime = 0, ran = RAN_SPAN;
	bool dead = span & SPAN_DEAD, held = false, slow = false;

	if (!st)
		return 0;
	tgid = st->arg_tgid;
	pid = st->arg_pid;
	if (span & SPAN_WANT) {
		cgid = span_cgroup(st, pid, tgid);
		/* the task leaving is read only where needed: a helper call (a return) */
		if (st->valid && st->span_pid != pid)
			runtime =
				unseen_span_runtime(st, bpf_get_current_task_btf(), pid, now, true);
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
		ran = oncpu_ran(st, pid, st->arg_sum);
		if (!pid && span_offline(st, bpf_get_current_task_btf(), pid, know, true)) {
			c = NULL;
			rest = NULL;
			runtime = 0; /* nor is it unattributed */
		}
	}
	/* the slow path (shared_span_end_fast() is the common one): attribute() not inlined here */
	st->arg_now = now;
	st->arg_runtime = runtime;
	st->arg_know = know;
	st->arg_ran = ran;
	st->arg_owner = per_thread ? pid : tgid;
	if (held)
		attribute_full(st, ps, NULL, rest);
	else
		attribute_full(st, NULL, c, rest);
	if (held && ps) {
		ran_list_push(ps, pid, cpu);
		thread_release(ps);
	}
	if (slow)
		credit_current_entry(c, cgid);
	if (rest)
		credit_owner_global(st, rest);
	if (!dead)
		return 0;
	/* the thread's last switch: the rest of its counts to the entry, before an exit record */
	if (ps)
		thread_fold_last(ps);
	if (c) {
		struct task_struct *prev = bpf_get_current_task_btf();
		bool proc_end = BPF_CORE_READ(prev, signal, live.counter) == 0;

		if (proc_end || per_thread)
			exit_record(tgid, pid, cgid, proc_end);
	}
	return 0;
}

/*
 * shared_span_end()'s common case, inline (a global function's call and
 * return cost ~15 ns per switch here: SRSO's safe RET): a monitored thread
 * whose switch-in this CPU saw, its counts free and in this cgroup,
 * credited in its task storage. False, having changed nothing: the global
 * function does it.
 */
static __always_inline bool shared_span_end_fast(struct cpu_state *st, struct task_struct *prev,
						 struct task_state *ps, __u32 tgid, __u32 pid,
						 __u32 cpu, __u64 now, __u64 know, __u64 sum)
{
	struct pmbpf_counts *c;
	bool held;
	__u64 cgid;

	if (!ps || !tgid || !st->valid || st->span_pid != pid || st->span_tgid != tgid)
		return false;
	cgid = st->span_cgid; /* span_cgroup() */
	/* its entry's only writer: the entry itself, nothing to take or list */
	c = direct_counts(ps, prev, tgid, pid, cgid);
	held = !c;
	if (held) {
		if (!thread_take(ps))
			return false;
		if (ps->has_counts && ps->counts_cgid != cgid) {
			thread_release(ps);
			return false;
		}
		ps->counts_cgid = cgid;
		ps->has_counts = 1;
		c = thread_counts_of(ps);
	}
	attribute(st, c, NULL, per_thread ? pid : tgid, cpu, now, 0, know, oncpu_ran(st, pid, sum));
	if (held) {
		ran_list_push(ps, pid, cpu);
		thread_release(ps);
	}
	return true;
}

/*
 * Without counts_shared, at a switch: credit the span of the task leaving
 * (prev, in cgroup cgid) up to st->arg_now (arg_know on the scheduler's
 * clock) to its process's (--threads: thread's) entry in the per-CPU counts
 * map; send its exit record at its last switch.
 */
static __always_inline void percpu_span_end_body(struct cpu_state *st, struct task_struct *prev,
						 __u64 cgid, __u32 span, const bool btf,
						 const bool sum_exits)
{
	struct pmbpf_counts *c = NULL, *rest = NULL;
	__u64 runtime = 0, ran = RAN_SPAN, now = st->arg_now, know = st->arg_know;
	__u32 tgid, pid;

	current_ids(prev, &tgid, &pid, btf);
	if (span & SPAN_WANT) {
		runtime = unseen_span_runtime(st, prev, pid, now, btf);
		c = entry_get(tgid, pid, cgid, prev, SCRATCH_SWITCH, btf, btf);
		if (runtime)
			rest = span_owner(st);
		ran = oncpu_ran(st, pid, task_sum(prev, btf));
		if (span_offline(st, prev, pid, know, btf)) {
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

/*
 * Not inlined: on_switch()'s frame stays small enough for the chains of
 * calls below it (6.1 allows 512 bytes for a chain together: the shared
 * path's global functions in switch_btf, delay_wait() in all four). One per
 * switch program: btf and sum_exits are known when each is compiled.
 */
#define PERCPU_SPAN_END(name, btf, sum_exits)                                                   \
	static __noinline void name(struct cpu_state *st, struct task_struct *prev, __u64 cgid, \
				    __u32 span)                                                 \
	{                                                                                       \
		percpu_span_end_body(st, prev, cgid, span, btf, sum_exits);                     \
	}

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

/*
 * At a switch: the span of the task leaving (prev, tgid and pid; want: it
 * is monitored, dead: its last switch; ps its task storage on tp_btf) ends
 * now (know: on the scheduler's clock), in cgroup cgid. switch_btf with
 * counts_shared: the common case inline (shared_span_end_fast()), else
 * shared_span_end(); otherwise the per-CPU map's percpu_span_end().
 */
static __always_inline void switch_span_end(struct cpu_state *st, struct task_struct *prev,
					    struct task_state *ps, __u32 tgid, __u32 pid, __u32 cpu,
					    __u64 cgid, __u64 now, __u64 know, bool want, bool dead,
					    const bool btf, const bool sum_exits)
{
	/* sum_exits: switch_btf, loaded on 5.19 and later (shared_span_end()) */
	if (btf && sum_exits && counts_shared) {
		st->arg_sum = task_sum(prev, btf);
		if (!want || dead ||
		    !shared_span_end_fast(st, prev, ps, tgid, pid, cpu, now, know, st->arg_sum)) {
			st->arg_tgid = tgid;
			st->arg_pid = pid;
			shared_span_end(st, ps, now, know,
					(want ? SPAN_WANT : 0) | (dead ? SPAN_DEAD : 0));
		}
	} else {
		st->arg_now = now;
		st->arg_know = know;
		percpu_span_end(st, prev, cgid, (want ? SPAN_WANT : 0) | (dead ? SPAN_DEAD : 0),
				btf, sum_exits);
	}
}

#endif /* __PMBPF_SPAN_END_BPF_H */
