/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The counts map's entries (created here, overflow per cgroup), adding
 * counts, and where the rest of a span goes.
 *
 * Part of pmbpf.bpf.c. Includes the headers it uses; vmlinux.h, bpf_helpers.h,
 * bpf_core_read.h and bpf_tracing.h come first.
 */
#ifndef __PMBPF_COUNTS_BPF_H
#define __PMBPF_COUNTS_BPF_H

#include "state.bpf.h"
#include "oncpu.bpf.h"

/* The entry of key, or NULL. */
static __always_inline struct pmbpf_counts *entry_lookup(const struct pmbpf_key *key)
{
	struct pmbpf_slot *sl;
	__u32 *slot;

	if (!counts_shared)
		return bpf_map_lookup_elem(&counts, key);
	slot = bpf_map_lookup_elem(&counts_index, key);
	if (!slot)
		return NULL;
	sl = bpf_map_lookup_elem(&counts_slots, slot);
	if (!sl)
		return NULL;
	/* no &sl->c before the check: the verifier forbids arithmetic on a maybe-NULL */
	barrier_var(sl);
	return &sl->c;
}

/* Slot sl holds key (it may have been made again for another since it was found). */
static __always_inline bool slot_holds(const struct pmbpf_slot *sl, const struct pmbpf_key *key)
{
	return sl->key.tgid == key->tgid && sl->key.tid == key->tid &&
	       sl->key.cgroup_id == key->cgroup_id;
}

/*
 * Slot sl, just indexed for key, made LIVE: unless it was freed meanwhile,
 * or freed and made again for another key (this program can be preempted:
 * the iterators run in process context). A compare-and-swap on the 64-bit
 * word of flags and state (little-endian: state is its upper half); in the
 * programs that make slots only (5.12+).
 */
static __always_inline void slot_live(struct pmbpf_slot *sl, const struct pmbpf_key *key)
{
	__u64 *word = (__u64 *)&sl->c.flags, old;
	int i;

	if (!slot_holds(sl, key))
		return;
	for (i = 0; i < 4; i++) {
		old = *word;
		if (old >> 32)
			return; /* freed, or made LIVE by its next maker */
		if (__sync_val_compare_and_swap(word, old, old | (__u64)PMBPF_SLOT_LIVE << 32) ==
		    old)
			return;
	}
}

/*
 * counts_shared: the entry of key, its counts in e->total (a scratch
 * record), written to a free slot and indexed; 0, -EEXIST (another CPU
 * made it first) or an error (no slot left: the map is full).
 */
static __noinline long slot_make(struct pmbpf_exit *e, const struct pmbpf_key *key)
{
	struct pmbpf_slot *src, *sl;
	__u32 slot;
	__u64 n;
	long err;

	if (!e || !key)
		return -EINVAL;
	if (bpf_map_pop_elem(&free_slots, &slot)) {
		if (next_slot >= max_slots)
			return -E2BIG;
		n = __sync_fetch_and_add(&next_slot, 1);
		if (n >= max_slots)
			return -E2BIG;
		slot = n;
	}
	/* the slot: the key, then the counts (pmbpf.h) */
	src = (struct pmbpf_slot *)((char *)e + 8);
	src->key = *key;
	src->c.state = 0; /* not read until indexed */
	err = bpf_map_update_elem(&counts_slots, &slot, src, BPF_ANY);
	if (!err)
		err = bpf_map_update_elem(&counts_index, key, &slot, BPF_NOEXIST);
	sl = bpf_map_lookup_elem(&counts_slots, &slot);
	if (!sl)
		return -EINVAL;
	if (err) {
		/* freed (not read) until made again */
		__sync_fetch_and_add(&sl->c.state, PMBPF_SLOT_FREED);
		bpf_map_push_elem(&free_slots, &slot, 0);
		return err;
	}
	slot_live(sl, key);
	return 0;
}

/*
 * The entry of key leaves the map (its process is gone): out of the index
 * and its slot given back at once, by whoever took the key out (the kernel
 * at an exit, userspace for a dead process's entry), as a hash's element
 * is. A fold on another CPU that found the slot just before adds to it as
 * it would to a hash's element just freed.
 */
