// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What a catalog figure (catalog.c) is in a row and a snapshot: its value
 * (figure__value, figure__integer), its instances (one per event, per -M
 * value), whether it applies and is counted, its name for an instance
 * (figure__name); and a self figure's value. Declared in catalog.h.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "catalog.h"

double figure__value(const struct figure *fd, const struct figures *f, const struct row_metrics *m,
		     int i)
{
	switch (fd->src) {
	case SRC_COUNT:
		return (double)f->n[fd->index];
	case SRC_DERIVED:
		return m->d[fd->index];
	case SRC_EVENT:
		return m->count[i];
	case SRC_EVENT_RAW:
		return (double)f->ev[i].value;
	case SRC_EVENT_ENABLED:
		return (double)f->ev[i].enabled;
	case SRC_EVENT_RUNNING:
		return (double)f->ev[i].running;
	case SRC_EVENT_COVERAGE:
		return m->coverage[i];
	case SRC_MPKI:
		return m->mpki[i];
	case SRC_METRIC:
		return m->metric[i / METRIC_MAX_VALUES][i % METRIC_MAX_VALUES];
	case SRC_RUNQ_HIST:
		return (double)f->n[PMBPF_N_RUNQ_COUNT];
	case SRC_CGROUP:
		if (!m || !m->cgroup || !(m->cgroup->have & (1u << fd->index)))
			return NAN;
		return (double)m->cgroup->v[fd->index];
	}
	return NAN;
}

bool figure__of_row(const struct figure *fd, const struct row_metrics *m)
{
	return fd->src != SRC_CGROUP || (m && m->cgroup);
}

bool figure__integer(const struct figure *fd, const struct figures *f, int i, __u64 *v)
{
	switch (fd->src) {
	case SRC_COUNT:
		*v = f->n[fd->index];
		return true;
	case SRC_EVENT_RAW:
		*v = f->ev[i].value;
		return true;
	case SRC_EVENT_ENABLED:
		*v = f->ev[i].enabled;
		return true;
	case SRC_EVENT_RUNNING:
		*v = f->ev[i].running;
		return true;
	default:
		return false;
	}
}

bool figure__reading(const struct figure *fd)
{
	return fd->src == SRC_EVENT || fd->src == SRC_EVENT_RAW || fd->src == SRC_EVENT_ENABLED ||
	       fd->src == SRC_EVENT_RUNNING || fd->src == SRC_EVENT_COVERAGE;
}

bool figure__per_event(const struct figure *fd)
{
	return figure__reading(fd) || fd->src == SRC_MPKI;
}

int figure__instances(const struct figure *fd, const struct snapshot *snap)
{
	if (figure__per_event(fd))
		return snap->nr_events;
	if (fd->src == SRC_METRIC)
		return snap->metrics ? snap->metrics->nr * METRIC_MAX_VALUES : 0;
	return 1;
}

bool figure__applies(const struct figure *fd, const struct snapshot *snap, int i)
{
	const struct metric_use *mu;

	if (figure__reading(fd))
		return i < snap->nr_events;
	switch (fd->src) {
	case SRC_MPKI:
		return i < snap->nr_events && (snap->events[i].spec.kind & EVENT_MISS);
	case SRC_METRIC:
		if (!snap->metrics || i / METRIC_MAX_VALUES >= snap->metrics->nr)
			return false;
		mu = &snap->metrics->m[i / METRIC_MAX_VALUES];
		return metric_use__values(mu)[i % METRIC_MAX_VALUES] != NULL;
	default:
		return i == 0;
	}
}

bool figure__present(const struct figure *fd, const struct snapshot *snap)
{
	return fd->src != SRC_METRIC || snap->metrics;
}

/* An event of every kind in kinds is in snap's list (and counting, with counting). */
static bool have_kinds(const struct snapshot *snap, unsigned int kinds, bool counting)
{
	unsigned int seen = 0;
	int i;

	for (i = 0; i < snap->nr_events; i++)
		if (!counting || snap->events[i].state == EVENT_COUNTING)
			seen |= snap->events[i].spec.kind & kinds;
	return seen == kinds;
}

