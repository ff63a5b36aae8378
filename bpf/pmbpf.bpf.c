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
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "pmbpf.h"

#define TASK_RUNNING 0
#define TASK_DEAD 0x80
#define EEXIST 17

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile __u32 nr_cpus = 1;
const volatile __u32 nr_events = 0;
const volatile __u32 filter_tgid = 0;
const volatile __u32 filter_cgroup = 0; /* 1: only tasks under cgroup_filter[0] */

/* Counter fds, index event * nr_cpus + cpu; filled by userspace. */
struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} events SEC(".maps");

/* The cgroup whose subtree is monitored when filter_cgroup is set. */
struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} cgroup_filter SEC(".maps");

struct cpu_state {
	__u64 last_ns;
	__u64 pend_nvcsw;
	__u64 pend_nivcsw;
	__u32 valid;
	__u32 pad;
	struct pmbpf_reading last[PMBPF_MAX_EVENTS];
};

/* This CPU's last attribution point; owned by the programs, never cleared. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cpu_state);
} cpu_states SEC(".maps");

/*
 * Cumulative counts per (tgid, cgroup). Entries are created here and deleted
 * here at process exit (after the exit record is sent); userspace only reads,
 * and deletes only entries of processes it knows are dead.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 10240);
	__type(key, struct pmbpf_key);
	__type(value, struct pmbpf_counts);
} counts SEC(".maps");

/* Final counts of exited processes; consumed by userspace at each read. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} exits SEC(".maps");

/* Self statistics, enum pmbpf_stat; only ever incremented. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PMBPF_STAT_NR);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

/* Processes already counted as folded into the overflow entry. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, __u8);
} folded_seen SEC(".maps");

/* Scratch space for records too big for the BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pmbpf_exit);
} scratch SEC(".maps");

static __always_inline void stat_inc(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &idx);

	if (v)
		*v += 1;
}

static __always_inline bool wanted(__u32 tgid)
{
	if (filter_tgid && tgid != filter_tgid)
		return false;
	if (filter_cgroup && bpf_current_task_under_cgroup(&cgroup_filter, 0) != 1)
		return false;
	return true;
}

/* Look up, or create, the entry of the current process in its cgroup. */
static __always_inline struct pmbpf_counts *entry_get(__u32 tgid, struct task_struct *task)
{
	struct pmbpf_key key = {};
	struct pmbpf_counts *c;
	struct pmbpf_exit *tmp;
	struct task_struct *leader;
	__u32 zero = 0;
	__u64 id;
	long err;

	key.tgid = tgid;
	key.cgroup_id = bpf_get_current_cgroup_id();
	c = bpf_map_lookup_elem(&counts, &key);
	if (c)
		return c;

	tmp = bpf_map_lookup_elem(&scratch, &zero);
	if (!tmp)
		return NULL;
	__builtin_memset(&tmp->total, 0, sizeof(tmp->total));
	leader = BPF_CORE_READ(task, group_leader);
	tmp->total.start_ns = BPF_CORE_READ(leader, start_time);
	tmp->total.comm_ns = bpf_ktime_get_ns();
	BPF_CORE_READ_STR_INTO(&tmp->total.comm, leader, comm);
	err = bpf_map_update_elem(&counts, &key, &tmp->total, BPF_NOEXIST);
	if (!err || err == -EEXIST)
		return bpf_map_lookup_elem(&counts, &key);

	/* Map full: fold into the overflow entry, counting each process once. */
	stat_inc(PMBPF_STAT_OVERFLOW);
	key.tgid = PMBPF_OVERFLOW_TGID;
	key.cgroup_id = 0;
	c = bpf_map_lookup_elem(&counts, &key);
	if (!c)
		return NULL;
	id = ((__u64)tgid << 32) ^ tmp->total.start_ns;
	if (!bpf_map_update_elem(&folded_seen, &id, &zero, BPF_NOEXIST))
		c->folded++;
	return c;
}

/*
 * Credit everything since this CPU's last attribution point to c (when not
 * NULL), and make now the new attribution point.
 */
