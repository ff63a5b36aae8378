// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Stacks: where the samples (on-CPU) or the blocked time (off-CPU) go.
 *
 * On-CPU: userspace opens a sampling event per CPU (pid = -1) and attaches
 * sample to each; every sample adds 1 to the (process, cgroup, user stack,
 * kernel stack) entry. Off-CPU: at sched_switch the outgoing thread's stacks
 * and the time are kept; when the thread is switched back in, the time it
 * spent off the CPU is added to the entry of the stacks it left with.
 *
 * The first sample of a process (and the first after an exec) is reported
 * through a ring buffer, so that userspace reads its mappings while it is
 * still alive.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "profile.h"
#include "filter.bpf.h"

#define EFAULT 14
#define EEXIST 17

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* --call-graph dwarf: bytes of user stack copied per sample (0: frame pointers) */
const volatile __u32 stack_size = 0;
/*
 * With -G, nothing passes until userspace sets this (profile -- COMMAND:
 * once the command is stopped before its exec, as perf counts from the
 * exec); the filter itself (filter.bpf.h) is set before load.
 */
volatile bool filter_open = false;

/* User and kernel stacks by id; only added to, read by userspace at the end. */
struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 16384);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, PROFILE_MAX_DEPTH * sizeof(__u64));
} stacks SEC(".maps");

/* Weight per (process, cgroup, stacks); only added to, read at the end. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct profile_key);
	__type(value, struct profile_value);
} counts SEC(".maps");

/* Processes already reported to userspace; an exec forgets its process. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u8);
} seen SEC(".maps");

/* New processes (struct profile_proc); consumed by userspace as they come. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} procs SEC(".maps");

/* --call-graph dwarf: samples with their user stack (struct profile_ustack). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096); /* sized by userspace in dwarf mode */
} ustacks SEC(".maps");

#define PAGE_SZ 4096

/*
 * --call-graph dwarf: a stack copied page by page (the slow path), one entry
 * per CPU (sized by userspace; a per-CPU array's values cannot be this big).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u8[PROFILE_DWARF_MAX_SIZE + PAGE_SZ]);
} ustack_scratch SEC(".maps");

struct offcpu_start {
	__u64 ts;
	struct profile_key key;
};

/* Off-CPU: switch-out time and stacks per thread; deleted at switch-in. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 32768);
	__type(key, __u32);
	__type(value, struct offcpu_start);
} starts SEC(".maps");

/* Self statistics, enum profile_stat; only ever incremented. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PROFILE_STAT_NR);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

static __always_inline void stat_add(__u32 idx, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &idx);

	if (v)
		*v += n;
}

/* The current task (of process tgid) is profiled: the filter of every object. */
static __always_inline bool current_wanted(__u32 tgid)
{
	if (filter_cgroup_id && !filter_open)
		return false;
	return wanted((struct task_struct *)bpf_get_current_task(), tgid, false);
}

static __always_inline void check_stack_id(__s32 id)
{
	if (id < 0 && id != -EFAULT)
		stat_add(PROFILE_STAT_STACK_ERRORS, 1);
}

/* Fill key with the current task's process, cgroup and stacks. */
static __always_inline void key_fill(struct profile_key *key, void *ctx, __u32 tgid)
{
	key->tgid = tgid;
	key->cgroup_id = bpf_get_current_cgroup_id();
	/* Kernel threads and the idle task have no user stack. */
	key->user_stack_id = tgid ? bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK) : -EFAULT;
	key->kern_stack_id = bpf_get_stackid(ctx, &stacks, 0);
	check_stack_id(key->user_stack_id);
	check_stack_id(key->kern_stack_id);
}

/* Tell userspace about a process it has not seen yet. */
static __always_inline void proc_notify(__u32 tgid)
{
	struct profile_proc rec = { .tgid = tgid };
	__u8 one = 1;

	if (!tgid || bpf_map_update_elem(&seen, &tgid, &one, BPF_NOEXIST))
		return;
	if (bpf_ringbuf_output(&procs, &rec, sizeof(rec), 0)) {
		/* Try again at its next sample. */
		bpf_map_delete_elem(&seen, &tgid);
		stat_add(PROFILE_STAT_PROCS_LOST, 1);
	}
}

