// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * serve's statistics of pmbpf itself in the exposition: every self figure
 * of the catalog with OUT_PROM (catalog.c: those of the snapshot, and
 * SELF_SERVE's, serve's own: its process, collections, series), HELP and
 * TYPE from their one definition, in the catalog's order.
 */
#include <math.h>
#include <string.h>
#include "catalog.h"
#include "events.h"
#include "prom.h"

/* The family line of self figure sf (HELP and TYPE from the catalog). */
static void self_family(struct strbuf *out, const struct self_figure *sf)
{
	prom__family(out, sf->prom, sf->kind == FIG_COUNTER ? "counter" : "gauge", sf->help);
}

/* sf's one sample without labels: "name value". */
static void self_sample(struct strbuf *out, const struct self_figure *sf, double v)
{
	self_family(out, sf);
	strbuf__puts(out, sf->prom);
	strbuf__putc(out, ' ');
	prom__value(out, v);
}

/* "name{label=" of a labelled sample of sf; the caller adds the value and the rest. */
static void self_labelled(struct strbuf *out, const struct self_figure *sf, const char *label,
			  const char *value)
{
	strbuf__puts(out, sf->prom);
	strbuf__putc(out, '{');
	strbuf__puts(out, label);
	strbuf__putc(out, '=');
	prom__label_value(out, value);
}

/* One of serve's own families (catalog SELF_SERVE), from the state, the snapshot, self. */
static void serve_stat(struct strbuf *out, const struct prom_state *ps, const struct snapshot *snap,
		       const struct prom_self *self, const struct self_figure *sf)
{
	static const char *const codes[] = { "2xx", "4xx", "5xx", "other" };
	size_t procs, cgroups, tracked;
	int i;

	prom__counts(ps, &procs, &cgroups, &tracked);
	switch ((enum serve_stat)sf->index) {
	case SERVE_INFO:
		self_family(out, sf);
		strbuf__printf(out, "%s{version=\"%s\",attach=\"%s\"} 1\n", sf->prom,
			       self->version ? self->version : "",
			       snap->attach ? snap->attach : "");
		break;
	case SERVE_CPUS:
		self_sample(out, sf, snap->nr_cpus);
		break;
	case SERVE_PMU:
		self_sample(out, sf, self->no_pmu ? 0 : 1);
		break;
	case SERVE_EVENT_SUPPORTED:
		self_family(out, sf);
		for (i = 0; i < snap->nr_events; i++) {
			const struct event_info *ev = &snap->events[i];

			self_labelled(out, sf, "event", ev->spec.name);
			strbuf__printf(out, ",class=\"%s\",state=\"%s\"} %d\n",
				       event__class(&ev->spec), event_state__str(ev->state),
				       ev->state == EVENT_COUNTING);
		}
		break;
	case SERVE_METRIC_SUPPORTED:
		self_family(out, sf);
		for (i = 0; snap->metrics && i < snap->metrics->nr; i++) {
			self_labelled(out, sf, "metric", snap->metrics->m[i].name);
			strbuf__printf(out, "} %d\n", snap->metrics->m[i].def != NULL);
		}
		break;
	case SERVE_SYSTEM_EVENTS:
	case SERVE_SYSTEM_EVENT_SECONDS: {
		bool clock = sf->index == SERVE_SYSTEM_EVENT_SECONDS;

		/* the clock events' family only when one was asked for */
		if (!clock || prom__has_clock_event(snap))
			self_family(out, sf);
		for (i = 0; i < snap->nr_events; i++) {
			if (snap->events[i].state != EVENT_COUNTING ||
			    !(snap->events[i].spec.kind & EVENT_TIME) != !clock)
				continue;
			self_labelled(out, sf, "event", snap->events[i].spec.name);
			strbuf__add(out, "} ", 2);
			prom__value(out, clock ? prom__system_event(ps, i) / 1e9 :
						 prom__system_event(ps, i));
		}
		break;
	}
	case SERVE_IDLE:
		self_family(out, sf);
		strbuf__puts(out, sf->prom);
		strbuf__putc(out, ' ');
		prom__ns(out, prom__idle_ns(ps));
		break;
	case SERVE_PROG_RUN_TIME:
	case SERVE_PROG_RUNS:
	case SERVE_PROG_RECURSION:
		self_family(out, sf);
		for (i = 0; i < snap->nr_progs; i++) {
			self_labelled(out, sf, "program", snap->progs[i].name);
			strbuf__add(out, "} ", 2);
			if (sf->index == SERVE_PROG_RUN_TIME)
				prom__ns(out, snap->progs[i].run_time_ns);
			else
				prom__u64(out, sf->index == SERVE_PROG_RUNS ?
						       snap->progs[i].run_cnt :
						       snap->progs[i].recursion_misses);
		}
		break;
	case SERVE_BPF_STATS:
		self_sample(out, sf, self->bpf_stats_enabled);
		break;
	case SERVE_COLLECTIONS:
	case SERVE_COLLECTION_ERRORS:
		self_family(out, sf);
		strbuf__puts(out, sf->prom);
		strbuf__putc(out, ' ');
		prom__u64(out, sf->index == SERVE_COLLECTIONS ? self->collections :
								self->collection_errors);
		break;
	case SERVE_COLLECTION_TIME:
		self_sample(out, sf, self->collection_seconds);
		break;
	case SERVE_LAST_COLLECTION:
		self_sample(out, sf, snap->time_ns / 1e9);
		break;
	case SERVE_INTERVAL:
		self_sample(out, sf, snap->interval_ns / 1e9);
		break;
	case SERVE_EXPORTED_PROCS:
		self_sample(out, sf, procs);
		break;
	case SERVE_EXPORTED_CGROUPS:
		self_sample(out, sf, cgroups);
		break;
	case SERVE_TRACKED_PROCS:
		self_sample(out, sf, tracked);
		break;
	case SERVE_EXPORTED_THREADS:
	case SERVE_TRACKED_THREADS:
		if (!prom__threads(ps))
			break;
		prom__thread_counts(ps, &procs, &tracked);
		self_sample(out, sf, sf->index == SERVE_EXPORTED_THREADS ? procs : tracked);
		break;
	case SERVE_HTTP_REQUESTS:
		self_family(out, sf);
		for (i = 0; i < 4; i++)
			strbuf__printf(out, "%s{code=\"%s\"} %llu\n", sf->prom, codes[i],
				       (unsigned long long)self->http_requests[i]);
		break;
	case SERVE_RSS:
		self_sample(out, sf, self->rss_bytes);
		break;
	case SERVE_VSIZE:
		self_sample(out, sf, self->vsize_bytes);
		break;
	case SERVE_CPU_TIME:
		self_sample(out, sf, self->cpu_seconds);
		break;
	case SERVE_FDS:
		self_sample(out, sf, self->open_fds);
		break;
	case SERVE_START_TIME:
		self_sample(out, sf, self->start_time_seconds);
		break;
	case SERVE_SAMPLES:
		break; /* last, once the others are counted: prom__render() */
	}
}