static __always_inline void attribute(struct cpu_state *st, struct pmbpf_counts *c, __u32 cpu)
{
	struct bpf_perf_event_value v;
	__u64 now = bpf_ktime_get_ns();
	__u32 i;

	if (c && st->valid) {
		c->oncpu_ns += now - st->last_ns;
		c->nvcsw += st->pend_nvcsw;
		c->nivcsw += st->pend_nivcsw;
	}
	st->pend_nvcsw = 0;
	st->pend_nivcsw = 0;
	st->last_ns = now;

	for (i = 0; i < PMBPF_MAX_EVENTS; i++) {
		if (i >= nr_events)
			break;
		if (bpf_perf_event_read_value(&events, i * nr_cpus + cpu, &v, sizeof(v))) {
			stat_inc(PMBPF_STAT_READ_ERRORS);
			continue;
		}
		if (c && st->valid) {
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

static long sum_cpu(__u32 cpu, void *ctx)
{
	struct pmbpf_exit *e;
	struct pmbpf_counts *c;
	__u32 zero = 0, i;

	e = bpf_map_lookup_elem(&scratch, &zero);
	if (!e)
		return 1;
	c = bpf_map_lookup_percpu_elem(&counts, &e->key, cpu);
	if (!c)
		return 0;
	e->total.oncpu_ns += c->oncpu_ns;
	e->total.nvcsw += c->nvcsw;
	e->total.nivcsw += c->nivcsw;
	if (c->start_ns)
		e->total.start_ns = c->start_ns;
	if (c->comm_ns > e->total.comm_ns) {
		e->total.comm_ns = c->comm_ns;
		__builtin_memcpy(e->total.comm, c->comm, sizeof(c->comm));
	}
	for (i = 0; i < PMBPF_MAX_EVENTS; i++) {
		e->total.ev[i].value += c->ev[i].value;
		e->total.ev[i].enabled += c->ev[i].enabled;
		e->total.ev[i].running += c->ev[i].running;
	}
	return 0;
}

/* The last thread of a process is gone: send its final counts, drop it. */
static __always_inline void process_exit(__u32 tgid)
{
	struct pmbpf_key key = {};
	struct pmbpf_exit *e;
	__u32 zero = 0;

	key.tgid = tgid;
	key.cgroup_id = bpf_get_current_cgroup_id();
	if (!bpf_map_lookup_elem(&counts, &key))
		return; /* folded into the overflow entry, or filtered out */

	e = bpf_map_lookup_elem(&scratch, &zero);
	if (!e)
		return;
	__builtin_memset(e, 0, sizeof(*e));
	e->key = key;
	e->exit_ns = bpf_ktime_get_ns();
	bpf_loop(nr_cpus, sum_cpu, NULL, 0);

	if (bpf_ringbuf_output(&exits, e, sizeof(*e), 0)) {
		struct pmbpf_counts *c = bpf_map_lookup_elem(&counts, &key);

		/* Leave the entry for userspace to find and report as dead. */
		if (c)
			c->flags |= PMBPF_F_DEAD;
		stat_inc(PMBPF_STAT_EXITS_LOST);
		return;
	}
	stat_inc(PMBPF_STAT_EXITS);
	bpf_map_delete_elem(&counts, &key);
}

static __always_inline int on_switch(bool preempt, struct task_struct *prev,
				     struct task_struct *next, unsigned int prev_state)
{
	struct cpu_state *st;
	struct pmbpf_counts *c = NULL;
	__u32 zero = 0, cpu, tgid;
	bool dead = prev_state & TASK_DEAD;

	st = bpf_map_lookup_elem(&cpu_states, &zero);
	if (!st)
		return 0;
	stat_inc(PMBPF_STAT_SWITCHES);

	if (!preempt && prev_state != TASK_RUNNING)
		st->pend_nvcsw++;
	else
		st->pend_nivcsw++;

	tgid = bpf_get_current_pid_tgid() >> 32;
	/*
	 * Between threads of one process in one cgroup (same css_set) the
	 * credit would go to the same entry: defer it to the next switch.
	 */
	if (!dead && st->valid && tgid == BPF_CORE_READ(next, tgid) &&
	    BPF_CORE_READ(prev, cgroups) == BPF_CORE_READ(next, cgroups)) {
		stat_inc(PMBPF_STAT_HANDOFFS);
		return 0;
	}

	cpu = bpf_get_smp_processor_id();
	if (wanted(tgid))
		c = entry_get(tgid, prev);
	attribute(st, c, cpu);

	if (c && dead && BPF_CORE_READ(prev, signal, live.counter) == 0)
		process_exit(tgid);
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(switch_btf, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	return on_switch(preempt, prev, next, prev_state);
}

SEC("raw_tp/sched_switch")
int BPF_PROG(switch_raw, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	return on_switch(preempt, prev, next, prev_state);
}

static __always_inline int on_exec(void)
{
	struct pmbpf_key key = {};
	struct pmbpf_counts *c;

	key.tgid = bpf_get_current_pid_tgid() >> 32;
	key.cgroup_id = bpf_get_current_cgroup_id();
	c = bpf_map_lookup_elem(&counts, &key);
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
 * Run by userspace on each CPU (BPF_PROG_TEST_RUN, BPF_F_TEST_RUN_ON_CPU)
 * before a read: credits the task running there up to now, so that a task
 * that never switches out is not shown as zero and then a spike.
 */
SEC("raw_tp")
int flush(void *ctx)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct pmbpf_counts *c = NULL;
	struct cpu_state *st;
	__u32 zero = 0, tgid;

	st = bpf_map_lookup_elem(&cpu_states, &zero);
	if (!st)
		return 0;
	stat_inc(PMBPF_STAT_FLUSHES);
	tgid = bpf_get_current_pid_tgid() >> 32;
	if (wanted(tgid))
		c = entry_get(tgid, task);
	attribute(st, c, bpf_get_smp_processor_id());
	return 0;
}
