// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Collection: open the counters per CPU, load and attach the BPF programs,
 * read the kernel's cumulative per-process counts and exit records, and hand
 * them to the accounting (account.c), which makes the interval's rows.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "pmbpf.h" /* before the skeleton, which names its structs */
#include "pmbpf.skel.h"
#include "hot.h"
#include "delay_read.h"
#include "slots.h"
#include "bpfload.h"
#include "account.h"
#include "cgroup.h"
#include "common.h"
#include "counters.h"
#include "host.h"
#include "pmu.h"
#include "kfeatures.h"
#include "session.h"
#include "skel_nokf.h"
#include "util.h"

/*
 * Default size of the counts map. Shared (tp_btf flavour, counts_shared in
 * the BPF program): one value per entry, COUNTS_SHARED_ENTRIES on any host.
 * The per-CPU fallback takes entries x value size x possible CPUs of kernel
 * memory, all of it allocated at load: up to COUNTS_ENTRIES entries, fewer
 * where that would exceed COUNTS_BUDGET (from 33 possible CPUs on):
 * docs/kernels.md.
 */
#define COUNTS_SHARED_ENTRIES 65536
/* cgroups with an overflow entry of their own: shared map, per-CPU map */
#define OVERFLOW_SHARED_CGROUPS 4096
#define OVERFLOW_PERCPU_CGROUPS 64
#define COUNTS_ENTRIES		10240
#define COUNTS_BUDGET		(128ULL << 20)
#define COUNTS_MIN		256

struct session {
	struct pmbpf_bpf *skel;
	struct bpfload bl;
	/* the attached programs, flush, fold or drain, the delays' readers: for self statistics */
	struct bpf_program *progs[BPFLOAD_MAX_PAIRS + 4];
	int nr_progs;
	struct counters ctr; /* the per-CPU perf counters */
	bool *flush_online; /* the CPUs online as the last flush began: flush_cpus() */
	struct metric_sel metrics;
	struct ring_buffer *rb;
	struct account *acct;
	struct cgroup_cache *cg;
	__u64 gen;
	__u64 last_mono;
	__u64 interval_ns; /* asked for: session_opts.interval_ns */
	__u64 late; /* intervals that took more than 1.5 times interval_ns */
	__u64 late_said_ns; /* when the last "falls behind" line was said */
	__u64 poll_ns; /* what the last collection took */
	struct features feat;
	__u32 max_procs;
	__u32 opt_max_procs; /* -m, 0: the default */
	bool shared; /* the counts map is shared, in slots (counts_shared) */
	int counts_cpus; /* values per counts map entry: 1 shared, else possible CPUs */
	__u64 map_bytes; /* kernel memory of the maps (memlock) */
	struct map_reader counts; /* per-CPU mode */
	struct slot_reader slots; /* shared: the entries, mapped */
	struct map_reader overflow; /* per-cgroup overflow entries */
	__u32 value_size; /* of a counts map value: session__counts_value_size() */
	size_t stride; /* of a CPU's value in the counts map */
	struct hot *hot; /* --hot, or NULL */
	struct delay_reader delays; /* --delays: delays.acct, else NULL */
	bool delays_on; /* session_opts.delays resolved */
	bool threads; /* --threads: an entry per thread */
	struct iter_reader fold; /* the iterator that folds threads' counts (shared) */
	enum thread_fold fold_mode; /* --thread-fold */
	bool wakeup_progs; /* the sched_wakeup programs time run-queue waits */
	bool force_wakeup_progs; /* --wakeup-progs */
};

#define FOLD_MAX_SLOTS PMBPF_SHARED_EVENTS

/*
 * The switch program times run-queue waits from the scheduler's sched_info
 * (tp_btf, where it is kept), and no program runs at wakeups; otherwise
 * the wakeup programs time them. --wakeup-progs forces them (A/B
 * benchmarks, tests).
 */
static bool want_wakeup_progs(const struct session *s, bool tp_btf)
{
	return s->force_wakeup_progs || !tp_btf || !s->feat.on[FEAT_SCHED_INFO];
}

/* PROC_PID_INIT_INO (include/linux/proc_ns.h): the initial pid namespace's inode */
#define PID_NS_INIT_INO 0xEFFFFFFCU

