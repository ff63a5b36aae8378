// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* pmbpf top's view logic: columns, filters, scope, sorting, cells and layout. */
#include <string.h>
#include "check.h"
#ifndef PMBPF_MINIMAL
#include "cpi_live.h"
#include "delay.h"
#include "top_view.h"

#define SEC 1000000000ULL

static struct event_info events[4];
static struct snapshot snap;

static void set_event(struct event_info *ev, const char *name, enum event_state state)
{
	memset(ev, 0, sizeof(*ev));
	CHECK_EQ_INT(event__parse(name, &ev->spec), 0);
	ev->state = state;
	ev->slot = state == EVENT_COUNTING ? 0 : -1;
}

static void add_proc(__u32 pid, const char *comm, const char *cgroup, __u64 cgid, __u64 oncpu,
		     __u64 clock_ns, __u64 faults, __u32 runq_slot)
{
	struct proc_row *r = snapshot__add_row(&snap);

	r->pid = pid;
	snprintf(r->comm, sizeof(r->comm), "%s", comm);
	r->cgroup = cgroup;
	r->cgroup_id = cgid;
	r->f.n[PMBPF_N_ONCPU_NS] = oncpu;
	r->f.n[PMBPF_N_NVCSW] = 3;
	r->f.n[PMBPF_N_NIVCSW] = 1;
	r->f.ev[2] = (struct pmbpf_reading){ .value = clock_ns, .enabled = 1, .running = 1 };
	r->f.ev[3] = (struct pmbpf_reading){ .value = faults, .enabled = 1, .running = 1 };
	if (runq_slot) {
		r->f.runq_hist[runq_slot] = 1;
		r->f.n[PMBPF_N_RUNQ_COUNT] = 1;
		r->f.runq_max_ns = 1000000000ULL;
	}
}

static void add_cgroup(__u64 id, const char *path, const char *runtime, const char *cid,
		       __u32 procs, __u64 oncpu)
{
	struct cgroup_row *c = snapshot__add_cgroup(&snap);

	c->id = id;
	c->path = path;
	snprintf(c->ci.runtime, sizeof(c->ci.runtime), "%s", runtime);
	snprintf(c->ci.id, sizeof(c->ci.id), "%s", cid);
	if (strlen(cid) == 12) /* a container's: its whole id */
		snprintf(c->ci.long_id, sizeof(c->ci.long_id), "%s%s", cid,
			 "cdef0123456789abcdef0123456789abcdef0123456789abcdef");
	c->nr_procs = c->nr_procs_total = procs;
	c->total.n[PMBPF_N_ONCPU_NS] = oncpu;
}

/*
 * A host without a PMU: cycles and LLC-load-misses are not supported,
 * task-clock and page-faults count. Half a second interval.
 */
static void build(void)
{
	set_event(&events[0], "cycles", EVENT_NOT_SUPPORTED);
	set_event(&events[1], "LLC-load-misses", EVENT_NOT_SUPPORTED);
	set_event(&events[2], "task-clock", EVENT_COUNTING);
	set_event(&events[3], "page-faults", EVENT_COUNTING);
	snap.events = events;
	snap.nr_events = 4;
	snap.interval_ns = SEC / 2;
	add_proc(0, "[idle]", "/", 1, SEC / 2, SEC / 2, 0, 0);
	add_proc(10, "alpha", "/a/b", 100, SEC / 4, SEC / 4, 0, 3);
	add_proc(20, "beta", "/a/bc", 200, SEC / 2, SEC / 2, 500, 0);
	add_proc(30, "gamma", "/system.slice/docker-0123456789abcdef.scope", 300, SEC / 10,
		 SEC / 10, 5000, 6);
	add_cgroup(1, "/", "", "", 4, SEC);
	add_cgroup(100, "/a/b", "", "", 1, SEC / 4);
	add_cgroup(200, "/a/bc", "", "", 1, SEC / 2);
	add_cgroup(300, "/system.slice/docker-0123456789abcdef.scope", "docker", "0123456789ab", 1,
		   SEC / 10);
	add_cgroup(400, "/system.slice/ssh.service", "systemd", "ssh.service", 0, 0);
}

