// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Prometheus exposition: counters accumulated from interval deltas, label
 * escaping, the run-queue histogram, the idle task kept out of the root
 * cgroup, top-K selection, the lingering cap and the grace period; the
 * families, values and help of the figure catalog's Prometheus figures and
 * self statistics, and the -M metric series; --threads: thread series by
 * the same rules, none without it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"

#ifdef PMBPF_MINIMAL
int main(void)
{
	return 0; /* serve is not part of minimal (static) builds */
}
#else
#include "catalog.h"
#include "metrics.h"
#include "prom.h"
#include "util.h"

#define S 1000000000ULL

static struct event_info events[2];
static struct snapshot snap;
static struct prom_self self = { .version = "test" };
static struct strbuf out;
static __u64 now = 100 * S;
static bool removed;

static bool exists(const char *path, void *ctx)
{
	return !(removed && !strcmp(path, "/gone"));
}

static void begin(void)
{
	snapshot__reset(&snap);
	snap.interval_ns = S;
	snap.nr_events = 2;
	snap.events = events;
	snap.attach = "tp_btf";
	now += S;
}

/* A process's row (or a thread's: the process's start time, as account.c makes them). */
static struct proc_row *row_fill(struct proc_row *r, __u32 pid, const char *comm,
				 const char *cgroup, __u64 cpu_ms)
{
	r->pid = pid;
	r->cgroup_id = cgroup && !strcmp(cgroup, "/") ? 1 : 7;
	r->cgroup = cgroup;
	r->start_ns = pid * 10;
	snprintf(r->comm, sizeof(r->comm), "%s", comm);
	r->f.n[PMBPF_N_ONCPU_NS] = cpu_ms * 1000000ULL;
	r->f.ev[1].value = cpu_ms;
	r->f.ev[1].enabled = r->f.ev[1].running = r->f.n[PMBPF_N_ONCPU_NS];
	return r;
}

static struct proc_row *proc(__u32 pid, const char *comm, const char *cgroup, __u64 cpu_ms)
{
	return row_fill(snapshot__add_row(&snap), pid, comm, cgroup, cpu_ms);
}

/* --threads: a thread row of process pid. */
static struct proc_row *thread(__u32 pid, __u32 tid, const char *comm, const char *cgroup,
			       __u64 cpu_ms)
{
	struct proc_row *r;

	if (snap.nr_threads == snap.cap_threads) {
		size_t cap = snap.cap_threads ? snap.cap_threads * 2 : 16;

		r = realloc(snap.threads, cap * sizeof(*r));
		if (!CHECK(r))
			exit(1);
		snap.threads = r;
		snap.cap_threads = cap;
	}
	snap.threads_on = true;
	r = &snap.threads[snap.nr_threads++];
	memset(r, 0, sizeof(*r));
	r->tid = tid;
	return row_fill(r, pid, comm, cgroup, cpu_ms);
}

/* A process row that is the sum of its thread rows given (as account.c makes it). */
static struct proc_row *proc_of(__u32 pid, const char *comm, const char *cgroup, size_t first)
{
	struct proc_row *r = proc(pid, comm, cgroup, 0);
	size_t i;

	r->nr_threads = (__u32)(snap.nr_threads - first);
	for (i = first; i < snap.nr_threads; i++) {
		figures__add(&r->f, &snap.threads[i].f);
		r->exited = r->exited || snap.threads[i].proc_end;
	}
	return r;
}

static struct cgroup_row *cgroup(__u64 id, const char *path, __u64 cpu_ms)
{
	struct cgroup_row *c = snapshot__add_cgroup(&snap);

	c->id = id;
	c->path = path;
	c->total.n[PMBPF_N_ONCPU_NS] = cpu_ms * 1000000ULL;
	c->total.ev[1].value = cpu_ms;
	c->total.ev[1].enabled = c->total.ev[1].running = c->total.n[PMBPF_N_ONCPU_NS];
	return c;
}

static const char *render(struct prom_state *ps)
{
	CHECK_EQ_INT(prom__update(ps, &snap, now), 0);
	prom__render(ps, &snap, &self, &out);
	CHECK(!out.failed);
	return out.buf;
}

static void test_label_escaping(void)
{
	struct strbuf sb = {};

	prom__label_value(&sb, "a\"b\\c\nd");
	CHECK_STR(sb.buf, "\"a\\\"b\\\\c\\nd\"");
	sb.len = 0;
	/* invalid UTF-8 (a lone continuation byte, a truncated sequence) is replaced */
	prom__label_value(&sb, "x\x80y\xc3");
	CHECK_STR(sb.buf, "\"x?y?\"");
	sb.len = 0;
	prom__label_value(&sb, "caf\xc3\xa9");
	CHECK_STR(sb.buf, "\"caf\xc3\xa9\"");
	sb.len = 0;
	/* an escape sequence (a comm or cgroup name) reaches no terminal reading /metrics */
	prom__label_value(&sb, "\x1b]0;x\x07\x7f\xc2\x9b");
	CHECK_STR(sb.buf, "\"" TEXT_REPLACEMENT
			  "]0;x" TEXT_REPLACEMENT TEXT_REPLACEMENT TEXT_REPLACEMENT "\"");
	strbuf__free(&sb);
}

