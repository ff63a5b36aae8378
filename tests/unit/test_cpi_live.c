// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Live CPI outliers (user/account/cpi_live.[ch]): snapshots in, outliers and
 * suspects out. The series are made here: a victim whose signal rises in
 * proportion to an antagonist's CPU use from a known interval on.
 */
#include <string.h>
#include "check.h"
#include "cpi_live.h"

#define SEC   1000000000ULL
#define START 60 /* the interval the antagonist starts in */

static struct event_info events[2];
static struct snapshot snap;
static unsigned long long rng = 88172645463325252ULL;

/* xorshift64: the same series on every run */
static double uniform(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double)(rng >> 11) / (double)(1ULL << 53);
}

static void set_event(struct event_info *ev, const char *name, enum event_state state)
{
	memset(ev, 0, sizeof(*ev));
	CHECK_EQ_INT(event__parse(name, &ev->spec), 0);
	ev->state = state;
	ev->slot = state == EVENT_COUNTING ? 0 : -1;
}

/* cycles and instructions counting (a PMU), or not (the scheduler's stand-in). */
static void set_pmu(bool pmu)
{
	set_event(&events[0], "cycles", pmu ? EVENT_COUNTING : EVENT_NOT_SUPPORTED);
	set_event(&events[1], "instructions", pmu ? EVENT_COUNTING : EVENT_NOT_SUPPORTED);
	snap.events = events;
	snap.nr_events = 2;
	snap.interval_ns = SEC;
}

/* Figures of one interval: cpu in CPUs, the run-queue wait and the CPI. */
static void figures(struct figures *f, double cpu, double runq_avg_ns, double cpi)
{
	double ins = cpu * 1e9;

	memset(f, 0, sizeof(*f));
	f->n[PMBPF_N_ONCPU_NS] = (__u64)(cpu * SEC);
	f->n[PMBPF_N_RUNQ_COUNT] = 1000;
	f->n[PMBPF_N_RUNQ_TOTAL_NS] = (__u64)(runq_avg_ns * 1000);
	f->ev[0] =
		(struct pmbpf_reading){ .value = (__u64)(ins * cpi), .enabled = 1, .running = 1 };
	f->ev[1] = (struct pmbpf_reading){ .value = (__u64)ins, .enabled = 1, .running = 1 };
}

/* A cgroup of its own processes (procs of them), and one process in it. */
static void add(const char *path, __u64 id, __u32 pid, const char *comm, double cpu,
		double runq_avg_ns, double cpi)
{
	struct cgroup_row *c = snapshot__add_cgroup(&snap);
	struct proc_row *r = snapshot__add_row(&snap);

	c->id = id;
	c->path = path;
	c->nr_procs = c->nr_procs_total = 1;
	figures(&c->self, cpu, runq_avg_ns, cpi);
	c->total = c->self;
	r->pid = pid;
	snprintf(r->comm, sizeof(r->comm), "%s", comm);
	r->cgroup = path;
	r->cgroup_id = id;
	r->f = c->self;
}

/*
 * Interval t of a host: /p (no processes of its own) holds /p/victim and
 * /p/antagonist; /innocent uses a random amount of CPU. The victim (0.5
 * CPU) waits 200 us (+-10%) and, with strength > 0, from START on also
 * strength x 200 us per CPU the antagonist uses (0.3-0.9 CPU; before START
 * 0.01 CPU); its CPI rises the same way from 1.0.
 */
static void host(int t, double strength)
{
	double ant = t >= START && strength > 0 ? 0.3 + 0.6 * uniform() : 0.01;
	double noise = 1 + 0.2 * (uniform() - 0.5);
	double rise = strength * ant * (t >= START && strength > 0);
	struct cgroup_row *p;

	snapshot__reset(&snap);
	add("/p/victim", 11, 10, "victim", 0.5, 200e3 * noise * (1 + rise), noise * (1 + rise));
	add("/p/antagonist", 12, 20, "spin", ant, 50e3, 1.2);
	add("/innocent", 13, 30, "cc1", 0.2 + 0.6 * uniform(), 80e3 * noise, 0.9 * noise);
	add("/", 1, 1, "systemd", 0.06, 30e3, 2.0);
	/* the parent: its roll-up holds the antagonist, its own processes none */
	p = snapshot__add_cgroup(&snap);
	p->id = 2;
	p->path = "/p";
	p->nr_procs_total = 2;
	figures(&p->total, 0.5 + ant, 200e3 * noise * (1 + rise), 1);
}

static int rank_of(const struct cpi_outlier *x, const char *name)
{
	int i;

	for (i = 0; x && i < x->nr_suspects; i++)
		if (!strcmp(x->suspects[i].name, name))
			return i + 1;
	return 0;
}