static const char *user_fn(void *ctx, const struct proc_row *row)
{
	return row->pid == 20 ? "zed" : "root";
}

static int col(const struct top_view *v, const char *title)
{
	int i;

	for (i = 0; i < v->nr_cols; i++)
		if (!strcmp(v->cols[i].title, title))
			return i;
	return -1;
}

static const char *cell(struct top_view *v, size_t item, const char *title)
{
	static char buf[128];
	int c = col(v, title);

	if (c < 0 || item >= v->nr_items)
		return "(none)";
	top_view__cell(v, &snap, &v->items[item], &v->cols[c], buf, sizeof(buf));
	return buf;
}

static __u32 pid_at(const struct top_view *v, size_t i)
{
	return i < v->nr_items ? v->items[i].proc->pid : 999999;
}

static void test_helpers(void)
{
	char buf[32];

	CHECK(top_view__in_scope("/a/b", "/a/b"));
	CHECK(top_view__in_scope("/a/b/c", "/a/b"));
	CHECK(top_view__in_scope("/a/b/c", "/a/b/"));
	CHECK(!top_view__in_scope("/a/bc", "/a/b"));
	CHECK(!top_view__in_scope(NULL, "/a/b"));
	CHECK(top_view__in_scope(NULL, ""));
	CHECK(top_view__in_scope("/x", "/"));

	CHECK_STR(top_view__fmt_ns(buf, sizeof(buf), 850e3), "850us");
	CHECK_STR(top_view__fmt_ns(buf, sizeof(buf), 2.5e6), "2.5ms");
	CHECK_STR(top_view__fmt_ns(buf, sizeof(buf), 12.3e6), "12ms");
	CHECK_STR(top_view__fmt_ns(buf, sizeof(buf), 1.2e9), "1.20s");
	CHECK_STR(top_view__fmt_ns(buf, sizeof(buf), NAN), "-");

	CHECK_STR(top_view__container(&snap.cgroups[3], buf, sizeof(buf)), "docker:0123456789ab");
	CHECK(!top_view__container(&snap.cgroups[4], buf, sizeof(buf)));
	CHECK(!top_view__container(&snap.cgroups[1], buf, sizeof(buf)));
}

