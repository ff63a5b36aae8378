// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * --hot: a low-rate per-CPU cpu-clock sample counts the user address the
 * monitored process was at. Its own object, loaded only with the option
 * (user/collect/hot.c); the filter is the switch object's (filter.bpf.h),
 * set from the same -p and -G. Userspace reads and deletes the entries at
 * each collection. hot_task_regs (5.15+, bpf_task_pt_regs) lets a sample
 * taken in the kernel count where the process entered it; without it such
 * a sample counts as kernel (ip 0).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "pmbpf.h"
#include "filter.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile bool hot_task_regs = false;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, struct pmbpf_hot_key);
	__type(value, __u64);
} hot_ips SEC(".maps");

SEC("perf_event")
int hot_sample(struct bpf_perf_event_data *ctx)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct pmbpf_hot_key key = {};
	__u64 *n, one = 1, ip;

	key.tgid = bpf_get_current_pid_tgid() >> 32;
	if (!key.tgid || !wanted(task, key.tgid, false))
		return 0;
	/* user addresses are the lower half on 64-bit: the sign bit is clear */
	ip = PT_REGS_IP(&ctx->regs);
	if ((__s64)ip <= 0) {
		ip = 0;
		if (hot_task_regs) {
			struct pt_regs *regs =
				(struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());

			ip = PT_REGS_IP_CORE(regs);
			if ((__s64)ip <= 0)
				ip = 0;
		}
	}
	key.ip = ip;
	n = bpf_map_lookup_elem(&hot_ips, &key);
	if (n)
		__sync_fetch_and_add(n, 1);
	else
		bpf_map_update_elem(&hot_ips, &key, &one, BPF_NOEXIST);
	return 0;
}
