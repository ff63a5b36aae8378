// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * pmbpf profile: stacks of a sampling event (on-CPU) or of off-CPU time,
 * aggregated in the kernel, symbolized at the end, written as folded stacks
 * or an SVG flame graph. Of every process, of one (-p), of a cgroup (-G), or
 * of a command and its children (-- COMMAND: run in a cgroup of its own, as
 * pmbpf stat runs it, until it exits).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "profile.h"
#include "profile.skel.h"
#include "bpfload.h"
#include "cgroup.h"
#include "cmdrun.h"
#include "commands.h"
#include "events.h"
#include "options.h"
#include "flamegraph.h"
#include "profile_unwind.h"
#include "symbolize.h"
#include "util.h"

#define DEFAULT_FREQ 99
#define POLL_MS	     200
#define FRAME_LEN    256

/* --call-graph dwarf: the stack copied per sample, as perf's default. */
#define DWARF_SIZE_DEFAULT 8192

enum {
	OPT_FOLDED = OPT_COMMAND,
	OPT_SVG,
	OPT_OFFCPU,
	OPT_TITLE,
	OPT_CALL_GRAPH,
};

static const struct cmdopt options[] = {
	{ 'e', "event", "NAME",
	  "sampling event (default cycles; cpu-clock without a PMU);\n"
	  "a tracepoint (sys:name) is sampled at every hit" },
	{ 'F', "freq", "HZ", "samples per second on each CPU (default 99)" },
	{ 'c', "period", "N", "one sample every N events (instead of -F)" },
	{ 'd', "duration", "TIME", "stop after this long (default: at SIGINT or SIGTERM)" },
	{ 'p', "pid", "PID", "only this process (filtered in the kernel); stops when it exits" },
	{ OPTION_CGROUP },
	{ 'o', "output", "FILE", "write to FILE instead of standard output" },
	{ OPT_FOLDED, "folded", NULL, "folded stacks, 'comm;outer;...;inner COUNT' (default)" },
	{ OPT_SVG, "svg", NULL, "an interactive SVG flame graph" },
	{ OPT_OFFCPU, "off-cpu", NULL,
	  "time spent off the CPU (blocked or waiting for a CPU) by the\n"
	  "stack it left with, in microseconds, instead of samples" },
	{ OPT_TITLE, "title", "TEXT", "title of the flame graph" },
	{ OPT_CALL_GRAPH, "call-graph", "MODE",
	  "how user stacks are walked: fp (frame pointers, default) or\n"
	  "dwarf[,SIZE] (copy SIZE bytes of stack, default 8192, and unwind\n"
	  "with .eh_frame/.debug_frame: code without frame pointers)" },
	{ OPTION_RAW_TP },
	{ OPTION_VERBOSE },
	{ CMDOPT_HELP },
	{},
};

const struct cmdopts profile_cmdopts = {
	.cmd = "profile",
	.head = "Usage: pmbpf profile [OPTIONS]\n"
		"       pmbpf profile [OPTIONS] -- COMMAND [ARGS...]\n"
		"Sample stacks on a perf event (or measure off-CPU time by stack) and write\n"
		"folded stacks or an SVG flame graph: of every process, or of COMMAND and\n"
		"all its children until it exits.\n",
	.opts = options,
	.tail = "Kernel frames end in _[k]. Event names: pmbpf list.\n"
		"With COMMAND: the exit code is the command's (128 + signal if it was\n"
		"killed), or 1 if pmbpf failed; SIGINT or SIGTERM is passed on to the\n"
		"command, a second one kills it. The command's output is its own: give\n"
		"-o FILE to keep the profile apart from what it writes to stdout.\n",
};

struct profile_opts {
	struct event_spec event;
	bool event_given;
	unsigned long long freq;
	unsigned long long period;
	__u64 duration_ns;
	pid_t pid;
	char **argv; /* -- COMMAND: run it and profile it and its children */
	const char *cgroup;
	char cgroup_path[4096];
	const char *output;
	bool svg;
	bool folded; /* --folded given */
	bool offcpu;
	bool raw_tp;
	const char *title;
	bool verbose;
	bool dwarf; /* --call-graph dwarf */
	unsigned int dwarf_size; /* bytes of user stack copied per sample */
};

/* -e sys:name: a tracepoint, sampled at every hit by a tracepoint program */
static bool is_tracepoint(const struct profile_opts *o)
{
	return o->event_given && o->event.type == PERF_TYPE_TRACEPOINT;
}

/*
 * A process's mappings are read at its first sample (and the first after an
 * exec), which may come while the dynamic loader is still mapping its
 * libraries: they are read again a little later, while it lives.
 */
#define RECHECKS 1024
static const unsigned int recheck_ms[] = { 10, 100, 1000 };

struct recheck {
	pid_t tgid;
	unsigned int round;
	__u64 due_ns;
};

/*
 * --call-graph dwarf: the samples' stacks as unwound in userspace, counted
 * by (process, cgroup, user pcs, kernel stack) like the kernel's counts map.
 */
#define DSTACK_BUCKETS 16384

struct dstack {
	struct dstack *next;
	__u64 hash;
	__u64 weight;
	__u64 cgroup_id;
	__u32 tgid;
	__s32 kern_stack_id;
	char comm[PROFILE_COMM_LEN];
	bool truncated;
	int nr;
	__u64 pcs[];
};

struct dwarf_state {
	struct unwinder *unw;
	struct dstack *buckets[DSTACK_BUCKETS];
	size_t nr_stacks;
	__u64 *pcs; /* UNWIND_MAX_DEPTH, scratch */
	__u64 samples; /* unwound */
	__u64 truncated; /* of them, cut at SIZE (or UNWIND_MAX_DEPTH frames) */
	__u64 lost; /* not counted: out of memory */
	__u64 unwind_ns; /* time spent unwinding */
};