static void test_counters(void)
{
	struct prom_opts o = { .top_k = 2, .grace_ns = 3 * S, .cgroup_exists = exists };
	struct prom_state *ps = prom__new(&o);
	const char *t;
	struct proc_row *idle;

	begin();
	idle = proc(0, "[idle]", "/", 900);
	(void)idle;
	proc(10, "web", "/svc", 300);
	/* as account.c builds it: / holds no idle time */
	cgroup(1, "/", 300);
	cgroup(7, "/svc", 300)->ci = (struct container_info){ .runtime = "docker", .id = "abc" };
	snap.cgroups[0].id = 1;
	t = render(ps);
	/* no cgroup overflowed: the family, no series */
	CHECK_SUBSTR(t, "# TYPE pmbpf_cgroup_overflow_processes_total counter\n");
	CHECK(!strstr(t, "pmbpf_cgroup_overflow_processes_total{"));
	begin();
	proc(10, "web", "/svc", 200);
	cgroup(1, "/", 200)->overflow_procs_total = 3;
	cgroup(7, "/svc", 200)->overflow_procs_total = 3;
	t = render(ps);
	CHECK_SUBSTR(t, "pmbpf_cgroup_overflow_processes_total{cgroup=\"/svc\",runtime=\"docker\","
			"container_id=\"abc\",pod_uid=\"\"} 3\n");
	/* deltas add up; the idle task is its own counter, not in / */
	CHECK_SUBSTR(t, "pmbpf_cgroup_cpu_seconds_total{cgroup=\"/svc\",runtime=\"docker\","
			"container_id=\"abc\",pod_uid=\"\"} 0.500000000\n");
	CHECK_SUBSTR(t,
		     "pmbpf_cgroup_cpu_seconds_total{cgroup=\"/\",runtime=\"\",container_id=\"\","
		     "pod_uid=\"\"} 0.500000000\n");
	CHECK_SUBSTR(t, "pmbpf_idle_cpu_seconds_total 0.900000000\n");
	CHECK_SUBSTR(t, "pmbpf_process_cpu_seconds_total{pid=\"10\",comm=\"web\",cgroup=\"/svc\"} "
			"0.500000000\n");
	/* counting events only; the other has a state, not a zero */
	CHECK_SUBSTR(t, "pmbpf_cgroup_perf_events_total{cgroup=\"/svc\",runtime=\"docker\","
			"container_id=\"abc\",pod_uid=\"\",event=\"page-faults\"} 500\n");
	CHECK(!strstr(t, "event=\"cycles\"} "));
	CHECK_SUBSTR(t, "pmbpf_event_supported{event=\"cycles\",class=\"hardware\","
			"state=\"not-supported\"} 0\n");
	/* every family once, histogram with 24 buckets ending at +Inf */
	CHECK_SUBSTR(t, "# TYPE pmbpf_cgroup_runqueue_latency_seconds histogram\n");
	CHECK_SUBSTR(t, "le=\"0.000002\"} 0\n");
	CHECK_SUBSTR(t, "le=\"8.388608\"} 0\n");
	CHECK_SUBSTR(t, "le=\"+Inf\"} 0\n");
	CHECK_SUBSTR(t, "# TYPE pmbpf_process_runqueue_latency_seconds summary\n");
	prom__free(ps);
}

static void test_histogram(void)
{
	struct prom_opts o = { .top_k = 0, .grace_ns = S };
	struct prom_state *ps = prom__new(&o);
	struct cgroup_row *c;
	const char *t;

	begin();
	c = cgroup(7, "/h", 1);
	c->total.runq_hist[0] = 3; /* < 2 us */
	c->total.runq_hist[3] = 2; /* [8, 16) us */
	c->total.runq_hist[PMBPF_RUNQ_SLOTS - 1] = 1; /* the last slot: only in +Inf */
	c->total.n[PMBPF_N_RUNQ_TOTAL_NS] = 5000000;
	t = render(ps);
	CHECK_SUBSTR(t, "le=\"0.000002\"} 3\n");
	CHECK_SUBSTR(t, "le=\"0.000008\"} 3\n");
	CHECK_SUBSTR(t, "le=\"0.000016\"} 5\n");
	CHECK_SUBSTR(t, "le=\"8.388608\"} 5\n");
	CHECK_SUBSTR(t, "le=\"+Inf\"} 6\n");
	CHECK_SUBSTR(t, "pmbpf_cgroup_runqueue_latency_seconds_count{cgroup=\"/h\",runtime=\"\","
			"container_id=\"\",pod_uid=\"\"} 6\n");
	CHECK_SUBSTR(t, "pmbpf_cgroup_runqueue_latency_seconds_sum{cgroup=\"/h\",runtime=\"\","
			"container_id=\"\",pod_uid=\"\"} 0.005000000\n");
	/* no process series with --top-k 0 */
	CHECK(!strstr(t, "pmbpf_process_cpu_seconds_total{"));
	prom__free(ps);
}

static size_t exported(struct prom_state *ps)
{
	size_t p, c, t;

	prom__counts(ps, &p, &c, &t);
	return p;
}

