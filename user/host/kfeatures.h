/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the running kernel offers pmbpf's BPF programs, probed once: BTF,
 * program and map types, helpers, struct layouts. session chooses its
 * programs from it; doctor lists it. (Not features.h: glibc has one.)
 */
#ifndef __PMBPF_KFEATURES_H
#define __PMBPF_KFEATURES_H

#include <stdbool.h>

enum feature_id {
	FEAT_BTF, /* /sys/kernel/btf/vmlinux: CO-RE */
	FEAT_RINGBUF, /* BPF_MAP_TYPE_RINGBUF: exit records */
	FEAT_TEST_RUN_ON_CPU, /* BPF_PROG_TEST_RUN of raw_tp on a chosen CPU: flush */
	FEAT_READ_VALUE, /* bpf_perf_event_read_value */
	FEAT_CGROUP_ID, /* bpf_get_current_cgroup_id */
	FEAT_TP_BTF, /* BTF-typed tracepoints */
	FEAT_TASK_STORAGE, /* BPF_MAP_TYPE_TASK_STORAGE */
	FEAT_BPF_LOOP, /* bpf_loop helper */
	FEAT_PERCPU_LOOKUP, /* bpf_map_lookup_percpu_elem helper */
	FEAT_CGROUP_ANCESTORS, /* struct cgroup ancestors[] (else ancestor_ids[]) */
	FEAT_SWITCH_PREV_STATE, /* sched_switch's prev_state argument */
	FEAT_SCHED_INFO, /* task_struct.sched_info, kept (CONFIG_SCHED_INFO, sched_info_on()) */
	FEAT_TASK_FROM_PID, /* the bpf_task_from_pid kfunc: the ran list's drain */
	FEAT_NR,
};

struct feature {
	const char *name;
	const char *since; /* first kernel release with it */
	bool required; /* pmbpf cannot run without it */
	const char *use; /* what pmbpf does with it */
	const char *without; /* what changes without it */
};

struct features {
	bool on[FEAT_NR];
};

extern const struct feature features__table[FEAT_NR];

/* Probe the running kernel (needs CAP_BPF to load the probe programs). */
void features__probe(struct features *f);
/* The first required feature missing, or -1. */
int features__missing_required(const struct features *f);
/* Programs can sum an exited process over CPUs and send it (bpf_loop + percpu lookup). */
static inline bool features__exit_records(const struct features *f)
{
	return f->on[FEAT_RINGBUF] && f->on[FEAT_BPF_LOOP] && f->on[FEAT_PERCPU_LOOKUP];
}

/* tp_btf programs keep per-thread timestamps in task storage. */
static inline bool features__tp_btf_usable(const struct features *f)
{
	return f->on[FEAT_TP_BTF] && f->on[FEAT_TASK_STORAGE];
}

#endif