struct profile {
	struct profile_opts *o;
	struct recheck rechecks[RECHECKS]; /* a ring */
	unsigned int nr_rechecks, recheck_head;
	struct profile_bpf *skel;
	struct bpfload bl; /* the sched programs */
	struct bpf_link **links; /* sampling: one per CPU */
	int *fds;
	int nr_links;
	int nr_cpus;
	struct ring_buffer *rb;
	struct symbolizer *sym;
	struct dwarf_state dw;
	int cgroup_fd;
	__u64 stats[PROFILE_STAT_NR];
};

static unsigned long long max_sample_rate(void)
{
	unsigned long long v = 100000;
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "re");

	if (f) {
		if (fscanf(f, "%llu", &v) != 1)
			v = 100000;
		fclose(f);
	}
	return v;
}

/* --call-graph fp | dwarf[,SIZE], as perf spells it. */
static int parse_call_graph(const char *arg, struct profile_opts *o)
{
	const char *comma = strchr(arg, ',');
	size_t mode_len = comma ? (size_t)(comma - arg) : strlen(arg);
	unsigned long long size = DWARF_SIZE_DEFAULT;

	if (mode_len == 2 && !strncmp(arg, "fp", 2) && !comma) {
		o->dwarf = false;
		return 0;
	}
	if (mode_len != 5 || strncmp(arg, "dwarf", 5)) {
		pr_err("invalid --call-graph '%s': give fp or dwarf[,SIZE]\n", arg);
		return -EINVAL;
	}
	if (comma && (uint__parse(comma + 1, 8, PROFILE_DWARF_MAX_SIZE, &size) || size % 8)) {
		pr_err("invalid --call-graph size '%s': give a multiple of 8 from 8 to %u (bytes of stack per sample)\n",
		       comma + 1, PROFILE_DWARF_MAX_SIZE);
		return -EINVAL;
	}
	o->dwarf = true;
	o->dwarf_size = (unsigned int)size;
	return 0;
}

static int parse_args(int argc, char **argv, struct profile_opts *o)
{
	unsigned long long max_rate;
	struct cmdopt_getopt g = {};
	char msg[320];
	int c, err;

	while ((c = cmdopt__next(&profile_cmdopts, &g, argc, argv)) != -1) {
		switch (c) {
		case 'e':
			err = event__parse_msg(optarg, &o->event, msg, sizeof(msg));
			if (err) {
				pr_err("%s\n", msg);
				return -EINVAL;
			}
			o->event_given = true;
			break;
		case 'F':
			max_rate = max_sample_rate();
			if (uint__parse(optarg, 1, max_rate, &o->freq)) {
				pr_err("invalid frequency '%s': give 1 to %llu Hz (kernel.perf_event_max_sample_rate)\n",
				       optarg, max_rate);
				return -EINVAL;
			}
			break;
		case 'c':
			if (uint__parse(optarg, 1, ULLONG_MAX, &o->period)) {
				pr_err("invalid period '%s': give a positive integer\n", optarg);
				return -EINVAL;
			}
			break;
		case 'd':
			if (options__duration(optarg, &o->duration_ns))
				return -EINVAL;
			break;
		case 'p':
			if (options__pid(optarg, &o->pid))
				return -EINVAL;
			break;
		case 'G':
			if (cgroup__resolve(optarg, o->cgroup_path, sizeof(o->cgroup_path)))
				return -EINVAL;
			o->cgroup = o->cgroup_path;
			break;
		case 'o':
			o->output = optarg;
			break;
		case OPT_FOLDED:
			o->folded = true;
			break;
		case OPT_SVG:
			o->svg = true;
			break;
		case OPT_OFFCPU:
			o->offcpu = true;
			break;
		case OPT_TITLE:
			o->title = optarg;
			break;
		case OPT_CALL_GRAPH:
			if (parse_call_graph(optarg, o))
				return -EINVAL;
			break;
		case OPT_RAW_TP:
			o->raw_tp = true;
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'h':
			cmdopt__fprint(&profile_cmdopts, stdout);
			exit(0);
		default:
			pr_err("try 'pmbpf profile --help'\n");
			return -EINVAL;
		}
	}
	if (optind < argc)
		o->argv = argv + optind;
	if (o->argv && (o->pid || o->cgroup || o->duration_ns)) {
		pr_err("a COMMAND is profiled until it exits, with its children: it takes no -p, -G or -d\n");
		return -EINVAL;
	}
	if (o->freq && o->period) {
		pr_err("give either -F (frequency) or -c (period), not both\n");
		return -EINVAL;
	}
	if (o->pid && o->cgroup) {
		pr_err("give either -p (a process) or -G (a cgroup), not both\n");
		return -EINVAL;
	}
	if (o->folded && o->svg) {
		pr_err("give either --folded or --svg, not both\n");
		return -EINVAL;
	}
	/*
	 * A tracepoint's program runs at every hit, on every CPU, before perf
	 * would count a period: as perf record's default for tracepoints (-c 1).
	 */
	if (is_tracepoint(o) && (o->freq || o->period)) {
		pr_err("a tracepoint (%s) is sampled at every hit: it takes no -F or -c\n",
		       o->event.name);
		return -EINVAL;
	}
	if (o->offcpu && (o->event_given || o->freq || o->period)) {
		pr_err("--off-cpu measures time at context switches: it takes no -e, -F or -c\n");
		return -EINVAL;
	}
	if (o->offcpu && o->dwarf) {
		pr_err("--call-graph dwarf copies stacks at samples: it does not go with --off-cpu\n");
		return -EINVAL;
	}
	return 0;
}