static void test_processes(void)
{
	struct top_view v;

	top_view__init(&v);
	top_view__columns(&v, &snap);
	CHECK(col(&v, "cycles/s") >= 0 && col(&v, "LLC-MPKI") >= 0 && col(&v, "task-clock/s") >= 0);
	CHECK(v.cols[col(&v, "cycles/s")].prio < v.cols[col(&v, "task-clock/s")].prio);

	CHECK_EQ_INT(top_view__build(&v, &snap, user_fn, NULL), 0);
	/* idle hidden; sorted by CPU%, high first */
	CHECK_EQ_U64(v.nr_items, 3);
	CHECK_EQ_U64(v.nr_candidates, 3);
	CHECK_EQ_U64(pid_at(&v, 0), 20);
	CHECK_EQ_U64(pid_at(&v, 1), 10);
	CHECK_EQ_U64(pid_at(&v, 2), 30);

	/* figures: a dash where an event does not count, never 0 */
	CHECK_STR(cell(&v, 0, "CPU%"), "100.0");
	CHECK_STR(cell(&v, 0, "cycles/s"), "-");
	CHECK_STR(cell(&v, 0, "LLC-MPKI"), "-");
	CHECK_STR(cell(&v, 0, "IPC"), "-");
	CHECK_STR(cell(&v, 0, "task-clock/s"), "1.00s");
	CHECK_STR(cell(&v, 1, "task-clock/s"), "500ms");
	CHECK_STR(cell(&v, 0, "page-faults/s"), "1000");
	CHECK_STR(cell(&v, 1, "page-faults/s"), "0");
	CHECK_STR(cell(&v, 0, "CSW/s"), "8");
	CHECK_STR(cell(&v, 0, "RUNQ-p99"), "-");
	CHECK_STR(cell(&v, 1, "RUNQ-p99"), "16us");
	CHECK_STR(cell(&v, 0, "USER"), "zed");
	CHECK_STR(cell(&v, 2, "CGROUP"), "docker:0123456789ab");
	CHECK_STR(cell(&v, 1, "CGROUP"), "/a/b");

	/* reverse: low first */
	v.sort[0].reverse = true;
	top_view__sort(&v);
	CHECK_EQ_U64(pid_at(&v, 0), 30);

	/* a figure some rows lack sorts them last, in both directions */
	top_view__set_sort(&v, col(&v, "RUNQ-p99"));
	top_view__build(&v, &snap, user_fn, NULL);
	CHECK_EQ_U64(pid_at(&v, 0), 30);
	CHECK_EQ_U64(pid_at(&v, 2), 20);
	v.sort[0].reverse = true;
	top_view__sort(&v);
	CHECK_EQ_U64(pid_at(&v, 0), 10);
	CHECK_EQ_U64(pid_at(&v, 2), 20);

	/* text columns sort A to Z */
	top_view__set_sort(&v, col(&v, "USER"));
	top_view__build(&v, &snap, user_fn, NULL);
	CHECK_EQ_U64(pid_at(&v, 2), 20);
	top_view__set_sort(&v, col(&v, "page-faults/s"));
	top_view__build(&v, &snap, user_fn, NULL);
	CHECK_EQ_U64(pid_at(&v, 0), 30);
	CHECK_EQ_INT(top_view__sort_col(&v), col(&v, "page-faults/s"));

	/* filters: command (case-insensitive), container id, scope; idle on demand */
	snprintf(v.comm_filter, sizeof(v.comm_filter), "ALP");
	top_view__build(&v, &snap, user_fn, NULL);
	CHECK_EQ_U64(v.nr_items, 1);
	CHECK_EQ_U64(pid_at(&v, 0), 10);
	v.comm_filter[0] = '\0';
	snprintf(v.cg_filter, sizeof(v.cg_filter), "56789ab");
	top_view__build(&v, &snap, user_fn, NULL);
	CHECK_EQ_U64(v.nr_items, 1);
	CHECK_EQ_U64(pid_at(&v, 0), 30);
	/* more digits than the 12 shown: the id's prefix, as -G takes it */
	snprintf(v.cg_filter, sizeof(v.cg_filter), "0123456789ABCDEF01");
	top_view__build(&v, &snap, user_fn, NULL);
	CHECK_EQ_U64(v.nr_items, 1);
	CHECK_EQ_U64(pid_at(&v, 0), 30);
	snprintf(v.cg_filter, sizeof(v.cg_filter), "0123456789abcdef02");
	top_view__build(&v, &snap, user_fn, NULL);
	CHECK_EQ_U64(v.nr_items, 0);
	v.cg_filter[0] = '\0';
	snprintf(v.scope, sizeof(v.scope), "/a/b");
	top_view__build(&v, &snap, user_fn, NULL);
	CHECK_EQ_U64(v.nr_items, 1);
	CHECK_EQ_U64(pid_at(&v, 0), 10);
	v.scope[0] = '\0';
	v.show_idle = true;
	top_view__build(&v, &snap, user_fn, NULL);
	CHECK_EQ_U64(v.nr_items, 4);
	top_view__free(&v);
}

static void test_cgroups(void)
{
	struct top_view v;

	top_view__init(&v);
	v.by_cgroup = true;
	top_view__columns(&v, &snap);
	CHECK(col(&v, "PID") < 0 && col(&v, "PROCS") >= 0 && col(&v, "CONTAINER") >= 0);
	top_view__build(&v, &snap, NULL, NULL);
	CHECK_EQ_U64(v.nr_items, 5);
	CHECK_STR(v.items[0].cg->path, "/");
	CHECK_STR(cell(&v, 0, "CPU%"), "200.0");
	CHECK_STR(cell(&v, 0, "PROCS"), "4");
	snprintf(v.scope, sizeof(v.scope), "/system.slice");
	top_view__build(&v, &snap, NULL, NULL);
	CHECK_EQ_U64(v.nr_items, 2);
	CHECK_STR(cell(&v, 0, "CONTAINER"), "docker:0123456789ab");
	CHECK_STR(cell(&v, 1, "CONTAINER"), "-");
	top_view__free(&v);
}