bool figure__asked(const struct figure *fd, const struct snapshot *snap, int i)
{
	if (!figure__applies(fd, snap, i))
		return false;
	/* a metric without a definition here never had its group added to the events */
	if (fd->src == SRC_METRIC)
		return snap->metrics->m[i / METRIC_MAX_VALUES].def;
	return have_kinds(snap, fd->needs, false);
}

bool figure__counting(const struct figure *fd, const struct snapshot *snap, int i)
{
	const struct metric_use *mu;
	int e;

	if (!figure__asked(fd, snap, i))
		return false;
	if (figure__per_event(fd)) {
		if (snap->events[i].state != EVENT_COUNTING)
			return false;
	} else if (fd->src == SRC_METRIC) {
		mu = &snap->metrics->m[i / METRIC_MAX_VALUES];
		for (e = mu->first; e < mu->first + mu->nr_events; e++)
			if (e >= snap->nr_events || snap->events[e].state != EVENT_COUNTING)
				return false;
	}
	return have_kinds(snap, fd->needs, true);
}

bool figure__ns(const struct figure *fd, const struct snapshot *snap, int i)
{
	if (fd->fmt == FMT_NS)
		return true;
	return fd->src == SRC_EVENT && i < snap->nr_events &&
	       (snap->events[i].spec.kind & EVENT_TIME);
}

int figure__instance(const struct figure *fd, const struct snapshot *snap, int i,
		     const char *part[2])
{
	const struct metric_use *mu;

	if (figure__per_event(fd)) {
		part[0] = snap->events[i].spec.name;
		return 1;
	}
	if (fd->src == SRC_METRIC) {
		mu = &snap->metrics->m[i / METRIC_MAX_VALUES];
		part[0] = mu->name;
		part[1] = metric_use__values(mu)[i % METRIC_MAX_VALUES];
		return 2;
	}
	return 0;
}

const char *figure__name(const struct figure *fd, const char *pattern, const struct snapshot *snap,
			 int i, char *buf, size_t len)
{
	const char *part[2] = { "", "" }, *fill[2], *p;
	char inst[96] = "";
	bool two;
	int n, k = 0;
	size_t o = 0;

	if (!pattern || !len)
		return NULL;
	n = figure__instance(fd, snap, i, part);
	if (n == 1 && fd->src == SRC_MPKI && (pattern == fd->title || pattern == fd->top_title))
		/* "LLC-load-misses" -> "LLC" in a title, whole in names */
		snprintf(inst, sizeof(inst), "%.*s", (int)strcspn(part[0], "-"), part[0]);
	else if (n == 2 && strchr(pattern, '.'))
		/* a JSON name nests the metric's values */
		snprintf(inst, sizeof(inst), "%s.%s", part[0], part[1]);
	else
		snprintf(inst, sizeof(inst), "%s", part[n == 2]);
	/* a pattern with two "%s" takes both parts: "%s %s" is "topdown retiring" */
	p = strstr(pattern, "%s");
	two = p && strstr(p + 2, "%s");
	fill[0] = two ? part[0] : inst;
	fill[1] = two ? part[1] : inst;
	for (p = pattern; *p && o + 1 < len; p++) {
		if (p[0] == '%' && p[1] == 's') {
			o += snprintf(buf + o, len - o, "%s", fill[k++ > 0]);
			if (o >= len)
				o = len - 1;
			p++;
			continue;
		}
		buf[o++] = *p;
	}
	buf[o] = '\0';
	return buf;
}

double self_figure__value(const struct self_figure *sf, const struct snapshot *snap)
{
	switch (sf->src) {
	case SELF_STAT:
		return (double)snap->stats[sf->index];
	case SELF_MAP_ENTRIES:
		return (double)snap->map_entries;
	case SELF_MAP_CAPACITY:
		return (double)snap->map_capacity;
	case SELF_MAP_BYTES:
		return (double)snap->map_bytes;
	case SELF_VANISHED:
		return (double)snap->vanished;
	case SELF_POLL_NS:
		return (double)snap->poll_ns;
	case SELF_LATE:
		return (double)snap->late_intervals;
	case SELF_THREAD_FOLD:
		return snap->thread_fold;
	case SELF_WAKEUPS:
		return snap->wakeup_progs ? (double)snap->stats[sf->index] : NAN;
	case SELF_SERVE:
		return NAN; /* not in a snapshot: serve's (prom.c) */
	}
	return NAN;
}
