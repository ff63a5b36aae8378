// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The figure catalog (catalog.c). Without arguments: every plain count,
 * derived figure and BPF statistic has exactly one entry, the entries agree
 * with the outputs they declare (a title for a column, a family for
 * Prometheus, ...), and every renderer runs on a synthetic snapshot.
 *
 * With --dump DIR: that snapshot rendered to every output (table, JSON
 * Lines, CSV, Prometheus, pmbpf stat's text and JSON, top's cells) and the
 * catalog's value of every figure of every row (expected.json), for
 * tests/test_catalog.py to find each figure in each output it is declared
 * for, with that value.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "catalog.h"
#include "json_writer.h"
#include "output.h"
#ifndef PMBPF_MINIMAL
#include "prom.h"
#include "top_view.h"
#endif

#define SEC 1000000000ULL

static struct event_info events[PMBPF_MAX_EVENTS];
static struct metric_sel sel;
static struct snapshot snap;
static char *const command[] = { "work", "spin", NULL };

static void set_event(int i, const char *parse, const char *name, enum event_state state, int group)
{
	struct event_info *ev = &events[i];

	memset(ev, 0, sizeof(*ev));
	CHECK_EQ_INT(event__parse(parse, &ev->spec), 0);
	snprintf(ev->spec.name, sizeof(ev->spec.name), "%s", name);
	ev->spec.group = group;
	ev->state = state;
	ev->slot = state == EVENT_COUNTING ? i : -1;
	ev->err = state == EVENT_COUNTING ? 0 : ENOENT;
}

static struct pmbpf_reading rd(__u64 value, __u64 enabled, __u64 running)
{
	return (struct pmbpf_reading){ .value = value, .enabled = enabled, .running = running };
}

/* k scales the row's figures; no_cycles: its first group never ran (IPC unknown). */
static void fill(struct figures *f, __u64 k, bool no_cycles)
{
	f->n[PMBPF_N_ONCPU_NS] = 123456789 * k;
	f->n[PMBPF_N_OFFCPU_NS] = 987654321 * k;
	f->n[PMBPF_N_NVCSW] = 17 * k;
	f->n[PMBPF_N_NIVCSW] = 123457 * k;
	f->n[PMBPF_N_RUNQ_COUNT] = 6 * k;
	f->n[PMBPF_N_RUNQ_TOTAL_NS] = 150000 * k;
	f->runq_max_ns = 41000 * k;
	f->runq_hist[0] = 1 * k;
	f->runq_hist[2] = 3 * k;
	f->runq_hist[5] = 2 * k;
	f->ev[0] = no_cycles ? rd(0, 5000, 0) : rd(4000000 * k, 5000, 5000);
	f->ev[1] = no_cycles ? rd(0, 5000, 0) : rd(5000000 * k + 1, 5000, 5000);
	f->ev[2] = rd(777 * k, 4000, 1000); /* multiplexed: x4 */
	f->ev[4] = rd(23456789 * k, 23456789 * k, 23456789 * k);
	f->ev[5] = rd(31 * k, 100, 100);
	f->ev[6] = rd(1000000 * k, 300, 300);
	f->ev[7] = rd(1700000 * k, 300, 300);
}

static void add_proc(__u32 pid, const char *comm, const char *cgroup, __u64 cgid, __u64 k,
		     bool exited, bool no_cycles)
{
	struct proc_row *r = snapshot__add_row(&snap);

	r->pid = pid;
	snprintf(r->comm, sizeof(r->comm), "%s", comm);
	r->cgroup = cgroup;
	r->cgroup_id = cgid;
	r->exited = exited;
	r->start_ns = pid * SEC;
	fill(&r->f, k, no_cycles);
}

static void stat_of(struct cgroup_row *c, int i, __u64 v)
{
	c->stat.v[i] = v;
	c->stat.have |= 1u << i;
}

static struct cgroup_row *add_cgroup(__u64 id, const char *path, __u64 parent, int depth)
{
	struct cgroup_row *c = snapshot__add_cgroup(&snap);

	c->id = id;
	c->path = path;
	c->parent_id = parent;
	c->depth = depth;
	return c;
}

