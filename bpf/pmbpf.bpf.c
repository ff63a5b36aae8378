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
 *
 * This file holds the programs (on_switch() and its four flavours, the
 * wakeup, exec, flush, rebase and cgroup-attach programs); one concern per
 * header, each including those it uses: core_fixes (every CO-RE guard,
 * with the kernel commit it guards), state (knobs, per-CPU and per-thread
 * state, maps), rq_clock (the clock of every time figure), delay
 * (--delays), filter (-p, -G), oncpu (the scheduler's on-CPU time, unseen
 * spans), counts (entries, overflow), attribute (a span's credit), fold
 * (task storage to the shared map, exit records, the fold and drain
 * iterators), span_end (the credit of the task leaving, shared or per-CPU
 * map). --hot's sampler is an object of its own (hot.bpf.c), as the
 * profiler's (profile.bpf.c); the three share filter.bpf.h.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "pmbpf.h"
#include "core_fixes.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#include "state.bpf.h"

#include "rq_clock.bpf.h"

#include "delay.bpf.h"

#include "filter.bpf.h"

#include "oncpu.bpf.h"

#include "counts.bpf.h"

#include "attribute.bpf.h"

#include "fold.bpf.h"

#include "span_end.bpf.h"

/*
 * Filtering, a switch between two unmonitored tasks: counters are read only
 * where a monitored task's span starts or ends, and at the first switch of
 * each tick, so that this CPU's attribution point is never old (see
 * unseen_span_runtime()); otherwise nothing is done between two others.
 * Jiffies, not the clock: reading the clock here cost ~45 ns per switch.
 */
static __always_inline void unmonitored_switch(struct cpu_state *st, struct task_struct *next,
					       __u32 tgid, __u32 cpu, __u64 *queued,
					       __u64 *run_delay, __u64 *raw, const bool btf,
					       const bool sum_exits)
{
	__u64 now = 0, tick;

	/* --delays: every span counts, monitored or not (the runner may be anyone) */
	if (delay_on) {
		now = switch_clock(next, cpu, queued, run_delay, raw, btf);
		delay_span_end(tgid, bpf_get_current_cgroup_id(), now);
	}
	if (!st->valid)
		return;
	tick = bpf_jiffies64();
	if (tick == st->refresh_jiffies)
		return;
	st->refresh_jiffies = tick;
	if (!now)
		now = switch_clock(next, cpu, queued, run_delay, raw, btf);
	if (btf && sum_exits) {
		/* switch_btf: out of on_switch()'s frame (the 512-byte chains of span_end.bpf.h) */
		st->arg_now = now;
		st->arg_runtime = 0;
		st->arg_know = *raw;
		st->arg_ran = RAN_SPAN;
		st->arg_owner = 0;
		attribute_full(st, NULL, NULL, NULL);
	} else {
		attribute(st, NULL, NULL, 0, cpu, now, 0, *raw, RAN_SPAN);
	}
	st->span_pid = btf ? next->pid : BPF_CORE_READ(next, pid);
	st->run_base = task_sum(next, btf); /* it may be moved into the filter */
	st->span_want = 0;
}

/* prev's switch: voluntary (it blocks) or not, as the kernel counts nvcsw and nivcsw */
static __always_inline void switch_count(struct cpu_state *st, bool preempt,
					 unsigned int prev_state)
{
	if (!preempt && prev_state != TASK_RUNNING)
		st->pend_nvcsw++;
	else
		st->pend_nivcsw++;
}

/*
 * prev goes off CPU: its switch-out is timed; when still runnable it waits
 * in the run queue from now. Its last switch (TASK_DEAD) forgets its
 * timestamps. Returns its task storage on tp_btf (shared_span_end()), else
 * NULL.
 */
static __always_inline struct task_state *prev_goes_off(struct task_struct *prev, bool preempt,
							unsigned int prev_state, __u32 tgid,
							__u32 pid, bool want, __u32 cpu, __u64 now,
							const bool btf)
{
	struct task_state *ps = NULL;
	struct task_ts *ts;

	if (prev_state & TASK_DEAD) {
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
	return ps;
}

/*
 * Between threads of one process in one cgroup (same css_set) the credit
 * would go to the same entry: it is deferred to the next switch, which
 * credits both spans at once, with next's time off CPU (off, part of it in
 * part_state) and its migration added. Returns whether it was.
 */
static __always_inline bool handoff_deferred(struct cpu_state *st, struct task_struct *prev,
					     struct task_struct *next, __u32 tgid, __u32 next_tgid,
					     __u32 pid, bool want, bool dead, bool has_lat,
					     __u64 off, __u32 part_state, __u64 part,
					     __u32 migrated, const bool btf)
{
	if (!(!per_thread && !dead && !has_lat && want && st->valid && tgid == next_tgid &&
	      st->span_pid == pid &&
	      (btf ? prev->cgroups == next->cgroups :
		     BPF_CORE_READ(prev, cgroups) == BPF_CORE_READ(next, cgroups))))
		return false;
	st->pend_offcpu_ns += off;
	if (part_state < OFF_NR)
		st->pend_split[part_state] += part;
	st->pend_migrations += migrated;
	st->pend_oncpu_ns = oncpu_ran(st, pid, task_sum(prev, btf));
	st->span_pid = btf ? next->pid : BPF_CORE_READ(next, pid);
	st->run_base = task_sum(next, btf);
	return true;
}

/*
 * --delays: the span of prev (tgid in cgroup cgid) ends now on this CPU's
 * ring; next's run-queue wait (lat, when has_lat) is cut along the ring.
 */
static __always_inline void delay_switch(__u32 tgid, __u64 cgid, __u32 next_tgid, __u64 next_cgid,
					 bool next_want, bool has_lat, __u64 lat, __u64 now,
					 const bool btf)
{
	delay_span_end(tgid, cgid, now);
	/* inline in the tp_btf programs only: it made 5.10's raw_tp one 1.5x to verify */
	if (has_lat && next_want && btf)
		delay_wait_inline(next_tgid, next_cgid, lat, now);
	else if (has_lat && next_want)
		delay_wait(next_tgid, next_cgid, lat, now);
}

/*
 * next's span starts: this CPU's attribution point from now (next_sum: its
 * se.sum_exec_runtime), with next's time off CPU and its wait pending, to be
 * credited with the span.
 */
static __always_inline void span_start(struct cpu_state *st, struct task_struct *next,
				       __u32 next_tgid, __u64 next_cgid, bool next_want,
				       __u64 next_sum, __u64 off, __u32 part_state, __u64 part,
				       __u32 migrated, __u64 lat, bool has_lat, const bool btf)
{
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
}

/*
 * A switch on this CPU, step by step: who leaves (prev) and who comes
 * (next), monitored or not; the switch's clock; prev goes off CPU; next
 * comes on; a handoff within one process is deferred; else prev's span ends
 * (--delays, then its credit) and next's starts. sum_exits: switch_btf and
 * switch_raw (exits summed here, fold.bpf.h).
 */
static __always_inline int on_switch(bool preempt, struct task_struct *prev,
				     struct task_struct *next, unsigned int prev_state,
				     const bool btf, const bool sum_exits)
{
	struct cpu_state *st;
	struct task_state *ps;
	struct task_ts *ts;
	__u32 zero = 0, cpu, tgid, next_tgid, pid, migrated = 0, part_state = OFF_OTHER;
	__u64 now, raw, lat = 0, off = 0, part = 0, queued = 0, run_delay = 0;
	__u64 cgid = 0, next_cgid, next_sum;
	bool dead = prev_state & TASK_DEAD, has_lat = false, want, next_want;

	current_ids(prev, &tgid, &pid, btf);
	next_tgid = btf ? next->tgid : BPF_CORE_READ(next, tgid);
	want = wanted(prev, tgid, btf);
	next_want = wanted(next, next_tgid, btf);
	st = bpf_map_lookup_elem(&cpu_states, &zero);
	if (!st)
		return 0;
	cpu = bpf_get_smp_processor_id();
	if (!want && !next_want) {
		unmonitored_switch(st, next, tgid, cpu, &queued, &run_delay, &raw, btf, sum_exits);
		return 0;
	}

	now = switch_clock(next, cpu, &queued, &run_delay, &raw, btf);
	switch_count(st, preempt, prev_state);
	ps = prev_goes_off(prev, preempt, prev_state, tgid, pid, want, cpu, now, btf);

	/*
	 * next comes on CPU: its run-queue wait (lat) and its time off CPU
	 * (off) end now. Inline, not a helper: moved to one, even
	 * always_inline and the same code, clang compiled it otherwise and
	 * the per-CPU map's programs took twice the verifier's work (raw_tp
	 * 60,567 -> 114,919 processed instructions on 6.18).
	 */
	if (next_tgid && next_want) {
		/* without wakeup programs its timestamps start here */
		ts = ts_get(next, !wakeup_progs, btf);
		if (ts) {
			/* set on another run queue: its clock may be a little ahead */
			if (ts->wakeup_ns) {
				lat = now > ts->wakeup_ns ? now - ts->wakeup_ns : 0;
				has_lat = true;
				ts->wakeup_ns = 0;
			} else if (wakeup_progs && ts->offcpu_ns && ts->off_state != OFF_OTHER) {
				/*
				 * Seen going to sleep, its wakeup not: the kernel
				 * did not report it (a sandbox's kernel reports
				 * nothing while its init's threads run, wakeups
				 * they do included: docs/findings.md). Its wait
				 * from the scheduler's record of the enqueue.
				 */
				stat_inc(PMBPF_STAT_WAKEUP_UNSEEN);
				queued = sched_info_kept ? task_queued(next, &run_delay, btf) : 0;
				if (queued) {
					lat = now > queued ? now - queued : 0;
					has_lat = true;
				}
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
			 * a switch-in and a switch-out of it were not seen
			 * (a CPU going offline; a switch-out while the filter
			 * left it out), and that switch-out is stale: the span
			 * is lost, as another unseen switch's, not counted twice.
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

	if (handoff_deferred(st, prev, next, tgid, next_tgid, pid, want, dead, has_lat, off,
			     part_state, part, migrated, btf))
		return 0;
	/*
	 * The span is credited to the cgroup the task was in when it started:
	 * a task that moves itself is split at the move (on_cgroup_attach).
	 */
	if (want)
		cgid = span_cgroup(st, pid, tgid);
	next_cgid = task_cgroup_id(next, btf);
	if (delay_on)
		delay_switch(tgid, want ? cgid : bpf_get_current_cgroup_id(), next_tgid, next_cgid,
			     next_want, has_lat, lat, now, btf);
	next_sum = task_sum(next, btf);
	switch_span_end(st, prev, ps, tgid, pid, cpu, cgid, now, raw, want, dead, btf, sum_exits);
	span_start(st, next, next_tgid, next_cgid, next_want, next_sum, off, part_state, part,
		   migrated, lat, has_lat, btf);
	return 0;
}

/*
 * sched_switch passes prev_state since 5.18 (commit fa2c3254d7cf,
 * "sched/tracing: Don't re-read p->state when emitting sched_switch
 * event"); before, the programs read it from the task (get_task_state(),
 * core_fixes.bpf.h).
 * The fourth argument is only touched where it exists: the verifier drops
 * the other branch, and with it the access beyond the tracepoint's arguments.
 */
const volatile bool switch_has_prev_state = true;

static __always_inline unsigned int switch_prev_state(unsigned long long *ctx)
{
	struct task_struct *prev = (void *)ctx[1];

	if (switch_has_prev_state)
		return ctx[3];
	return get_task_state(prev);
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
	c = entry_lookup(&key);
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
 * task has just moved itself to another cgroup. slots: the program may make
 * a shared entry (entry_get()).
 */
static __always_inline int credit_current(bool moved, const bool slots)
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
			c = entry_get(tgid, pid, cgid, task, SCRATCH_SWITCH, false, slots);
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
		credit_shared(entry_get(tgid, pid, cgid, task, SCRATCH_SWITCH, false, slots), c);
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
static __always_inline int flush_cpu(const bool slots)
{
	struct cpu_state *st;
	__u32 zero = 0;

	stat_inc(PMBPF_STAT_FLUSHES);
	if (delay_on)
		delay_drain();
	credit_current(false, slots);
	st = bpf_map_lookup_elem(&cpu_states, &zero);
	if (st && st->gap_ns) {
		stat_add(PMBPF_STAT_ONCPU_GAP_NS, st->gap_ns);
		st->gap_ns = 0;
	}
	return 0;
}

/* flush_cpu() of the per-CPU map: loads on every kernel */
SEC("raw_tp")
int flush(void *ctx)
{
	return flush_cpu(false);
}

/* flush_cpu() of the shared map (5.19+), which may make an entry */
SEC("raw_tp")
int flush_shared(void *ctx)
{
	return flush_cpu(true);
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
static __always_inline int on_cgroup_attach(__u32 moved_tgid, const bool slots)
{
	if (moved_tgid != bpf_get_current_pid_tgid() >> 32)
		return 0;
	return credit_current(true, slots);
}

SEC("tp_btf/cgroup_attach_task")
int BPF_PROG(attach_btf, struct cgroup *dst, const char *path, struct task_struct *task,
	     bool threadgroup)
{
	return on_cgroup_attach(BPF_CORE_READ(task, tgid), true);
}

SEC("raw_tp/cgroup_attach_task")
int BPF_PROG(attach_raw, struct cgroup *dst, const char *path, struct task_struct *task,
	     bool threadgroup)
{
	return on_cgroup_attach(BPF_CORE_READ(task, tgid), false);
}