static bool pid_alive(pid_t pid)
{
	return !(kill(pid, 0) && errno == ESRCH);
}

/* Room for 512 samples' stacks (4 MiB at least): a poll interval at 999 Hz on a few CPUs. */
static __u32 ustacks_ring_size(unsigned int stack_size)
{
	__u64 need = 512 * (sizeof(struct profile_ustack) + stack_size + 8), sz = 4 << 20;

	while (sz < need)
		sz <<= 1;
	return (__u32)sz;
}

static int load(struct bpfload *bl, void *ctx)
{
	struct profile *p = ctx;
	struct profile_opts *o = p->o;
	struct profile_bpf *skel;
	struct prog_pair pairs[2];
	int err;

	skel = profile_bpf__open();
	err = bpfload__opened(skel);
	if (err)
		return err;
	skel->rodata->filter_tgid = o->pid;
	skel->rodata->filter_cgroup = o->cgroup ? 1 : 0;
	if (o->dwarf) {
		skel->rodata->stack_size = o->dwarf_size;
		bpf_map__set_max_entries(skel->maps.ustacks, ustacks_ring_size(o->dwarf_size));
		bpf_map__set_max_entries(skel->maps.ustack_scratch, p->nr_cpus);
	}
	bpf_program__set_autoload(skel->progs.sample, !o->offcpu && !is_tracepoint(o));
	bpf_program__set_autoload(skel->progs.sample_tp, !o->offcpu && is_tracepoint(o));
	if (!o->offcpu)
		bpf_map__set_max_entries(skel->maps.starts, 1);
	pairs[0] = (struct prog_pair){ skel->progs.exec_btf, skel->progs.exec_raw };
	pairs[1] = (struct prog_pair){ skel->progs.offcpu_btf, skel->progs.offcpu_raw,
				       .off = !o->offcpu };
	err = bpfload__choose(bl, pairs, 2) ?: profile_bpf__load(skel);
	if (err) {
		profile_bpf__destroy(skel);
		return err;
	}
	p->skel = skel;
	return 0;
}

static bool not_supported(int err)
{
	return err == ENOENT || err == EOPNOTSUPP || err == ENODEV;
}

/*
 * Open the sampling event on every online CPU and attach the program to
 * each. Returns 0, or a positive errno from perf_event_open (the caller
 * decides about a fallback), or a negative errno.
 */
static int attach_sampling(struct profile *p, bool *online)
{
	struct profile_opts *o = p->o;
	int cpu, err;

	for (cpu = 0; cpu < p->nr_cpus; cpu++) {
		struct perf_event_attr attr = {
			.size = sizeof(attr),
			.type = o->event.type,
			.config = o->event.config,
			.disabled = 1,
		};
		struct bpf_link *link;
		long fd;

		if (!online[cpu])
			continue;
		/* one event: its program runs wherever the tracepoint is hit */
		if (is_tracepoint(o) && p->nr_links)
			break;
		if (is_tracepoint(o)) {
			attr.sample_period = 1;
		} else if (o->period) {
			attr.sample_period = o->period;
		} else {
			attr.freq = 1;
			attr.sample_freq = o->freq ? o->freq : DEFAULT_FREQ;
		}
		fd = perf_event_open(&attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			if (errno == ENODEV)
				continue; /* went offline */
			return errno;
		}
		p->fds[cpu] = (int)fd;
		link = bpf_program__attach_perf_event(is_tracepoint(o) ? p->skel->progs.sample_tp :
									 p->skel->progs.sample,
						      (int)fd);
		if (!link) {
			err = -errno;
			pr_err("cannot attach to %s on CPU %d: %s\n", o->event.name, cpu,
			       strerror(-err));
			return err;
		}
		p->links[p->nr_links++] = link;
	}
	return 0;
}

/* Close the sampling events and their links. */
static void detach_sampling(struct profile *p)
{
	int i;

	for (i = 0; i < p->nr_links; i++)
		bpf_link__destroy(p->links[i]);
	p->nr_links = 0;
	for (i = 0; p->fds && i < p->nr_cpus; i++) {
		if (p->fds[i] >= 0)
			close(p->fds[i]);
		p->fds[i] = -1;
	}
}

static void dwarf_free(struct dwarf_state *dw)
{
	size_t i;

	for (i = 0; i < DSTACK_BUCKETS; i++) {
		while (dw->buckets[i]) {
			struct dstack *d = dw->buckets[i];

			dw->buckets[i] = d->next;
			free(d);
		}
	}
	unwinder__free(dw->unw);
	free(dw->pcs);
}

/* Detach everything and free what the detach left. */
static void profile_close(struct profile *p)
{
	detach_sampling(p);
	bpfload__detach(&p->bl);
	ring_buffer__free(p->rb);
	profile_bpf__destroy(p->skel);
	if (p->cgroup_fd >= 0)
		close(p->cgroup_fd);
	symbolizer__free(p->sym);
	dwarf_free(&p->dw);
	free(p->links);
	free(p->fds);
}

static void recheck_push(struct profile *p, const struct recheck *r)
{
	if (p->nr_rechecks == RECHECKS) { /* full: the oldest is dropped */
		p->recheck_head = (p->recheck_head + 1) % RECHECKS;
		p->nr_rechecks--;
	}
	p->rechecks[(p->recheck_head + p->nr_rechecks++) % RECHECKS] = *r;
}