/* cgroups' self: their processes; total: self and the descendants (below it in the list). */
static void roll_up(void)
{
	size_t i, j;

	for (i = 0; i < snap.nr_cgroups; i++) {
		struct cgroup_row *c = &snap.cgroups[i];

		for (j = 0; j < snap.nr_rows; j++)
			if (snap.rows[j].cgroup_id == c->id) {
				figures__add(&c->self, &snap.rows[j].f);
				c->nr_procs++;
			}
	}
	for (i = snap.nr_cgroups; i-- > 0;) {
		struct cgroup_row *c = &snap.cgroups[i];

		figures__add(&c->total, &c->self);
		c->nr_procs_total += c->nr_procs;
		for (j = i + 1; j < snap.nr_cgroups; j++)
			if (snap.cgroups[j].parent_id == c->id) {
				figures__add(&c->total, &snap.cgroups[j].total);
				c->nr_procs_total += snap.cgroups[j].nr_procs_total;
			}
	}
}

/*
 * Eight events: cycles and instructions in one group, a multiplexed miss
 * event, a miss event this "host" cannot count, a clock, a software count,
 * and the group of -M ipc; -M topdown, not supported here.
 */
static void build(void)
{
	const struct metric_def *defs;
	int i, nr;

	set_event(0, "cycles", "cycles", EVENT_COUNTING, 0);
	set_event(1, "instructions", "instructions", EVENT_COUNTING, 0);
	set_event(2, "LLC-load-misses", "LLC-load-misses", EVENT_COUNTING, -1);
	set_event(3, "branch-misses", "branch-misses", EVENT_NOT_SUPPORTED, -1);
	set_event(4, "task-clock", "task-clock", EVENT_COUNTING, -1);
	set_event(5, "page-faults", "page-faults", EVENT_COUNTING, -1);
	set_event(6, "cycles", "cycles#2", EVENT_COUNTING, 1);
	set_event(7, "instructions", "instructions#2", EVENT_COUNTING, 1);
	CHECK_EQ_INT(metrics__parse("ipc,topdown", &sel), 0);
	defs = metrics__defs(&nr);
	for (i = 0; i < nr; i++)
		if (!strcmp(defs[i].metric, "ipc"))
			sel.m[0].def = &defs[i];
	sel.m[0].first = 6;
	sel.m[0].nr_events = 2;
	snprintf(sel.m[1].why, sizeof(sel.m[1].why), "not in the table");

	snap.time_ns = 1700000000123456789ULL;
	snap.interval_ns = 2 * SEC;
	snap.nr_cpus = 4;
	snap.nr_events = PMBPF_MAX_EVENTS;
	snap.events = events;
	snap.metrics = &sel;
	snap.attach = "tp_btf";
	for (i = 0; i < PMBPF_MAX_EVENTS; i++)
		snap.system[i] = rd(10000000 * (i + 1) + i, 8000, i == 2 ? 2000 : 8000);
	for (i = 0; i < PMBPF_STAT_NR; i++)
		snap.stats[i] = 101 + 7 * i;
	snap.wakeup_progs = true; /* its statistic is shown */
	snap.map_entries = 5;
	snap.map_capacity = 4096;
	snap.map_bytes = 1234567;
	snap.vanished = 3;
	snap.poll_ns = 2345678;

	add_proc(1, "init", "/", 1, 4, false, false);
	add_proc(100, "worker", "/a", 10, 1, false, false);
	add_proc(101, "helper", "/a/b", 11, 2, false, true);
	add_proc(102, "gone", "/a", 10, 3, true, false);
	add_cgroup(1, "/", 0, 0);
	add_cgroup(10, "/a", 1, 1);
	add_cgroup(11, "/a/b", 10, 2);
	roll_up();
	/*
	 * The cgroups' own files: "/" has PSI and no cpu controller on
	 * cgroup2, "/a" all of them, "/a/b" was not read (or is new): none.
	 */
	for (i = CGS_PSI_CPU_SOME_NS; i < CGS_NR; i++)
		stat_of(&snap.cgroups[0], i, 1000ULL * (7 * i + 3));
	for (i = 0; i < CGS_NR; i++)
		stat_of(&snap.cgroups[1], i, i == CGS_NR_PERIODS ? 10 : 123456789ULL * (i + 1));
}

