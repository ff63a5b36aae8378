// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Kernel feature probes, in one place: libbpf's map type and helper probes,
 * a raw_tp test run on a chosen CPU, and struct layouts from vmlinux BTF.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "kfeatures.h"

const struct feature features__table[FEAT_NR] = {
	[FEAT_BTF] = { "btf", "5.2", true,
		       "CO-RE: one BPF object relocated to this kernel's structs (CONFIG_DEBUG_INFO_BTF=y)",
		       "pmbpf cannot load" },
	[FEAT_RINGBUF] = { "ringbuf", "5.8", true, "exit records of processes",
			   "pmbpf cannot load" },
	[FEAT_TEST_RUN_ON_CPU] = { "raw_tp-test-run-on-cpu", "5.10", true,
				   "flush: each CPU credits its running task before a read",
				   "pmbpf cannot load" },
	[FEAT_READ_VALUE] = { "perf_event_read_value", "4.15", true,
			      "counter readings with enabled/running times", "pmbpf cannot load" },
	[FEAT_CGROUP_ID] = { "get_current_cgroup_id", "4.18", true, "cgroup of each process entry",
			     "pmbpf cannot load" },
	[FEAT_TP_BTF] = { "tp_btf", "5.5", false,
			  "BTF-typed tracepoints: plain loads instead of probe reads",
			  "raw_tp tracepoints: same figures, more cost per context switch" },
	[FEAT_TASK_STORAGE] = { "task_storage", "5.11", false,
				"per-thread wakeup/switch-out times freed with the thread (tp_btf)",
				"raw_tp programs with a per-thread hash: same figures, more cost per context switch" },
	[FEAT_BPF_LOOP] = { "bpf_loop", "5.17", false,
			    "summing an exited process over CPUs (with percpu lookup)",
			    "exits are reported at the next read instead of through the ring buffer; nothing is lost" },
	[FEAT_PERCPU_LOOKUP] = { "map_lookup_percpu_elem", "5.19", false,
				 "reading other CPUs' slots of an exited process",
				 "exits are reported at the next read instead of through the ring buffer; nothing is lost" },
	[FEAT_CGROUP_ANCESTORS] = { "cgroup-ancestors", "6.0", false,
				    "-G filter: struct cgroup ancestors[] (pointers)",
				    "-G filter reads ancestor_ids[] (before 6.0): same result" },
	[FEAT_SWITCH_PREV_STATE] = { "sched_switch-prev_state", "5.18", false,
				     "the state a task switched out in, as the scheduler saw it",
				     "read from the task (state/__state): same figures" },
	[FEAT_SCHED_INFO] = { "sched_info", "2.6", false,
			      "run-queue waits from the scheduler's record (CONFIG_SCHED_INFO): no program at sched_wakeup (tp_btf)",
			      "programs at sched_wakeup/sched_wakeup_new time them: same figures, one more program call per wakeup" },
	[FEAT_TASK_FROM_PID] = { "task_from_pid", "6.2", false,
				 "the threads that ran since the last read are folded into the shared counts map from a per-CPU list (the bpf_task_from_pid kfunc)",
				 "a task iterator walks every task on the host before each read (tp_btf): same figures, a read costs about 0.6 us per task on the host" },
};

static bool probe_helper(enum bpf_func_id id)
{
	return libbpf_probe_bpf_helper(BPF_PROG_TYPE_RAW_TRACEPOINT, id, NULL) == 1;
}

static bool probe_map(enum bpf_map_type type)
{
	return libbpf_probe_bpf_map_type(type, NULL) == 1;
}

/* Run an empty raw_tp program on this CPU, as flush does on every CPU. */
static bool probe_test_run_on_cpu(void)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd, err, cpu = sched_getcpu();

	fd = bpf_prog_load(BPF_PROG_TYPE_RAW_TRACEPOINT, NULL, "GPL", insns,
			   sizeof(insns) / sizeof(insns[0]), NULL);
	if (fd < 0)
		return false;
	{
		LIBBPF_OPTS(bpf_test_run_opts, opts, .cpu = cpu < 0 ? 0 : cpu,
			    .flags = BPF_F_TEST_RUN_ON_CPU);

		err = bpf_prog_test_run_opts(fd, &opts);
	}
	close(fd);
	return !err;
}