static void recheck_add(struct profile *p, pid_t tgid, unsigned int round)
{
	struct recheck r = { .tgid = tgid, .round = round };

	if (round >= sizeof(recheck_ms) / sizeof(recheck_ms[0]))
		return;
	r.due_ns = now_ns(CLOCK_MONOTONIC) + recheck_ms[round] * 1000000ULL;
	recheck_push(p, &r);
}

/* Read again the mappings of the processes due; returns the poll timeout (ms) to use. */
static int recheck_due(struct profile *p, int timeout)
{
	unsigned int n = p->nr_rechecks;
	__u64 now = now_ns(CLOCK_MONOTONIC);

	while (n--) {
		struct recheck r = p->rechecks[p->recheck_head];

		p->recheck_head = (p->recheck_head + 1) % RECHECKS;
		p->nr_rechecks--;
		if (r.due_ns > now) {
			recheck_push(p, &r);
			if ((r.due_ns - now) / 1000000 + 1 < (__u64)timeout)
				timeout = (int)((r.due_ns - now) / 1000000) + 1;
		} else if (pid_alive(r.tgid)) {
			symbolizer__add_process(p->sym, r.tgid);
			recheck_add(p, r.tgid, r.round + 1);
		}
	}
	return timeout;
}

static int on_new_proc(void *ctx, void *data, size_t len)
{
	struct profile *p = ctx;
	const struct profile_proc *rec = data;

	if (len < sizeof(*rec))
		return 0;
	/* Gone already (-ENOENT, -ESRCH): its frames will show as [unknown]. */
	symbolizer__add_process(p->sym, (pid_t)rec->tgid);
	if (p->dw.unw)
		unwinder__forget(p->dw.unw, (pid_t)rec->tgid);
	recheck_add(p, (pid_t)rec->tgid, 0);
	return 0;
}

static __u64 dstack_hash(const struct profile_ustack *rec, const __u64 *pcs, int nr, bool trunc)
{
	__u64 h = 1469598103934665603ULL;
	int i;

#define MIX(v) (h = (h ^ (__u64)(v)) * 1099511628211ULL)
	MIX(rec->tgid);
	MIX(rec->kern_stack_id);
	MIX(rec->cgroup_id);
	MIX(trunc);
	for (i = 0; i < nr; i++)
		MIX(pcs[i]);
	for (i = 0; i < PROFILE_COMM_LEN; i++)
		MIX(rec->comm[i]);
#undef MIX
	return h;
}

/* Count one sample of --call-graph dwarf: unwind it, add it to its stack. */
static int on_ustack(void *ctx, void *data, size_t len)
{
	struct profile *p = ctx;
	struct dwarf_state *dw = &p->dw;
	const struct profile_ustack *rec = data;
	struct dstack *d, **head;
	bool trunc;
	__u64 t0, h;
	int nr;

	if (len < sizeof(*rec) || len < sizeof(*rec) + rec->size)
		return 0;
	t0 = now_ns(CLOCK_MONOTONIC);
	nr = unwinder__unwind(dw->unw, rec, dw->pcs, UNWIND_MAX_DEPTH, &trunc);
	dw->unwind_ns += now_ns(CLOCK_MONOTONIC) - t0;
	dw->samples++;
	dw->truncated += trunc;
	h = dstack_hash(rec, dw->pcs, nr, trunc);
	head = &dw->buckets[h % DSTACK_BUCKETS];
	for (d = *head; d; d = d->next)
		if (d->hash == h && d->tgid == rec->tgid &&
		    d->kern_stack_id == rec->kern_stack_id && d->cgroup_id == rec->cgroup_id &&
		    d->truncated == trunc && d->nr == nr &&
		    !memcmp(d->comm, rec->comm, PROFILE_COMM_LEN) &&
		    !memcmp(d->pcs, dw->pcs, nr * sizeof(*d->pcs)))
			break;
	if (!d) {
		d = malloc(sizeof(*d) + nr * sizeof(*d->pcs));
		if (!d) {
			dw->lost++;
			return 0;
		}
		d->hash = h;
		d->weight = 0;
		d->cgroup_id = rec->cgroup_id;
		d->tgid = rec->tgid;
		d->kern_stack_id = rec->kern_stack_id;
		memcpy(d->comm, rec->comm, PROFILE_COMM_LEN);
		d->truncated = trunc;
		d->nr = nr;
		memcpy(d->pcs, dw->pcs, nr * sizeof(*d->pcs));
		d->next = *head;
		*head = d;
		dw->nr_stacks++;
	}
	d->weight++;
	return 0;
}