static void test_entries(void)
{
	const struct self_figure *sf;
	const struct figure *fd;
	size_t nr, nr_self, k, j;
	int c, n;

	fd = catalog__figures(&nr);
	for (c = 0; c < PMBPF_N_NR; c++) {
		for (k = 0, n = 0; k < nr; k++)
			n += fd[k].src == SRC_COUNT && fd[k].index == c;
		check_record(n == 1, __FILE__, __LINE__, "count %d: %d catalog entries", c, n);
		CHECK(catalog__count(c) && catalog__count(c)->index == c);
	}
	for (c = 0; c < DER_NR; c++) {
		for (k = 0, n = 0; k < nr; k++)
			n += fd[k].src == SRC_DERIVED && fd[k].index == c;
		check_record(n == 1, __FILE__, __LINE__, "derived figure %d: %d catalog entries", c,
			     n);
		CHECK(catalog__derived(c) && catalog__derived(c)->index == c);
	}
	sf = catalog__self(&nr_self);
	for (c = 0; c < PMBPF_STAT_NR; c++) {
		for (k = 0, n = 0; k < nr_self; k++)
			n += (sf[k].src == SELF_STAT || sf[k].src == SELF_WAKEUPS) && sf[k].index == c;
		check_record(n == 1, __FILE__, __LINE__, "BPF statistic %d: %d self entries", c, n);
	}
	for (k = 0; k < nr; k++) {
		const struct figure *f = &fd[k];
		bool inst = figure__reading(f) || f->src == SRC_MPKI || f->src == SRC_METRIC;

		for (j = 0; j < k; j++)
			check_record(strcmp(fd[j].name, f->name), __FILE__, __LINE__, "%s: twice",
				     f->name);
		check_record(!!strstr(f->name, "%s") == inst, __FILE__, __LINE__,
			     "%s: \"%%s\" in the name of a figure per event or metric value",
			     f->name);
		check_record(!(f->outputs & OUT_TABLE) || f->title, __FILE__, __LINE__,
			     "%s: in the table without a title", f->name);
		check_record(!(f->outputs & OUT_TOP) || f->title || f->top_title, __FILE__,
			     __LINE__, "%s: in top without a title", f->name);
		check_record(!f->title || (f->outputs & (OUT_TABLE | OUT_TOP)), __FILE__, __LINE__,
			     "%s: a title but no column", f->name);
		check_record(!(f->outputs & OUT_PROM) == !f->prom, __FILE__, __LINE__,
			     "%s: OUT_PROM and a Prometheus family go together", f->name);
		check_record(!(f->stat || f->label) || (f->outputs & OUT_STAT), __FILE__, __LINE__,
			     "%s: a stat name or label but not OUT_STAT", f->name);
		check_record((f->fmt == FMT_HIST) == (f->src == SRC_RUNQ_HIST), __FILE__, __LINE__,
			     "%s: FMT_HIST is the histogram's", f->name);
		check_record(!(f->outputs & (OUT_CSV | OUT_TABLE | OUT_TOP)) ||
				     (f->fmt != FMT_HIST && f->fmt != FMT_BOOL),
			     __FILE__, __LINE__, "%s: no column shows a %s", f->name,
			     f->fmt == FMT_HIST ? "histogram" : "bool");
		check_record(!(f->outputs & OUT_SYSTEM) || inst || f->src == SRC_DERIVED, __FILE__,
			     __LINE__, "%s: the system record has event figures only", f->name);
	}
	for (k = 0; k < nr_self; k++) {
		for (j = 0; j < k; j++)
			check_record(strcmp(sf[j].name, sf[k].name) &&
					     strcmp(sf[j].prom, sf[k].prom),
				     __FILE__, __LINE__, "%s: twice", sf[k].name);
		/* serve's process_* are the Prometheus client libraries' standard names */
		check_record(!strncmp(sf[k].prom, "pmbpf_", 6) ||
				     (sf[k].src == SELF_SERVE && !strncmp(sf[k].prom, "process_", 8)),
			     __FILE__, __LINE__, "%s: Prometheus name %s", sf[k].name, sf[k].prom);
		check_record(sf[k].src != SELF_SERVE || sf[k].outputs == OUT_PROM, __FILE__,
			     __LINE__, "%s: serve's own, in Prometheus only", sf[k].name);
	}
}

