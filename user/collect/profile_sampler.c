// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* pmbpf profile's sampler (profile_sampler.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "profile.h"
#include "profile.skel.h"
#include "bpfload.h"
#include "cgroup.h"
#include "events.h"
#include "profile_sampler.h"
#include "profile_unwind.h"
#include "strbuf.h"
#include "symbolize.h"
#include "util.h"

#define FRAME_LEN 256

static const unsigned int recheck_ms[] = { 10, 100, 1000 };

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
	if (o->cgroup) {
		/* the switch object's filter (filter.bpf.h): the cgroup's id and depth */
		skel->rodata->filter_cgroup_id = cgroup__id_of(o->cgroup);
		skel->rodata->filter_cgroup_level = cgroup__level(o->cgroup);
		if (!skel->rodata->filter_cgroup_id) {
			err = -errno;
			pr_err("cannot read cgroup %s: %s\n", o->cgroup, strerror(-err));
			profile_bpf__destroy(skel);
			return err;
		}
	}
	if (o->dwarf) {
		skel->rodata->stack_size = o->dwarf_size;
		bpf_map__set_max_entries(skel->maps.ustacks, ustacks_ring_size(o->dwarf_size));
		bpf_map__set_max_entries(skel->maps.ustack_scratch, p->nr_cpus);
	}
	bpf_program__set_autoload(skel->progs.sample, !o->offcpu && !profile_opts__tracepoint(o));
	bpf_program__set_autoload(skel->progs.sample_tp, !o->offcpu && profile_opts__tracepoint(o));
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
		if (profile_opts__tracepoint(o) && p->nr_links)
			break;
		if (profile_opts__tracepoint(o)) {
			attr.sample_period = 1;
		} else if (o->period) {
			attr.sample_period = o->period;
		} else {
			attr.freq = 1;
			attr.sample_freq = o->freq ? o->freq : PROFILE_DEFAULT_FREQ;
		}
		fd = perf_event_open(&attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			if (errno == ENODEV)
				continue; /* went offline */
			return errno;
		}
		p->fds[cpu] = (int)fd;
		link = bpf_program__attach_perf_event(profile_opts__tracepoint(o) ?
							      p->skel->progs.sample_tp :
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
void profile__close(struct profile *p)
{
	detach_sampling(p);
	bpfload__detach(&p->bl);
	ring_buffer__free(p->rb);
	profile_bpf__destroy(p->skel);
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
int profile__recheck_due(struct profile *p, int timeout)
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

int profile__set_cgroup_filter(struct profile *p)
{
	p->skel->bss->filter_open = true;
	return 0;
}

int profile__open(struct profile *p, bool *online)
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
		err = profile__set_cgroup_filter(p);
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

/* A frame (and its suffix) into the folded line b, after a ';' but the first. */
static int frame_add(struct strbuf *b, const char *s, const char *suffix)
{
	if (b->len)
		strbuf__putc(b, ';');
	strbuf__puts(b, s);
	strbuf__puts(b, suffix);
	return b->failed ? -ENOMEM : 0;
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
	err = frame_add(b, comm, "");

	if (nu < 0)
		err = err ?: frame_add(b, "[unknown]", "");
	if (truncated)
		err = err ?: frame_add(b, TRUNCATED_FRAME, "");
	for (i = nu - 1; i >= 0 && !err; i--) {
		symbolizer__user(p->sym, (pid_t)tgid, upcs[i], i > 0, frame, sizeof(frame));
		frame_clean(frame);
		err = frame_add(b, frame, "");
	}
	n = stack_frames(p, kern_stack_id, ips);
	if (n < 0)
		err = err ?: frame_add(b, "[unknown]", "_[k]");
	/* Off-CPU stacks are taken in the tracepoint: leave out its machinery. */
	for (skip = 0; p->o->offcpu && skip < n; skip++)
		if (!tracing_frame(
			    symbolizer__kernel(p->sym, ips[skip], skip > 0, frame, sizeof(frame))))
			break;
	for (i = n - 1; i >= skip && !err; i--) {
		symbolizer__kernel(p->sym, ips[i], i > 0, frame, sizeof(frame));
		frame_clean(frame);
		err = frame_add(b, frame, "_[k]");
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
	lines[*nl].stack = strdup(b->buf);
	if (!lines[*nl].stack)
		return -ENOMEM;
	lines[(*nl)++].weight = weight;
	return 0;
}

int profile__fold(struct profile *p, struct folded **out, size_t *nr_out)
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
	*out = lines;
	*nr_out = nl;
out:
	strbuf__free(&b);
	free(ips);
	free(uips);
	free(e);
	return err;
}

int profile__poll(struct profile *p, int timeout_ms)
{
	return ring_buffer__poll(p->rb, timeout_ms);
}

int profile__consume(struct profile *p)
{
	return ring_buffer__consume(p->rb);
}

int profile__epoll_fd(const struct profile *p)
{
	return ring_buffer__epoll_fd(p->rb);
}

void profile__detach(struct profile *p)
{
	detach_sampling(p);
	bpfload__detach(&p->bl);
}

void profile__read_stats(struct profile *p)
{
	/* Processes first seen just before the detach. */
	ring_buffer__consume(p->rb);
	percpu_array__sum(bpf_map__fd(p->skel->maps.stats), p->stats, PROFILE_STAT_NR);
}