static int set_cgroup_filter(struct profile *p)
{
	__u32 zero = 0;
	int err;

	p->cgroup_fd = open(p->o->cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (p->cgroup_fd < 0) {
		err = -errno;
		pr_err("cannot open cgroup %s: %s\n", p->o->cgroup, strerror(-err));
		return err;
	}
	if (bpf_map_update_elem(bpf_map__fd(p->skel->maps.cgroup_filter), &zero, &p->cgroup_fd,
				BPF_ANY)) {
		err = -errno;
		pr_err("%s is not a cgroup v2 directory: %s\n", p->o->cgroup, strerror(-err));
		return err;
	}
	return 0;
}

static int profile_open(struct profile *p, bool *online)
{
	struct profile_opts *o = p->o;
	int err, cpu;

	p->links = calloc(p->nr_cpus, sizeof(*p->links));
	p->fds = malloc(p->nr_cpus * sizeof(*p->fds));
	p->sym = symbolizer__new();
	if (!p->links || !p->fds || !p->sym)
		return -ENOMEM;
	if (o->dwarf) {
		p->dw.unw = unwinder__new(o->dwarf_size);
		p->dw.pcs = calloc(UNWIND_MAX_DEPTH, sizeof(*p->dw.pcs));
		if (!p->dw.unw || !p->dw.pcs)
			return -ENOMEM;
	}
	for (cpu = 0; cpu < p->nr_cpus; cpu++)
		p->fds[cpu] = -1;

	err = bpfload__load(&p->bl, !o->raw_tp && kernel__has_tp_btf(), load, p);
	if (err)
		return err;
	/* -- COMMAND: once the command is stopped before its exec (cmd_profile()) */
	if (o->cgroup && !o->argv) {
		err = set_cgroup_filter(p);
		if (err)
			return err;
	}
	p->rb = ring_buffer__new(bpf_map__fd(p->skel->maps.procs), on_new_proc, p, NULL);
	if (!p->rb) {
		err = -errno;
		pr_err("cannot open ring buffer: %s\n", strerror(-err));
		return err;
	}
	if (o->dwarf && ring_buffer__add(p->rb, bpf_map__fd(p->skel->maps.ustacks), on_ustack, p)) {
		err = -errno;
		pr_err("cannot open ring buffer: %s\n", strerror(-err));
		return err;
	}
	err = bpfload__attach(&p->bl);
	if (err || o->offcpu)
		return err;

	if (!o->event_given) {
		event__parse("cycles", &o->event);
		err = attach_sampling(p, online);
		if (err > 0 && not_supported(err)) {
			pr_err("no hardware PMU (cycles: %s): sampling cpu-clock instead\n",
			       strerror(err));
			detach_sampling(p);
			event__parse("cpu-clock", &o->event);
			err = attach_sampling(p, online);
		}
	} else {
		err = attach_sampling(p, online);
	}
	if (err > 0) {
		if (err == EINVAL && o->freq)
			pr_err("cannot sample %s at %llu Hz: %s (see kernel.perf_event_max_sample_rate)\n",
			       o->event.name, o->freq, strerror(err));
		else if (not_supported(err))
			pr_err("event %s is not supported on this host: %s%s\n", o->event.name,
			       strerror(err),
			       o->event.kind & EVENT_HW ? " (no hardware PMU?)" : "");
		else
			pr_err("cannot open event %s: %s\n", o->event.name, strerror(err));
		return -err;
	}
	return err;
}

struct entry {
	struct profile_key key;
	struct profile_value val;
};

static int entry_cmp(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	return x->key.tgid < y->key.tgid ? -1 : x->key.tgid > y->key.tgid;
}

struct entries {
	struct entry *e;
	size_t nr, cap;
};

static int entry_add(void *ctx, const void *key, const void *val, size_t stride)
{
	struct entries *es = ctx;

	if (es->nr == es->cap)
		return -E2BIG; /* more entries than the map holds: cannot happen */
	memcpy(&es->e[es->nr].key, key, sizeof(es->e->key));
	memcpy(&es->e[es->nr].val, val, sizeof(es->e->val));
	es->nr++;
	return 0;
}

/* Every (key, value) of the counts map, by process. */
static int read_counts(struct profile *p, struct entry **out, size_t *nr)
{
	struct entries es = { .cap = bpf_map__max_entries(p->skel->maps.counts) };
	struct map_reader r;
	int err;

	es.e = calloc(es.cap, sizeof(*es.e));
	if (!es.e)
		return -ENOMEM;
	err = map_reader__init(&r, bpf_map__fd(p->skel->maps.counts));
	err = err ?: map_reader__for_each(&r, entry_add, &es);
	map_reader__free(&r);
	if (err) {
		free(es.e);
		return err;
	}
	qsort(es.e, es.nr, sizeof(*es.e), entry_cmp);
	*out = es.e;
	*nr = es.nr;
	return 0;
}

/*
 * Frame names go into ';'-separated lines: no ';', and what text__char()
 * refuses (control characters, invalid UTF-8) becomes '?', byte for byte.
 */
static void frame_clean(char *s)
{
	int n;

	for (; *s; s += n) {
		if (*s == ';')
			*s = ':';
		if (!text__char(s, false, &n))
			memset(s, '?', n);
	}
}

struct strbuf {
	char *s;
	size_t len, cap;
};

static int strbuf_add(struct strbuf *b, const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	if (b->len + n + m + 2 > b->cap) {
		size_t cap = (b->len + n + m + 2) * 2;
		char *p = realloc(b->s, cap);

		if (!p)
			return -ENOMEM;
		b->s = p;
		b->cap = cap;
	}
	if (b->len)
		b->s[b->len++] = ';';
	memcpy(b->s + b->len, s, n);
	memcpy(b->s + b->len + n, suffix, m);
	b->len += n + m;
	b->s[b->len] = '\0';
	return 0;
}

static int stack_frames(struct profile *p, __s32 id, __u64 *ips)
{
	int n;

	if (id < 0)
		return id == -EFAULT ? 0 : -1; /* -EFAULT: there is no such stack */
	if (bpf_map_lookup_elem(bpf_map__fd(p->skel->maps.stacks), &id, ips))
		return -1;
	for (n = 0; n < PROFILE_MAX_DEPTH && ips[n]; n++)
		;
	return n;
}

/* Frames of the BPF program and the tracepoint that ran it. */
static bool tracing_frame(const char *name)
{
	return !strncmp(name, "bpf_prog_", 9) || !strncmp(name, "bpf_trace_run", 13) ||
	       !strncmp(name, "__traceiter_", 12) || !strncmp(name, "__bpf_trace_", 12);
}

/* The frame at the root of a user stack cut by --call-graph dwarf,SIZE. */
#define TRUNCATED_FRAME "[truncated]"

/*
 * One folded line: comm, user frames outermost first (upcs[0..nu), innermost
 * first; nu < 0: not known), then kernel frames.
 */
static int stack_fold(struct profile *p, __u32 tgid, const char *pcomm, const __u64 *upcs, int nu,
		      bool truncated, __s32 kern_stack_id, __u64 *ips, struct strbuf *b)
{
	char frame[FRAME_LEN], comm[PROFILE_COMM_LEN + 1];
	int n, i, skip = 0, err;

	b->len = 0;
	memcpy(comm, pcomm, PROFILE_COMM_LEN);
	comm[PROFILE_COMM_LEN] = '\0';
	if (!comm[0])
		snprintf(comm, sizeof(comm), "%s", tgid ? "[unknown]" : "swapper");
	frame_clean(comm);
	err = strbuf_add(b, comm, "");

	if (nu < 0)
		err = err ?: strbuf_add(b, "[unknown]", "");
	if (truncated)
		err = err ?: strbuf_add(b, TRUNCATED_FRAME, "");
	for (i = nu - 1; i >= 0 && !err; i--) {
		symbolizer__user(p->sym, (pid_t)tgid, upcs[i], i > 0, frame, sizeof(frame));
		frame_clean(frame);
		err = strbuf_add(b, frame, "");
	}
	n = stack_frames(p, kern_stack_id, ips);
	if (n < 0)
		err = err ?: strbuf_add(b, "[unknown]", "_[k]");
	/* Off-CPU stacks are taken in the tracepoint: leave out its machinery. */
	for (skip = 0; p->o->offcpu && skip < n; skip++)
		if (!tracing_frame(
			    symbolizer__kernel(p->sym, ips[skip], skip > 0, frame, sizeof(frame))))
			break;
	for (i = n - 1; i >= skip && !err; i--) {
		symbolizer__kernel(p->sym, ips[i], i > 0, frame, sizeof(frame));
		frame_clean(frame);
		err = strbuf_add(b, frame, "_[k]");
	}
	return err;
}

static int entry_fold(struct profile *p, const struct entry *e, __u64 *ips, __u64 *uips,
		      struct strbuf *b)
{
	int n = stack_frames(p, e->key.user_stack_id, uips);

	return stack_fold(p, e->key.tgid, e->val.comm, uips, n, false, e->key.kern_stack_id, ips,
			  b);
}

static int line_add(struct folded *lines, size_t *nl, const struct strbuf *b, __u64 weight)
{
	lines[*nl].stack = strdup(b->s);
	if (!lines[*nl].stack)
		return -ENOMEM;
	lines[(*nl)++].weight = weight;
	return 0;
}

static int fold_all(struct profile *p, struct folded **out, size_t *nr_out)
{
	struct entry *e = NULL;
	struct folded *lines = NULL;
	struct strbuf b = {};
	__u64 *ips = calloc(PROFILE_MAX_DEPTH, sizeof(*ips));
	__u64 *uips = calloc(PROFILE_MAX_DEPTH, sizeof(*uips));
	struct dstack *d;
	size_t n = 0, i, nl = 0;
	int err;

	if (!ips || !uips) {
		err = -ENOMEM;
		goto out;
	}
	err = read_counts(p, &e, &n);
	if (err) {
		pr_err("cannot read the stack counts: %s\n", strerror(-err));
		goto out;
	}
	/* Live processes may have loaded libraries since they were first seen. */
	for (i = 0; i < n; i++)
		if (e[i].key.tgid && (!i || e[i].key.tgid != e[i - 1].key.tgid) &&
		    pid_alive((pid_t)e[i].key.tgid))
			symbolizer__add_process(p->sym, (pid_t)e[i].key.tgid);

	/* The processes of the dwarf stacks too (they have no entry in counts). */
	for (i = 0; i < DSTACK_BUCKETS; i++)
		for (d = p->dw.buckets[i]; d; d = d->next)
			if (pid_alive((pid_t)d->tgid))
				symbolizer__add_process(p->sym, (pid_t)d->tgid);

	lines = calloc(n + p->dw.nr_stacks + 1, sizeof(*lines));
	if (!lines) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n && !err; i++) {
		memset(ips, 0, PROFILE_MAX_DEPTH * sizeof(*ips));
		memset(uips, 0, PROFILE_MAX_DEPTH * sizeof(*uips));
		err = entry_fold(p, &e[i], ips, uips, &b) ?:
							    line_add(lines, &nl, &b, e[i].val.weight);
	}
	for (i = 0; i < DSTACK_BUCKETS && !err; i++) {
		for (d = p->dw.buckets[i]; d && !err; d = d->next) {
			memset(ips, 0, PROFILE_MAX_DEPTH * sizeof(*ips));
			err = stack_fold(p, d->tgid, d->comm, d->pcs, d->nr, d->truncated, d->kern_stack_id, ips, &b) ?:
				      line_add(lines, &nl, &b, d->weight);
		}
	}
	if (err) {
		for (i = 0; i < nl; i++)
			free(lines[i].stack);
		free(lines);
		goto out;
	}
	nl = folded__merge(lines, nl);
	/* Off-CPU weights are nanoseconds in the kernel, microseconds out. */
	if (p->o->offcpu)
		for (i = 0; i < nl; i++)
			lines[i].weight = (lines[i].weight + 500) / 1000;
	*out = lines;
	*nr_out = nl;
out:
	free(b.s);
	free(ips);
	free(uips);
	free(e);
	return err;
}

