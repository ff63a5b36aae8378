/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Struct flavours for kernels whose layouts changed, each chosen by CO-RE
 * (bpf_core_field_exists()) and citing the kernel commit it guards. The
 * other guards are tests of one field where it is read: cfs_rq->rq
 * (rq_clock.bpf.h), task_struct::sched_info (CONFIG_SCHED_INFO), and
 * sched_switch's prev_state argument (switch_has_prev_state, 5.18: commit
 * fa2c3254d7cf, in pmbpf.bpf.c).
 */
#ifndef __PMBPF_CORE_FIXES_BPF_H
#define __PMBPF_CORE_FIXES_BPF_H

/*
 * struct cgroup before 6.0 kept its ancestors' ids (ancestor_ids[], which
 * are kernfs ids, the ids pmbpf uses); commit 7f203bc89eb6 ("cgroup:
 * Replace cgroup->ancestor_ids[] with ->ancestors[]") keeps pointers.
 * As perf's bperf_cgroup.bpf.c: one flavour per layout, chosen by CO-RE.
 */
struct cgroup___new {
	int level;
	struct cgroup *ancestors[];
} __attribute__((preserve_access_index));

struct cgroup___old {
	int level;
	__u64 ancestor_ids[];
} __attribute__((preserve_access_index));

/* task_struct::state until 5.14 (commit 2f064a59a11f, "sched: Change task_struct::state") */
struct task_struct___old {
	long state;
} __attribute__((preserve_access_index));

#endif /* __PMBPF_CORE_FIXES_BPF_H */