/*
 * A task iterator walks the tasks of the pid namespace that opened it: only
 * in the initial one does it see every thread that needs a fold.
 */
static bool in_initial_pid_ns(void)
{
	struct stat st;

	return !stat("/proc/self/ns/pid", &st) && st.st_ino == PID_NS_INIT_INO;
}

/*
 * The programs in their two flavours, in attach order: wakeups first, so no
 * switch-in finds a half-set timestamp. The sched_switch program sums exits
 * in BPF only where the kernel can (kfeatures.h). The per-thread timestamp
 * map of the flavour not loaded is not created.
 */
static int choose_programs(struct bpfload *bl, struct session *s, struct pmbpf_bpf *skel)
{
	bool sum = features__exit_records(&s->feat), tp_btf = bl->tp_btf;
	/*
	 * The shared counts map, its threads' counts in task storage folded
	 * before each read: tp_btf where the switch program sums exits (5.19+:
	 * its shared credit is in global functions that take pointers and
	 * bpf_get_current_task_btf()), and up to FOLD_MAX_SLOTS counters (the
	 * default group is 4): with 8 counting events the switch program took
	 * over 150 s to verify in the arm64 6.1 guest under TCG (icount=2,
	 * before the global functions). The threads that ran are found from
	 * per-CPU lists (bpf_task_from_pid, 6.2+, global ids: any pid
	 * namespace), else by a walk of every task (initial pid namespace
	 * only). Otherwise, or with --thread-fold=off, the per-CPU counts map
	 * (docs/kernels.md).
	 */
	bool drain = s->feat.on[FEAT_TASK_FROM_PID];
	bool fold = tp_btf && sum && s->ctr.nr_slots <= FOLD_MAX_SLOTS &&
		    s->fold_mode != THREAD_FOLD_OFF && (drain || in_initial_pid_ns());
	bool wakeups = want_wakeup_progs(s, tp_btf);
	const struct prog_pair pairs[] = {
		{ skel->progs.wakeup_btf, skel->progs.wakeup_raw, .off = !wakeups },
		{ skel->progs.wakeup_new_btf, skel->progs.wakeup_new_raw, .off = !wakeups },
		{ skel->progs.switch_btf, skel->progs.switch_raw, .off = !sum },
		{ skel->progs.switch_btf_mark, skel->progs.switch_raw_mark, .off = sum },
		{ skel->progs.exec_btf, skel->progs.exec_raw },
		{ skel->progs.attach_btf, skel->progs.attach_raw },
	};

	bpf_map__set_autocreate(skel->maps.task_ts_storage, tp_btf);
	bpf_map__set_autocreate(skel->maps.task_ts_hash, !tp_btf);
	drain = drain && fold;
	bpf_program__set_autoload(skel->progs.drain, drain);
	bpf_program__set_autoload(skel->progs.fold, fold && !drain);
	bpf_program__set_autoload(skel->progs.flush, !fold);
	bpf_program__set_autoload(skel->progs.flush_shared, fold);
	bpf_map__set_max_entries(skel->maps.ran_lists, drain ? 2 * s->ctr.nr_cpus : 1);
	skel->rodata->ran_drain = drain;
	skel->rodata->direct_credit = drain;
	skel->rodata->counts_shared = fold;
	s->shared = fold;
	s->counts_cpus = fold ? 1 : s->ctr.nr_cpus;
	s->max_procs =
		s->opt_max_procs ?: session__default_max_procs(s->counts_cpus, s->ctr.nr_slots);
	/* shared: one entry, never used, not per CPU (its entries are counts_slots') */
	bpf_map__set_type(skel->maps.counts, fold ? BPF_MAP_TYPE_HASH : BPF_MAP_TYPE_PERCPU_HASH);
	/* max_procs entries, a power of two by default: as many buckets (entry_get()) */
	bpf_map__set_max_entries(skel->maps.counts, fold ? 1 : s->max_procs);
	bpf_map__set_value_size(skel->maps.counts, s->value_size);
	bpf_map__set_max_entries(skel->maps.counts_index, fold ? s->max_procs : 1);
	bpf_map__set_max_entries(skel->maps.counts_slots, fold ? s->max_procs : 1);
	bpf_map__set_value_size(skel->maps.counts_slots,
				offsetof(struct pmbpf_slot, c) + s->value_size);
	bpf_map__set_max_entries(skel->maps.free_slots, fold ? s->max_procs : 1);
	skel->rodata->max_slots = fold ? s->max_procs : 0;
	bpf_map__set_type(skel->maps.overflow, fold ? BPF_MAP_TYPE_HASH : BPF_MAP_TYPE_PERCPU_HASH);
	/* the cgroups' and the cgroup-less one (fill_maps()) */
	bpf_map__set_max_entries(skel->maps.overflow,
				 (fold ? OVERFLOW_SHARED_CGROUPS : OVERFLOW_PERCPU_CGROUPS) + 1);
	bpf_map__set_value_size(skel->maps.overflow, s->value_size);
	skel->rodata->wakeup_progs = wakeups;
	skel->rodata->sched_info_kept = s->feat.on[FEAT_SCHED_INFO];
	s->wakeup_progs = wakeups;
	return bpfload__choose(bl, pairs, sizeof(pairs) / sizeof(pairs[0]));
}

