// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Multiplex scaling, coverage and the derived figures of a row. */
#include <errno.h>
#include <string.h>
#include "check.h"
#include "metrics.h"

#define TOL 1e-9

static struct pmbpf_reading rd(__u64 value, __u64 enabled, __u64 running)
{
	struct pmbpf_reading r = { .value = value, .enabled = enabled, .running = running };

	return r;
}

static void set_event(struct event_info *ev, const char *name, enum event_state state)
{
	memset(ev, 0, sizeof(*ev));
	CHECK_EQ_INT(event__parse(name, &ev->spec), 0);
	ev->state = state;
	ev->slot = state == EVENT_COUNTING ? 0 : -1;
	ev->err = state == EVENT_COUNTING ? 0 : ENOENT;
}

static void test_scaled(void)
{
	struct pmbpf_reading r;

	r = rd(100, 50, 50);
	CHECK_NEAR(reading__scaled(&r), 100, TOL);
	r = rd(0, 0, 0);
	CHECK_NEAR(reading__scaled(&r), 0, TOL);
	/* counted a quarter of the time: scaled up four times */
	r = rd(100, 200, 50);
	CHECK_NEAR(reading__scaled(&r), 400, TOL);
	r = rd(3, 3000000000ULL, 1000000000ULL);
	CHECK_NEAR(reading__scaled(&r), 9, TOL);
	/* large counts keep their precision */
	r = rd(1ULL << 52, 1000, 1000);
	CHECK_NEAR(reading__scaled(&r), 4503599627370496.0, 0);
	/* enabled but never running: nothing was measured */
	r = rd(0, 100, 0);
	CHECK_NAN(reading__scaled(&r));
	r = rd(5, 100, 0);
	CHECK_NAN(reading__scaled(&r));
}

static void test_coverage(void)
{
	struct pmbpf_reading r;

	r = rd(100, 200, 50);
	CHECK_NEAR(reading__coverage(&r), 0.25, TOL);
	r = rd(100, 200, 200);
	CHECK_NEAR(reading__coverage(&r), 1, TOL);
	r = rd(0, 0, 0);
	CHECK_NEAR(reading__coverage(&r), 1, TOL);
	r = rd(0, 100, 0);
	CHECK_NEAR(reading__coverage(&r), 0, TOL);
	/* running a little over enabled (two reads racing): clamped to 1 */
	r = rd(10, 100, 101);
	CHECK_NEAR(reading__coverage(&r), 1, TOL);
}

static void test_ratio(void)
{
	CHECK_NEAR(ratio(1, 2), 0.5, TOL);
	CHECK_NEAR(ratio(0, 5), 0, TOL);
	CHECK_NAN(ratio(1, 0));
	CHECK_NAN(ratio(0, 0));
	CHECK_NAN(ratio(1, -1));
	CHECK_NAN(ratio(NAN, 1));
	CHECK_NAN(ratio(1, NAN));
	CHECK_NAN(ratio(INFINITY, 1));
	CHECK_NAN(ratio(1, INFINITY));
}

static void test_find_kind(void)
{
	struct event_info ev[4];

	set_event(&ev[0], "cycles", EVENT_NOT_SUPPORTED);
	set_event(&ev[1], "instructions", EVENT_COUNTING);
	set_event(&ev[2], "cpu-cycles", EVENT_COUNTING);
	set_event(&ev[3], "LLC-load-misses", EVENT_COUNTING);
	CHECK_EQ_INT(events__find_kind(ev, 4, EVENT_CYCLES), 2);
	CHECK_EQ_INT(events__find_kind(ev, 4, EVENT_INSTRUCTIONS), 1);
	CHECK_EQ_INT(events__find_kind(ev, 4, EVENT_MISS), 3);
	CHECK_EQ_INT(events__find_kind(ev, 4, EVENT_TIME), -1);
	CHECK_EQ_INT(events__find_kind(ev, 2, EVENT_CYCLES), -1);
	CHECK_EQ_INT(events__find_kind(ev, 0, EVENT_INSTRUCTIONS), -1);
}