static void test_names(void)
{
	const struct figure *mpki = NULL, *metric = NULL, *count = NULL, *fd;
	char buf[128];
	size_t nr, k;

	fd = catalog__figures(&nr);
	for (k = 0; k < nr; k++) {
		mpki = fd[k].src == SRC_MPKI ? &fd[k] : mpki;
		metric = fd[k].src == SRC_METRIC ? &fd[k] : metric;
		count = fd[k].src == SRC_EVENT ? &fd[k] : count;
	}
	if (!CHECK(mpki && metric && count))
		return;
	CHECK_STR(figure__name(mpki, mpki->title, &snap, 2, buf, sizeof(buf)), "LLC-MPKI");
	CHECK_STR(figure__name(mpki, mpki->name, &snap, 2, buf, sizeof(buf)),
		  "mpki.LLC-load-misses");
	CHECK_STR(figure__name(metric, metric->name, &snap, 0, buf, sizeof(buf)),
		  "metrics.ipc.ipc");
	CHECK_STR(
		figure__name(metric, metric->title, &snap, METRIC_MAX_VALUES + 1, buf, sizeof(buf)),
		"bad_speculation");
	CHECK_STR(figure__name(metric, metric->stat, &snap, METRIC_MAX_VALUES, buf, sizeof(buf)),
		  "topdown-retiring");
	CHECK_STR(figure__name(metric, metric->label, &snap, METRIC_MAX_VALUES, buf, sizeof(buf)),
		  "topdown retiring");
	CHECK_STR(figure__name(count, count->top_title, &snap, 4, buf, sizeof(buf)),
		  "task-clock/s");
	/* a short buffer is cut, never overrun */
	CHECK_STR(figure__name(count, count->name, &snap, 0, buf, 8), "events.");
	CHECK(figure__counting(count, &snap, 0) && !figure__counting(count, &snap, 3));
	CHECK(figure__asked(mpki, &snap, 3) && !figure__counting(mpki, &snap, 3));
	CHECK(figure__counting(metric, &snap, 0) &&
	      !figure__asked(metric, &snap, METRIC_MAX_VALUES));
	CHECK(figure__ns(count, &snap, 4) && !figure__ns(count, &snap, 5));
}

/* Render into a malloc'd string. */
#define RENDER(buf, len, f, body)                         \
	do {                                              \
		FILE *f = open_memstream(&(buf), &(len)); \
		if (!CHECK(f))                            \
			exit(2);                          \
		body;                                     \
		fclose(f);                                \
	} while (0)

static char *render(enum output_format fmt, bool procs, bool cgroups)
{
	struct output o = { .format = fmt, .procs = procs, .cgroups = cgroups };
	char *buf = NULL;
	size_t len = 0;

	RENDER(buf, len, f, {
		o.f = f;
		CHECK_EQ_INT(output__snapshot(&o, &snap), 0);
	});
	return buf;
}

static char *render_command(enum output_format fmt)
{
	struct output o = { .format = fmt };
	char *buf = NULL;
	size_t len = 0;

	RENDER(buf, len, f, {
		o.f = f;
		CHECK_EQ_INT(output__command(&o, &snap, &snap.cgroups[0].total, command, 0, 3), 0);
	});
	return buf;
}

#ifndef PMBPF_MINIMAL
static char *render_prom(void)
{
	struct prom_opts po = { .top_k = 100, .grace_ns = 600 * SEC };
	struct prom_self self = { .version = "test" };
	struct prom_state *ps = prom__new(&po);
	struct strbuf out = {};
	char *buf;

	if (!CHECK(ps))
		exit(2);
	CHECK_EQ_INT(prom__update(ps, &snap, 10 * SEC), 0);
	prom__render(ps, &snap, &self, &out);
	CHECK(!out.failed && out.buf);
	buf = strdup(out.buf ? out.buf : "");
	strbuf__free(&out);
	prom__free(ps);
	return buf;
}