struct load_ctx {
	struct session *s;
	const struct session_opts *o;
};

static int load(struct bpfload *bl, void *ctx)
{
	const struct load_ctx *l = ctx;
	struct session *s = l->s;
	const struct session_opts *o = l->o;
	struct pmbpf_bpf *skel;
	int err, i;

	/*
	 * Without the kfuncs in vmlinux (before 6.2) the object without their
	 * externs: libbpf 1.1 would fail the load looking for them in the
	 * modules' BTF, which it may not list without CAP_SYS_ADMIN.
	 */
	if (s->feat.on[FEAT_TASK_FROM_PID]) {
		skel = pmbpf_bpf__open();
	} else {
		size_t size = 0;

		skel = skel_nokf__open(&size);
		if (skel && size != sizeof(*skel)) {
			pr_err("internal error: the kfunc-free BPF object's skeleton differs (%zu bytes, not %zu)\n",
			       size, sizeof(*skel));
			pmbpf_bpf__destroy(skel);
			return -EINVAL;
		}
	}
	err = bpfload__opened(skel);
	if (err)
		return err;
	/* doctor -v: the verifier's statistics of every program (time, instructions, states) */
	if (o->verbose) {
		struct bpf_program *prog;

		bpf_object__for_each_program(prog, skel->obj)
		{
			bpf_program__set_log_level(prog, 4);
		}
	}
	skel->rodata->nr_cpus = s->ctr.nr_cpus;
	skel->rodata->nr_events = s->ctr.nr_slots;
	for (i = 0; i < s->ctr.nr_slots; i++) {
		const struct event_spec *spec = &s->ctr.ev[s->ctr.slot_event[i]].spec;

		/* software and tracepoint counters never multiplex, unless a hardware leader does */
		skel->rodata->ev_timed[i] =
			(spec->type != PERF_TYPE_SOFTWARE && spec->type != PERF_TYPE_TRACEPOINT) ||
			counters__group_has_hw(&s->ctr, spec->group);
		skel->rodata->ev_clock[i] = spec->type == PERF_TYPE_SOFTWARE &&
					    (spec->config == PERF_COUNT_SW_CPU_CLOCK ||
					     spec->config == PERF_COUNT_SW_TASK_CLOCK);
		skel->rodata->ev_switches[i] = s->ctr.ev[s->ctr.slot_event[i]].switches;
	}
	skel->rodata->switch_has_prev_state = s->feat.on[FEAT_SWITCH_PREV_STATE];
	skel->rodata->filter_tgid = o->pid;
	skel->rodata->per_thread = s->threads;
	delay_reader__size(skel, s->delays_on, s->ctr.nr_cpus);
	if (o->cgroup) {
		skel->rodata->filter_cgroup_id = cgroup__id_of(o->cgroup);
		skel->rodata->filter_cgroup_level = cgroup__level(o->cgroup);
	}
	/* two banks: a returning CPU's counters are reopened in the other (counters__refresh) */
	bpf_map__set_max_entries(skel->maps.events,
				 2 * s->ctr.nr_cpus * (s->ctr.nr_slots ? s->ctr.nr_slots : 1));
	bpf_map__set_max_entries(skel->maps.wake_clocks, s->ctr.nr_cpus);
	err = choose_programs(bl, s, skel) ?: pmbpf_bpf__load(skel);
	if (err == -E2BIG && s->shared) {
		/*
		 * A kernel whose verifier finds the shared map's programs too
		 * large (Debian's 6.1 did before the switch program's shared
		 * credit moved to global functions: 1000001 processed): keep
		 * tp_btf with the per-CPU counts map rather than fall back to
		 * raw_tp with the same map.
		 */
		pmbpf_bpf__destroy(skel);
		pr_err("warning: the shared counts map's programs are too large for this "
		       "kernel's verifier; using the per-CPU counts map (memory x CPUs)\n");
		s->fold_mode = THREAD_FOLD_OFF;
		return load(bl, ctx);
	}
	if (err) {
		pmbpf_bpf__destroy(skel);
		return err;
	}
	s->skel = skel;
	return 0;
}