static void test_top_k_and_grace(void)
{
	struct prom_opts o = { .top_k = 2, .grace_ns = 3 * S, .cgroup_exists = exists };
	struct prom_state *ps = prom__new(&o);
	const char *t;
	int i;

	/* a steady pair holds the top 2; a small newcomer does not displace them */
	for (i = 0; i < 3; i++) {
		begin();
		proc(1, "a", "/", 500);
		proc(2, "b", "/", 400);
		proc(3, "c", "/", 10);
		t = render(ps);
	}
	CHECK(strstr(t, "pid=\"1\""));
	CHECK(strstr(t, "pid=\"2\""));
	CHECK(!strstr(t, "pid=\"3\""));
	CHECK_EQ_U64(exported(ps), 2);
	/* a hog at 100% displaces the steady 40% within 30 s; the one it displaced lingers */
	for (i = 0; i < 30; i++) {
		begin();
		proc(1, "a", "/", 500);
		proc(2, "b", "/", 400);
		proc(4, "hog", "/", 1000);
		t = render(ps);
		if (strstr(t, "pid=\"4\""))
			break;
	}
	CHECK(i > 0 && i < 30);
	CHECK(strstr(t, "pid=\"2\""));
	CHECK_EQ_U64(exported(ps), 3);
	/* the hog exits: its final value stays for the grace period, then goes */
	begin();
	proc(4, "hog", "/", 300)->exited = true;
	proc(1, "a", "/", 500);
	t = render(ps);
	CHECK_SUBSTR(t, "pmbpf_process_cpu_seconds_total{pid=\"4\",comm=\"hog\",cgroup=\"/\"} "
			"1.300000000\n");
	for (i = 0; i < 2; i++) {
		begin();
		proc(1, "a", "/", 500);
		t = render(ps);
		CHECK(strstr(t, "pid=\"4\""));
	}
	begin();
	proc(1, "a", "/", 500);
	t = render(ps);
	CHECK(!strstr(t, "pid=\"4\""));
	/* many short-lived processes: never more than 2 x K series */
	for (i = 0; i < 50; i++) {
		int j;

		begin();
		for (j = 0; j < 10; j++)
			proc(1000 + i * 10 + j, "short", "/", 600 + j)->exited = true;
		render(ps);
		CHECK(exported(ps) <= 4);
	}
	prom__free(ps);
}

static size_t exported_threads(struct prom_state *ps)
{
	size_t n, t;

	prom__thread_counts(ps, &n, &t);
	return n;
}

/* Thread series sets in exposition t. */
static size_t thread_series(const char *t)
{
	size_t n = 0;

	for (const char *p = t; (p = strstr(p, "\npmbpf_thread_cpu_seconds_total{")); p++)
		n++;
	return n;
}

/*
 * One interval of process 10 for test_threads: thread 11 (named w) at 400
 * ms, thread 12 (named x, none if NULL) at x_ms, exiting if x_exits, the
 * leader 10 at 10 ms if leader.
 */
static const char *srv(struct prom_state *ps, const char *w, const char *x, __u64 x_ms,
		       bool x_exits, bool leader)
{
	begin();
	thread(10, 11, w, "/", 400);
	if (x)
		thread(10, 12, x, "/", x_ms)->exited = x_exits;
	if (leader)
		thread(10, 10, "srv", "/", 10);
	proc_of(10, "srv", "/", 0);
	return render(ps);
}

/* Whether t has thread tid of process 10 (in /, named comm) at CPU seconds cpu. */
static bool has_thread_cpu(const char *t, __u32 tid, const char *comm, const char *cpu)
{
	char want[256];

	snprintf(want, sizeof(want),
		 "\npmbpf_thread_cpu_seconds_total{pid=\"10\",tid=\"%u\",comm=\"%s\","
		 "cgroup=\"/\"} %s\n",
		 tid, comm, cpu);
	return strstr(t, want) != NULL;
}

/*
 * --threads: the top K threads by CPU get series of their own (labels pid,
 * tid, comm, cgroup), ranked apart from the processes by the same rules:
 * counters that accumulate, an exited thread's final value for the grace
 * period, at most 2 x K series, a TID reused in the same process a new
 * series. Without the option, no thread series whatever the snapshot holds.
 */