/* A cgroup whose processes found the counts map full says so after PROCS. */
static void test_overflow_mark(void)
{
	struct top_view v;
	size_t i;

	top_view__init(&v);
	v.by_cgroup = true;
	top_view__columns(&v, &snap);
	snap.cgroups[0].overflow_procs_total = 7;
	top_view__build(&v, &snap, NULL, NULL);
	for (i = 0; i < v.nr_items && v.items[i].cg != &snap.cgroups[0]; i++)
		;
	CHECK(i < v.nr_items);
	if (i < v.nr_items)
		CHECK_STR(cell(&v, i, "PROCS"), "4+");
	snap.cgroups[0].overflow_procs_total = 0;
	top_view__build(&v, &snap, NULL, NULL);
	CHECK_STR(cell(&v, 0, "PROCS"), "4");
	top_view__free(&v);
}

/*
 * -M metrics (issue 13): a column per value, after MPKI; a metric this host
 * does not support can only show '-' and is among the first to go.
 * task-clock and page-faults stand in for the group of -M ipc.
 */
static void test_metric_columns(void)
{
	const struct metric_def *defs;
	struct metric_sel sel = {};
	bool shown[TOP_MAX_COLS];
	struct top_view v;
	int i, nr;

	CHECK_EQ_INT(metrics__parse("ipc,topdown", &sel), 0);
	defs = metrics__defs(&nr);
	for (i = 0; i < nr; i++)
		if (!strcmp(defs[i].metric, "ipc"))
			sel.m[0].def = &defs[i];
	sel.m[0].first = 2;
	sel.m[0].nr_events = 2;
	snap.metrics = &sel;
	top_view__init(&v);
	top_view__columns(&v, &snap);
	CHECK(col(&v, "ipc") > col(&v, "LLC-MPKI") && col(&v, "ipc") < col(&v, "CSW/s"));
	CHECK(col(&v, "retiring") > col(&v, "ipc") && col(&v, "backend_memory") > 0);
	CHECK(v.cols[col(&v, "ipc")].prio > v.cols[col(&v, "retiring")].prio);
	CHECK_EQ_INT(top_view__build(&v, &snap, user_fn, NULL), 0);
	/* page-faults per task-clock ns: gamma 5000 / 1e8, beta 500 / 5e8, alpha 0 */
	top_view__set_sort(&v, col(&v, "ipc"));
	top_view__build(&v, &snap, user_fn, NULL);
	CHECK_EQ_U64(pid_at(&v, 0), 30);
	CHECK_EQ_U64(pid_at(&v, 1), 20);
	CHECK_STR(cell(&v, 2, "ipc"), "0.0000");
	CHECK_STR(cell(&v, 0, "retiring"), "-");
	top_view__layout(&v, 100, shown);
	CHECK(!shown[col(&v, "retiring")] && shown[col(&v, "CPU%")]);
	top_view__free(&v);
	snap.metrics = NULL;
}

