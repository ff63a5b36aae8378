// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * pmbpf fields: the figure catalog (catalog.c) as text, as the Markdown
 * tables of docs/fields.md (make docs), or as JSON (tests/test_catalog.py).
 */
#include <stdio.h>
#include <string.h>
#include "catalog.h"
#include "cmdopt.h"
#include "commands.h"
#include "json_writer.h"
#include "util.h"

enum { OPT_MARKDOWN = CMDOPT_LONG_ONLY, OPT_JSON };

static const struct cmdopt options[] = {
	{ OPT_MARKDOWN, "markdown", NULL, "the tables of docs/fields.md" },
	{ OPT_JSON, "json", NULL, "the catalog as one JSON document" },
	{ CMDOPT_HELP },
	{},
};

static const struct cmdopts fields_cmdopts = {
	.cmd = "fields",
	.head = "Usage: pmbpf fields [--markdown|--json]\n"
		"Every figure pmbpf shows for a process, a cgroup or a command, and its\n"
		"statistics about itself: name, unit, kind, the outputs that show it (with\n"
		"their column or metric names), the Prometheus family and what it means.\n",
	.opts = options,
};

/*
 * A snapshot that names the instances of per-event figures after what they
 * stand for: one miss event NAME and one -M metric METRIC of one VALUE.
 */
static struct event_info placeholder_event;
static struct metric_def placeholder_def = { .metric = "METRIC", .values = { "VALUE" } };
static struct metric_sel placeholder_sel = { .nr = 1,
					     .m = { { .name = "METRIC",
						      .def = &placeholder_def } } };
static struct snapshot placeholder = { .nr_events = 1,
				       .events = &placeholder_event,
				       .metrics = &placeholder_sel };

static void placeholder_init(void)
{
	snprintf(placeholder_event.spec.name, sizeof(placeholder_event.spec.name), "NAME");
	placeholder_event.spec.kind = EVENT_MISS;
	placeholder_event.state = EVENT_COUNTING;
}

/* Its one instance: the event, or the metric's value. */
static int placeholder_instance(const struct figure *fd)
{
	int i, n = figure__instances(fd, &placeholder);

	for (i = 0; i < n; i++)
		if (figure__applies(fd, &placeholder, i))
			return i;
	return 0;
}

static const char *name_of(const struct figure *fd, const char *pattern, char *buf, size_t len)
{
	return figure__name(fd, pattern, &placeholder, placeholder_instance(fd), buf, len);
}

static void csv_name(const struct figure *fd, char *buf, size_t len)
{
	char *p;

	name_of(fd, fd->csv ? fd->csv : fd->name, buf, len);
	for (p = buf; !fd->csv && (p = strchr(p, '.'));)
		*p = '_';
}

static const char *kind_str(enum fig_kind k)
{
	return k == FIG_COUNTER ? "counter" : "gauge";
}

/* Where a figure or statistic is shown: the outputs, and its name in each where it has one. */
struct shown {
	unsigned int outputs;
	const char *col[FIG_OUT_NR];
	char buf[FIG_OUT_NR][160];
};

static void figure_shown(const struct figure *fd, bool markdown, struct shown *s)
{
	const char *q = markdown ? "`" : "";
	int n;

	memset(s, 0, sizeof(*s));
	s->outputs = fd->outputs;
	s->col[0] = name_of(fd, fd->title, s->buf[0], sizeof(s->buf[0]));
	/* else its name, '.' made '_' */
	s->col[2] = name_of(fd, fd->csv, s->buf[2], sizeof(s->buf[2]));
	n = snprintf(s->buf[3], sizeof(s->buf[3]), "pmbpf_%s%s",
		     fd->prom_cgroup_only ? "cgroup_" : "{process,thread,cgroup}_", fd->prom);
	/* its labels apart: `family` with `kind="voluntary"` */
	if (fd->prom_labels)
		snprintf(s->buf[3] + n, sizeof(s->buf[3]) - n, "%s with %s%s", q, q,
			 fd->prom_labels);
	/* clock events apart: `family`; clock events in seconds: `family` */
	else if (fd->prom_time)
		snprintf(s->buf[3] + n, sizeof(s->buf[3]) - n,
			 "%s; clock events in seconds: %spmbpf_%s%s", q, q,
			 fd->prom_cgroup_only ? "cgroup_" : "{process,thread,cgroup}_",
			 fd->prom_time);
	s->col[3] = fd->prom ? s->buf[3] : NULL;
	s->col[4] = name_of(fd, fd->top_title ? fd->top_title : fd->title, s->buf[4],
			    sizeof(s->buf[4]));
	s->col[5] = name_of(fd, fd->stat ? fd->stat : fd->label, s->buf[5], sizeof(s->buf[5]));
}

