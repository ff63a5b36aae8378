// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <math.h>
#include "metrics.h"

double ratio(double num, double den)
{
	if (!isfinite(num) || !isfinite(den) || den <= 0)
		return NAN;
	return num / den;
}

double reading__scaled(const struct pmbpf_reading *r)
{
	if (r->running == r->enabled)
		return (double)r->value;
	if (!r->running)
		return NAN;
	return (double)r->value * ((double)r->enabled / (double)r->running);
}

double reading__coverage(const struct pmbpf_reading *r)
{
	if (!r->enabled || r->running >= r->enabled)
		return 1.0;
	return (double)r->running / (double)r->enabled;
}

int events__find_kind(const struct event_info *ev, int nr, __u32 kind)
{
	int i;

	for (i = 0; i < nr; i++)
		if (ev[i].state == EVENT_COUNTING && (ev[i].spec.kind & kind))
			return i;
	return -1;
}

static void derive(const struct snapshot *snap, const struct pmbpf_reading *ev,
		   struct row_metrics *m)
{
	int i, cyc, ins;

	m->min_coverage = NAN;
	for (i = 0; i < PMBPF_MAX_EVENTS; i++) {
		m->count[i] = NAN;
		m->coverage[i] = NAN;
		m->mpki[i] = NAN;
	}
	for (i = 0; i < snap->nr_events; i++) {
		if (snap->events[i].state != EVENT_COUNTING)
			continue;
		m->count[i] = reading__scaled(&ev[i]);
		m->coverage[i] = reading__coverage(&ev[i]);
		if (isnan(m->min_coverage) || m->coverage[i] < m->min_coverage)
			m->min_coverage = m->coverage[i];
	}
	cyc = events__find_kind(snap->events, snap->nr_events, EVENT_CYCLES);
	ins = events__find_kind(snap->events, snap->nr_events, EVENT_INSTRUCTIONS);
	m->ipc = cyc >= 0 && ins >= 0 ? ratio(m->count[ins], m->count[cyc]) : NAN;
	for (i = 0; i < snap->nr_events; i++) {
		if (!(snap->events[i].spec.kind & EVENT_MISS) || ins < 0)
			continue;
		m->mpki[i] = ratio(m->count[i] * 1000.0, m->count[ins]);
	}
}

void metrics__figures(const struct snapshot *snap, const struct figures *f, struct row_metrics *m)
{
	derive(snap, f->ev, m);
	m->cpu_pct = ratio((double)f->oncpu_ns * 100.0, (double)snap->interval_ns);
	m->runq_p50_ns = figures__runq_pct(f, 0.50);
	m->runq_p99_ns = figures__runq_pct(f, 0.99);
	m->runq_max_ns = f->runq_count ? (double)f->runq_max_ns : NAN;
	m->runq_avg_ns = ratio((double)f->runq_total_ns, (double)f->runq_count);
}

void metrics__row(const struct snapshot *snap, const struct proc_row *row, struct row_metrics *m)
{
	metrics__figures(snap, &row->f, m);
}

void metrics__system(const struct snapshot *snap, struct row_metrics *m)
{
	derive(snap, snap->system, m);
	m->cpu_pct = NAN;
	m->runq_p50_ns = m->runq_p99_ns = m->runq_max_ns = m->runq_avg_ns = NAN;
}
