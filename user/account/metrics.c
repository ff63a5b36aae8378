// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "host.h"
#include "metrics.h"
#include "pmu.h"
#include "util.h"

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

/* Index of the first counting event of a kind in group g (any group when g < -1), or -1. */
static int find_in_group(const struct event_info *ev, int nr, __u32 kind, int g)
{
	int i;

	for (i = 0; i < nr; i++)
		if (ev[i].state == EVENT_COUNTING && (ev[i].spec.kind & kind) &&
		    (g < -1 || ev[i].spec.group == g))
			return i;
	return -1;
}

static void derive_metrics(const struct snapshot *snap, struct row_metrics *m)
{
	const struct metric_sel *sel = snap->metrics;
	int u, v, i;

	for (u = 0; u < METRIC_MAX_SEL; u++)
		for (v = 0; v < METRIC_MAX_VALUES; v++)
			m->metric[u][v] = NAN;
	for (u = 0; sel && u < sel->nr; u++) {
		const struct metric_use *mu = &sel->m[u];
		double c[PMBPF_MAX_EVENTS];
		bool ok = mu->def && mu->first + mu->nr_events <= snap->nr_events;

		for (i = 0; ok && i < mu->nr_events; i++) {
			c[i] = m->count[mu->first + i];
			ok = isfinite(c[i]);
		}
		if (ok)
			mu->def->compute(c, mu->slots, m->metric[u]);
	}
}

static void derive(const struct snapshot *snap, const struct pmbpf_reading *ev,
		   struct row_metrics *m)
{
	const struct event_info *e = snap->events;
	int i, g, cyc = -1, ins = -1, cyc_any = -1, ins_any = -1;
	int cyc_of[PMBPF_MAX_EVENTS], ins_of[PMBPF_MAX_EVENTS];

	m->min_coverage = NAN;
	m->ipc_grouped = false;
	m->cgroup = NULL;
	for (i = 0; i < PMBPF_MAX_EVENTS; i++) {
		m->count[i] = NAN;
		m->coverage[i] = NAN;
		m->mpki[i] = NAN;
		m->mpki_grouped[i] = false;
	}
	for (i = 0; i < snap->nr_events; i++) {
		if (e[i].state != EVENT_COUNTING)
			continue;
		/* NaN when the counter (or its whole group) never ran: not counted, never 0 */
		m->count[i] = reading__scaled(&ev[i]);
		if (e[i].spec.scale > 0 && e[i].spec.scale != 1.0)
			m->count[i] *= e[i].spec.scale;
		m->coverage[i] = reading__coverage(&ev[i]);
		if (isnan(m->min_coverage) || m->coverage[i] < m->min_coverage)
			m->min_coverage = m->coverage[i];
	}
	/*
	 * The first counting cycles and instructions event of each group
	 * (find_in_group()'s answers, in one pass over the events: this runs
	 * for every row).
	 */
	for (g = 0; g < PMBPF_MAX_EVENTS; g++)
		cyc_of[g] = ins_of[g] = -1;
	for (i = 0; i < snap->nr_events; i++) {
		g = e[i].spec.group;
		if (e[i].state != EVENT_COUNTING)
			continue;
		if ((e[i].spec.kind & EVENT_CYCLES) && cyc_any < 0)
			cyc_any = i;
		if ((e[i].spec.kind & EVENT_INSTRUCTIONS) && ins_any < 0)
			ins_any = i;
		if (g < 0 || g >= PMBPF_MAX_EVENTS)
			continue;
		if ((e[i].spec.kind & EVENT_CYCLES) && cyc_of[g] < 0)
			cyc_of[g] = i;
		if ((e[i].spec.kind & EVENT_INSTRUCTIONS) && ins_of[g] < 0)
			ins_of[g] = i;
	}
	/* IPC from a group holding both where there is one: the same running time */
	for (g = 0; g < PMBPF_MAX_EVENTS && cyc < 0; g++) {
		cyc = cyc_of[g];
		ins = ins_of[g];
		if (cyc < 0 || ins < 0)
			cyc = ins = -1;
	}
	m->ipc_grouped = cyc >= 0;
	if (cyc < 0) {
		cyc = cyc_any;
		ins = ins_any;
	}
	m->ipc = cyc >= 0 && ins >= 0 ? ratio(m->count[ins], m->count[cyc]) : NAN;
	m->ipc_same_group = isfinite(m->ipc) ? m->ipc_grouped : NAN;
	for (i = 0; i < snap->nr_events; i++) {
		int in;

		if (!(e[i].spec.kind & EVENT_MISS) || e[i].state != EVENT_COUNTING)
			continue;
		g = e[i].spec.group;
		if (g < 0)
			in = -1;
		else if (g < PMBPF_MAX_EVENTS)
			in = ins_of[g];
		else
			in = find_in_group(e, snap->nr_events, EVENT_INSTRUCTIONS, g);
		m->mpki_grouped[i] = in >= 0;
		if (in < 0)
			in = ins_any;
		if (in >= 0)
			m->mpki[i] = ratio(m->count[i] * 1000.0, m->count[in]);
	}
	derive_metrics(snap, m);
}

