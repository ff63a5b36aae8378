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
 * Included by pmbpf.bpf.c after its maps and stat_inc().
 */
#ifndef __PMBPF_DELAY_BPF_H
#define __PMBPF_DELAY_BPF_H

#define DELAY_RING 8 /* a power of 2 */

const volatile bool delay_on = false;

struct delay_span {
	__u64 start_ns;
	__u64 end_ns;
	__u64 cgroup_id;
	__u32 tgid;
	__u32 pad;
};

struct delay_cpu {
	__u64 last_end; /* where the next span starts; 0: not known yet */
	__u32 head; /* spans written since load */
	__u32 pad;
	struct delay_span s[DELAY_RING];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct delay_cpu);
} delay_cpus SEC(".maps");

/* Sized by userspace: 1 entry without --delays. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct pmbpf_delay_key);
	__type(value, struct pmbpf_delay_val);
} delays SEC(".maps");

/* The span of the task leaving this CPU (tgid in cgroup cgid) ends now. */
static __always_inline void delay_span_end(__u32 tgid, __u64 cgid, __u64 now)
{
	struct delay_cpu *dc;
	struct delay_span *s;
	__u32 zero = 0;

	dc = bpf_map_lookup_elem(&delay_cpus, &zero);
	if (!dc)
		return;
	if (dc->last_end) {
		s = &dc->s[dc->head & (DELAY_RING - 1)];
		s->start_ns = dc->last_end;
		s->end_ns = now;
		s->tgid = tgid;
		s->cgroup_id = cgid;
		dc->head++;
	}
	dc->last_end = now;
}

static __always_inline void delay_credit(struct pmbpf_delay_key *k, __u64 ns)
{
	struct pmbpf_delay_val *v, nv = { .ns = ns, .waits = 1 };
	long err;

	v = bpf_map_lookup_elem(&delays, k);
	if (!v) {
		err = bpf_map_update_elem(&delays, k, &nv, BPF_NOEXIST);
		if (!err)
			return;
		v = err == -EEXIST ? bpf_map_lookup_elem(&delays, k) : NULL;
		if (!v) {
			stat_inc(PMBPF_STAT_DELAY_DROPPED);
			return;
		}
	}
	__sync_fetch_and_add(&v->ns, ns);
	__sync_fetch_and_add(&v->waits, 1);
}

/* tgid in cgroup cgid comes on CPU now after waiting lat ns in the run queue. */
static __always_inline void delay_wait(__u32 tgid, __u64 cgid, __u64 lat, __u64 now)
{
	struct pmbpf_delay_key k = {};
	struct delay_cpu *dc;
	struct delay_span *s;
	__u64 wake = now - lat, lo, hi, acc = 0;
	__u32 zero = 0, i, head;

	dc = bpf_map_lookup_elem(&delay_cpus, &zero);
	if (!dc || !lat)
		return;
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
				delay_credit(&k, acc);
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
		delay_credit(&k, acc);
}

#endif /* __PMBPF_DELAY_BPF_H */
