/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * attribute(): everything since a CPU's last attribution point (time,
 * switches, waits, counter deltas) to one entry.
 *
 * Part of pmbpf.bpf.c. Includes the headers it uses; vmlinux.h, bpf_helpers.h,
 * bpf_core_read.h and bpf_tracing.h come first.
 */
#ifndef __PMBPF_ATTRIBUTE_BPF_H
#define __PMBPF_ATTRIBUTE_BPF_H

#include "state.bpf.h"
#include "oncpu.bpf.h"
#include "counts.bpf.h"

/*
 * A span whose switch-in this CPU did not see (runtime): its counters'
 * deltas since the last attribution point hold other tasks' counts too (up
 * to a tick's with a filter, whose unmonitored switches move the point only
 * once a tick). They are split in proportion to time, the task's share its
 * run time over the span, in units of 1/SHARE_ONE; the rest of each goes
 * where the rest of the span's time goes (rest), or to nobody. Not the
 * switch count: its switches are the task's, as its voluntary and
 * involuntary counts (which context-switches equals). (Crediting
 * all of it to the task put 3-5% too many page faults in a -G cgroup of
 * churning processes with the host busy: tests/test_filter.py.)
 */
#define SHARE_SHIFT 20
#define SHARE_ONE   (1ULL << SHARE_SHIFT)

/* mine/span of d (mine < span) */
static __always_inline __u64 share_of(__u64 d, __u64 mine, __u64 span)
{
	__u64 share = (mine << SHARE_SHIFT) / span;

	return (d >> SHARE_SHIFT) * share + (((d & (SHARE_ONE - 1)) * share) >> SHARE_SHIFT);
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
	 * CPUs' counters in a 0.5 s interval). Not when the owner is a task the
	 * filter leaves out (span_want 0): that time is neither's to keep (it
	 * put 1-6% too much task-clock in a -G cgroup of churning processes
	 * with the host busy, tests/test_filter.py).
	 */
	if (!rest && st->span_want)
		mine = span;
	if (c && st->valid) {
		c->n[PMBPF_N_ONCPU_NS] += kmine;
		c->n[PMBPF_N_NVCSW] += st->pend_nvcsw;
		c->n[PMBPF_N_NIVCSW] += st->pend_nivcsw;
	}
	/*
	 * A span whose switch-in was not seen (unseen_span_runtime()): the
	 * wait pending is that of the task this CPU saw switch in, dropped
	 * rather than misattributed.
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
		} else if (c && st->valid && mine < span && !ev_switches[i]) {
			/*
			 * value, enabled, running written out: a helper given
			 * each field's address (rest's or NULL) made 6.1 refuse
			 * switch_btf (a pointer select: "R3 invalid mem access")
			 */
			__u64 d, m;

			d = v.counter - st->last[i].value;
			m = share_of(d, mine, span);
			c->ev[i].value += m;
			if (rest)
				rest->ev[i].value += d - m;
			d = v.enabled - st->last[i].enabled;
			m = share_of(d, mine, span);
			c->ev[i].enabled += m;
			if (rest)
				rest->ev[i].enabled += d - m;
			d = v.running - st->last[i].running;
			m = share_of(d, mine, span);
			c->ev[i].running += m;
			if (rest)
				rest->ev[i].running += d - m;
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
__noinline int attribute_full(struct cpu_state *st, struct task_state *ps, struct pmbpf_counts *c,
			      struct pmbpf_counts *rest)
{
	if (!st)
		return 0;
	/*
	 * A thread's counts (taken) come as its task storage, not as a
	 * pointer to them: a global function's pointer argument must reach
	 * a whole struct pmbpf_counts, and a thread's hold only the shared
	 * map's events (struct task_state).
	 */
	if (counts_shared && ps) {
		barrier_var(ps); /* no address computed before the NULL test */
		c = thread_counts_of(ps);
	}
	attribute(st, c, rest, st->arg_owner, bpf_get_smp_processor_id(), st->arg_now,
		  st->arg_runtime, st->arg_know, st->arg_ran);
	return 0;
}

#endif /* __PMBPF_ATTRIBUTE_BPF_H */