/* The typed sched_switch tracepoint has 4 arguments (its typedef's proto adds void *). */
static bool btf_switch_has_prev_state(const struct btf *btf)
{
	const struct btf_type *t;
	int id = btf__find_by_name_kind(btf, "btf_trace_sched_switch", BTF_KIND_TYPEDEF);

	if (id <= 0)
		return false;
	t = btf__type_by_id(btf, id);
	while (t && (btf_is_typedef(t) || btf_is_ptr(t)))
		t = btf__type_by_id(btf, t->type);
	return t && btf_is_func_proto(t) && btf_vlen(t) >= 5;
}

/* struct cgroup has a member named member in vmlinux BTF. */
static bool btf_has_member(const struct btf *btf, const char *type, const char *member)
{
	const struct btf_member *m;
	const struct btf_type *t;
	int id, i;

	id = btf__find_by_name_kind(btf, type, BTF_KIND_STRUCT);
	if (id <= 0)
		return false;
	t = btf__type_by_id(btf, id);
	m = btf_members(t);
	for (i = 0; i < btf_vlen(t); i++, m++)
		if (!strcmp(btf__name_by_offset(btf, m->name_off), member))
			return true;
	return false;
}

/*
 * The scheduler fills sched_info when sched_info_on(): then
 * /proc/PID/schedstat counts this process's runs (before 5.14, a kernel
 * with delay accounting alone and delayacct off prints 0 0 0).
 */
static bool sched_info_kept(void)
{
	unsigned long long run, wait, runs = 0;
	FILE *f = fopen("/proc/self/schedstat", "re");

	if (!f)
		return false;
	if (fscanf(f, "%llu %llu %llu", &run, &wait, &runs) != 3)
		runs = 0;
	fclose(f);
	return runs > 0;
}

void features__probe(struct features *f)
{
	struct btf *btf = btf__load_vmlinux_btf();

	memset(f, 0, sizeof(*f));
	f->on[FEAT_BTF] = btf != NULL;
	if (btf) {
		f->on[FEAT_TP_BTF] =
			btf__find_by_name_kind(btf, "btf_trace_sched_switch", BTF_KIND_TYPEDEF) > 0;
		f->on[FEAT_CGROUP_ANCESTORS] = btf_has_member(btf, "cgroup", "ancestors");
		f->on[FEAT_SWITCH_PREV_STATE] = btf_switch_has_prev_state(btf);
		f->on[FEAT_SCHED_INFO] =
			btf_has_member(btf, "task_struct", "sched_info") && sched_info_kept();
		f->on[FEAT_TASK_FROM_PID] =
			btf__find_by_name_kind(btf, "bpf_task_from_pid", BTF_KIND_FUNC) > 0;
		btf__free(btf);
	}
	f->on[FEAT_RINGBUF] = probe_map(BPF_MAP_TYPE_RINGBUF);
	f->on[FEAT_TASK_STORAGE] = probe_map(BPF_MAP_TYPE_TASK_STORAGE);
	f->on[FEAT_TEST_RUN_ON_CPU] = probe_test_run_on_cpu();
	f->on[FEAT_READ_VALUE] = probe_helper(BPF_FUNC_perf_event_read_value);
	f->on[FEAT_CGROUP_ID] = probe_helper(BPF_FUNC_get_current_cgroup_id);
	f->on[FEAT_BPF_LOOP] = probe_helper(BPF_FUNC_loop);
	f->on[FEAT_PERCPU_LOOKUP] = probe_helper(BPF_FUNC_map_lookup_percpu_elem);
}

int features__missing_required(const struct features *f)
{
	int i;

	for (i = 0; i < FEAT_NR; i++)
		if (features__table[i].required && !f->on[i])
			return i;
	return -1;
}