static __always_inline void entry_delete(const struct pmbpf_key *key)
{
	struct pmbpf_slot *sl;
	__u32 *slot, i;

	if (!counts_shared) {
		bpf_map_delete_elem(&counts, key);
		return;
	}
	slot = bpf_map_lookup_elem(&counts_index, key);
	if (!slot)
		return;
	i = *slot;
	if (bpf_map_delete_elem(&counts_index, key))
		return; /* another took it out */
	sl = bpf_map_lookup_elem(&counts_slots, &i);
	/*
	 * Taken out by userspace, given back, made again and the key made
	 * again between the lookup and the delete: the slot is another's now;
	 * leave it (the key's new slot is lost to the map, not mixed).
	 */
	if (!sl || !slot_holds(sl, key))
		return;
	__sync_fetch_and_add(&sl->c.state, PMBPF_SLOT_FREED);
	bpf_map_push_elem(&free_slots, &i, 0);
}

/*
 * counts_shared: the entry of (tgid, tid, cgid) in the slot a thread keeps
 * (slot1: the slot + 1, 0: none) when that slot is live and holds that key,
 * else NULL. A fold finds its thread's entry without a hash lookup: a slot
 * freed since is not live, or holds another key once made again (the same
 * key would be a process that exited, with all its threads).
 */
static __always_inline struct pmbpf_counts *slot_kept(__u32 slot1, __u32 tgid, __u32 tid,
						      __u64 cgid)
{
	struct pmbpf_key key = {};
	struct pmbpf_slot *sl;
	__u32 i = slot1 - 1;

	if (!slot1)
		return NULL;
	key.tgid = tgid;
	key.tid = per_thread ? tid : 0;
	key.cgroup_id = cgid;
	sl = bpf_map_lookup_elem(&counts_slots, &i);
	if (!sl || sl->c.state != PMBPF_SLOT_LIVE || !slot_holds(sl, &key))
		return NULL;
	barrier_var(sl);
	return &sl->c;
}

/* counts_shared: the slot + 1 of the entry of (tgid, tid, cgid), 0: none. */
static __always_inline __u32 slot_find(__u32 tgid, __u32 tid, __u64 cgid)
{
	struct pmbpf_key key = {};
	__u32 *slot;

	key.tgid = tgid;
	key.tid = per_thread ? tid : 0;
	key.cgroup_id = cgid;
	slot = bpf_map_lookup_elem(&counts_index, &key);
	return slot ? *slot + 1 : 0;
}

/*
 * Look up, or create, the entry of task's process (--threads: of its
 * thread tid) in its cgroup. With --threads and not btf, task is current.
 * slots: the program may make a shared entry (slot_make()'s fetch-and-add
 * and compare-and-swap: 5.12+; the programs that load on 5.10, whose
 * verifier refuses them even where never run, are built without).
 */
static __always_inline struct pmbpf_counts *entry_get(__u32 tgid, __u32 tid, __u64 cgid,
						      struct task_struct *task, __u32 scratch_idx,
						      const bool btf, const bool slots)
{
	struct pmbpf_key key = {};
	struct pmbpf_counts *c;
	struct pmbpf_exit *tmp;
	struct task_struct *leader;
	__u32 zero = 0;
	__u64 id, no_cgroup = 0;
	long err;

	key.tgid = tgid;
	key.tid = per_thread ? tid : 0;
	key.cgroup_id = cgid;
	c = entry_lookup(&key);
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
	if (counts_shared) {
		if (!slots)
			return NULL; /* not made in this program (never: see above) */
		err = slot_make(tmp, &key);
	} else {
		err = bpf_map_update_elem(&counts, &key, &tmp->total, BPF_NOEXIST);
	}
	if (!err || err == -EEXIST)
		return entry_lookup(&key);

	/*
	 * Map full: fold into the overflow entry of the cgroup (else the
	 * cgroup-less one, key 0, which userspace made at start), counting
	 * each process once.
	 */
	stat_inc(PMBPF_STAT_OVERFLOW);
	id = ((__u64)(per_thread ? tid : tgid) << 32) ^ tmp->total.start_ns;
	c = bpf_map_lookup_elem(&overflow, &cgid);
	if (!c) {
		__builtin_memset(&tmp->total, 0, sizeof(tmp->total));
		bpf_map_update_elem(&overflow, &cgid, &tmp->total, BPF_NOEXIST);
		c = bpf_map_lookup_elem(&overflow, &cgid);
	}
	if (!c)
		c = bpf_map_lookup_elem(&overflow, &no_cgroup);
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
	return entry_lookup(&key);
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

#endif /* __PMBPF_COUNTS_BPF_H */