static int fill_maps(struct session *s, const struct session_opts *o)
{
	__u64 no_cgroup = 0; /* the overflow entry of credits that find both maps full */
	void *zeros;
	int err = counters__store(&s->ctr, bpf_map__fd(s->skel->maps.events));

	if (err)
		return err;
	zeros = calloc(s->counts_cpus, s->stride);
	if (!zeros)
		return -ENOMEM;
	err = bpf_map_update_elem(bpf_map__fd(s->skel->maps.overflow), &no_cgroup, zeros,
				  BPF_NOEXIST);
	free(zeros);
	if (err) {
		err = -errno;
		pr_err("cannot create the overflow entry: %s\n", strerror(-err));
		return err;
	}

	return 0;
}

/* The flush program loaded: the shared map's (which makes entries) or the per-CPU one's. */
static struct bpf_program *flush_prog(const struct session *s)
{
	return s->shared ? s->skel->progs.flush_shared : s->skel->progs.flush;
}

static int attach(struct session *s)
{
	struct bpf_program *iter;
	int err = bpfload__attach(&s->bl);

	if (err)
		return err;
	memcpy(s->progs, s->bl.attached, s->bl.nr_links * sizeof(s->progs[0]));
	s->nr_progs = s->bl.nr_links;
	s->progs[s->nr_progs++] = flush_prog(s);
	if (!s->shared) {
		if (s->fold_mode == THREAD_FOLD_ON)
			pr_err("--thread-fold=on: switches credit the per-CPU process entries here (the shared map and its fold need tp_btf on 5.19 or later, before 6.2 the initial pid namespace, and at most %d counting events)\n",
			       FOLD_MAX_SLOTS);
		return 0;
	}
	iter = s->skel->rodata->ran_drain ? s->skel->progs.drain : s->skel->progs.fold;
	err = iter_reader__attach(&s->fold, iter,
				  s->skel->rodata->ran_drain ? s->skel->maps.ran_lists : NULL);
	if (err)
		return err;
	s->progs[s->nr_progs++] = iter;
	return 0;
}

/*
 * With the shared counts map, threads keep the counts of their spans in
 * task storage; the iterator adds them to their processes' entries, so that
 * the read finds them there: the drain (the threads that ran in the
 * previous list generation: session__collect() bumped it before the flush),
 * or the fold (every task).
 */
static int fold_threads(struct session *s)
{
	size_t len;
	int err = s->fold.link ? iter_reader__run(&s->fold, &len) : 0;

	if (err)
		pr_err("cannot run the thread fold iterator: %s\n", strerror(-err));
	return err;
}

static int flush_cpus(struct session *s)
{
	int fd = bpf_program__fd(flush_prog(s)), cpu, err;

	err = cpus__online(s->flush_online, s->ctr.nr_cpus);
	if (err) {
		pr_err("cannot read online CPUs: %s\n", strerror(-err));
		return err;
	}
	for (cpu = 0; cpu < s->ctr.nr_cpus; cpu++) {
		LIBBPF_OPTS(bpf_test_run_opts, opts, .cpu = cpu, .flags = BPF_F_TEST_RUN_ON_CPU);

		if (!s->flush_online[cpu])
			continue;
		err = bpf_prog_test_run_opts(fd, &opts);
		if (err && errno != ENXIO && errno != ENODEV) {
			err = -errno;
			pr_err("cannot flush CPU %d: %s\n", cpu, strerror(-err));
			return err;
		}
	}
	return 0;
}

