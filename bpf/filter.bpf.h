/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Who is monitored: -p (a process) and -G (a cgroup's subtree); a task's
 * cgroup and its timestamps.
 *
 * Part of pmbpf.bpf.c: included there, in this order, after what it uses.
 */
#ifndef __PMBPF_FILTER_BPF_H
#define __PMBPF_FILTER_BPF_H

/* The cgroup of a task in sched_switch: plain loads with tp_btf. */
static __always_inline __u64 task_cgroup_id(struct task_struct *t, const bool btf)
{
	return btf ? t->cgroups->dfl_cgrp->kn->id : BPF_CORE_READ(t, cgroups, dfl_cgrp, kn, id);
}

static __always_inline struct task_ts *ts_get(struct task_struct *t, bool create, const bool btf)
{
	struct task_ts zero = {}, *ts;
	__u32 pid;

	if (btf)
		return (struct task_ts *)bpf_task_storage_get(
			&task_ts_storage, t, 0, create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
	pid = BPF_CORE_READ(t, pid);
	ts = bpf_map_lookup_elem(&task_ts_hash, &pid);
	if (ts || !create)
		return ts;
	bpf_map_update_elem(&task_ts_hash, &pid, &zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(&task_ts_hash, &pid);
}

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

/* In the subtree of filter_cgroup_id: its ancestor at the filter's level is the filter cgroup. */
static __always_inline bool in_cgroup_filter(struct task_struct *t, const bool btf)
{
	struct cgroup *cg;
	__u32 level = filter_cgroup_level;

	/* tp_btf: plain loads through trusted pointers instead of probe reads */
	cg = btf ? t->cgroups->dfl_cgrp : BPF_CORE_READ(t, cgroups, dfl_cgrp);
	if (!cg || (btf ? cg->level : BPF_CORE_READ(cg, level)) < (int)level || level > 4096)
		return false;
	return cgroup_ancestor_id(cg, level) == filter_cgroup_id;
}

static __always_inline bool wanted(struct task_struct *t, __u32 tgid, const bool btf)
{
	if (filter_tgid && tgid != filter_tgid)
		return false;
	if (filter_cgroup_id && !in_cgroup_filter(t, btf))
		return false;
	return true;
}

#endif /* __PMBPF_FILTER_BPF_H */