static void test_threads(void)
{
	struct prom_opts o = { .top_k = 2, .grace_ns = 3 * S, .threads = true };
	struct prom_state *ps;
	const char *t;
	size_t first;
	int i;

	/* not asked: nothing of threads, not even empty families */
	o.threads = false;
	ps = prom__new(&o);
	begin();
	thread(10, 10, "srv", "/", 100);
	thread(10, 11, "srv-w", "/", 400);
	proc_of(10, "srv", "/", 0);
	t = render(ps);
	CHECK_SUBSTR(t, "pmbpf_process_cpu_seconds_total{pid=\"10\",comm=\"srv\",cgroup=\"/\"} "
			"0.500000000\n");
	CHECK(!strstr(t, "tid="));
	CHECK(!strstr(t, "pmbpf_thread_cpu_seconds_total"));
	CHECK(!strstr(t, "_threads "));
	CHECK_EQ_U64(exported_threads(ps), 0);
	prom__free(ps);

	o.threads = true;
	ps = prom__new(&o);
	/* three threads of one process, one of another: the top 2 threads have series */
	for (i = 0; i < 3; i++) {
		begin();
		thread(10, 10, "srv", "/", 10);
		thread(10, 11, "srv-w", "/", 400);
		thread(10, 12, "srv-x", "/", 300);
		proc_of(10, "srv", "/", 0);
		first = snap.nr_threads;
		thread(20, 20, "db", "/svc", 50);
		proc_of(20, "db", "/svc", first);
		t = render(ps);
	}
	CHECK_SUBSTR(t, "pmbpf_thread_cpu_seconds_total{pid=\"10\",tid=\"11\",comm=\"srv-w\","
			"cgroup=\"/\"} 1.200000000\n");
	CHECK_SUBSTR(t, "pmbpf_thread_cpu_seconds_total{pid=\"10\",tid=\"12\",comm=\"srv-x\","
			"cgroup=\"/\"} 0.900000000\n");
	CHECK_SUBSTR(t, "pmbpf_thread_perf_events_total{pid=\"10\",tid=\"11\",comm=\"srv-w\","
			"cgroup=\"/\",event=\"page-faults\"} 1200\n");
	CHECK(!strstr(t, "tid=\"10\""));
	CHECK(!strstr(t, "tid=\"20\""));
	/* the process series are the processes' top K, as without threads */
	CHECK_SUBSTR(t, "pmbpf_process_cpu_seconds_total{pid=\"10\",comm=\"srv\",cgroup=\"/\"} "
			"2.130000000\n");
	CHECK_SUBSTR(t, "pmbpf_process_cpu_seconds_total{pid=\"20\",comm=\"db\",cgroup=\"/svc\"} "
			"0.150000000\n");
	CHECK_SUBSTR(t, "# TYPE pmbpf_thread_runqueue_latency_seconds summary\n");
	CHECK(!strstr(t, "pmbpf_thread_perf_event_enabled_seconds_total"));
	CHECK_SUBSTR(t, "\npmbpf_exported_threads 2\n");
	CHECK_SUBSTR(t, "\npmbpf_tracked_threads 4\n");
	CHECK_EQ_U64(thread_series(t), 2);
	/* a thread renames itself: its series follows the name */
	t = srv(ps, "srv-w2", "srv-x", 300, false, false);
	CHECK(has_thread_cpu(t, 11, "srv-w2", "1.600000000"));
	/* thread 12 exits: its final value stays for the grace period, then goes */
	t = srv(ps, "srv-w2", "srv-x", 100, true, false);
	CHECK(has_thread_cpu(t, 12, "srv-x", "1.300000000"));
	for (i = 0; i < 2; i++) {
		t = srv(ps, "srv-w2", NULL, 0, false, true);
		CHECK(has_thread_cpu(t, 12, "srv-x", "1.300000000"));
	}
	/* the one in the top K and the lingering one; 20, absent, ranks above 10 */
	CHECK(!strstr(t, "tid=\"10\""));
	t = srv(ps, "srv-w2", NULL, 0, false, false);
	CHECK(!strstr(t, "tid=\"12\""));
	/* TID 12 reused in the same process: a new thread, a new series from its own counts */
	t = srv(ps, "srv-w2", "srv-y", 700, false, false);
	CHECK(has_thread_cpu(t, 12, "srv-y", "0.700000000"));
	/* ... also when it is reused before the old one's series went */
	srv(ps, "srv-w2", "srv-y", 100, true, false);
	t = srv(ps, "srv-w2", "srv-z", 900, false, false);
	CHECK(has_thread_cpu(t, 12, "srv-z", "0.900000000"));
	CHECK(!strstr(t, "comm=\"srv-y\""));
	/* many short-lived threads: never more than 2 x K thread series */
	for (i = 0; i < 50; i++) {
		int j;

		begin();
		for (j = 0; j < 10; j++)
			thread(30, 1000 + i * 10 + j, "short", "/", 600 + j)->exited = true;
		proc_of(30, "pool", "/", 0);
		t = render(ps);
		CHECK(exported_threads(ps) <= 4);
		CHECK(thread_series(t) <= 4);
		CHECK_EQ_U64(thread_series(t), exported_threads(ps));
	}
	/* the processes' own bound holds apart */
	CHECK(exported(ps) <= 4);
	prom__free(ps);
}

static void test_removed_cgroup(void)
{
	struct prom_opts o = { .top_k = 1, .grace_ns = 2 * S, .cgroup_exists = exists };
	struct prom_state *ps = prom__new(&o);
	const char *t;
	int i;

	removed = false;
	begin();
	cgroup(9, "/gone", 100);
	t = render(ps);
	CHECK(strstr(t, "cgroup=\"/gone\""));
	removed = true;
	for (i = 0; i < 2; i++) {
		begin();
		t = render(ps);
		CHECK(strstr(t, "cgroup=\"/gone\""));
	}
	begin();
	t = render(ps);
	CHECK(!strstr(t, "cgroup=\"/gone\""));
	removed = false;
	prom__free(ps);
}