static int on_exit_record(void *ctx, void *data, size_t len)
{
	struct session *s = ctx;

	return account__exit(s->acct, data, len);
}

static const char *cgroup_path(void *ctx, __u64 id)
{
	struct session *s = ctx;

	return cgroup_cache__path(s->cg, id, s->gen);
}

static __u64 cgroup_parent(void *ctx, const char *path, int *depth)
{
	struct session *s = ctx;

	return cgroup_cache__parent(s->cg, path, depth);
}

/* --threads: a process's name when its leader thread has no row. */
static bool process_comm(void *ctx, __u32 pid, char *buf, size_t len)
{
	(void)ctx;
	return process__comm((pid_t)pid, buf, len) == 0;
}

/* --threads: thread tid of pid is there, not a zombie, and started at start_ns (0: any). */
static bool thread_running(void *ctx, __u32 pid, __u32 tid, __u64 start_ns)
{
	(void)ctx;
	return host__thread_alive((pid_t)pid, (pid_t)tid, start_ns);
}

static struct account *account_new(struct session *s)
{
	struct account_opts o = {
		.nr_cpus = s->counts_cpus,
		.stride = s->stride,
		.value_size = s->value_size,
		.nr_events = s->ctr.nr_events,
		.cgroup_path = cgroup_path,
		.cgroup_parent = cgroup_parent,
		.process_comm = process_comm,
		.thread_running = thread_running,
		.ctx = s,
		.threads = s->threads,
	};
	int i;

	for (i = 0; i < s->ctr.nr_events; i++)
		o.slot[i] = s->ctr.ev[i].slot;
	return account__new(&o);
}

int session__open(struct session **sp, const struct session_opts *o)
{
	struct session *s;
	int err;
	long live;

	libbpf__set_verbose(o->verbose);

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	err = counters__init(&s->ctr);
	if (err)
		goto fail;
	s->flush_online = calloc(s->ctr.nr_cpus, sizeof(*s->flush_online));
	if (!s->flush_online) {
		err = -ENOMEM;
		goto fail;
	}
	features__probe(&s->feat);
	err = features__missing_required(&s->feat);
	if (err >= 0) {
		pr_err("this kernel lacks %s (since Linux %s), which pmbpf needs; pmbpf doctor lists what it has\n",
		       features__table[err].name, features__table[err].since);
		err = -EOPNOTSUPP;
		goto fail;
	}

	err = counters__open(&s->ctr, o->events, o->nr_events, o->default_events);
	if (err)
		goto fail;
	/* a counts value holds the counting slots only: their number is known now */
	s->value_size = session__counts_value_size(s->ctr.nr_slots);
	s->stride = (s->value_size + 7) & ~(size_t)7;
	s->opt_max_procs = o->max_procs;
	s->metrics = o->metrics;
	s->threads = o->threads;
	s->fold_mode = o->thread_fold;
	s->force_wakeup_progs = o->wakeup_progs;
	s->delays_on =
		o->delays == DELAYS_ON || (o->delays == DELAYS_AUTO && !o->pid && !o->cgroup);
	metrics__report_unsupported(&s->metrics, s->ctr.ev, s->ctr.nr_events);

	err = bpfload__load(&s->bl, !o->force_raw_tp && features__tp_btf_usable(&s->feat), load,
			    &(struct load_ctx){ s, o });
	if (err)
		goto fail;

	err = fill_maps(s, o);
	if (err)
		goto fail;

	if (s->shared)
		err = slot_reader__init(&s->slots, bpf_map__fd(s->skel->maps.counts_slots),
					bpf_map__fd(s->skel->maps.counts_index),
					bpf_map__fd(s->skel->maps.free_slots), s->max_procs,
					bpf_map__value_size(s->skel->maps.counts_slots));
	else
		err = map_reader__init(&s->counts, bpf_map__fd(s->skel->maps.counts));
	err = err ?: map_reader__init(&s->overflow, bpf_map__fd(s->skel->maps.overflow));
	if (err)
		goto fail;
	if (s->delays_on) {
		err = delay_reader__init(&s->delays, s->skel);
		if (err)
			goto fail;
	}
	s->cg = cgroup_cache__new();
	s->acct = account_new(s);
	if (!s->cg || !s->acct) {
		err = -ENOMEM;
		goto fail;
	}
	s->rb = ring_buffer__new(bpf_map__fd(s->skel->maps.exits), on_exit_record, s, NULL);
	if (!s->rb) {
		err = -errno;
		pr_err("cannot open ring buffer: %s\n", strerror(-err));
		goto fail;
	}

	session__map_memory(s, NULL, 0, &s->map_bytes);
	live = o->pid || o->cgroup ? 0 : host__live_tasks(s->threads);
	if (live > (long)s->max_procs)
		pr_err("warning: %ld live %s on this host, more than the counts map holds (%u): those without an entry are counted in their cgroup's [overflow] row; -m sets its size\n",
		       live, s->threads ? "threads" : "processes", s->max_procs);
	s->skel->bss->read_gen = 1;
	s->skel->bss->list_gen = 1;
	s->skel->bss->delay_gen = 1;
	err = attach(s);
	if (err)
		goto fail;
	if (o->hot_hz) {
		err = hot__open(&s->hot, o->hot_hz, o->pid, o->cgroup, s->ctr.online,
				s->ctr.nr_cpus);
		if (err)
			goto fail;
		s->map_bytes += hot__map_bytes(s->hot); /* its own object's */
	}
	/* The first flush sets every CPU's starting point. */
	err = flush_cpus(s);
	if (err)
		goto fail;
	counters__read(&s->ctr, NULL);
	s->last_mono = now_ns(CLOCK_MONOTONIC);
	s->interval_ns = o->interval_ns;
	*sp = s;
	return 0;
fail:
	session__close(s);
	return err;
}