void metrics__figures(const struct snapshot *snap, const struct figures *f, struct row_metrics *m)
{
	derive(snap, f->ev, m);
	m->cpu_pct = ratio((double)f->n[PMBPF_N_ONCPU_NS] * 100.0, (double)snap->interval_ns);
	m->runq_p50_ns = figures__runq_pct(f, 0.50);
	m->runq_p99_ns = figures__runq_pct(f, 0.99);
	m->runq_max_ns = f->n[PMBPF_N_RUNQ_COUNT] ? (double)f->runq_max_ns : NAN;
	m->runq_avg_ns =
		ratio((double)f->n[PMBPF_N_RUNQ_TOTAL_NS], (double)f->n[PMBPF_N_RUNQ_COUNT]);
	m->switches = (double)(f->n[PMBPF_N_NVCSW] + f->n[PMBPF_N_NIVCSW]);
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
	m->switches = NAN;
}

/*
 * The metric table. Each formula reads the counts of one group, in the
 * order of its events string; results are fractions (topdown: of cycles or
 * of dispatch slots).
 */

static void ipc(const double *c, double slots, double *out)
{
	out[0] = ratio(c[1], c[0]); /* instructions / cycles */
}

static void mpki(const double *c, double slots, double *out)
{
	out[0] = ratio(c[1] * 1000.0, c[0]); /* LLC load misses per 1000 instructions */
}

/* cpu_cycles, stall_frontend, stall_backend, stall_backend_mem, br_mis_pred_retired, br_retired */
static void td_neoverse_n1(const double *c, double slots, double *out)
{
	double fe = ratio(c[1], c[0]), be = ratio(c[2], c[0]);

	out[0] =
		1.0 - fe - be; /* retiring: cycles stalled neither way (bad speculation included) */
	out[1] = ratio(c[4], c[5]); /* bad speculation: mispredicted share of retired branches */
	out[2] = fe;
	out[3] = be;
	out[4] = ratio(c[3], c[0]); /* backend memory */
}

/* cpu_cycles, stall_slot, stall_slot_frontend, stall_slot_backend, op_retired, op_spec */
static void td_arm_slots(const double *c, double slots, double *out)
{
	double total = slots * c[0], used = 1.0 - ratio(c[1], total), ret = ratio(c[4], c[5]);

	out[0] = ret * used;
	out[1] = (1.0 - ret) * used;
	out[2] = ratio(c[2], total);
	out[3] = ratio(c[3], total);
	out[4] = NAN;
}

/* topdown-total-slots, -slots-issued, -slots-retired, -fetch-bubbles, -recovery-bubbles */
static void td_intel_v1(const double *c, double slots, double *out)
{
	double fe = ratio(c[3], c[0]), bad = ratio(c[1] - c[2] + c[4], c[0]),
	       ret = ratio(c[2], c[0]);

	out[0] = ret;
	out[1] = bad;
	out[2] = fe;
	out[3] = 1.0 - fe - bad - ret;
	out[4] = NAN;
}

/* slots, topdown-retiring, topdown-bad-spec, topdown-fe-bound, topdown-be-bound */
static void td_intel_v2(const double *c, double slots, double *out)
{
	double sum = c[1] + c[2] + c[3] + c[4];

	out[0] = ratio(c[1], sum);
	out[1] = ratio(c[2], sum);
	out[2] = ratio(c[3], sum);
	out[3] = ratio(c[4], sum);
	out[4] = NAN;
}

/*
 * ls_not_halted_cyc, de_no_dispatch_per_slot.no_ops_from_frontend,
 * de_no_dispatch_per_slot.backend_stalls, de_src_op_disp.all, ex_ret_ops
 */