/*
 * The catalog's figures: every OUT_PROM figure's family (HELP from its help,
 * TYPE from its kind) with the value of the figures given, for a cgroup and
 * an exported process; -M metric series; the self statistics.
 */
static struct event_info events4[4];
static struct metric_sel sel;

/* Distinct figures for interval k. */
static void fill(struct figures *f, int k)
{
	int i;

	memset(f, 0, sizeof(*f));
	for (i = 0; i < PMBPF_N_NR; i++)
		f->n[i] = (i + 1) * 1000000ULL * k + i + 1;
	f->n[PMBPF_N_RUNQ_COUNT] = 0;
	for (i = 0; i < PMBPF_RUNQ_SLOTS; i++) {
		f->runq_hist[i] = i + k;
		f->n[PMBPF_N_RUNQ_COUNT] += i + k;
	}
	for (i = 0; i < 4; i++) {
		f->ev[i].value = (i + 1) * 100 * k;
		f->ev[i].enabled = 2000ULL * k; /* multiplexed: counted half the time */
		f->ev[i].running = 1000ULL * k;
	}
	f->ev[1].value = 250 * k; /* instructions: IPC 2.5 */
}

/* The value of series "name{labels}" in exposition t; NaN if it is not there. */
static double sample_of(const char *t, const char *series)
{
	char *want;
	const char *p;
	double v = NAN;

	if (asprintf(&want, "\n%s ", series) < 0)
		return NAN;
	p = strstr(t, want);
	if (p)
		v = strtod(p + strlen(want), NULL);
	free(want);
	return v;
}

/* The instance labels of figure fd: the catalog gives per-event figures one per event. */
static void instance(char *buf, size_t len, const struct figure *fd, int i)
{
	const struct metric_use *mu = &sel.m[i / METRIC_MAX_VALUES];

	if (fd->src == SRC_METRIC)
		snprintf(buf, len, ",metric=\"%s\",figure=\"%s\"", mu->name,
			 metric_use__values(mu)[i % METRIC_MAX_VALUES]);
	else if (figure__instances(fd, &snap) == 4)
		snprintf(buf, len, ",event=\"%s\"", events4[i].spec.name);
	else
		buf[0] = '\0';
}

/* Each OUT_PROM figure of the catalog for one series set with labels, whose intervals were f[]. */
static void check_catalog_sets(const char *t, const char *what, const char *labels,
			       const struct figures *f, int nf)
{
	const struct figure *figs;
	size_t nr, j;
	char name[128], series[4096], inst[1536], line[4096];

	figs = catalog__figures(&nr);
	for (j = 0; j < nr; j++) {
		const struct figure *fd = &figs[j];
		bool cgroup = !strcmp(what, "cgroup");
		const char *help;
		double scale = strcmp(fd->unit, "ns") ? 1 : 1e-9;
		int i, k;

		if (!(fd->outputs & OUT_PROM) || !fd->prom)
			continue;
		snprintf(name, sizeof(name), "pmbpf_%s_%s", what, fd->prom);
		if (!cgroup && fd->prom_cgroup_only) {
			snprintf(line, sizeof(line), "\n%s{", name);
			CHECK(!strstr(t, line));
			continue;
		}
		/* durations are exported in seconds */
		if (scale != 1)
			CHECK(strstr(fd->prom, "_seconds"));
		/* figures that share a family: their helps one after the other */
		snprintf(line, sizeof(line), "# HELP %s ", name);
		help = strstr(t, line);
		if (CHECK(help)) {
			snprintf(line, sizeof(line), "%.*s", (int)strcspn(help, "\n"), help);
			CHECK_SUBSTR(line, fd->help);
		}
		if (fd->src == SRC_RUNQ_HIST) {
			__u64 count = 0, sum = 0;

			for (k = 0; k < nf; k++) {
				count += (__u64)figure__value(fd, &f[k], NULL, 0);
				sum += f[k].n[PMBPF_N_RUNQ_TOTAL_NS];
			}
			snprintf(line, sizeof(line), "# TYPE %s %s\n", name,
				 cgroup ? "histogram" : "summary");
			CHECK_SUBSTR(t, line);
			snprintf(series, sizeof(series), "%s_count{%s}", name, labels);
			CHECK_NEAR(sample_of(t, series), count, 0);
			snprintf(series, sizeof(series), "%s_sum{%s}", name, labels);
			CHECK_NEAR(sample_of(t, series), sum * 1e-9, 1e-12);
			snprintf(series, sizeof(series), "%s_bucket{%s,le=\"+Inf\"}", name, labels);
			if (!cgroup)
				CHECK(isnan(sample_of(t, series)));
			else
				CHECK_NEAR(sample_of(t, series), count, 0);
			continue;
		}
		snprintf(line, sizeof(line), "# TYPE %s %s\n", name,
			 fd->kind == FIG_COUNTER ? "counter" : "gauge");
		CHECK_SUBSTR(t, line);
		for (i = 0; i < figure__instances(fd, &snap); i++) {
			double want = 0, got;

			if (!figure__applies(fd, &snap, i))
				continue;
			instance(inst, sizeof(inst), fd, i);
			snprintf(series, sizeof(series), "%s{%s%s%s%s}", name, labels,
				 fd->prom_labels ? "," : "", fd->prom_labels ? fd->prom_labels : "",
				 inst);
			/* counters add up the intervals; a gauge is the last interval's */
			for (k = fd->kind == FIG_COUNTER ? 0 : nf - 1; k < nf; k++) {
				struct row_metrics m;

				metrics__figures(&snap, &f[k], &m);
				want += figure__value(fd, &f[k], &m, i);
			}
			if (inst[0] == ',' && !strncmp(inst, ",event=", 7) &&
			    events4[i].state != EVENT_COUNTING)
				want = NAN;
			got = sample_of(t, series);
			if (!isfinite(want)) {
				/* not counting, or a metric not supported: no series, never 0 */
				if (!check_record(isnan(got), __FILE__, __LINE__, "%s: no series",
						  series))
					continue;
			} else {
				check_record(fabs(got - want * scale) <=
						     1e-9 * fabs(want * scale) + 1e-12,
					     __FILE__, __LINE__, "%s: %.17g, want %.17g", series,
					     got, want * scale);
			}
		}
	}
}