/* A rise proportional to the antagonist's CPU: flagged within k intervals, antagonist first. */
static void test_rise(bool pmu)
{
	struct cpi_opts o = { .window = 30, .k = 3, .min_cpu = 0.05, .max_suspects = 5 };
	struct cpi_live *l = cpi_live__new(&o, true);
	int t, first = -1, first_proc = -1, flagged_others = 0;

	if (!CHECK(l))
		return;
	set_pmu(pmu);
	for (t = 0; t < START + 20; t++) {
		const struct cpi_outlier *x, *xp;

		host(t, 3);
		CHECK_EQ_INT(cpi_live__update(l, &snap), 0);
		x = cpi_live__cgroup(l, "/p/victim");
		xp = cpi_live__process(l, 10);
		flagged_others += cpi__nr_outliers(cpi_live__cgroups(l)) - !!x;
		if (x && first < 0) {
			first = t;
			CHECK_STR(x->suspects[0].name, "/p/antagonist");
			CHECK_EQ_INT(x->run, o.k);
			CHECK(x->value > x->threshold);
			CHECK(x->suspects[0].r > 0.5);
		}
		/* a parent is never its child's suspect: it has no processes of its own */
		CHECK_EQ_INT(rank_of(x, "/p"), 0);
		if (xp && first_proc < 0) {
			first_proc = t;
			CHECK_STR(xp->victim, "10 victim");
			CHECK_STR(xp->suspects[0].name, "20 spin");
		}
		CHECK(!cpi_live__process(l, 20));
	}
	CHECK_EQ_INT(cpi_live__signal(l), pmu ? CPI_SIGNAL_CPI : CPI_SIGNAL_RUNQ_AVG);
	/* k intervals of the rise: START, START + 1, START + 2 */
	CHECK_EQ_INT(first, START + o.k - 1);
	CHECK_EQ_INT(first_proc, START + o.k - 1);
	CHECK_EQ_INT(flagged_others, 0);
	cpi_live__free(l);
}

/* The same host without the rise: nothing flagged in 300 intervals. */
static void test_steady(void)
{
	struct cpi_opts o = { .window = 30, .k = 3, .min_cpu = 0.05, .max_suspects = 5 };
	struct cpi_live *l = cpi_live__new(&o, true);
	const struct cpi_detector *d;
	struct cpi_state st;
	int t, flags = 0, i, judged = 0;

	if (!CHECK(l))
		return;
	set_pmu(false);
	for (t = 0; t < 300; t++) {
		host(t, 0);
		CHECK_EQ_INT(cpi_live__update(l, &snap), 0);
		flags += cpi__nr_outliers(cpi_live__cgroups(l)) + !!cpi_live__process(l, 10);
	}
	CHECK_EQ_INT(flags, 0);
	/* the states serve exports: every cgroup of its own processes, with a baseline */
	d = cpi_live__cgroups(l);
	CHECK_EQ_INT(cpi__nr_names(d), 4);
	for (i = 0; i < cpi__nr_names(d); i++) {
		cpi__state(d, i, &st);
		CHECK(strcmp(st.name, "/p"));
		if (!strcmp(st.name, "/p/victim")) {
			judged++;
			CHECK_NEAR(st.base.mean, 200e3, 10e3);
			CHECK(st.threshold > st.base.mean && st.threshold < 1.3 * st.base.mean);
			CHECK_EQ_INT(st.base.n, o.window);
			CHECK_EQ_INT(st.run, 0);
		}
		/* the antagonist idles under --min-cpu: no sample, no baseline */
		if (!strcmp(st.name, "/p/antagonist")) {
			judged++;
			CHECK_NAN(st.value);
			CHECK_NAN(st.threshold);
		}
	}
	CHECK_EQ_INT(judged, 2);
	cpi_live__free(l);
}

/* cgroups only: no process is judged. */
static void test_no_procs(void)
{
	struct cpi_opts o = { .window = 20, .k = 2, .min_cpu = 0.05, .max_suspects = 5 };
	struct cpi_live *l = cpi_live__new(&o, false);
	int t;

	if (!CHECK(l))
		return;
	set_pmu(false);
	for (t = 0; t < START + 5; t++) {
		host(t, 3);
		CHECK_EQ_INT(cpi_live__update(l, &snap), 0);
	}
	CHECK(cpi_live__cgroup(l, "/p/victim"));
	CHECK(!cpi_live__process(l, 10));
	cpi_live__free(l);
	o.k = 21;
	CHECK(!cpi_live__new(&o, true));
}

int main(void)
{
	test_rise(false);
	test_rise(true);
	test_steady();
	test_no_procs();
	snapshot__free(&snap);
	return check_summary();
}