static void test_layout(void)
{
	bool shown[TOP_MAX_COLS];
	struct top_view v;
	int i, flex, total = -1;

	top_view__init(&v);
	top_view__columns(&v, &snap);
	flex = top_view__layout(&v, 200, shown);
	for (i = 0; i < v.nr_cols; i++)
		CHECK(shown[i]);
	for (i = 0; i < v.nr_cols; i++)
		total += (v.cols[i].flex ? flex : v.cols[i].width) + 1;
	CHECK_EQ_INT(total, 200);

	/* narrow: what cannot count goes first, PID, CPU% and COMMAND stay */
	flex = top_view__layout(&v, 60, shown);
	CHECK(!shown[col(&v, "cycles/s")] && !shown[col(&v, "LLC-MPKI")] && !shown[col(&v, "IPC")]);
	CHECK(shown[col(&v, "PID")] && shown[col(&v, "CPU%")] && shown[col(&v, "COMMAND")]);
	for (i = 0, total = -1; i < v.nr_cols; i++)
		if (shown[i])
			total += (v.cols[i].flex ? flex : v.cols[i].width) + 1;
	CHECK(total <= 60);
	top_view__layout(&v, 20, shown);
	CHECK(shown[col(&v, "PID")]);

	/*
	 * issue 34: at 80 columns the most useful stay: run-queue latency and
	 * switches before event rates, event rates in the order given, and
	 * task-clock/s (what CPU% shows) first to go of those that count
	 */
	top_view__layout(&v, 80, shown);
	CHECK(shown[col(&v, "RUNQ-p99")] && shown[col(&v, "CSW/s")] &&
	      shown[col(&v, "page-faults/s")] && shown[col(&v, "CGROUP")]);
	CHECK(!shown[col(&v, "task-clock/s")] && !shown[col(&v, "USER")]);
	/* and the column sorted by is never dropped, even one that shows only '-' */
	top_view__set_sort(&v, col(&v, "task-clock/s"));
	top_view__layout(&v, 80, shown);
	CHECK(shown[col(&v, "task-clock/s")] && shown[col(&v, "CPU%")]);
	top_view__set_sort(&v, col(&v, "LLC-MPKI"));
	flex = top_view__layout(&v, 40, shown);
	CHECK(shown[col(&v, "LLC-MPKI")]);
	for (i = 0, total = -1; i < v.nr_cols; i++)
		if (shown[i])
			total += (v.cols[i].flex ? flex : v.cols[i].width) + 1;
	CHECK(total <= 40);
	top_view__layout(&v, 5, shown);
	CHECK(shown[col(&v, "LLC-MPKI")]);
	top_view__free(&v);
}

/*
 * The CPI! column and the selected row's line. A detector sees 20 steady
 * intervals of alpha (pid 10, in /a/b: 0.5 CPU, waits 95 and 105 us in
 * turn: mean 100 us, sample sd 5.13 us, threshold 110.26 us) while beta
 * (pid 20, in /a/bc) idles, then 2 of alpha waiting 2000 us while beta uses
 * 0.8 CPU: alpha and /a/b are outliers (k = 2), 18.1x their threshold, and
 * beta and /a/bc their only suspects (r 0.99997: beta's CPU has two
 * values, and alpha's waits vary by 5 us around each of its two levels).
 */