static __always_inline void weight_add(const struct profile_key *key, struct task_struct *task,
				       __u64 weight)
{
	struct profile_value *v, zero = {};
	long err;

	v = bpf_map_lookup_elem(&counts, key);
	if (!v) {
		BPF_CORE_READ_STR_INTO(&zero.comm, task, group_leader, comm);
		err = bpf_map_update_elem(&counts, key, &zero, BPF_NOEXIST);
		if (err && err != -EEXIST) {
			stat_add(PROFILE_STAT_LOST, weight);
			return;
		}
		v = bpf_map_lookup_elem(&counts, key);
		if (!v) {
			stat_add(PROFILE_STAT_LOST, weight);
			return;
		}
	}
	__sync_fetch_and_add(&v->weight, weight);
	stat_add(PROFILE_STAT_WEIGHT, weight);
}

static long vma_end(struct task_struct *task, struct vm_area_struct *vma, void *ctx)
{
	*(__u64 *)ctx = vma->vm_end;
	return 0;
}

/*
 * The slow path of the stack copy: up to the end of sp's mapping, a page at a
 * time. Returns the bytes copied into rec->stack (0: none).
 */
static __always_inline __u64 ustack_copy_pages(struct task_struct *task, struct profile_ustack *rec,
					       __u64 sp)
{
	__u64 end = 0, n = stack_size, off = 0, chunk;
	__u32 cpu = bpf_get_smp_processor_id(), i, ok = 0;
	__u8 *buf;

	buf = bpf_map_lookup_elem(&ustack_scratch, &cpu);
	if (!buf || bpf_find_vma(task, sp, vma_end, &end, 0) || end <= sp) {
		stat_add(PROFILE_STAT_USTACKS_UNREAD, 1);
		return 0;
	}
	if (end - sp < n) {
		n = end - sp;
		rec->flags |= PROFILE_USTACK_CLAMPED;
	}
	for (i = 0; i < PROFILE_DWARF_MAX_SIZE / PAGE_SZ + 1; i++) {
		if (off >= n)
			break;
		chunk = PAGE_SZ - ((sp + off) & (PAGE_SZ - 1));
		if (chunk > n - off)
			chunk = n - off;
		off &= PROFILE_DWARF_MAX_SIZE - 1;
		if (chunk > PAGE_SZ)
			break;
		/* A page that is not there reads as zeros. */
		if (!bpf_probe_read_user(buf + off, chunk, (void *)(sp + off)))
			ok++;
		off += chunk;
	}
	if (n > stack_size || n > PROFILE_DWARF_MAX_SIZE || !ok ||
	    bpf_probe_read_kernel(rec->stack, n, buf)) {
		stat_add(PROFILE_STAT_USTACKS_UNREAD, 1);
		return 0;
	}
	return n;
}

/*
 * --call-graph dwarf: the sample goes to userspace with the user registers
 * and stack_size bytes of the user stack from sp, as perf's
 * PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER. Near the top of the stack
 * fewer bytes are readable: the copy is clamped to the end of the stack's
 * mapping, and copied page by page, a page that is not present (the random
 * gap the kernel leaves under the arguments, never written) reading as zeros.
 * Returns false for a task without a user stack (a kernel thread).
 */