/* top's view: a line of titles, then per row its cells, tab-separated. */
static char *render_top(bool by_cgroup)
{
	struct top_view v;
	char *buf = NULL, cell[128];
	size_t len = 0, r;
	int c;

	top_view__init(&v);
	v.by_cgroup = by_cgroup;
	top_view__columns(&v, &snap);
	CHECK_EQ_INT(top_view__build(&v, &snap, NULL, NULL), 0);
	RENDER(buf, len, f, {
		for (c = 0; c < v.nr_cols; c++)
			fprintf(f, "%s%s", c ? "\t" : "", v.cols[c].title);
		fputc('\n', f);
		for (r = 0; r < v.nr_items; r++) {
			for (c = 0; c < v.nr_cols; c++) {
				top_view__cell(&v, &snap, &v.items[r], &v.cols[c], cell,
					       sizeof(cell));
				fprintf(f, "%s%s", c ? "\t" : "", cell);
			}
			fputc('\n', f);
		}
	});
	top_view__free(&v);
	return buf;
}
#endif

static void test_renderers(void)
{
	char *out[4], *line, *save = NULL;
	int i;

	out[0] = render(OUTPUT_JSON, true, true);
	out[1] = render_command(OUTPUT_JSON);
	for (i = 0; i < 2; i++)
		for (line = strtok_r(out[i], "\n", &save); line; line = strtok_r(NULL, "\n", &save))
			check_record(json_valid(line), __FILE__, __LINE__, "not JSON: %s", line);
	out[2] = render(OUTPUT_TABLE, true, true);
	out[3] = render(OUTPUT_CSV, true, false);
	for (i = 0; i < 4; i++) {
		CHECK(!strstr(out[i], "nan") && !strstr(out[i], "inf"));
		free(out[i]);
	}
}

static void write_file(const char *dir, const char *name, char *text)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f)) {
		fprintf(stderr, "test_catalog: cannot write %s: %s\n", path, strerror(errno));
		exit(2);
	}
	free(text);
}

struct expect {
	struct json_writer *w;
	const struct figures *f;
	struct row_metrics m;
};

static void expect_name(struct json_writer *w, const char *key, const struct figure *fd,
			const char *pattern, int i)
{
	char buf[128];

	jw_key(w, key);
	if (figure__name(fd, pattern, &snap, i, buf, sizeof(buf)))
		jw_string(w, buf);
	else
		jw_null(w);
}

/* The catalog's value of one instance of one figure. */
static void expect_figure(const struct figure *fd, int i, void *arg)
{
	struct expect *e = arg;
	const char *part[2];
	size_t nr;
	int n, k;

	if (!figure__of_row(fd, &e->m))
		return;
	jw_start_object(e->w);
	jw_key(e->w, "figure"); /* its index in the catalog */
	jw_u64(e->w, fd - catalog__figures(&nr));
	jw_key(e->w, "i");
	jw_u64(e->w, i);
	jw_key(e->w, "parts");
	jw_start_array(e->w);
	n = figure__instance(fd, &snap, i, part);
	for (k = 0; k < n; k++)
		jw_string(e->w, part[k]);
	jw_end_array(e->w);
	jw_key(e->w, "value");
	jw_double(e->w, figure__value(fd, e->f, &e->m, i), 9);
	jw_key(e->w, "asked");
	jw_bool(e->w, figure__asked(fd, &snap, i));
	jw_key(e->w, "counting");
	jw_bool(e->w, figure__counting(fd, &snap, i));
	jw_key(e->w, "ns");
	jw_bool(e->w, figure__ns(fd, &snap, i));
	/* its name in each output: JSON's, CSV's, the table's, top's, stat -r's, stat's row */
	jw_key(e->w, "names");
	jw_start_object(e->w);
	expect_name(e->w, "json", fd, fd->name, i);
	expect_name(e->w, "csv", fd, fd->csv ? fd->csv : fd->name, i);
	expect_name(e->w, "table", fd, fd->title, i);
	expect_name(e->w, "top", fd, fd->top_title ? fd->top_title : fd->title, i);
	expect_name(e->w, "stat", fd, fd->stat, i);
	expect_name(e->w, "label", fd, fd->label, i);
	jw_end_object(e->w);
	if (fd->src == SRC_RUNQ_HIST) {
		jw_key(e->w, "hist");
		jw_start_array(e->w);
		for (k = 0; k < PMBPF_RUNQ_SLOTS; k++)
			jw_u64(e->w, e->f->runq_hist[k]);
		jw_end_array(e->w);
	}
	jw_end_object(e->w);
}