static void self_shown(const struct self_figure *sf, struct shown *s)
{
	memset(s, 0, sizeof(*s));
	s->outputs = sf->outputs;
	s->col[3] = sf->prom;
}

/* "table `CPU%`, JSON, Prometheus `...`" (markdown) or "table(CPU%) json prometheus(...)". */
static void shown_str(const struct shown *s, bool markdown, char *buf, size_t len)
{
	static const char *const md[FIG_OUT_NR] = { "table", "JSON", "CSV",   "Prometheus",
						    "top",   "stat", "system" };
	const char *sep = markdown ? ", " : " ", *q = markdown ? "`" : "";
	size_t o = 0;
	int b;

	buf[0] = '\0';
	for (b = 0; b < FIG_OUT_NR && o < len; b++) {
		const char *what = markdown ? md[b] : fig_out__name(b);

		if (!(s->outputs & (1u << b)))
			continue;
		if (s->col[b])
			o += snprintf(buf + o, len - o, "%s%s%s%s%s%s%s", o ? sep : "", what,
				      markdown ? " " : "(", q, s->col[b], q, markdown ? "" : ")");
		else
			o += snprintf(buf + o, len - o, "%s%s", o ? sep : "", what);
	}
}

/* Every figure (or every statistic of pmbpf itself): fmt gets name, unit, kind, outputs, help. */
static void entries(const char *fmt, bool markdown, bool self)
{
	const struct self_figure *sf = NULL;
	const struct figure *fd = NULL;
	char name[128], out[1024], help[1024];
	struct shown s;
	size_t nr, k;

	if (self)
		sf = catalog__self(&nr);
	else
		fd = catalog__figures(&nr);
	for (k = 0; k < nr; k++) {
		if (self)
			self_shown(&sf[k], &s);
		else
			figure_shown(&fd[k], markdown, &s);
		shown_str(&s, markdown, out, sizeof(out));
		if (self) {
			/* serve's own with labels: which */
			snprintf(help, sizeof(help), "%s%s%s%s", sf[k].help,
				 sf[k].prom_labels ? " Labels: " : "",
				 sf[k].prom_labels ? sf[k].prom_labels : "",
				 sf[k].prom_labels ? "." : "");
			printf(fmt, sf[k].name, sf[k].json_ms ? "ms" : sf[k].unit,
			       kind_str(sf[k].kind), out, help);
		} else
			printf(fmt, name_of(&fd[k], fd[k].name, name, sizeof(name)), fd[k].unit,
			       kind_str(fd[k].kind), out, fd[k].help);
	}
}

/* A figure outside the catalog's row figures: --delays' of a pair, a cgroup's overflow. */
static void pair_entry(const struct figure *fd, const char *fmt, bool markdown)
{
	char out[1024];
	struct shown s;

	figure_shown(fd, markdown, &s);
	shown_str(&s, markdown, out, sizeof(out));
	printf(fmt, fd->name, fd->unit, kind_str(fd->kind), out, fd->help);
}

/* The live CPI outliers' families: fmt gets name, labels, unit, kind, help. */
static void cpi_entries(const char *fmt)
{
	const struct prom_family *f;
	char labels[128];
	size_t k, nr;

	f = catalog__cpi(&nr);
	for (k = 0; k < nr; k++) {
		snprintf(labels, sizeof(labels), "%s%s%s",
			 f[k].cgroup ? "cgroup,runtime,container_id,pod_uid" : "",
			 f[k].cgroup && f[k].labels[0] ? "," : "", f[k].labels);
		printf(fmt, f[k].prom, labels, f[k].unit, kind_str(f[k].kind), f[k].help);
	}
}

static void text(void)
{
	static const char line[] = "  %-24s %-9s %-8s %s\n      %s\n";

	printf("Figures of a process, a cgroup or a command (NAME: an event, METRIC.VALUE: a -M metric's value):\n\n");
	entries(line, false, false);
	printf("\nFigures of a pair (--delays: who waited, who ran meanwhile):\n\n");
	pair_entry(catalog__delay(), line, false);
	printf("\nFigures of a cgroup's rows (the counts map full):\n\n");
	pair_entry(catalog__overflow(), line, false);
	printf("\nStatistics of pmbpf itself (the JSON system record, serve's /metrics):\n\n");
	entries(line, false, true);
	printf("\nLive CPI outliers (serve's /metrics; docs/fleet.md):\n\n");
	cpi_entries("  %s{%s} %s %s\n      %s\n");
}