/* A snapshot of 1 s with cycles, instructions, LLC-load-misses, dTLB-load-misses, task-clock. */
static struct event_info events[5];
static struct snapshot snap;

static void setup(enum event_state cyc, enum event_state ins, enum event_state dtlb)
{
	set_event(&events[0], "cycles", cyc);
	set_event(&events[1], "instructions", ins);
	set_event(&events[2], "LLC-load-misses", EVENT_COUNTING);
	set_event(&events[3], "dTLB-load-misses", dtlb);
	set_event(&events[4], "task-clock", EVENT_COUNTING);
	memset(&snap, 0, sizeof(snap));
	snap.interval_ns = 1000000000ULL;
	snap.nr_cpus = 4;
	snap.nr_events = 5;
	snap.events = events;
	snap.attach = "tp_btf";
}

static void test_row(void)
{
	struct row_metrics m;
	struct proc_row row;
	int i;

	setup(EVENT_COUNTING, EVENT_COUNTING, EVENT_NOT_SUPPORTED);
	memset(&row, 0, sizeof(row));
	row.pid = 42;
	row.f.n[PMBPF_N_ONCPU_NS] = 250000000ULL;
	row.f.ev[0] = rd(2000000, 1000000, 1000000);
	row.f.ev[1] = rd(3000000, 1000000, 1000000);
	row.f.ev[2] = rd(600, 1000000, 500000); /* scaled: 1200 */
	row.f.ev[3] = rd(77, 1000000, 1000000); /* not counting: ignored */
	row.f.ev[4] = rd(250000000, 250000000, 250000000);
	metrics__row(&snap, &row, &m);
	CHECK_NEAR(m.cpu_pct, 25, TOL);
	CHECK_NEAR(m.count[0], 2000000, TOL);
	CHECK_NEAR(m.count[1], 3000000, TOL);
	CHECK_NEAR(m.count[2], 1200, TOL);
	CHECK_NAN(m.count[3]);
	CHECK_NEAR(m.count[4], 250000000, TOL);
	CHECK_NEAR(m.coverage[0], 1, TOL);
	CHECK_NEAR(m.coverage[2], 0.5, TOL);
	CHECK_NAN(m.coverage[3]);
	CHECK_NEAR(m.ipc, 1.5, TOL);
	/* MPKI = misses x 1000 / instructions */
	CHECK_NEAR(m.mpki[2], 0.4, TOL);
	CHECK_NAN(m.mpki[3]);
	CHECK_NAN(m.mpki[0]);
	CHECK_NAN(m.mpki[1]);
	CHECK_NAN(m.mpki[4]);
	CHECK_NEAR(m.min_coverage, 0.5, TOL);
	for (i = 5; i < PMBPF_MAX_EVENTS; i++) {
		CHECK_NAN(m.count[i]);
		CHECK_NAN(m.coverage[i]);
		CHECK_NAN(m.mpki[i]);
	}

	/* both multiplexed differently: each scaled before the ratio */
	row.f.ev[0] = rd(1000, 1000, 500);
	row.f.ev[1] = rd(1000, 1000, 250);
	metrics__row(&snap, &row, &m);
	CHECK_NEAR(m.ipc, 2, TOL);
	CHECK_NEAR(m.min_coverage, 0.25, TOL);
	CHECK_NEAR(m.mpki[2], 1200 * 1000.0 / 4000, TOL);

	/* cycles never running: IPC unknown, not 0 or inf */
	row.f.ev[0] = rd(0, 1000, 0);
	row.f.ev[1] = rd(5000, 1000, 1000);
	metrics__row(&snap, &row, &m);
	CHECK_NAN(m.count[0]);
	CHECK_NAN(m.ipc);
	CHECK_NEAR(m.min_coverage, 0, TOL);
	CHECK_NEAR(m.mpki[2], 1200 * 1000.0 / 5000, TOL);

	/* instructions never running: IPC and MPKI unknown */
	row.f.ev[0] = rd(5000, 1000, 1000);
	row.f.ev[1] = rd(0, 1000, 0);
	metrics__row(&snap, &row, &m);
	CHECK_NAN(m.ipc);
	CHECK_NAN(m.mpki[2]);

	/* no cycles counted in the interval: IPC unknown, not inf */
	row.f.ev[0] = rd(0, 0, 0);
	row.f.ev[1] = rd(5000, 1000, 1000);
	metrics__row(&snap, &row, &m);
	CHECK_NAN(m.ipc);

	/* no instructions: IPC is a true 0, MPKI unknown (not inf) */
	row.f.ev[0] = rd(5000, 1000, 1000);
	row.f.ev[1] = rd(0, 1000, 1000);
	metrics__row(&snap, &row, &m);
	CHECK_NEAR(m.ipc, 0, 0);
	CHECK_NAN(m.mpki[2]);

	/* interval of zero length: CPU% unknown */
	snap.interval_ns = 0;
	metrics__row(&snap, &row, &m);
	CHECK_NAN(m.cpu_pct);
	snap.interval_ns = 500000000ULL;
	row.f.n[PMBPF_N_ONCPU_NS] = 1000000000ULL; /* two CPUs busy */
	metrics__row(&snap, &row, &m);
	CHECK_NEAR(m.cpu_pct, 200, TOL);
}