static void expect_row(struct json_writer *w, const char *kind, const char *key, const char *id,
		       const struct figures *f, unsigned int out, const struct cgroup_stat *cgroup)
{
	struct expect e = { .w = w, .f = f };

	jw_start_object(w);
	jw_key(w, "kind");
	jw_string(w, kind);
	jw_key(w, key);
	jw_string(w, id);
	if (out == OUT_SYSTEM)
		metrics__system(&snap, &e.m);
	else
		metrics__figures(&snap, f, &e.m);
	e.m.cgroup = cgroup;
	jw_key(w, "figures");
	jw_start_array(w);
	catalog__each(&snap, out, expect_figure, &e);
	jw_end_array(w);
	jw_end_object(w);
}

static char *expected(void)
{
	const struct self_figure *sf;
	struct figures sys = {};
	struct json_writer w;
	char *buf = NULL, id[32];
	size_t len = 0, r, nr;
	int i;

	memcpy(sys.ev, snap.system, sizeof(sys.ev));
	RENDER(buf, len, f, {
		jw_init(&w, f);
		jw_start_object(&w);
		jw_key(&w, "interval_ns");
		jw_u64(&w, snap.interval_ns);
		jw_key(&w, "events");
		jw_start_array(&w);
		for (i = 0; i < snap.nr_events; i++)
			jw_string(&w, events[i].spec.name);
		jw_end_array(&w);
		jw_key(&w, "rows");
		jw_start_array(&w);
		for (r = 0; r < snap.nr_rows; r++) {
			snprintf(id, sizeof(id), "%u", snap.rows[r].pid);
			expect_row(&w, "process", "pid", id, &snap.rows[r].f, ~0u, NULL);
		}
		for (r = 0; r < snap.nr_cgroups; r++) {
			expect_row(&w, "cgroup", "cgroup", snap.cgroups[r].path,
				   &snap.cgroups[r].total, ~0u, &snap.cgroups[r].stat);
			expect_row(&w, "cgroup_self", "cgroup", snap.cgroups[r].path,
				   &snap.cgroups[r].self, ~0u, NULL);
		}
		expect_row(&w, "system", "system", "", &sys, OUT_SYSTEM, NULL);
		expect_row(&w, "command", "cgroup", snap.cgroups[0].path, &snap.cgroups[0].total,
			   ~0u, NULL);
		jw_end_array(&w);
		jw_key(&w, "self");
		jw_start_array(&w);
		sf = catalog__self(&nr);
		for (r = 0; r < nr; r++) {
			jw_start_object(&w);
			jw_key(&w, "name");
			jw_string(&w, sf[r].name);
			jw_key(&w, "value");
			jw_double(&w, self_figure__value(&sf[r], &snap), 0);
			jw_end_object(&w);
		}
		jw_end_array(&w);
		jw_end_object(&w);
		fputc('\n', f);
	});
	return buf;
}

static void dump(const char *dir)
{
	write_file(dir, "expected.json", expected());
	write_file(dir, "table.txt", render(OUTPUT_TABLE, true, true));
	write_file(dir, "records.jsonl", render(OUTPUT_JSON, true, true));
	write_file(dir, "processes.csv", render(OUTPUT_CSV, true, false));
	write_file(dir, "cgroups.csv", render(OUTPUT_CSV, false, true));
	write_file(dir, "stat.txt", render_command(OUTPUT_TABLE));
	write_file(dir, "command.json", render_command(OUTPUT_JSON));
#ifndef PMBPF_MINIMAL
	write_file(dir, "metrics.prom", render_prom());
	write_file(dir, "top-processes.tsv", render_top(false));
	write_file(dir, "top-cgroups.tsv", render_top(true));
#endif
}

int main(int argc, char **argv)
{
	build();
	if (argc == 3 && !strcmp(argv[1], "--dump")) {
		dump(argv[2]);
		snapshot__free(&snap);
		return check_summary();
	}
	test_entries();
	test_names();
	test_renderers();
	snapshot__free(&snap);
	return check_summary();
}