/* "| `field` | `FILE::NAME`, ... |": the tests a figure names, one cell. */
static void tests_row(const char *name, const char *tests)
{
	const char *p = tests ? tests : "";
	size_t n;

	printf("| `%s` | ", name);
	while (*p) {
		n = strcspn(p, " ");
		printf("`%.*s`%s", (int)n, p, p[n] ? ", " : "");
		p += n;
		p += strspn(p, " ");
	}
	printf(" |\n");
}

/* The tests a figure names, as a JSON array of "FILE::NAME". */
static void json_tests(struct json_writer *w, const char *tests)
{
	const char *p = tests ? tests : "";
	char one[256];
	size_t n;

	jw_key(w, "tests");
	jw_start_array(w);
	while (*p) {
		n = strcspn(p, " ");
		snprintf(one, sizeof(one), "%.*s", (int)n, p);
		jw_string(w, one);
		p += n;
		p += strspn(p, " ");
	}
	jw_end_array(w);
}

/* The blocks of docs/fields.md between <!-- begin fields:X --> and <!-- end fields:X --> (docs/mkfields.py). */
static void markdown(void)
{
	static const char row[] = "| `%s` | %s | %s | %s | %s |\n";
	static const char head[] =
		"| field | unit | kind | shown in | meaning |\n|---|---|---|---|---|\n";
	const struct figure *fd;
	char name[128];
	size_t nr, k;
	int n = 0;

	printf("<!-- begin fields:figures -->\n%s", head);
	entries(row, true, false);
	printf("<!-- end fields:figures -->\n\n");

	printf("<!-- begin fields:csv -->\n");
	fd = catalog__figures(&nr);
	for (k = 0; k < nr; k++) {
		if (!(fd[k].outputs & OUT_CSV))
			continue;
		csv_name(&fd[k], name, sizeof(name));
		printf("%s`%s`", n++ ? ", " : "", name);
	}
	printf("\n<!-- end fields:csv -->\n\n");

	printf("<!-- begin fields:pairs -->\n%s", head);
	pair_entry(catalog__delay(), row, true);
	printf("<!-- end fields:pairs -->\n\n");
	printf("<!-- begin fields:overflow -->\n%s", head);
	pair_entry(catalog__overflow(), row, true);
	printf("<!-- end fields:overflow -->\n\n");

	printf("<!-- begin fields:self -->\n%s", head);
	entries(row, true, true);
	printf("<!-- end fields:self -->\n\n");

	printf("<!-- begin fields:tests -->\n"
	       "| field | checked by (below tests/) |\n|---|---|\n");
	fd = catalog__figures(&nr);
	for (k = 0; k < nr; k++)
		tests_row(name_of(&fd[k], fd[k].name, name, sizeof(name)), fd[k].tests);
	tests_row(catalog__delay()->name, catalog__delay()->tests);
	tests_row(catalog__overflow()->name, catalog__overflow()->tests);
	printf("<!-- end fields:tests -->\n\n");

	printf("<!-- begin fields:cpi -->\n"
	       "| family | labels | unit | kind | meaning |\n|---|---|---|---|---|\n");
	cpi_entries("| `%s` | `%s` | %s | %s | %s |\n");
	printf("<!-- end fields:cpi -->\n");
}

static void json_opt(struct json_writer *w, const char *key, const char *v)
{
	jw_key(w, key);
	if (v)
		jw_string(w, v);
	else
		jw_null(w);
}

static void json_outputs(struct json_writer *w, unsigned int outputs)
{
	int b;

	jw_key(w, "outputs");
	jw_start_array(w);
	for (b = 0; b < FIG_OUT_NR; b++)
		if (outputs & (1u << b))
			jw_string(w, fig_out__name(b));
	jw_end_array(w);
}