static void test_row_not_counting(void)
{
	struct row_metrics m;
	struct proc_row row;
	int i;

	memset(&row, 0, sizeof(row));
	for (i = 0; i < 5; i++)
		row.f.ev[i] = rd(1000 * (i + 1), 1000, 1000);

	/* the readings of an event that is not counting are never used */
	setup(EVENT_NOT_SUPPORTED, EVENT_COUNTING, EVENT_COUNTING);
	metrics__row(&snap, &row, &m);
	CHECK_NAN(m.ipc);
	CHECK_NAN(m.count[0]);
	CHECK_NEAR(m.mpki[2], 3000 * 1000.0 / 2000, TOL);
	CHECK_NEAR(m.mpki[3], 4000 * 1000.0 / 2000, TOL);

	setup(EVENT_COUNTING, EVENT_PERMISSION_DENIED, EVENT_COUNTING);
	metrics__row(&snap, &row, &m);
	CHECK_NAN(m.ipc);
	CHECK_NAN(m.mpki[2]);
	CHECK_NAN(m.mpki[3]);

	setup(EVENT_ERROR, EVENT_INVALID, EVENT_COUNTING);
	metrics__row(&snap, &row, &m);
	CHECK_NAN(m.ipc);

	/* no counting event at all: min_coverage unknown */
	setup(EVENT_NOT_SUPPORTED, EVENT_NOT_SUPPORTED, EVENT_NOT_SUPPORTED);
	events[2].state = EVENT_NOT_SUPPORTED;
	events[4].state = EVENT_NOT_SUPPORTED;
	metrics__row(&snap, &row, &m);
	CHECK_NAN(m.min_coverage);
	CHECK_NAN(m.ipc);
	for (i = 0; i < PMBPF_MAX_EVENTS; i++) {
		CHECK_NAN(m.count[i]);
		CHECK_NAN(m.mpki[i]);
	}

	/* no events configured */
	setup(EVENT_COUNTING, EVENT_COUNTING, EVENT_COUNTING);
	snap.nr_events = 0;
	row.f.n[PMBPF_N_ONCPU_NS] = 100000000ULL;
	metrics__row(&snap, &row, &m);
	CHECK_NAN(m.ipc);
	CHECK_NAN(m.min_coverage);
	CHECK_NEAR(m.cpu_pct, 10, TOL);

	/* cycles found wherever it is in the list: IPC from cpu-cycles */
	set_event(&events[0], "cpu-cycles", EVENT_NOT_SUPPORTED);
	set_event(&events[1], "LLC-load-misses", EVENT_COUNTING);
	set_event(&events[2], "instructions", EVENT_COUNTING);
	set_event(&events[3], "cycles", EVENT_COUNTING);
	snap.nr_events = 4;
	metrics__row(&snap, &row, &m);
	CHECK_NEAR(m.ipc, 3000.0 / 4000, TOL);
	CHECK_NEAR(m.mpki[1], 2000 * 1000.0 / 3000, TOL);
}

