/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Who is monitored: -p (a process) and -G (a cgroup's subtree). The one
 * filter of every object (pmbpf.bpf.c, profile.bpf.c, hot.bpf.c): its
 * knobs are set by userspace before load; with neither, every task is.
 *
 * Needs vmlinux.h, bpf_helpers.h and bpf_core_read.h included before it.
 */
#ifndef __PMBPF_FILTER_BPF_H
#define __PMBPF_FILTER_BPF_H

#include "core_fixes.bpf.h"

const volatile __u32 filter_tgid = 0;
const volatile __u64 filter_cgroup_id = 0; /* only tasks in this cgroup's subtree */
const volatile __u32 filter_cgroup_level = 0; /* its depth: root is 0 */

/*
 * In the subtree of filter_cgroup_id: its ancestor at the filter's level is
 * the filter cgroup (what bpf_current_task_under_cgroup() tests, for any
 * task, without a cgroup array map). btf: t is a trusted pointer.
 */
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

/* Whether t (of process tgid) is monitored. */
static __always_inline bool wanted(struct task_struct *t, __u32 tgid, const bool btf)
{
	if (filter_tgid && tgid != filter_tgid)
		return false;
	if (filter_cgroup_id && !in_cgroup_filter(t, btf))
		return false;
	return true;
}

#endif /* __PMBPF_FILTER_BPF_H */