static void td_zen4(const double *c, double slots, double *out)
{
	double total = 6.0 * c[0];

	out[0] = ratio(c[4], total);
	out[1] = ratio(c[3] - c[4], total);
	out[2] = ratio(c[1], total);
	out[3] = ratio(c[2], total);
	out[4] = NAN;
}

#define TOPDOWN_VALUES                                                                             \
	{                                                                                          \
		"retiring", "bad_speculation", "frontend_bound", "backend_bound", "backend_memory" \
	}

static const struct metric_def defs[] = {
	{ "ipc",
	  "any",
	  "{cycles,instructions}",
	  { "ipc" },
	  ipc,
	  "instructions / cycles (perf stat's 'insn per cycle')" },
	{ "mpki",
	  "any",
	  "{instructions,LLC-load-misses}",
	  { "llc_mpki" },
	  mpki,
	  "LLC-load-misses x 1000 / instructions" },
	{ "topdown", "neoverse-n1-v1",
	  "{cpu_cycles,stall_frontend,stall_backend,stall_backend_mem,br_mis_pred_retired,br_retired}",
	  TOPDOWN_VALUES, td_neoverse_n1,
	  "Arm Neoverse N1 / V1 Core Performance Analysis Methodology (Arm white papers, 2021): "
	  "STALL_FRONTEND/CPU_CYCLES, STALL_BACKEND/CPU_CYCLES, STALL_BACKEND_MEM/CPU_CYCLES, "
	  "BR_MIS_PRED_RETIRED/BR_RETIRED" },
	{ "topdown", "neoverse-n2-v2",
	  "{cpu_cycles,stall_slot,stall_slot_frontend,stall_slot_backend,op_retired,op_spec}",
	  TOPDOWN_VALUES, td_arm_slots,
	  "Arm topdown level 1 with slots (Linux tools/perf/pmu-events/arch/arm64/sbsa.json; "
	  "Arm Neoverse N2/V2 PMU guides): #slots from the PMU's caps/slots" },
	{ "topdown", "intel-topdown-v1",
	  "{topdown-total-slots,topdown-slots-issued,topdown-slots-retired,topdown-fetch-bubbles,"
	  "topdown-recovery-bubbles}",
	  TOPDOWN_VALUES, td_intel_v1,
	  "Yasin, A Top-Down Method for Performance Analysis and Counters Architecture (ISPASS 2014); "
	  "Linux tools/perf/util/stat-shadow.c (4-slot formulas, Sandy Bridge to Comet Lake)" },
	{ "topdown", "intel-topdown-v2",
	  "{slots,topdown-retiring,topdown-bad-spec,topdown-fe-bound,topdown-be-bound}",
	  TOPDOWN_VALUES, td_intel_v2,
	  "Intel SDM vol. 3B, Performance Metrics (PERF_METRICS, Ice Lake and later); "
	  "Linux arch/x86/events/intel/core.c: each topdown-* / their sum" },
	{ "topdown", "amd-zen4",
	  "{cpu/event=0x76/,cpu/event=0x1a0,umask=0x1/,cpu/event=0x1a0,umask=0x1e/,"
	  "cpu/event=0xaa,umask=0x7/,cpu/event=0xc1/}",
	  TOPDOWN_VALUES, td_zen4,
	  "AMD PPR for Family 19h Model 11h, Pipeline Utilization (6 dispatch slots); "
	  "Linux tools/perf/pmu-events/arch/x86/amdzen4/recommended.json" },
};

const struct metric_def *metrics__defs(int *nr)
{
	*nr = (int)(sizeof(defs) / sizeof(defs[0]));
	return defs;
}

int metrics__parse(const char *list, struct metric_sel *sel)
{
	char buf[128], *tok, *save = NULL;
	int i, nr;

	snprintf(buf, sizeof(buf), "%s", list);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		const struct metric_def *d = metrics__defs(&nr);

		for (i = 0; i < nr && strcmp(d[i].metric, tok); i++)
			;
		if (i == nr) {
			pr_err("unknown metric '%s': use ipc, mpki or topdown\n", tok);
			return -EINVAL;
		}
		for (i = 0; i < sel->nr; i++)
			if (!strcmp(sel->m[i].name, tok))
				break;
		if (i < sel->nr)
			continue;
		if (sel->nr == METRIC_MAX_SEL) {
			pr_err("at most %d metrics\n", METRIC_MAX_SEL);
			return -EINVAL;
		}
		snprintf(sel->m[sel->nr++].name, sizeof(sel->m[0].name), "%s", tok);
	}
	if (!sel->nr) {
		pr_err("-M needs a metric: ipc, mpki or topdown\n");
		return -EINVAL;
	}
	return 0;
}