/* The deletions the accounting asked for. */
static void delete_entries(struct session *s)
{
	int fd = bpf_map__fd(s->skel->maps.counts);
	const struct pmbpf_key *keys;
	size_t i, n;

	keys = account__deletions(s->acct, &n);
	for (i = 0; i < n; i++) {
		if (s->shared)
			slot_reader__delete(&s->slots, &keys[i]);
		else
			bpf_map_delete_elem(fd, &keys[i]);
	}
	account__deletions_clear(s->acct);
}

/* One entry of the counts map; a dead process's entry is deleted at once. */
static int on_entry(struct session *s, const struct pmbpf_key *key, const char *vals)
{
	int err = account__entry(s->acct, key, vals);

	delete_entries(s);
	return err;
}

struct map_walk {
	struct session *s;
	int err; /* on_entry's */
};

/* Entries ahead of the one accounted whose state is prefetched (a batch holds them). */
#define PREFETCH_AHEAD 6

static int walk_entry(void *ctx, const void *key, const void *vals, size_t stride)
{
	struct map_walk *w = ctx;
	const struct map_reader *r = &w->s->counts;
	size_t i = ((const char *)key - (const char *)r->keys) / r->key_size;

	/* the reader's buffer past this batch holds an older one's keys: a wasted hint */
	if (!r->no_batch && i + PREFETCH_AHEAD < r->chunk)
		account__prefetch(w->s->acct,
				  (const struct pmbpf_key *)((const char *)key +
							     PREFETCH_AHEAD * r->key_size));

	w->err = on_entry(w->s, key, vals);
	return w->err;
}

/* An entry of the shared map, in its slot. */
static int slot_entry(void *ctx, const struct pmbpf_key *key, const void *vals, __u32 slot)
{
	struct map_walk *w = ctx;
	const struct pmbpf_key *ahead = slot_reader__key(&w->s->slots, slot + PREFETCH_AHEAD);

	if (ahead)
		account__prefetch(w->s->acct, ahead);
	w->err = on_entry(w->s, key, vals);
	return w->err;
}

/*
 * The shared counts map's idle task: per-CPU counts of its own, the entry
 * (0, 0, its cgroup). Not there before its first switch (a filter never
 * counts it).
 */
static int read_idle(struct session *s)
{
	size_t stride = (sizeof(struct pmbpf_counts) + 7) & ~(size_t)7;
	struct pmbpf_key key = { .cgroup_id = s->skel->bss->idle_cgid };
	__u32 zero = 0;
	void *vals;
	int err;

	if (!s->shared || !key.cgroup_id)
		return 0;
	vals = calloc(s->ctr.nr_cpus, stride);
	if (!vals)
		return -ENOMEM;
	err = bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.idle_counts), &zero, vals) ? -errno : 0;
	if (err)
		pr_err("cannot read the idle task's counts: %s\n", strerror(-err));
	else
		err = account__entry_cpus(s->acct, &key, vals, s->ctr.nr_cpus, stride);
	free(vals);
	return err;
}

