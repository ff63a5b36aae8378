/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Every test of what the running kernel's structs have, each with the
 * kernel commit it guards (or the config option, where a field exists only
 * with one); chosen by CO-RE (bpf_core_field_exists()), as libbpf-tools'
 * core_fixes.bpf.h:
 *
 *   cgroup_ancestor_id()  struct cgroup's ancestors[] since 6.0 (commit
 *                         7f203bc89eb6), ancestor_ids[] before
 *   get_task_state()      task_struct::__state since 5.14 (commit
 *                         2f064a59a11f), state before
 *   task_rq()             cfs_rq::rq with CONFIG_FAIR_GROUP_SCHED (a config
 *                         option, not a commit); else the rq embeds the cfs_rq
 *   CFS_RQ_HAS_RQ         the same test, where rq_clock.bpf.h reads the rq
 *                         with plain loads (tp_btf)
 *   TASK_HAS_SCHED_INFO() task_struct::sched_info with CONFIG_SCHED_INFO (a
 *                         config option)
 *
 * One guard is not CO-RE: sched_switch's prev_state argument (5.18, commit
 * fa2c3254d7cf), which userspace probes (switch_has_prev_state,
 * pmbpf.bpf.c). Helpers the programs may call are chosen by userspace too
 * (kfeatures.h; fold.bpf.h names their commits).
 *
 * Needs vmlinux.h, bpf_helpers.h and bpf_core_read.h included before it.
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

/* The id of cg's ancestor at level (cg itself at its own level). */
static __always_inline __u64 cgroup_ancestor_id(struct cgroup *cg, __u32 level)
{
	struct cgroup___new *cg_new = (void *)cg;
	struct cgroup___old *cg_old = (void *)cg;
	struct cgroup *anc = NULL;
	__u64 id = 0;

	if (bpf_core_field_exists(cg_new->ancestors)) {
		bpf_probe_read_kernel(&anc, sizeof(anc),
				      (void *)cg + bpf_core_field_offset(cg_new->ancestors) +
					      level * sizeof(anc));
		return anc ? BPF_CORE_READ(anc, kn, id) : 0;
	}
	bpf_probe_read_kernel(&id, sizeof(id),
			      (void *)cg + bpf_core_field_offset(cg_old->ancestor_ids) +
				      level * sizeof(id));
	return id;
}

/* task_struct::state until 5.14 (commit 2f064a59a11f, "sched: Change task_struct::state") */
struct task_struct___old {
	long state;
} __attribute__((preserve_access_index));

static __always_inline unsigned int get_task_state(struct task_struct *t)
{
	if (bpf_core_field_exists(t->__state))
		return BPF_CORE_READ(t, __state);
	return BPF_CORE_READ((struct task_struct___old *)t, state);
}

/*
 * cfs_rq::rq exists with CONFIG_FAIR_GROUP_SCHED (kernel/sched/sched.h):
 * then the task group's per-CPU queue points to its run queue; without it
 * the run queue embeds its one cfs_rq.
 */
#define CFS_RQ_HAS_RQ bpf_core_field_exists(((struct cfs_rq *)0)->rq)

/* The run queue p is on. btf: p is a trusted pointer (plain loads). */
static __always_inline struct rq *task_rq(struct task_struct *p, const bool btf)
{
	struct cfs_rq *cfs;

	if (CFS_RQ_HAS_RQ) {
		if (btf)
			return p->se.cfs_rq->rq;
		return BPF_CORE_READ(p, se.cfs_rq, rq);
	}
	cfs = BPF_CORE_READ(p, se.cfs_rq);
	return (struct rq *)((void *)cfs - bpf_core_field_offset(struct rq, cfs));
}

/* task_struct::sched_info exists with CONFIG_SCHED_INFO (schedstats or delay accounting) */
#define TASK_HAS_SCHED_INFO(p) bpf_core_field_exists((p)->sched_info)

#endif /* __PMBPF_CORE_FIXES_BPF_H */