static void test_system(void)
{
	struct row_metrics m;

	setup(EVENT_COUNTING, EVENT_COUNTING, EVENT_COUNTING);
	snap.system[0] = rd(8000, 100, 100);
	snap.system[1] = rd(4000, 100, 50);
	snap.system[2] = rd(8, 100, 100);
	snap.system[3] = rd(0, 100, 100);
	snap.system[4] = rd(400, 100, 100);
	metrics__system(&snap, &m);
	CHECK_NAN(m.cpu_pct);
	CHECK_NEAR(m.count[1], 8000, TOL);
	CHECK_NEAR(m.ipc, 1, TOL);
	CHECK_NEAR(m.mpki[2], 1, TOL);
	CHECK_NEAR(m.mpki[3], 0, 0);
	CHECK_NEAR(m.min_coverage, 0.5, TOL);
}

static const struct metric_def *def_of(const char *metric, const char *family)
{
	const struct metric_def *d;
	int i, nr;

	d = metrics__defs(&nr);
	for (i = 0; i < nr; i++)
		if (!strcmp(d[i].metric, metric) && !strcmp(d[i].family, family))
			return &d[i];
	CHECK(!"metric definition missing");
	return NULL;
}

/* Each formula against values computed by hand from made-up counts. */
static void test_formulas(void)
{
	const struct metric_def *d;
	double out[METRIC_MAX_VALUES];

	d = def_of("ipc", "any");
	if (d) {
		double c[] = { 4000, 1000 }; /* cycles, instructions */

		d->compute(c, 0, out);
		CHECK_NEAR(out[0], 0.25, TOL);
	}
	d = def_of("mpki", "any");
	if (d) {
		double c[] = { 2000000, 3000 }; /* instructions, LLC-load-misses */

		d->compute(c, 0, out);
		CHECK_NEAR(out[0], 1.5, TOL);
	}
	d = def_of("topdown", "neoverse-n1-v1");
	if (d) {
		/* cycles 1000, fe 200, be 300 (mem 120), mispredicted 5 of 100 branches */
		double c[] = { 1000, 200, 300, 120, 5, 100 };

		d->compute(c, 0, out);
		CHECK_NEAR(out[0], 0.5, TOL); /* 1 - 0.2 - 0.3 */
		CHECK_NEAR(out[1], 0.05, TOL);
		CHECK_NEAR(out[2], 0.2, TOL);
		CHECK_NEAR(out[3], 0.3, TOL);
		CHECK_NEAR(out[4], 0.12, TOL);
	}
	d = def_of("topdown", "neoverse-n2-v2");
	if (d) {
		/*
		 * 5 slots x 1000 cycles = 5000; stall_slot 2000 (fe 1200, be 800);
		 * op_retired/op_spec = 2400/3000 = 0.8; used share 1 - 2000/5000 = 0.6
		 */
		double c[] = { 1000, 2000, 1200, 800, 2400, 3000 };

		d->compute(c, 5, out);
		CHECK_NEAR(out[0], 0.48, TOL); /* 0.8 x 0.6 */
		CHECK_NEAR(out[1], 0.12, TOL); /* 0.2 x 0.6 */
		CHECK_NEAR(out[2], 0.24, TOL);
		CHECK_NEAR(out[3], 0.16, TOL);
		CHECK_NAN(out[4]);
		CHECK_NEAR(out[0] + out[1] + out[2] + out[3], 1.0, TOL);
	}
	d = def_of("topdown", "intel-topdown-v1");
	if (d) {
		/* total 4000 slots, issued 2600, retired 2000, fetch bubbles 800, recovery 200 */
		double c[] = { 4000, 2600, 2000, 800, 200 };

		d->compute(c, 0, out);
		CHECK_NEAR(out[0], 0.5, TOL);
		CHECK_NEAR(out[1], 0.2, TOL); /* (2600 - 2000 + 200) / 4000 */
		CHECK_NEAR(out[2], 0.2, TOL);
		CHECK_NEAR(out[3], 0.1, TOL);
		CHECK_NAN(out[4]);
	}
	d = def_of("topdown", "intel-topdown-v2");
	if (d) {
		double c[] = { 10000, 4000, 1000, 3000, 2000 };

		d->compute(c, 0, out);
		CHECK_NEAR(out[0], 0.4, TOL);
		CHECK_NEAR(out[1], 0.1, TOL);
		CHECK_NEAR(out[2], 0.3, TOL);
		CHECK_NEAR(out[3], 0.2, TOL);
	}
	d = def_of("topdown", "amd-zen4");
	if (d) {
		/* 1000 cycles x 6 = 6000 slots; fe 600, be 1800, dispatched 3300, retired 3000 */
		double c[] = { 1000, 600, 1800, 3300, 3000 };

		d->compute(c, 0, out);
		CHECK_NEAR(out[0], 0.5, TOL);
		CHECK_NEAR(out[1], 0.05, TOL);
		CHECK_NEAR(out[2], 0.1, TOL);
		CHECK_NEAR(out[3], 0.3, TOL);
	}
}