/* The catalog's statistics of pmbpf, its BPF programs and serve itself, in its order. */
void prom__render_self(const struct prom_state *ps, const struct snapshot *snap,
		       const struct prom_self *self, struct strbuf *out)
{
	const struct self_figure *sf;
	size_t i, nr;

	sf = catalog__self(&nr);
	for (i = 0; i < nr; i++) {
		double v;

		if (!(sf[i].outputs & OUT_PROM))
			continue;
		if (sf[i].src == SELF_SERVE) {
			serve_stat(out, ps, snap, self, &sf[i]);
			continue;
		}
		v = self_figure__value(&sf[i], snap);
		if (isnan(v))
			continue;
		self_family(out, &sf[i]);
		strbuf__puts(out, sf[i].prom);
		strbuf__putc(out, ' ');
		if (!strcmp(sf[i].unit, "ns"))
			prom__ns(out, (__u64)v);
		else
			prom__value(out, v);
	}
}

/* The catalog's entry of a serve statistic. */
static const struct self_figure *serve_figure(enum serve_stat k)
{
	const struct self_figure *sf;
	size_t i, nr;

	sf = catalog__self(&nr);
	for (i = 0; i < nr; i++)
		if (sf[i].src == SELF_SERVE && sf[i].index == (int)k)
			return &sf[i];
	return NULL;
}

void prom__samples(struct strbuf *out, size_t samples)
{
	self_sample(out, serve_figure(SERVE_SAMPLES), samples);
}
