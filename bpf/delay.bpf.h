/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * --delays: who delayed whom. Each CPU keeps its last DELAY_RING spans (who
 * ran there, from when to when). When a monitored task comes on CPU after a
 * run-queue wait, the wait [now - lat, now] is cut along those spans and
 * each piece is credited to the (process, cgroup) that ran in it: the
 * delays map's pair (waiter, runner). A wait older than the ring's oldest
 * span keeps that part uncredited (userspace shows it as the difference to
 * the run-queue total). Only spans of the CPU the task was picked on count:
 * a task that was moved by the load balancer while it waited has its time
 * on the first CPU credited to the runners of the second.
 *
 * Part of pmbpf.bpf.c. Includes the headers it uses (state.bpf.h: its knobs,
 * maps and stat_inc()); vmlinux.h, bpf_helpers.h, bpf_core_read.h and
 * bpf_tracing.h come first.
 */
#ifndef __PMBPF_DELAY_BPF_H
#define __PMBPF_DELAY_BPF_H

#include "state.bpf.h"

#define DELAY_RING  8 /* a power of 2 */
#define DELAY_SLOTS 8 /* a power of 2 */

const volatile bool delay_on = false;

/*
 * Bumped by userspace at each read, before the flush: a pair added to
 * since the last read's bump has a gen at least that read's delay_gen (the
 * flush marks what it stores with the generation before: the read's), and
 * the read (user/collect/delay_read.c) takes only the slots whose gen
 * (its low 32 bits) is at least the last read's delay_gen.
 */
volatile __u64 delay_gen;

struct delay_span {
	__u64 start_ns;
	__u64 end_ns;
	__u64 cgroup_id;
	__u32 tgid;
	__u32 pad;
};

/*
 * A pair's credits not yet in the delays map. A CPU mostly credits the same
 * few pairs over and over (two tasks taking turns): they add up here, with
 * no hash lookup and no atomic, and go to the map when their slot is taken
 * by another pair or at the flush before each read. Direct-mapped (a pair
 * has one slot, by a hash of its processes): no search loop, which inside
 * the ring walk would multiply the verifier's states.
 */
struct delay_slot {
	struct pmbpf_delay_key k;
	__u64 ns;
	__u64 waits; /* 0: the slot is free */
};

struct delay_cpu {
	__u64 last_end; /* where the next span starts; 0: not known yet */
	__u32 head; /* spans written since load */
	__u32 pad;
	struct delay_span s[DELAY_RING];
	struct delay_slot slot[DELAY_SLOTS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct delay_cpu);
} delay_cpus SEC(".maps");

/*
 * The pairs: slots of an array that userspace maps into its memory and
 * walks at each read for those added to since the last (their gen), with
 * no system call and no lookup per pair; delay_index maps a pair's key to
 * its slot, and delay_free holds the slots not in use (userspace fills it
 * at start and gives back the slots of the pairs it deletes). Sized by
 * userspace: 1 entry each with --no-delays. Written only when a pair leaves
 * its per-CPU slot or at a flush. The index is a preallocated hash: before
 * 6.1 (bpf_mem_alloc) an element allocated here, with the run queue locked,
 * is a GFP_ATOMIC kmalloc that can wake kswapd under memory pressure, and
 * that wakeup can need this CPU's run-queue lock (the verifier warns of it).
 * No fetching atomic anywhere (the programs that load on 5.10 carry this).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct pmbpf_delay_key);
	__type(value, __u32);
} delay_index SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct pmbpf_delay_slot);
} delay_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK);
	__uint(max_entries, 16384);
	__uint(value_size, sizeof(__u32));
} delay_free SEC(".maps");

/*
 * The span of the task leaving this CPU (tgid in cgroup cgid) ends now.
 * Inline: it runs at every switch with --delays, where a global function's
 * call and return cost ~15 ns (docs/benchmarks.md), and inline it adds no
 * state to the switch program's verification (27,181 -> 27,108 processed
 * instructions at record's defaults on 6.18). delay_wait() is a global
 * function: verified once, on its own, not inside every path of the switch
 * program (whose paths its walk multiplied past the verifier's limit).
 */
