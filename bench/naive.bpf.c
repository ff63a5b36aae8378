// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Reference programs for the benchmark (bench/run.py), not part of pmbpf:
 *
 *   empty         a tp_btf sched_switch program that does nothing: the floor
 *                 (what entering and leaving any BPF program costs).
 *   naive_switch  the naive design of issue 8: read nr_events counters of the
 *                 CPU with bpf_perf_event_read_value, subtract the previous
 *                 reading of this CPU, add the deltas to the outgoing task's
 *                 entry in a per-CPU hash keyed by (tgid, cgroup id), inserting
 *                 it when missing. No filtering, no handoff shortcut.
 *   naive_switch_rq, naive_wakeup, naive_wake_new
 *                 the same plus run-queue latency as runqlat does it: wakeup
 *                 timestamps in a hash keyed by pid, looked up and deleted when
 *                 the task is switched in, a log2 histogram of the delay.
 *   naive_sw_ts, naive_wk_ts, naive_wkn_ts
 *                 the same with the wakeup timestamp in task-local storage
 *                 instead of a hash.
 *   micro_*       one operation each at sched_switch, to price the parts:
 *                 bpf_ktime_get_ns, bpf_get_current_cgroup_id, one
 *                 bpf_perf_event_read_value, a task-storage get and write.
 *
 * pmbpf's own sched_switch program is measured against these in one run.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#define NAIVE_MAX_EVENTS 8
#define NAIVE_SLOTS 32
#define TASK_RUNNING 0

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile __u32 nr_cpus = 1;
const volatile __u32 nr_events = 0;

struct naive_key {
	__u32 tgid;
	__u32 pad;
	__u64 cgroup_id;
};

struct naive_counts {
	struct bpf_perf_event_value ev[NAIVE_MAX_EVENTS];
};

/* Counter fds, index event * nr_cpus + cpu; filled by the loader. */
struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} events SEC(".maps");

/* This CPU's previous readings; owned by naive_switch, never cleared. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct naive_counts);
} prev_readings SEC(".maps");

/* Accumulated deltas per (tgid, cgroup); only grows, nobody reads it. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 10240);
	__type(key, struct naive_key);
	__type(value, struct naive_counts);
} counts SEC(".maps");

/* Wakeup time per pid; set at wakeup, deleted when the task runs. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, __u32);
	__type(value, __u64);
} wakeup_ns SEC(".maps");

/* Wakeup time per task (task-local storage variant); freed with the task. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);
} wakeup_ts SEC(".maps");

/* Results of the micro programs, so that nothing is optimised away. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} sink SEC(".maps");

/* Run-queue latency histogram, log2 microseconds; only grows. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NAIVE_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} rq_hist SEC(".maps");

static __always_inline void account(void)
{
	struct naive_key key = {};
	struct naive_counts *prev, *c;
	struct bpf_perf_event_value v;
	__u32 zero = 0, cpu, i;

	prev = bpf_map_lookup_elem(&prev_readings, &zero);
	if (!prev)
		return;
	key.tgid = bpf_get_current_pid_tgid() >> 32;
	key.cgroup_id = bpf_get_current_cgroup_id();
	c = bpf_map_lookup_elem(&counts, &key);
	if (!c) {
		struct naive_counts fresh = {};

		bpf_map_update_elem(&counts, &key, &fresh, BPF_NOEXIST);
		c = bpf_map_lookup_elem(&counts, &key);
		if (!c)
			return;
	}
	cpu = bpf_get_smp_processor_id();
	for (i = 0; i < NAIVE_MAX_EVENTS; i++) {
		if (i >= nr_events)
			break;
		if (bpf_perf_event_read_value(&events, i * nr_cpus + cpu, &v, sizeof(v)))
			continue;
		c->ev[i].counter += v.counter - prev->ev[i].counter;
		c->ev[i].enabled += v.enabled - prev->ev[i].enabled;
		c->ev[i].running += v.running - prev->ev[i].running;
		prev->ev[i] = v;
	}
}

static __always_inline void wakeup_mark(struct task_struct *p)
{
	__u32 pid = BPF_CORE_READ(p, pid);
	__u64 ts = bpf_ktime_get_ns();

	bpf_map_update_elem(&wakeup_ns, &pid, &ts, BPF_ANY);
}

static __always_inline void hist_add(__u64 delta_ns)
{
	__u64 delta_us = delta_ns / 1000, *count;
	__u32 slot = 0;

	while (delta_us > 1 && slot < NAIVE_SLOTS - 1) {
		delta_us >>= 1;
		slot++;
	}
	count = bpf_map_lookup_elem(&rq_hist, &slot);
	if (count)
		*count += 1;
}

static __always_inline void run_queue_latency(struct task_struct *prev, struct task_struct *next,
					      unsigned int prev_state)
{
	__u32 pid = BPF_CORE_READ(next, pid);
	__u64 *ts;

	if (prev_state == TASK_RUNNING)
		wakeup_mark(prev);
	ts = bpf_map_lookup_elem(&wakeup_ns, &pid);
	if (!ts)
		return;
	hist_add(bpf_ktime_get_ns() - *ts);
	bpf_map_delete_elem(&wakeup_ns, &pid);
}

static __always_inline void wakeup_mark_ts(struct task_struct *p)
{
	__u64 *ts = bpf_task_storage_get(&wakeup_ts, p, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);

	if (ts)
		*ts = bpf_ktime_get_ns();
}

/* As run_queue_latency, with the timestamp in the task; 0 means none. */
static __always_inline void run_queue_latency_ts(struct task_struct *prev,
						 struct task_struct *next, unsigned int prev_state)
{
	__u64 *ts;

	if (prev_state == TASK_RUNNING)
		wakeup_mark_ts(prev);
	ts = bpf_task_storage_get(&wakeup_ts, next, 0, 0);
	if (!ts || !*ts)
		return;
	hist_add(bpf_ktime_get_ns() - *ts);
	*ts = 0;
}

static __always_inline void sink_put(__u64 v)
{
	__u32 zero = 0;
	__u64 *s = bpf_map_lookup_elem(&sink, &zero);

	if (s)
		*s += v;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(empty)
{
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(naive_switch)
{
	account();
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(naive_switch_rq, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	account();
	run_queue_latency(prev, next, prev_state);
	return 0;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(naive_wakeup, struct task_struct *p)
{
	wakeup_mark(p);
	return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(naive_wake_new, struct task_struct *p)
{
	wakeup_mark(p);
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(naive_sw_ts, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	account();
	run_queue_latency_ts(prev, next, prev_state);
	return 0;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(naive_wk_ts, struct task_struct *p)
{
	wakeup_mark_ts(p);
	return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(naive_wkn_ts, struct task_struct *p)
{
	wakeup_mark_ts(p);
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(micro_ktime)
{
	sink_put(bpf_ktime_get_ns());
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(micro_cgroup)
{
	sink_put(bpf_get_current_cgroup_id());
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(micro_read1)
{
	struct bpf_perf_event_value v;

	if (!bpf_perf_event_read_value(&events, bpf_get_smp_processor_id(), &v, sizeof(v)))
		sink_put(v.counter);
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(micro_tstore, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u64 *ts = bpf_task_storage_get(&wakeup_ts, next, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);

	if (ts)
		*ts = 1;
	return 0;
}