static void test_catalog(void)
{
	struct prom_opts o = { .top_k = 1, .grace_ns = 5 * S, .threads = true };
	struct prom_state *ps = prom__new(&o);
	const char *cg_labels = "cgroup=\"/c\",runtime=\"\",container_id=\"\",pod_uid=\"\"";
	const char *p_labels = "pid=\"10\",comm=\"w\",cgroup=\"/c\"";
	const char *t_labels = "pid=\"10\",tid=\"11\",comm=\"w-1\",cgroup=\"/c\"";
	const struct metric_def *defs;
	const struct self_figure *sf;
	struct figures f[2];
	char line[512];
	const char *t;
	int k, nd;
	size_t j, nr, nsf;

	memset(&sel, 0, sizeof(sel));
	defs = metrics__defs(&nd);
	sel.nr = 2;
	snprintf(sel.m[0].name, sizeof(sel.m[0].name), "ipc");
	for (k = 0; k < nd; k++)
		if (!strcmp(defs[k].metric, "ipc"))
			sel.m[0].def = &defs[k];
	CHECK(sel.m[0].def);
	sel.m[0].first = 0; /* its group: cycles, instructions */
	sel.m[0].nr_events = 2;
	snprintf(sel.m[1].name, sizeof(sel.m[1].name), "topdown"); /* not supported: no def */
	for (k = 0; k < 2; k++) {
		struct proc_row *r;
		struct cgroup_row *c;

		begin();
		snap.events = events4;
		snap.nr_events = 4;
		snap.metrics = &sel;
		fill(&f[k], k + 1);
		r = thread(10, 11, "w-1", "/c", 0);
		r->f = f[k];
		r = proc(10, "w", "/c", 0);
		r->f = f[k];
		c = cgroup(7, "/c", 0);
		c->total = f[k];
		for (j = 0; j < PMBPF_STAT_NR; j++)
			snap.stats[j] = 11 * (j + 1) + k;
		snap.wakeup_progs = true;
		snap.map_entries = 12;
		snap.map_capacity = 10240;
		snap.map_bytes = 4096;
		snap.vanished = 3;
		snap.poll_ns = 1234567;
		t = render(ps);
	}
	check_catalog_sets(t, "cgroup", cg_labels, f, 2);
	check_catalog_sets(t, "process", p_labels, f, 2);
	check_catalog_sets(t, "thread", t_labels, f, 2);
	/* some values by hand: the generic check above reads them through the catalog */
	CHECK_SUBSTR(t, "pmbpf_cgroup_context_switches_total{cgroup=\"/c\",runtime=\"\","
			"container_id=\"\",pod_uid=\"\",kind=\"voluntary\"} 9000006\n");
	/* page-faults: 300 and 600 counted half the time */
	CHECK_SUBSTR(t, "pmbpf_process_perf_events_total{pid=\"10\",comm=\"w\",cgroup=\"/c\","
			"event=\"page-faults\"} 1800\n");
	CHECK_SUBSTR(t, "pmbpf_cgroup_perf_event_enabled_seconds_total{cgroup=\"/c\",runtime=\"\","
			"container_id=\"\",pod_uid=\"\",event=\"page-faults\"} 0.000006000\n");
	CHECK_SUBSTR(t, "pmbpf_cgroup_cpu_seconds_total{cgroup=\"/c\",runtime=\"\","
			"container_id=\"\",pod_uid=\"\"} 0.003000002\n");
	/* an event that does not count has no series */
	CHECK(!strstr(t, "event=\"LLC-load-misses\"}"));
	/* -M: the last interval's value; a metric not supported here has no series */
	CHECK_SUBSTR(t, "pmbpf_cgroup_metric_ratio{cgroup=\"/c\",runtime=\"\",container_id=\"\","
			"pod_uid=\"\",metric=\"ipc\",figure=\"ipc\"} 2.5\n");
	CHECK_SUBSTR(t, "pmbpf_process_metric_ratio{pid=\"10\",comm=\"w\",cgroup=\"/c\","
			"metric=\"ipc\",figure=\"ipc\"} 2.5\n");
	CHECK(!strstr(t, "metric=\"topdown\",figure="));
	CHECK_SUBSTR(t, "pmbpf_metric_supported{metric=\"ipc\"} 1\n");
	CHECK_SUBSTR(t, "pmbpf_metric_supported{metric=\"topdown\"} 0\n");
	/* figures that share a family share its TYPE and its cardinality rule */
	{
		const struct figure *figs = catalog__figures(&nr);
		size_t i2;

		for (j = 0; j < nr; j++)
			for (i2 = j + 1; figs[j].prom && i2 < nr; i2++)
				if (figs[i2].prom && !strcmp(figs[j].prom, figs[i2].prom))
					CHECK(figs[j].kind == figs[i2].kind &&
					      figs[j].prom_cgroup_only ==
						      figs[i2].prom_cgroup_only &&
					      figs[j].prom_labels && figs[i2].prom_labels);
	}
	/* the families of cgroups, processes and threads are the catalog's, no others */
	sf = catalog__self(&nsf);
	for (const char *p = t; (p = strstr(p, "# TYPE pmbpf_")); p++) {
		const char *rest = p + strlen("# TYPE pmbpf_");
		const struct figure *figs;
		size_t len = strcspn(rest, " ");
		bool found = false;

		/* a self statistic (pmbpf_thread_fold) */
		for (j = 0; j < nsf; j++)
			found |= strlen(sf[j].prom) == len + 6 &&
				 !strncmp(sf[j].prom + 6, rest, len);
		if (found)
			continue;
		if (!strncmp(rest, "cgroup_", 7))
			rest += 7;
		else if (!strncmp(rest, "process_", 8))
			rest += 8;
		else if (!strncmp(rest, "thread_", 7))
			rest += 7;
		else
			continue;
		len = strcspn(rest, " ");
		figs = catalog__figures(&nr);
		for (j = 0; j < nr; j++)
			found |= (figs[j].outputs & OUT_PROM) && figs[j].prom &&
				 strlen(figs[j].prom) == len && !strncmp(figs[j].prom, rest, len);
		found |= strlen(catalog__overflow()->prom) == len &&
			 !strncmp(catalog__overflow()->prom, rest, len);
		check_record(found, __FILE__, __LINE__, "family %.*s is in the catalog", (int)len,
			     rest);
	}
	/* every self statistic of the catalog, spans_unmatched and flushes too */
	sf = catalog__self(&nr);
	for (j = 0; j < nr; j++) {
		double v = self_figure__value(&sf[j], &snap);

		if (!(sf[j].outputs & OUT_PROM))
			continue;
		snprintf(line, sizeof(line), "# HELP %s %s\n# TYPE %s %s\n", sf[j].prom, sf[j].help,
			 sf[j].prom, sf[j].kind == FIG_COUNTER ? "counter" : "gauge");
		/* serve's own: every family, but the clock events' (none here) */
		if (sf[j].src == SELF_SERVE) {
			if (sf[j].index == SERVE_SYSTEM_EVENT_SECONDS)
				CHECK(!strstr(t, line));
			else
				CHECK_SUBSTR(t, line);
			continue;
		}
		CHECK_SUBSTR(t, line);
		CHECK_NEAR(sample_of(t, sf[j].prom), strcmp(sf[j].unit, "ns") ? v : v / 1e9, 1e-12);
	}
	/* every family of the exposition is the catalog's: figures, self, CPI's, the delay pairs' */
	for (const char *p = t; (p = strstr(p, "# TYPE ")); p++) {
		const char *name = p + strlen("# TYPE ");
		size_t len = strcspn(name, " "), k, n;
		const struct prom_family *cf = catalog__cpi(&n);
		const struct figure *figs;
		bool found = false;
		char fam[128];

		for (k = 0; k < nsf; k++)
			found |= strlen(sf[k].prom) == len && !strncmp(sf[k].prom, name, len);
		for (k = 0; k < n; k++)
			found |= strlen(cf[k].prom) == len && !strncmp(cf[k].prom, name, len);
		figs = catalog__figures(&n);
		for (k = 0; k < n && !found; k++) {
			static const char *const what[] = { "cgroup", "process", "thread" };
			int w;

			for (w = 0; w < 3 && figs[k].prom; w++) {
				snprintf(fam, sizeof(fam), "pmbpf_%s_%s", what[w], figs[k].prom);
				found |= strlen(fam) == len && !strncmp(fam, name, len);
				if (figs[k].prom_time) {
					snprintf(fam, sizeof(fam), "pmbpf_%s_%s", what[w],
						 figs[k].prom_time);
					found |= strlen(fam) == len && !strncmp(fam, name, len);
				}
			}
		}
		snprintf(fam, sizeof(fam), "pmbpf_cgroup_%s", catalog__delay()->prom);
		found |= strlen(fam) == len && !strncmp(fam, name, len);
		snprintf(fam, sizeof(fam), "pmbpf_cgroup_%s", catalog__overflow()->prom);
		found |= strlen(fam) == len && !strncmp(fam, name, len);
		check_record(found, __FILE__, __LINE__, "family %.*s is in the catalog", (int)len,
			     name);
	}
	snprintf(line, sizeof(line), "\npmbpf_spans_unmatched_total %d\n",
		 11 * (PMBPF_STAT_SPAN_UNMATCHED + 1) + 1);
	CHECK_SUBSTR(t, line);
	snprintf(line, sizeof(line), "\npmbpf_flushes_total %d\n",
		 11 * (PMBPF_STAT_FLUSHES + 1) + 1);
	CHECK_SUBSTR(t, line);
	CHECK_SUBSTR(t, "\npmbpf_last_collection_seconds 0.001234567\n");
	CHECK_SUBSTR(t, "\npmbpf_vanished_processes_total 3\n");

	/* an interval the process does not run in: its counters stay, its gauges go */
	begin();
	snap.events = events4;
	snap.nr_events = 4;
	snap.metrics = &sel;
	cgroup(7, "/c", 0)->total = f[0];
	snap.wakeup_progs = false;
	t = render(ps);
	CHECK_SUBSTR(t, "pmbpf_process_cpu_seconds_total{pid=\"10\",comm=\"w\",cgroup=\"/c\"} "
			"0.003000002\n");
	/* no programs at wakeups (sched_info): no wakeup statistic, rather than a 0 */
	CHECK(!strstr(t, "pmbpf_sched_wakeups_total"));
	CHECK(!strstr(t, "pmbpf_process_metric_ratio{"));
	CHECK_SUBSTR(t, "pmbpf_cgroup_metric_ratio{cgroup=\"/c\",runtime=\"\",container_id=\"\","
			"pod_uid=\"\",metric=\"ipc\",figure=\"ipc\"} 2.5\n");
	/* without -M: the families are there, empty */
	begin();
	snap.metrics = NULL;
	t = render(ps);
	CHECK(!strstr(t, "pmbpf_metric_supported{"));
	CHECK(!strstr(t, "_metric_ratio{"));
	CHECK_SUBSTR(t, "# TYPE pmbpf_metric_supported gauge\n");
	prom__free(ps);
}