static __always_inline int delay_span_end(__u32 tgid, __u64 cgid, __u64 now)
{
	struct delay_cpu *dc;
	struct delay_span *s;
	__u32 zero = 0;

	dc = bpf_map_lookup_elem(&delay_cpus, &zero);
	if (!dc)
		return 0;
	if (dc->last_end) {
		s = &dc->s[dc->head & (DELAY_RING - 1)];
		s->start_ns = dc->last_end;
		s->end_ns = now;
		s->tgid = tgid;
		s->cgroup_id = cgid;
		dc->head++;
	}
	dc->last_end = now;
	return 0;
}

/*
 * A new pair's slot, one from delay_free: the key and the first credits,
 * then indexed, then LIVE (userspace reads only LIVE slots). 0, -EEXIST
 * (another CPU made it first: the slot goes back unread) or an error (no
 * slot left).
 */
static __always_inline long delay_make(const struct pmbpf_delay_key *k, __u64 ns, __u64 waits,
				       __u64 gen)
{
	struct pmbpf_delay_slot *sl;
	__u32 i;
	long err;

	if (bpf_map_pop_elem(&delay_free, &i))
		return -E2BIG;
	sl = bpf_map_lookup_elem(&delay_slots, &i);
	if (!sl)
		return -E2BIG;
	sl->state = 0;
	sl->k = *k;
	sl->v.ns = ns;
	sl->v.waits = waits;
	sl->gen = gen;
	err = bpf_map_update_elem(&delay_index, k, &i, BPF_NOEXIST);
	if (err) {
		bpf_map_push_elem(&delay_free, &i, 0);
		return err;
	}
	barrier(); /* the key and the credits before the state */
	sl->state = PMBPF_DELAY_LIVE;
	return 0;
}

/*
 * Add to a pair, marked with generation gen after the adds (delay_gen, or
 * the read's at the flush before it): a mark older than another CPU's (it
 * read delay_gen before the bump, or a flush) is stored before the read
 * that follows, which takes the pair with the other CPU's adds, or the
 * next read does (its mark). A new pair takes a slot (delay_make()).
 */
static __always_inline void delay_store(struct pmbpf_delay_key *k, __u64 ns, __u64 waits, __u64 gen)
{
	struct pmbpf_delay_slot *sl;
	__u32 *idx, i;
	long err;

	idx = bpf_map_lookup_elem(&delay_index, k);
	if (!idx) {
		err = delay_make(k, ns, waits, gen);
		if (!err)
			return;
		idx = err == -EEXIST ? bpf_map_lookup_elem(&delay_index, k) : NULL;
		if (!idx) {
			stat_inc(PMBPF_STAT_DELAY_DROPPED);
			return;
		}
	}
	i = *idx;
	sl = bpf_map_lookup_elem(&delay_slots, &i);
	if (!sl)
		return;
	__sync_fetch_and_add(&sl->v.ns, ns);
	__sync_fetch_and_add(&sl->v.waits, waits);
	if (sl->gen != (__u32)gen)
		sl->gen = gen;
}

static __always_inline bool delay_key_eq(const struct pmbpf_delay_key *a,
					 const struct pmbpf_delay_key *b)
{
	return a->tgid == b->tgid && a->by_tgid == b->by_tgid && a->cgroup_id == b->cgroup_id &&
	       a->by_cgroup_id == b->by_cgroup_id;
}

/*
 * This CPU's pending credits of slot i to the map, the slot left free. A
 * global function (scalars only: 5.10 takes no pointer arguments): verified
 * once, not at every step of delay_wait()'s walk nor of the flush's.
 */
__noinline int delay_slot_store(__u32 i, __u64 gen)
{
	struct delay_cpu *dc;
	struct delay_slot *s;
	__u32 zero = 0;

	dc = bpf_map_lookup_elem(&delay_cpus, &zero);
	if (!dc)
		return 0;
	s = &dc->slot[i & (DELAY_SLOTS - 1)];
	if (!s->waits)
		return 0;
	delay_store(&s->k, s->ns, s->waits, gen);
	s->waits = 0;
	s->ns = 0;
	return 0;
}