/* A cgroup's overflow entry: the counts entry (PMBPF_OVERFLOW_TGID, 0, cgroup). */
static int overflow_entry(void *ctx, const void *key, const void *vals, size_t stride)
{
	struct map_walk *w = ctx;
	struct pmbpf_key k = { .tgid = PMBPF_OVERFLOW_TGID };

	memcpy(&k.cgroup_id, key, sizeof(k.cgroup_id));
	w->err = account__entry(w->s->acct, &k, vals);
	return w->err;
}

static int read_map(struct session *s)
{
	struct map_walk w = { .s = s };
	int err;

	if (s->shared)
		err = slot_reader__walk(&s->slots, s->skel->bss->next_slot, slot_entry, &w);
	else
		err = map_reader__for_each(&s->counts, walk_entry, &w);

	if (!err)
		err = map_reader__for_each(&s->overflow, overflow_entry, &w);
	if (err && !w.err)
		pr_err("cannot read counts map: %s\n", strerror(-err));
	return err ?: read_idle(s);
}

/* Late by a minute or more before "falls behind" is said again. */
#define LATE_SAY_NS (60 * 1000000000ULL)

/*
 * An interval much longer than asked for: collecting (an exit storm's
 * records), writing the output, or the host fell behind. The interval is
 * longer, never skipped nor followed by near-empty ones to catch up
 * (record.c); counted, and said in one line when it starts.
 */
static void late_check(struct session *s, __u64 interval_ns)
{
	__u64 now = s->last_mono;

	if (!s->interval_ns || s->gen <= 1 || 2 * interval_ns <= 3 * s->interval_ns)
		return;
	s->late++;
	if (s->late_said_ns && now - s->late_said_ns < LATE_SAY_NS)
		return;
	s->late_said_ns = now;
	pr_err("collection falls behind: an interval of %.3g s took %.3g s (the last collection "
	       "%.3g s); intervals stay longer until it catches up (late_intervals counts them)\n",
	       s->interval_ns / 1e9, interval_ns / 1e9, s->poll_ns / 1e9);
}

int session__drain(struct session *s)
{
	int n = ring_buffer__consume(s->rb);

	if (n < 0)
		pr_err("cannot read exit records: %s\n", strerror(-n));
	return n;
}

int session__collect(struct session *s, struct snapshot *snap)
{
	__u64 t0 = now_ns(CLOCK_MONOTONIC), now;
	int err;

	snapshot__reset(snap);
	s->gen++;
	account__begin(s->acct, snap, s->gen);

	/* the threads that ran until now are listed in the previous generation */
	if (s->skel->rodata->ran_drain)
		s->skel->bss->list_gen++;
	if (s->delays.acct)
		delay_reader__begin(&s->delays, s->skel);
	err = flush_cpus(s) ?: fold_threads(s);
	if (err)
		return err;
	counters__read(&s->ctr, snap);
	err = counters__refresh(&s->ctr, bpf_map__fd(s->skel->maps.events),
				bpf_program__fd(s->skel->progs.rebase),
				s->skel->bss->rebase_readings);
	if (err)
		return err;
	now = now_ns(CLOCK_MONOTONIC);
	snap->interval_ns = now - s->last_mono;
	s->last_mono = now;
	late_check(s, snap->interval_ns);
	snap->late_intervals = s->late;
	snap->time_ns = now_ns(CLOCK_REALTIME);

	err = read_map(s);
	if (err)
		return err;
	err = session__drain(s);
	if (err < 0)
		return err;
	err = account__settle(s->acct);
	delete_entries(s);
	if (err)
		return err;
	/* Run-queue maxima from now on belong to the next interval. */
	s->skel->bss->read_gen = s->gen + 1;
	err = account__finish(s->acct);
	if (err)
		return err;
	if (s->delays.acct) {
		err = delay_reader__read(&s->delays, s->skel, snap, cgroup_path, s);
		if (err)
			return err;
	}
	snap->hot = s->hot != NULL;
	if (s->hot) {
		err = hot__collect(s->hot, snap);
		if (err)
			return err;
	}

	percpu_array__sum(bpf_map__fd(s->skel->maps.stats), snap->stats, PMBPF_STAT_NR);
	/* run time and count: non-zero with kernel.bpf_stats_enabled=1 */
	snap->nr_progs = prog_stats__read(s->progs, s->nr_progs, snap->progs, SNAPSHOT_MAX_PROGS);
	snap->nr_cpus = s->ctr.nr_online;
	snap->nr_events = s->ctr.nr_events;
	snap->events = s->ctr.ev;
	snap->metrics = s->metrics.nr ? &s->metrics : NULL;
	snap->attach = session__attach_kind(s);
	snap->map_entries = account__tracked(s->acct);
	snap->map_capacity = s->max_procs;
	snap->map_bytes = s->map_bytes;
	snap->vanished = account__vanished(s->acct);
	snap->thread_fold = s->shared;
	snap->wakeup_progs = s->wakeup_progs;
	snap->poll_ns = now_ns(CLOCK_MONOTONIC) - t0;
	s->poll_ns = snap->poll_ns;
	return 0;
}