/* Clock events count ns: seconds in a _seconds_total family, never in the family of counts. */
static struct event_info clock_events[2];

static void test_clock_events(void)
{
	struct prom_opts o = { .top_k = 2, .grace_ns = 3 * S, .cgroup_exists = exists };
	struct prom_state *ps = prom__new(&o);
	const char *t = "", *line;
	struct cgroup_row *c;
	int k;

	memset(clock_events, 0, sizeof(clock_events));
	CHECK_EQ_INT(event__parse("task-clock", &clock_events[0].spec), 0);
	CHECK_EQ_INT(event__parse("page-faults", &clock_events[1].spec), 0);
	clock_events[0].state = clock_events[1].state = EVENT_COUNTING;
	for (k = 0; k < 2; k++) {
		begin();
		snap.events = clock_events;
		c = cgroup(7, "/c", 250);
		c->total.ev[0].value = 250000000; /* ns */
		c->total.ev[0].enabled = c->total.ev[0].running = 250000000;
		c->total.ev[1].value = 40;
		t = render(ps);
	}
	CHECK_SUBSTR(t, "# TYPE pmbpf_cgroup_perf_event_seconds_total counter\n");
	CHECK_SUBSTR(t, "pmbpf_cgroup_perf_event_seconds_total{cgroup=\"/c\",runtime=\"\","
			"container_id=\"\",pod_uid=\"\",event=\"task-clock\"} 0.5\n");
	CHECK_SUBSTR(t, "pmbpf_cgroup_perf_events_total{cgroup=\"/c\",runtime=\"\","
			"container_id=\"\",pod_uid=\"\",event=\"page-faults\"} 80\n");
	for (line = t; (line = strstr(line, "perf_events_total{")); line++)
		CHECK(strncmp(strstr(line, "event="), "event=\"task-clock\"", 18));
	CHECK(!strstr(t, "perf_event_seconds_total{cgroup=\"/c\",runtime=\"\",container_id=\"\","
			 "pod_uid=\"\",event=\"page-faults\"}"));
	prom__free(ps);
}

int main(void)
{
	memset(events, 0, sizeof(events));
	CHECK_EQ_INT(event__parse("cycles", &events[0].spec), 0);
	events[0].state = EVENT_NOT_SUPPORTED;
	events[0].slot = -1;
	CHECK_EQ_INT(event__parse("page-faults", &events[1].spec), 0);
	events[1].state = EVENT_COUNTING;
	memset(events4, 0, sizeof(events4));
	CHECK_EQ_INT(event__parse("cycles", &events4[0].spec), 0);
	CHECK_EQ_INT(event__parse("instructions", &events4[1].spec), 0);
	CHECK_EQ_INT(event__parse("page-faults", &events4[2].spec), 0);
	CHECK_EQ_INT(event__parse("LLC-load-misses", &events4[3].spec), 0);
	for (int i = 0; i < 4; i++)
		events4[i].state = i < 3 ? EVENT_COUNTING : EVENT_NOT_SUPPORTED;
	test_label_escaping();
	test_counters();
	test_histogram();
	test_top_k_and_grace();
	test_threads();
	test_removed_cgroup();
	test_catalog();
	test_clock_events();
	snapshot__free(&snap);
	strbuf__free(&out);
	return check_summary();
}
#endif