static __always_inline void delay_credit(struct delay_cpu *dc, struct pmbpf_delay_key *k, __u64 ns)
{
	__u32 h = (k->tgid * 0x9e3779b1U) ^ (k->by_tgid * 0x85ebca6bU) ^ (__u32)k->cgroup_id;
	__u32 i = (h ^ (h >> 16)) & (DELAY_SLOTS - 1);
	struct delay_slot *s = &dc->slot[i];

	if (s->waits && delay_key_eq(&s->k, k)) {
		s->ns += ns;
		s->waits++;
		return;
	}
	/* a call even when the slot is free: a branch here doubles delay_wait()'s states */
	delay_slot_store(i, delay_gen);
	s->k = *k;
	s->ns = ns;
	s->waits = 1;
}

/*
 * Move this CPU's pending credits to the map (flush, before a read): the
 * read's, so marked with its generation (the one before delay_gen).
 */
static __always_inline void delay_drain(void)
{
	__u64 gen = delay_gen;
	__u32 i;

	gen = gen ? gen - 1 : 0;
	for (i = 0; i < DELAY_SLOTS; i++)
		delay_slot_store(i, gen);
}

/* tgid in cgroup cgid comes on CPU now after waiting lat ns in the run queue. */
__noinline int delay_wait(__u32 tgid, __u64 cgid, __u64 lat, __u64 now)
{
	struct pmbpf_delay_key k = {};
	struct delay_cpu *dc;
	struct delay_span *s;
	__u64 wake = now - lat, lo, hi, acc = 0;
	__u32 zero = 0, i, head;

	dc = bpf_map_lookup_elem(&delay_cpus, &zero);
	if (!dc || !lat)
		return 0;
	k.tgid = tgid;
	k.cgroup_id = cgid;
	head = dc->head;
	/* newest first; consecutive pieces of one runner make one credit */
	for (i = 0; i < DELAY_RING && i < head; i++) {
		s = &dc->s[(head - 1 - i) & (DELAY_RING - 1)];
		if (s->end_ns <= wake)
			break;
		lo = s->start_ns > wake ? s->start_ns : wake;
		hi = s->end_ns < now ? s->end_ns : now;
		if (hi > lo) {
			if (acc && (s->tgid != k.by_tgid || s->cgroup_id != k.by_cgroup_id)) {
				delay_credit(dc, &k, acc);
				acc = 0;
			}
			k.by_tgid = s->tgid;
			k.by_cgroup_id = s->cgroup_id;
			acc += hi - lo;
		}
		if (s->start_ns <= wake)
			break;
	}
	if (acc)
		delay_credit(dc, &k, acc);
	return 0;
}

/*
 * delay_wait()'s common case, inline (a global function's call costs ~15 ns
 * per switch here): the newest span on this CPU began before the wakeup, so
 * one runner covers the whole wait, and its pair is in its slot already.
 * Otherwise delay_wait() does it all: nothing here is live across a call,
 * so that on_switch()'s frame stays in 6.1's 512 bytes for a chain of calls.
 */
static __always_inline void delay_wait_inline(__u32 tgid, __u64 cgid, __u64 lat, __u64 now)
{
	struct delay_cpu *dc;
	struct delay_span *s;
	struct delay_slot *slot;
	__u64 wake = now - lat, hi;
	__u32 zero = 0, h;

	dc = bpf_map_lookup_elem(&delay_cpus, &zero);
	if (!dc || !lat || !dc->head)
		return;
	s = &dc->s[(dc->head - 1) & (DELAY_RING - 1)];
	if (s->end_ns <= wake)
		return;
	hi = s->end_ns < now ? s->end_ns : now;
	h = (tgid * 0x9e3779b1U) ^ (s->tgid * 0x85ebca6bU) ^ (__u32)cgid;
	slot = &dc->slot[(h ^ (h >> 16)) & (DELAY_SLOTS - 1)];
	if (s->start_ns <= wake && hi > wake && slot->waits && slot->k.tgid == tgid &&
	    slot->k.by_tgid == s->tgid && slot->k.cgroup_id == cgid &&
	    slot->k.by_cgroup_id == s->cgroup_id) {
		slot->ns += hi - wake;
		slot->waits++;
		return;
	}
	delay_wait(tgid, cgid, lat, now);
}

#endif /* __PMBPF_DELAY_BPF_H */