const struct event_info *session__events(const struct session *s, int *nr)
{
	*nr = s->ctr.nr_events;
	return s->ctr.ev;
}

bool session__no_pmu(const struct session *s)
{
	return !pmu__available();
}

bool session__hw_counting(const struct session *s)
{
	return counters__hw_counting(&s->ctr);
}

__u32 session__counts_value_size(int nr_slots)
{
	return offsetof(struct pmbpf_counts, ev) + nr_slots * sizeof(struct pmbpf_reading);
}

__u32 session__value_size(const struct session *s)
{
	return s->value_size;
}

__u32 session__default_max_procs(int possible_cpus, int nr_slots)
{
	__u64 per_entry;

	if (possible_cpus == 1)
		return COUNTS_SHARED_ENTRIES; /* shared: not multiplied by CPUs */
	per_entry =
		((session__counts_value_size(nr_slots) + 7) & ~7ULL) * (unsigned int)possible_cpus;
	__u64 n = COUNTS_BUDGET / (per_entry ? per_entry : 1);

	return n > COUNTS_ENTRIES ? COUNTS_ENTRIES : n < COUNTS_MIN ? COUNTS_MIN : (__u32)n;
}

/* The kernel's own figure for a map: memlock in its fdinfo. */
int session__map_memory(const struct session *s, struct map_memory *out, int max,
			__u64 *total_bytes)
{
	const struct bpf_map *map;
	__u64 total = 0;
	int n = 0;

	bpf_object__for_each_map(map, s->skel->obj)
	{
		int fd = bpf_map__fd(map);
		__u64 bytes;

		if (fd < 0)
			continue; /* not created on this kernel */
		bytes = bpfload__map_memlock(fd);
		total += bytes;
		if (n < max) {
			snprintf(out[n].name, sizeof(out[n].name), "%s", bpf_map__name(map));
			out[n].bytes = bytes;
			out[n].max_entries = bpf_map__max_entries(map);
			out[n].value_size = bpf_map__value_size(map);
			out[n].percpu = bpf_map__type(map) == BPF_MAP_TYPE_PERCPU_HASH ||
					bpf_map__type(map) == BPF_MAP_TYPE_PERCPU_ARRAY;
			n++;
		}
	}
	if (total_bytes)
		*total_bytes = total;
	return n;
}

int session__possible_cpus(const struct session *s)
{
	return s->ctr.nr_cpus;
}

__u32 session__max_procs(const struct session *s)
{
	return s->max_procs;
}

const char *session__attach_kind(const struct session *s)
{
	return s->bl.tp_btf ? "tp_btf" : "raw_tp";
}

void session__close(struct session *s)
{
	if (!s)
		return;
	hot__free(s->hot);
	iter_reader__free(&s->fold);
	bpfload__detach(&s->bl);
	ring_buffer__free(s->rb);
	pmbpf_bpf__destroy(s->skel);
	cgroup_cache__free(s->cg);
	account__free(s->acct);
	counters__close(&s->ctr);
	free(s->flush_online);
	map_reader__free(&s->counts);
	slot_reader__free(&s->slots);
	map_reader__free(&s->overflow);
	delay_reader__free(&s->delays);
	free(s);
}