static void json(void)
{
	static const char *const srcs[] = { "count",	      "derived",       "event",
					    "event_raw",      "event_enabled", "event_running",
					    "event_coverage", "mpki",	       "metric",
					    "runq_hist",      "cgroup" };
	static const char *const fmts[] = { "count", "pct",  "ratio", "fraction",
					    "ns",    "bool", "hist",  "share" };
	const struct self_figure *sf;
	const struct prom_family *cf;
	const struct figure *fd;
	struct json_writer w;
	size_t nr, k;

	jw_init(&w, stdout);
	jw_start_object(&w);
	jw_key(&w, "figures");
	jw_start_array(&w);
	fd = catalog__figures(&nr);
	for (k = 0; k < nr; k++) {
		jw_start_object(&w);
		json_opt(&w, "name", fd[k].name);
		json_opt(&w, "csv", fd[k].csv);
		json_opt(&w, "title", fd[k].title);
		json_opt(&w, "top_title", fd[k].top_title);
		json_opt(&w, "stat", fd[k].stat);
		json_opt(&w, "label", fd[k].label);
		json_opt(&w, "unit", fd[k].unit);
		json_opt(&w, "help", fd[k].help);
		json_opt(&w, "kind", kind_str(fd[k].kind));
		json_opt(&w, "source", srcs[fd[k].src]);
		jw_key(&w, "index");
		jw_s64(&w, fd[k].index);
		json_opt(&w, "format", fmts[fd[k].fmt]);
		json_outputs(&w, fd[k].outputs);
		json_opt(&w, "prom", fd[k].prom);
		json_opt(&w, "prom_labels", fd[k].prom_labels);
		json_opt(&w, "prom_time", fd[k].prom_time);
		json_tests(&w, fd[k].tests);
		jw_key(&w, "prom_cgroup_only");
		jw_bool(&w, fd[k].prom_cgroup_only);
		jw_end_object(&w);
	}
	jw_end_array(&w);
	jw_key(&w, "pair");
	jw_start_object(&w);
	json_opt(&w, "name", catalog__delay()->name);
	json_tests(&w, catalog__delay()->tests);
	jw_end_object(&w);
	jw_key(&w, "overflow");
	jw_start_object(&w);
	json_opt(&w, "name", catalog__overflow()->name);
	json_tests(&w, catalog__overflow()->tests);
	jw_end_object(&w);
	jw_key(&w, "self");
	jw_start_array(&w);
	sf = catalog__self(&nr);
	for (k = 0; k < nr; k++) {
		jw_start_object(&w);
		json_opt(&w, "name", sf[k].name);
		json_opt(&w, "prom", sf[k].prom);
		json_opt(&w, "unit", sf[k].unit);
		json_opt(&w, "help", sf[k].help);
		json_opt(&w, "kind", kind_str(sf[k].kind));
		json_outputs(&w, sf[k].outputs);
		jw_key(&w, "json_ms");
		jw_bool(&w, sf[k].json_ms);
		/* serve: only serve has it (its process, collections, series); snapshot: every output's */
		json_opt(&w, "source", sf[k].src == SELF_SERVE ? "serve" : "snapshot");
		json_opt(&w, "prom_labels", sf[k].prom_labels);
		jw_end_object(&w);
	}
	jw_end_array(&w);
	jw_key(&w, "cpi");
	jw_start_array(&w);
	cf = catalog__cpi(&nr);
	for (k = 0; k < nr; k++) {
		jw_start_object(&w);
		json_opt(&w, "prom", cf[k].prom);
		jw_key(&w, "cgroup");
		jw_bool(&w, cf[k].cgroup);
		json_opt(&w, "labels", cf[k].labels);
		json_opt(&w, "unit", cf[k].unit);
		json_opt(&w, "help", cf[k].help);
		json_opt(&w, "kind", kind_str(cf[k].kind));
		jw_end_object(&w);
	}
	jw_end_array(&w);
	jw_end_object(&w);
	putchar('\n');
}

int cmd_fields(int argc, char **argv)
{
	struct cmdopt_getopt g = {};
	int c, format = 0;

	while ((c = cmdopt__next(&fields_cmdopts, &g, argc, argv)) != -1) {
		switch (c) {
		case OPT_MARKDOWN:
		case OPT_JSON:
			format = c;
			break;
		default:
			cmdopt__default(&fields_cmdopts, c);
			return 2;
		}
	}
	if (optind < argc) {
		pr_err("unexpected argument '%s'; try 'pmbpf fields --help'\n", argv[optind]);
		return 2;
	}
	placeholder_init();
	if (format == OPT_MARKDOWN)
		markdown();
	else if (format == OPT_JSON)
		json();
	else
		text();
	return 0;
}