/* What is profiled, in words: "process 42", "command 'make -j2' and its children". */
static void scope_str(const struct profile_opts *o, char *buf, size_t len)
{
	size_t n;
	int i;

	if (o->argv) {
		n = (size_t)snprintf(buf, len, "command '");
		for (i = 0; o->argv[i] && n < len; i++)
			n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? " " : "", o->argv[i]);
		if (n < len)
			snprintf(buf + n, len - n, "' and its children");
	} else if (o->pid) {
		snprintf(buf, len, "process %d", o->pid);
	} else if (o->cgroup) {
		snprintf(buf, len, "cgroup %s", o->cgroup);
	} else {
		snprintf(buf, len, "all processes");
	}
}

static void title_make(struct profile *p, __u64 elapsed_ns, char *title, size_t tlen, char *sub,
		       size_t slen)
{
	struct profile_opts *o = p->o;
	char scope[4200], rate[64];

	scope_str(o, scope, sizeof(scope));
	if (o->offcpu) {
		snprintf(title, tlen, "%s", o->title ? o->title : "Off-CPU Time Flame Graph");
		snprintf(sub, slen, "off-CPU time in microseconds, %s, %.1f s", scope,
			 elapsed_ns / 1e9);
		return;
	}
	if (is_tracepoint(o))
		snprintf(rate, sizeof(rate), "every hit");
	else if (o->period)
		snprintf(rate, sizeof(rate), "every %llu events", o->period);
	else
		snprintf(rate, sizeof(rate), "%llu Hz", o->freq ? o->freq : DEFAULT_FREQ);
	snprintf(title, tlen, "%s", o->title ? o->title : "Flame Graph");
	snprintf(sub, slen, "%s samples (%s), %s, %.1f s", o->event.name, rate, scope,
		 elapsed_ns / 1e9);
	if (o->dwarf) {
		size_t l = strlen(sub);

		snprintf(sub + l, slen - l,
			 ", dwarf unwinding (%u-byte stacks): %llu of %llu truncated",
			 o->dwarf_size, (unsigned long long)p->dw.truncated,
			 (unsigned long long)p->dw.samples);
	}
}

