/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The thread fold (shared counts map): a thread's counts in its task
 * storage move to its process's entry at its exit, a cgroup move, a full
 * ran list and before each read; exit records; the fold and drain
 * iterators (programs) that userspace runs before each read.
 *
 * Part of pmbpf.bpf.c. Includes the headers it uses; vmlinux.h, bpf_helpers.h,
 * bpf_core_read.h and bpf_tracing.h come first.
 */
#ifndef __PMBPF_FOLD_BPF_H
#define __PMBPF_FOLD_BPF_H

#include "state.bpf.h"
#include "oncpu.bpf.h"
#include "counts.bpf.h"
#include "attribute.bpf.h"

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
	c = counts_shared ? slot_kept(ps->slot1, tgid, task->pid, ps->counts_cgid) : NULL;
	if (c) {
		if (per_thread)
			thread_comm_refresh(c, task, true);
	} else {
		c = entry_get(tgid, task->pid, ps->counts_cgid, task, scratch_idx, true, true);
		if (!c)
			return; /* kept for the next fold */
		if (counts_shared)
			ps->slot1 = slot_find(tgid, task->pid, ps->counts_cgid);
	}
	/* inline: one call fewer in 6.1's 512-byte chain */
	counts_add(c, thread_counts_of(ps), true);
	__builtin_memset(&ps->counts, 0, sizeof(ps->counts));
	ps->has_counts = 0;
}

/*
 * thread_fold_body() at a switch, of the thread leaving (current): a global
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
	return thread_counts_of(ps);
}

/*
 * direct_credit: where the thread leaving (task, current; ps its task
 * storage) credits its span in cgroup cgid with plain adds when it is its
 * entry's only writer: the entry's counts, in the slot it kept (slot1);
 * else NULL (its task storage, taken). Only writer: --threads (an entry
 * per thread) or its process's one thread (signal->nr_threads: a thread
 * made after this test has not run yet, one that exits is counted until
 * it is released, right before its last switch), and no counts of its
 * own waiting for a fold (has_counts: a drain may be adding them to the
 * entry; once folded, the thread credits the entry again). The flush
 * credits the task running on its CPU, which is not switching meanwhile;
 * another CPU that credits the rest of a span to this thread goes through
 * its task storage (owner_credit()).
 */
static __always_inline struct pmbpf_counts *
direct_counts(struct task_state *ps, struct task_struct *task, __u32 tgid, __u32 pid, __u64 cgid)
{
	struct pmbpf_counts *c;

	if (!direct_credit || ps->has_counts || !ps->slot1)
		return NULL;
	if (!per_thread && task->signal->nr_threads != 1)
		return NULL;
	c = slot_kept(ps->slot1, tgid, pid, cgid);
	/* --threads: a thread named after it started (the fold refreshes it otherwise) */
	if (c && per_thread)
		thread_comm_refresh(c, task, true);
	return c;
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
	c = entry_lookup(&key);
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
		c = entry_lookup(&key);
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
	entry_delete(&key);
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
 * At a thread's last switch: fold its counts. The fold and drain iterators
 * hold a thread's counts for a fold's few hundred nanoseconds (unless
 * preempted then): one that holds this one's for all 64 tries folds them
 * itself, late, into an entry that the exit record may have deleted (made
 * again: a row for a process gone, which userspace reports and drops).
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
		credit_shared(
			entry_get(task->tgid, task->pid, cgid, task, SCRATCH_SWITCH, true, true),
			src);
	return 0;
}

/* process_exit() of switch_btf (it sums exits): global, scalars only. */
__noinline int exit_record(__u32 tgid, __u32 tid, __u64 cgid, bool proc_end)
{
	process_exit(tgid, tid, cgid, proc_end, true);
	return 0;
}

/*
 * The fold and drain iterators' fold of a thread (task: the iterator's,
 * trusted): its counts to its entry. A switch on another CPU that holds
 * them frees them within nanoseconds: tried a few times, then left for the
 * next read.
 */
static __noinline void thread_fold_free(struct task_state *ps, struct task_struct *task)
{
	int i;

	for (i = 0; i < 64; i++) {
		if (thread_take(ps)) {
			thread_fold_body(ps, task->tgid, task, SCRATCH_FOLD);
			thread_release(ps);
			return;
		}
	}
}