/* IPC from one group where there is one; a group that never ran is not counted. */
static void test_groups(void)
{
	struct event_info ev[4];
	struct snapshot s = {};
	struct figures f = {};
	struct row_metrics m;

	set_event(&ev[0], "cycles", EVENT_COUNTING);
	set_event(&ev[1], "instructions", EVENT_COUNTING);
	set_event(&ev[2], "cycles", EVENT_COUNTING);
	set_event(&ev[3], "instructions", EVENT_COUNTING);
	ev[2].spec.group = ev[3].spec.group = 0;
	s.events = ev;
	s.nr_events = 4;
	s.interval_ns = 1000000000ULL;
	/* ungrouped: multiplexed over different slices, scaled IPC 0.9 */
	f.ev[0] = rd(1000, 100, 50);
	f.ev[1] = rd(900, 100, 100);
	/* the group: the same running time, exact IPC 1.0 */
	f.ev[2] = rd(500, 100, 25);
	f.ev[3] = rd(500, 100, 25);
	metrics__figures(&s, &f, &m);
	CHECK(m.ipc_grouped);
	CHECK_NEAR(m.ipc, 1.0, TOL);
	/* without the group: the ungrouped pair, marked so */
	ev[2].spec.group = ev[3].spec.group = -1;
	ev[2].state = ev[3].state = EVENT_NOT_SUPPORTED;
	metrics__figures(&s, &f, &m);
	CHECK(!m.ipc_grouped);
	CHECK_NEAR(m.ipc, 0.45, TOL);
	/* a group not scheduled in the interval: not counted, never 0 */
	ev[2].spec.group = ev[3].spec.group = 0;
	ev[2].state = ev[3].state = EVENT_COUNTING;
	f.ev[2] = rd(0, 100, 0);
	f.ev[3] = rd(0, 100, 0);
	metrics__figures(&s, &f, &m);
	CHECK_NAN(m.count[2]);
	CHECK_NAN(m.count[3]);
	CHECK(m.ipc_grouped);
	CHECK_NAN(m.ipc);
}

int main(void)
{
	test_scaled();
	test_coverage();
	test_ratio();
	test_find_kind();
	test_row();
	test_row_not_counting();
	test_system();
	test_formulas();
	test_groups();
	return check_summary();
}