static void test_cpi(void)
{
	struct cpi_opts o = { .window = 20, .k = 2, .min_cpu = 0.05, .max_suspects = 5 };
	struct cpi_live *l = cpi_live__new(&o, true);
	struct snapshot h = { .events = events, .nr_events = 4, .interval_ns = SEC };
	struct top_view v;
	char line[512];
	bool shown[TOP_MAX_COLS];
	int t, c;

	if (!CHECK(l))
		return;
	for (t = 0; t < 22; t++) {
		double wait = t >= 20 ? 2000e3 : t % 2 ? 105e3 : 95e3, beta = t >= 20 ? 0.8 : 0.01;
		const char *path[] = { "/a/b", "/a/bc" };
		int i;

		snapshot__reset(&h);
		for (i = 0; i < 2; i++) {
			struct proc_row *r = snapshot__add_row(&h);
			struct cgroup_row *cg = snapshot__add_cgroup(&h);

			r->pid = i ? 20 : 10;
			snprintf(r->comm, sizeof(r->comm), "%s", i ? "beta" : "alpha");
			r->cgroup = path[i];
			r->cgroup_id = i ? 200 : 100;
			r->f.n[PMBPF_N_ONCPU_NS] = (__u64)((i ? beta : 0.5) * SEC);
			r->f.n[PMBPF_N_RUNQ_COUNT] = 100;
			r->f.n[PMBPF_N_RUNQ_TOTAL_NS] = (__u64)(100 * (i ? 50e3 : wait));
			cg->id = r->cgroup_id;
			cg->path = path[i];
			cg->nr_procs = cg->nr_procs_total = 1;
			cg->self = cg->total = r->f;
		}
		CHECK_EQ_INT(cpi_live__update(l, &h), 0);
	}
	snapshot__free(&h);

	top_view__init(&v);
	top_view__columns(&v, &snap);
	CHECK_EQ_INT(col(&v, "CPI!"), -1); /* no detector, no column */
	v.cpi = l;
	top_view__columns(&v, &snap);
	c = col(&v, "CPI!");
	CHECK(c >= 0);
	CHECK_EQ_INT(top_view__build(&v, &snap, user_fn, NULL), 0);
	/* sorted by it: the outlier first, the others after it */
	top_view__set_sort(&v, c);
	top_view__build(&v, &snap, user_fn, NULL);
	CHECK_EQ_INT(pid_at(&v, 0), 10);
	CHECK_STR(cell(&v, 0, "CPI!"), "18x");
	CHECK_STR(cell(&v, 1, "CPI!"), "-");
	CHECK(top_view__cpi_line(&v, &snap, &v.items[0], line, sizeof(line)));
	CHECK_STR(line, "10 alpha outlier: run-queue wait 2000.0 us above 110.3 us (mean 100.0 us, "
			"sd 5.1 us of 20 intervals) for 2 intervals; suspects: 20 beta (r +1.00)");
	CHECK(!top_view__cpi_line(&v, &snap, &v.items[1], line, sizeof(line)));
	CHECK_STR(line, "");
	/* a short buffer: cut, not overrun */
	CHECK(top_view__cpi_line(&v, &snap, &v.items[0], line, 12));
	CHECK_STR(line, "10 alpha ou");
	/* a narrow terminal drops it before the CPU-time columns, unless sorted by it */
	top_view__layout(&v, 70, shown);
	CHECK(shown[c]);
	top_view__sort_cpu(&v);
	top_view__layout(&v, 70, shown);
	CHECK(!shown[c]);
	CHECK(shown[col(&v, "CPU%")]);

	v.by_cgroup = true;
	top_view__columns(&v, &snap);
	top_view__set_sort(&v, col(&v, "CPI!"));
	top_view__build(&v, &snap, NULL, NULL);
	CHECK_STR(v.items[0].cg->path, "/a/b");
	CHECK_STR(cell(&v, 0, "CPI!"), "18x");
	CHECK(top_view__cpi_line(&v, &snap, &v.items[0], line, sizeof(line)));
	CHECK(!strncmp(line, "/a/b outlier: run-queue wait 2000.0 us above 110.3 us", 53));
	CHECK(strstr(line, "; suspects: /a/bc (r +1.00)"));
	/* with delays: what each suspect caused the outlier, as evidence */
	{
		struct delay_pair dp[2] = {
			{ .pid = 10, .cgroup_id = 0, .by_pid = 20, .ns = 3000000, .waits = 3 },
			{ .pid = 11, .by_pid = 12, .ns = 5000 },
		};

		snap.delays = dp;
		snap.nr_delays = 2;
		snap.delays_on = true;
		dp[0].cgroup_id = v.items[0].cg->id;
		dp[0].by_cgroup = "/a/bc";
		CHECK(top_view__cpi_line(&v, &snap, &v.items[0], line, sizeof(line)));
		CHECK(strstr(line, "; suspects: /a/bc (r +1.00, delayed it 3.0ms)"));
		v.by_cgroup = false;
		top_view__columns(&v, &snap);
		top_view__set_sort(&v, col(&v, "CPI!"));
		top_view__build(&v, &snap, user_fn, NULL);
		dp[0].cgroup_id = v.items[0].proc->cgroup_id;
		CHECK(top_view__cpi_line(&v, &snap, &v.items[0], line, sizeof(line)));
		CHECK(strstr(line, "; suspects: 20 beta (r +1.00, delayed it 3.0ms)"));
		snap.delays = NULL;
		snap.nr_delays = 0;
		snap.delays_on = false;
	}
	top_view__free(&v);
	cpi_live__free(l);
}

int main(void)
{
	build();
	test_cpi();
	test_helpers();
	test_processes();
	test_cgroups();
	test_overflow_mark();
	test_layout();
	test_metric_columns();
	snapshot__free(&snap);
	return check_summary();
}
#else
int main(void)
{
	/* pmbpf top is not in static (PMBPF_MINIMAL) builds */
	return check_summary();
}
#endif