/*
 * counts_shared, run by userspace after the flush and before each read:
 * every thread's counts to its process's entry, exiting ones' included
 * (what they credit after is folded at their last switch:
 * thread_fold_last).
 */
SEC("iter/task")
int fold(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	struct task_state *ps;

	/*
	 * Most tasks of a host have no local storage: no helper call for them.
	 * Exiting threads too: their counts until now are this interval's, and
	 * an exit can take long under load (see drain_one()).
	 */
	if (!task || !task->bpf_storage)
		return 0;
	ps = bpf_task_storage_get(&task_ts_storage, task, 0, 0);
	if (ps && ps->has_counts)
		thread_fold_free(ps, task);
	return 0;
}

#ifdef PMBPF_NO_KFUNC
/*
 * The object for kernels without these kfuncs (before 6.2; the Makefile's
 * pmbpf_nokf.bpf.o, session.c picks it): libbpf 1.1 (Debian 12's) fails
 * the whole load on a weak kfunc extern that vmlinux lacks when it may not
 * list the modules' BTF (no CAP_SYS_ADMIN: pmbpf.service). The drain is
 * never loaded there.
 */
static __always_inline struct task_struct *bpf_task_from_pid(s32 pid)
{
	(void)pid;
	return NULL;
}

static __always_inline void bpf_task_release(struct task_struct *p)
{
	(void)p;
}
#else
extern struct task_struct *bpf_task_from_pid(s32 pid) __ksym __weak;
extern void bpf_task_release(struct task_struct *p) __ksym __weak;
#endif

/*
 * direct_credit, at a switch: the rest of a span (rest, a scratch record)
 * to the task storage of its owner (the thread this CPU saw switch in last,
 * st->span_*), which may be crediting its entry with plain adds on another
 * CPU (direct_counts()): an atomic add there could be lost. Listed for the
 * drain; the owner credits its task storage until then. False when that
 * cannot be (gone, its counts held or in another cgroup): the caller adds
 * rest to the entry.
 */
static __always_inline bool owner_credit(struct cpu_state *st, const struct pmbpf_counts *rest)
{
	struct task_struct *task;
	struct task_state *ps;
	bool done = false;

	if (!direct_credit || !rest || !st->span_tgid)
		return false;
	task = bpf_task_from_pid(st->span_pid);
	if (!task)
		return false;
	ps = bpf_task_storage_get(&task_ts_storage, task, 0, 0);
	if (ps && thread_take(ps)) {
		if (!ps->has_counts || ps->counts_cgid == st->span_cgid) {
			ps->counts_cgid = st->span_cgid;
			ps->has_counts = 1;
			counts_add(thread_counts_of(ps), rest, false);
			ran_list_push(ps, st->span_pid, bpf_get_smp_processor_id());
			done = true;
		}
		thread_release(ps);
	}
	bpf_task_release(task);
	return done;
}

/* credit_owner() at a switch: global, see fold_current(). */
__noinline int credit_owner_global(struct cpu_state *st, const struct pmbpf_counts *rest)
{
	if (st && !owner_credit(st, rest))
		credit_owner(st, rest);
	return 0;
}

/*
 * The drain of one listed thread: its counts to its entry. An exiting one's
 * too: left for its last switch (as before 2026-11-27), they were credited
 * an interval late whenever its exit spanned a read (a compiler's 290 ms in
 * a 0.3 s interval moved to the next one, at load 13: test_hotplug).
 */
static long drain_one(__u32 i, void *ctx)
{
	__u32 idx = *(__u32 *)ctx;
	struct ran_list *l = bpf_map_lookup_elem(&ran_lists, &idx);
	struct task_struct *task;
	struct task_state *ps;

	if (!l)
		return 1;
	/* i < n <= RAN_LIST_LEN; the mask kept for the verifier */
	barrier_var(i);
	task = bpf_task_from_pid(l->tid[i & (RAN_LIST_LEN - 1)]);
	if (!task)
		return 0; /* gone: folded at its last switch */
	ps = bpf_task_storage_get(&task_ts_storage, task, 0, 0);
	if (ps && ps->has_counts)
		thread_fold_free(ps, task);
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

#endif /* __PMBPF_FOLD_BPF_H */