static int write_output(struct profile *p, FILE *f, const struct folded *lines, size_t n,
			__u64 elapsed_ns)
{
	char title[256], sub[4400];
	struct flame_opts fo = { .title = title, .subtitle = sub };
	int err, werr;

	errno = 0;
	if (!p->o->svg) {
		err = folded__write(f, lines, n);
	} else {
		title_make(p, elapsed_ns, title, sizeof(title), sub, sizeof(sub));
		fo.units = p->o->offcpu ? "us" : "samples";
		err = flamegraph__write(f, lines, n, &fo);
	}
	werr = stream__error(f);
	return werr ?: err;
}

static void raise_fd_limit(void)
{
	struct rlimit rl;

	/* One descriptor per mapped file stays open until symbolization. */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static int profile_run(struct profile *p)
{
	struct profile_opts *o = p->o;
	__u64 start = now_ns(CLOCK_MONOTONIC), now;
	int err = 0, timeout;

	while (!exiting) {
		timeout = POLL_MS;
		if (o->duration_ns) {
			now = now_ns(CLOCK_MONOTONIC);
			if (now >= start + o->duration_ns)
				break;
			if (start + o->duration_ns - now < (__u64)POLL_MS * 1000000)
				timeout = (int)((start + o->duration_ns - now) / 1000000) + 1;
		}
		timeout = recheck_due(p, timeout);
		err = ring_buffer__poll(p->rb, timeout);
		if (err == -EINTR) {
			err = 0;
			continue;
		}
		if (err < 0) {
			pr_err("cannot read the ring buffer: %s\n", strerror(-err));
			return err;
		}
		err = 0;
		if (o->pid && process__state(o->pid) != PROCESS_RUNNING) {
			pr_err("process %d exited\n", o->pid);
			break;
		}
	}
	return err;
}

/*
 * -- COMMAND: until the command has ended, reading the ring buffers as they
 * fill (signals are passed on to the command, which decides when to end).
 */
static int profile_run_command(struct profile *p, struct cmdrun *r)
{
	int fd = ring_buffer__epoll_fd(p->rb), err;

	while (!r->done) {
		cmdrun__wait(r, fd, recheck_due(p, POLL_MS));
		err = ring_buffer__consume(p->rb);
		if (err < 0 && err != -EINTR) {
			pr_err("cannot read the ring buffer: %s\n", strerror(-err));
			cmdrun__kill(r);
			return err;
		}
	}
	return 0;
}

/* One line on stderr once everything is attached: profiling has begun. */
static void announce(const struct profile_opts *o)
{
	char what[128], scope[4200], until[64];

	if (o->offcpu)
		snprintf(what, sizeof(what), "off-CPU time");
	else if (is_tracepoint(o))
		snprintf(what, sizeof(what), "%s at every hit", o->event.name);
	else if (o->period)
		snprintf(what, sizeof(what), "%s every %llu events", o->event.name, o->period);
	else
		snprintf(what, sizeof(what), "%s at %llu Hz", o->event.name,
			 o->freq ? o->freq : DEFAULT_FREQ);
	scope_str(o, scope, sizeof(scope));
	if (o->argv)
		snprintf(until, sizeof(until), "until it exits");
	else if (o->duration_ns)
		snprintf(until, sizeof(until), "for %.3g s", o->duration_ns / 1e9);
	else
		snprintf(until, sizeof(until), "until SIGINT");
	pr_err("profiling %s, %s, %s\n", what, scope, until);
}

int cmd_profile(int argc, char **argv)
{
	struct profile_opts o = {};
	struct profile p = { .o = &o, .cgroup_fd = -1 };
	struct cmdrun run = { .pidfd = -1 };
	struct folded *lines = NULL;
	size_t nr_lines = 0, i;
	bool *online = NULL;
	FILE *out = stdout;
	__u64 start, elapsed;
	int err, code = 0;

	if (parse_args(argc, argv, &o))
		return 2;
	if (o.pid && process__check_running(&o.pid))
		return 1;
	if (o.output) {
		out = fopen(o.output, "we");
		if (!out) {
			pr_err("cannot write %s: %s\n", o.output, strerror(errno));
			return 1;
		}
	}
	if (privileges__check() || (o.argv ? cmdrun__signals_setup() : signals__setup())) {
		err = -EPERM;
		goto cleanup;
	}
	if (out != stdout)
		signals__watch_output(fileno(out));
	/* -- COMMAND: the command's cgroup is made first, for the filter */
	if (o.argv) {
		err = cmdrun__create_cgroup(o.cgroup_path, sizeof(o.cgroup_path));
		if (err)
			goto cleanup;
		o.cgroup = o.cgroup_path;
	}
	libbpf__set_verbose(o.verbose);
	raise_fd_limit();
	p.nr_cpus = libbpf_num_possible_cpus();
	if (p.nr_cpus <= 0) {
		err = p.nr_cpus ? p.nr_cpus : -EINVAL;
		pr_err("cannot count CPUs: %s\n", strerror(-err));
		goto cleanup;
	}
	online = calloc(p.nr_cpus, sizeof(*online));
	if (!online) {
		err = -ENOMEM;
		goto cleanup;
	}
	err = cpus__online(online, p.nr_cpus);
	if (err) {
		pr_err("cannot read online CPUs: %s\n", strerror(-err));
		goto cleanup;
	}
	err = profile_open(&p, online);
	if (err)
		goto cleanup;

	announce(&o);
	start = now_ns(CLOCK_MONOTONIC);
	if (o.argv) {
		/*
		 * Nothing passes the filter until it is set: what the child
		 * does before its exec is pmbpf's, as perf counts from the
		 * exec (enable_on_exec).
		 */
		err = cmdrun__start(&run, o.cgroup, 1, o.argv);
		if (!err && !run.done) {
			err = set_cgroup_filter(&p);
			if (err)
				cmdrun__kill(&run);
		}
		err = err ?: cmdrun__go(&run);
		err = err ?: profile_run_command(&p, &run);
		code = run.done ? wait_status__code(run.status) : 0;
	} else {
		err = profile_run(&p);
	}
	elapsed = now_ns(CLOCK_MONOTONIC) - start;
	detach_sampling(&p);
	bpfload__detach(&p.bl);
	if (err)
		goto cleanup;
	/* Processes first seen just before the detach. */
	ring_buffer__consume(p.rb);
	percpu_array__sum(bpf_map__fd(p.skel->maps.stats), p.stats, PROFILE_STAT_NR);

	err = fold_all(&p, &lines, &nr_lines);
	if (err)
		goto cleanup;
	err = write_output(&p, out, lines, nr_lines, elapsed);
	if (err) {
		/* stdout's write errors are reported once, at exit */
		if (out != stdout && err != -EPIPE)
			pr_err("cannot write %s: %s\n", o.output, strerror(-err));
		goto cleanup;
	}
	if (o.offcpu)
		pr_err("%llu us off-CPU in %llu switches, %llu ns lost (map full), %llu stack errors, %zu stacks\n",
		       (unsigned long long)(p.stats[PROFILE_STAT_WEIGHT] / 1000),
		       (unsigned long long)p.stats[PROFILE_STAT_SWITCHES_OUT],
		       (unsigned long long)p.stats[PROFILE_STAT_LOST],
		       (unsigned long long)p.stats[PROFILE_STAT_STACK_ERRORS], nr_lines);
	else
		pr_err("%llu samples of %s, %llu lost (map full), %llu stack errors, %zu stacks\n",
		       (unsigned long long)p.stats[PROFILE_STAT_SAMPLES], o.event.name,
		       (unsigned long long)(p.stats[PROFILE_STAT_LOST] +
					    p.stats[PROFILE_STAT_USTACKS_LOST] + p.dw.lost),
		       (unsigned long long)p.stats[PROFILE_STAT_STACK_ERRORS], nr_lines);
	if (o.dwarf)
		pr_err("dwarf: %llu stacks unwound (%.1f us each), %llu truncated at %u bytes, %llu lost (ring buffer full), %llu unreadable\n",
		       (unsigned long long)p.dw.samples,
		       p.dw.samples ? p.dw.unwind_ns / 1e3 / p.dw.samples : 0.0,
		       (unsigned long long)p.dw.truncated, o.dwarf_size,
		       (unsigned long long)p.stats[PROFILE_STAT_USTACKS_LOST],
		       (unsigned long long)p.stats[PROFILE_STAT_USTACKS_UNREAD]);

cleanup:
	for (i = 0; i < nr_lines; i++)
		free(lines[i].stack);
	free(lines);
	free(online);
	profile_close(&p);
	if (o.argv && o.cgroup) {
		cmdrun__finish(&run);
		cmdrun__remove_cgroup(o.cgroup_path);
	}
	if (out != stdout && fclose(out) && !err) {
		err = -errno;
		if (err != -EPIPE)
			pr_err("cannot write %s: %s\n", o.output, strerror(-err));
	}
	write_error__exit(err);
	return code ?: (err ? 1 : 0);
}