static __always_inline bool ustack_send(void *ctx, struct task_struct *task, __u64 id)
{
	struct profile_ustack *rec;
	struct pt_regs *regs;
	__u64 sp, n;

	if (!task->mm || (task->flags & 0x00200000 /* PF_KTHREAD */))
		return false;
	rec = bpf_ringbuf_reserve(&ustacks, sizeof(*rec) + stack_size, 0);
	if (!rec) {
		stat_add(PROFILE_STAT_USTACKS_LOST, 1);
		return true;
	}
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
#if defined(__TARGET_ARCH_x86)
	rec->regs[PROFILE_REG_IP] = BPF_CORE_READ(regs, ip);
	rec->regs[PROFILE_REG_SP] = BPF_CORE_READ(regs, sp);
	rec->regs[PROFILE_REG_FP] = BPF_CORE_READ(regs, bp);
	rec->regs[PROFILE_REG_LR] = 0;
#elif defined(__TARGET_ARCH_arm64)
	rec->regs[PROFILE_REG_IP] = BPF_CORE_READ(regs, pc);
	rec->regs[PROFILE_REG_SP] = BPF_CORE_READ(regs, sp);
	rec->regs[PROFILE_REG_FP] = BPF_CORE_READ(regs, regs[29]);
	rec->regs[PROFILE_REG_LR] = BPF_CORE_READ(regs, regs[30]);
#else
#error "--call-graph dwarf: registers of this architecture"
#endif
	rec->tgid = id >> 32;
	rec->tid = (__u32)id;
	rec->cgroup_id = bpf_get_current_cgroup_id();
	rec->kern_stack_id = bpf_get_stackid(ctx, &stacks, 0);
	check_stack_id(rec->kern_stack_id);
	rec->flags = 0;
	rec->pad = 0;
	BPF_CORE_READ_STR_INTO(&rec->comm, task, group_leader, comm);
	sp = rec->regs[PROFILE_REG_SP];
	n = stack_size;
	if (bpf_probe_read_user(rec->stack, n, (void *)sp))
		n = ustack_copy_pages(task, rec, sp);
	rec->size = n;
	bpf_ringbuf_submit(rec, 0);
	return true;
}

/* One sample of the current task: its stacks, weighing 1. */
static __always_inline int sample_task(void *ctx)
{
	struct profile_key key = {};
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32;
	struct task_struct *task;

	if (!current_wanted(tgid))
		return 0;
	stat_add(PROFILE_STAT_SAMPLES, 1);
	if (stack_size) {
		task = bpf_get_current_task_btf();
		if (ustack_send(ctx, task, id)) {
			proc_notify(tgid);
			return 0;
		}
	}
	key_fill(&key, ctx, tgid);
	proc_notify(tgid);
	weight_add(&key, (struct task_struct *)bpf_get_current_task(), 1);
	return 0;
}

SEC("perf_event")
int sample(struct bpf_perf_event_data *ctx)
{
	return sample_task(ctx);
}

/* A tracepoint's perf event takes a tracepoint program only (as perf record -e sys:name). */
SEC("tracepoint")
int sample_tp(void *ctx)
{
	return sample_task(ctx);
}

static __always_inline int on_switch(void *ctx, struct task_struct *prev, struct task_struct *next)
{
	struct offcpu_start *start, st = {};
	__u64 id = bpf_get_current_pid_tgid(), now = bpf_ktime_get_ns();
	__u32 pid = id, tgid = id >> 32;

	/* prev is current here: its stacks are the ones it blocks with. */
	if (pid && current_wanted(tgid)) {
		st.ts = now;
		key_fill(&st.key, ctx, tgid);
		if (bpf_map_update_elem(&starts, &pid, &st, BPF_ANY))
			stat_add(PROFILE_STAT_STARTS_LOST, 1);
		else
			stat_add(PROFILE_STAT_SWITCHES_OUT, 1);
		proc_notify(tgid);
	}

	pid = BPF_CORE_READ(next, pid);
	start = bpf_map_lookup_elem(&starts, &pid);
	if (!start)
		return 0;
	if (now > start->ts)
		weight_add(&start->key, next, now - start->ts);
	bpf_map_delete_elem(&starts, &pid);
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(offcpu_btf, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return on_switch(ctx, prev, next);
}

SEC("raw_tp/sched_switch")
int BPF_PROG(offcpu_raw, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return on_switch(ctx, prev, next);
}

/* After an exec the mappings are new: have userspace read them again. */
static __always_inline int on_exec(void)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	bpf_map_delete_elem(&seen, &tgid);
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