/* This host's CPU as the table names families; why in buf when unknown. */
static const char *cpu_family(char *why, size_t len, double *slots)
{
	const struct host_cpu *cpu;
	unsigned long midr = 0;
	const struct pmu *all;
	char line[256];
	int nr, i;
	FILE *f;

	*slots = 0;
	all = pmus__all(&nr);
	for (i = 0; i < nr; i++) {
		if (!all[i].core)
			continue;
		if (pmu__alias(&all[i], "topdown-retiring"))
			return "intel-topdown-v2";
		if (pmu__alias(&all[i], "topdown-total-slots"))
			return "intel-topdown-v1";
		if (all[i].slots > 0)
			*slots = all[i].slots;
	}
	f = fopen("/sys/devices/system/cpu/cpu0/regs/identification/midr_el1", "re");
	if (f) {
		if (fgets(line, sizeof(line), f))
			midr = strtoul(line, NULL, 16);
		fclose(f);
	}
	if (midr) {
		unsigned int impl = (midr >> 24) & 0xff, part = (midr >> 4) & 0xfff;

		if (impl == 0x41 && (part == 0xd0c || part == 0xd40))
			return "neoverse-n1-v1";
		if (impl == 0x41 && (part == 0xd49 || part == 0xd4f)) {
			if (!*slots)
				*slots = part == 0xd49 ? 5 : 8;
			return "neoverse-n2-v2";
		}
		snprintf(why, len, "Arm CPU implementer 0x%02x part 0x%03x is not in the table",
			 impl, part);
		return NULL;
	}
	cpu = host__cpu();
	/* Zen 4: family 19h models 10h-1Fh, 60h-AFh (Zen 3 has no pipeline-utilization events) */
	if (!strcmp(cpu->vendor, "AuthenticAMD") && cpu->family == 0x19 &&
	    ((cpu->model >= 0x10 && cpu->model <= 0x1f) ||
	     (cpu->model >= 0x60 && cpu->model <= 0xaf)))
		return "amd-zen4";
	snprintf(why, len, "%s family 0x%x model 0x%x has no topdown events in the table%s",
		 cpu->vendor[0] ? cpu->vendor : "this CPU", cpu->family, cpu->model,
		 !strcmp(cpu->vendor, "GenuineIntel") ?
			 " (the kernel exposes no topdown-* events)" :
			 "");
	return NULL;
}

void metrics__resolve(struct metric_sel *sel)
{
	const struct metric_def *d;
	const char *family;
	char why[160] = "";
	double slots;
	int u, i, nr;

	d = metrics__defs(&nr);
	family = cpu_family(why, sizeof(why), &slots);
	for (u = 0; u < sel->nr; u++) {
		struct metric_use *mu = &sel->m[u];

		mu->def = NULL;
		mu->slots = slots;
		for (i = 0; i < nr; i++)
			if (!strcmp(d[i].metric, mu->name) &&
			    (!strcmp(d[i].family, "any") ||
			     (family && !strcmp(d[i].family, family))))
				mu->def = &d[i];
		if (!mu->def)
			snprintf(mu->why, sizeof(mu->why), "%s", why);
	}
}

void metrics__report_unsupported(struct metric_sel *sel, const struct event_info *ev, int nr)
{
	int u, i;

	for (u = 0; u < sel->nr; u++) {
		struct metric_use *mu = &sel->m[u];

		for (i = 0; mu->def && i < mu->nr_events; i++) {
			const struct event_info *e = &ev[mu->first + i];

			if (mu->first + i >= nr || e->state == EVENT_COUNTING)
				continue;
			snprintf(mu->why, sizeof(mu->why), "event %s: %s", e->spec.name,
				 event_state__str(e->state));
			mu->def = NULL;
		}
		if (!mu->def)
			pr_err("metric %s: not supported on this host (%s)\n", mu->name, mu->why);
	}
}

const char *const *metric_use__values(const struct metric_use *mu)
{
	int i, nr;
	const struct metric_def *d = metrics__defs(&nr);

	if (mu->def)
		return mu->def->values;
	for (i = 0; i < nr; i++)
		if (!strcmp(d[i].metric, mu->name))
			return d[i].values;
	return d[0].values;
}
