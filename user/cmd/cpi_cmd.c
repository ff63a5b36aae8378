// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * pmbpf cpi [FILE|-]: CPI outliers per cgroup in the JSON Lines of
 * 'pmbpf record -b cgroup -o json', and the cgroups whose CPU use rises with
 * them (the rules are in cpi.h). Each cgroup is judged on its own processes
 * (the record's `self` figures), so that a parent, which holds its children's
 * figures, is never a suspect of its own child. Where cycles and
 * instructions do not count (no PMU), the mean run-queue wait (runq.avg_ns)
 * stands in for the CPI: the scheduler evidence alone, and the output says
 * so. Not the p99: pmbpf's p99 is the bound of a log2 bucket, so it moves in
 * steps of 2x and has little spread to learn a baseline from (docs/fleet.md
 * has the false-positive rates of both).
 *
 * The input is read one interval at a time (an interval ends at its
 * `system` record, or when the time changes), so a live record can be piped
 * in.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "commands.h"
#include "cpi.h"
#include "json_reader.h"
#include "json_writer.h"
#include "options.h"
#include "util.h"

struct pending {
	char *name;
	struct cpi_figures f;
};

struct cpi_run {
	const char *label; /* the input, for messages */
	bool json;
	struct cpi_opts o;
	struct cpi_detector *det;
	bool decided; /* the signal */
	enum cpi_signal signal;
	bool saw_events, cycles, instructions; /* from event records */
	struct pending *p;
	int nr;
	size_t cap;
	char *time; /* of the pending interval */
	long long intervals, outliers, episodes;
	size_t records, cgroup_records;
};

enum { OPT_MIN_CPU = CMDOPT_LONG_ONLY };

static const struct cmdopt options[] = {
	{ 'o', "output", "FORMAT", "table (default) or json (JSON Lines)" },
	{ 'w', "window", "N", "intervals of the baseline and of the correlation (default 60)" },
	{ 'k', "intervals", "K", "intervals in a row above mean + 2 sd to flag (default 5)" },
	{ 'n', "suspects", "N", "suspects listed per outlier (default 5, at most 32)" },
	{ OPT_MIN_CPU, "min-cpu", "CPUS",
	  "a cgroup's interval counts only if it used this many\nCPUs (default 0.05)" },
	{ CMDOPT_HELP },
	{},
};

const struct cmdopts cpi_cmdopts = {
	.cmd = "cpi",
	.head = "Usage: pmbpf cpi [OPTIONS] [FILE|-]\n"
		"CPI outliers per cgroup in 'pmbpf record -b cgroup -o json' output (FILE, or\n"
		"standard input), and the other cgroups whose CPU use rises with them.\n",
	.opts = options,
	.tail = "Without a PMU (cycles and instructions not counting) the mean run-queue wait\n"
		"stands in for the CPI. Exit code: 0, or 2 for bad input or options.\n",
	.permute = true,
};

static double num(const struct json_value *v)
{
	return v && v->type == JSON_NUMBER ? v->number : NAN;
}

static double event_count(const struct json_value *events, const char *name)
{
	return num(json__get(json__get(events, name), "count"));
}

static void print_header(const struct cpi_run *r)
{
	const struct cpi_opts *o = &r->o;

	if (r->json) {
		struct json_writer w;

		jw_init(&w, stdout);
		jw_start_object(&w);
		jw_key(&w, "type");
		jw_string(&w, "cpi_session");
		jw_key(&w, "signal");
		jw_string(&w, cpi_signal__name(r->signal));
		jw_key(&w, "cpi_available");
		jw_bool(&w, r->signal == CPI_SIGNAL_CPI);
		jw_key(&w, "window");
		jw_s64(&w, o->window);
		jw_key(&w, "k");
		jw_s64(&w, o->k);
		jw_key(&w, "sigmas");
		jw_double(&w, CPI_SIGMAS, 1);
		jw_key(&w, "sd_floor");
		jw_double(&w, CPI_SD_FLOOR, 2);
		jw_key(&w, "min_baseline");
		jw_s64(&w, CPI_MIN_BASELINE);
		jw_key(&w, "min_cpu");
		jw_double(&w, o->min_cpu, 4);
		jw_key(&w, "correlation");
		jw_string(&w, "pearson");
		jw_end_object(&w);
		putchar('\n');
		return;
	}
	if (r->signal == CPI_SIGNAL_CPI)
		printf("# CPI = cycles / instructions of each cgroup's own processes\n");
	else
		printf("# CPI not available: cycles and instructions do not count here (no PMU).\n"
		       "# Scheduler evidence alone: outliers of the mean run-queue wait of each\n"
		       "# cgroup's own processes, and the cgroups whose CPU use rises with it\n");
	printf("# outlier: above mean + %.0f sd of its last %d normal intervals for %d in a row;\n"
	       "# suspects: other cgroups by Pearson r of their CPU use with it over %d intervals\n",
	       CPI_SIGMAS, o->window, o->k, o->window);
}

static void print_outlier(const struct cpi_run *r, const struct cpi_outlier *x)
{
	bool cpi = r->signal == CPI_SIGNAL_CPI;
	char what[256], name[TEXT_PRINTABLE_SIZE(4096)];
	int i;

	if (r->json) {
		struct json_writer w;

		jw_init(&w, stdout);
		jw_start_object(&w);
		jw_key(&w, "type");
		jw_string(&w, "cpi_outlier");
		jw_key(&w, "time");
		if (r->time)
			jw_string(&w, r->time);
		else
			jw_null(&w);
		jw_key(&w, "interval");
		jw_s64(&w, r->intervals);
		jw_key(&w, "victim");
		jw_string(&w, x->victim);
		jw_key(&w, "signal");
		jw_string(&w, cpi_signal__name(r->signal));
		jw_key(&w, "value");
		jw_double(&w, x->value, cpi ? 6 : 0);
		jw_key(&w, "threshold");
		jw_double(&w, x->threshold, cpi ? 6 : 0);
		jw_key(&w, "baseline");
		jw_start_object(&w);
		jw_key(&w, "mean");
		jw_double(&w, x->base.mean, cpi ? 6 : 0);
		jw_key(&w, "sd");
		jw_double(&w, x->base.sd, cpi ? 6 : 0);
		jw_key(&w, "intervals");
		jw_s64(&w, x->base.n);
		jw_end_object(&w);
		jw_key(&w, "intervals_above");
		jw_s64(&w, x->run);
		jw_key(&w, "pairs");
		jw_s64(&w, x->pairs);
		jw_key(&w, "suspects");
		jw_start_array(&w);
		for (i = 0; i < x->nr_suspects; i++) {
			jw_start_object(&w);
			jw_key(&w, "cgroup");
			jw_string(&w, x->suspects[i].name);
			jw_key(&w, "r");
			jw_double(&w, x->suspects[i].r, 4);
			jw_key(&w, "cpu");
			jw_double(&w, x->suspects[i].cpu, 4);
			jw_end_object(&w);
		}
		jw_end_array(&w);
		jw_end_object(&w);
		putchar('\n');
		return;
	}
	cpi__describe(x, r->signal, what, sizeof(what));
	printf("%s ", text__printable(name, sizeof(name), r->time ?: "-", false));
	printf("%s: %s\n", text__printable(name, sizeof(name), x->victim, false), what);
	if (!x->nr_suspects) {
		printf("    no suspect: no other cgroup's CPU use rises with it\n");
		return;
	}
	printf("    %4s %6s %6s  SUSPECT (r over %d intervals)\n", "RANK", "R", "CPUS", x->pairs);
	for (i = 0; i < x->nr_suspects; i++)
		printf("    %4d %+6.2f %6.2f  %s\n", i + 1, x->suspects[i].r, x->suspects[i].cpu,
		       text__printable(name, sizeof(name), x->suspects[i].name, false));
}

static void pending__clear(struct cpi_run *r)
{
	int i;

	for (i = 0; i < r->nr; i++)
		free(r->p[i].name);
	r->nr = 0;
}

/* The pending interval is complete: judge it. */
static int interval__end(struct cpi_run *r)
{
	struct cpi_sample *s;
	int i, err;

	if (!r->nr)
		return 0;
	s = calloc(r->nr, sizeof(*s));
	if (!s)
		return -ENOMEM;
	if (!r->decided) {
		/* the event records say; without them, the first interval's figures */
		if (r->saw_events) {
			r->signal = cpi__signal(r->cycles, r->instructions);
		} else {
			r->signal = CPI_SIGNAL_RUNQ_AVG;
			for (i = 0; i < r->nr; i++) {
				cpi__sample(&s[i], r->p[i].name, &r->p[i].f, CPI_SIGNAL_CPI);
				if (isfinite(s[i].value))
					r->signal = CPI_SIGNAL_CPI;
			}
		}
		r->decided = true;
		print_header(r);
	}
	for (i = 0; i < r->nr; i++)
		cpi__sample(&s[i], r->p[i].name, &r->p[i].f, r->signal);
	err = cpi__interval(r->det, s, r->nr);
	free(s);
	if (err)
		return err;
	for (i = 0; i < cpi__nr_outliers(r->det); i++) {
		const struct cpi_outlier *x = cpi__outlier(r->det, i);

		print_outlier(r, x);
		r->outliers++;
		if (x->run == r->o.k)
			r->episodes++;
	}
	r->intervals++;
	pending__clear(r);
	fflush(stdout);
	return 0;
}

static int cgroup__add(struct cpi_run *r, const struct json_value *rec, char *err, size_t len)
{
	const struct json_value *fig = json__get(rec, "self"), *events;
	const char *path = json__str(json__get(rec, "cgroup")), *time;
	double interval_s = num(json__get(rec, "interval_s")), oncpu, cyc;
	struct pending *p, *np;
	char name[64];
	int ret;

	if (!fig || fig->type != JSON_OBJECT)
		fig = rec; /* hand-made input: the figures of the record itself */
	oncpu = num(json__get(fig, "oncpu_ns"));
	if (!(interval_s > 0) || !isfinite(oncpu)) {
		snprintf(err, len, "cgroup record without interval_s or oncpu_ns");
		return -EINVAL;
	}
	time = json__str(json__get(rec, "time"));
	if (time && r->time && strcmp(time, r->time)) {
		ret = interval__end(r);
		if (ret)
			return ret;
	}
	if (time && (!r->time || strcmp(time, r->time))) {
		free(r->time);
		r->time = strdup(time);
		if (!r->time)
			return -ENOMEM;
	}
	if (!path) {
		snprintf(name, sizeof(name), "[cgroup %.0f]", num(json__get(rec, "cgroup_id")));
		path = name;
	}
	np = array__room(r->p, (size_t)r->nr, &r->cap, sizeof(*np));
	if (!np)
		return -ENOMEM;
	r->p = np;
	p = &r->p[r->nr];
	p->name = strdup(path);
	if (!p->name)
		return -ENOMEM;
	r->nr++;
	events = json__get(fig, "events");
	cyc = event_count(events, "cycles");
	if (!isfinite(cyc))
		cyc = event_count(events, "cpu-cycles");
	p->f = (struct cpi_figures){
		.interval_s = interval_s,
		.oncpu_ns = oncpu,
		.cycles = cyc,
		.instructions = event_count(events, "instructions"),
		.runq_avg_ns = num(json__get(json__get(fig, "runq"), "avg_ns")),
	};
	r->cgroup_records++;
	return 0;
}

static void event__note(struct cpi_run *r, const struct json_value *rec)
{
	const char *name = json__str(json__get(rec, "name"));
	const char *state = json__str(json__get(rec, "state"));
	bool counting = state && !strcmp(state, "counting");

	r->saw_events = true;
	if (!name)
		return;
	if (!strcmp(name, "cycles") || !strcmp(name, "cpu-cycles"))
		r->cycles |= counting;
	else if (!strcmp(name, "instructions"))
		r->instructions |= counting;
}

static int line__read(struct cpi_run *r, const char *line, size_t len, char *err, size_t err_len)
{
	struct json_value rec;
	const char *type;
	char why[128];
	int ret = 0;

	if (json__parse(line, len, &rec, why, sizeof(why))) {
		snprintf(err, err_len, "not a JSON record (%s)", why);
		return -EINVAL;
	}
	type = json__str(json__get(&rec, "type"));
	if (!type) {
		snprintf(err, err_len, "not a pmbpf record (no \"type\")");
		ret = -EINVAL;
	} else if (!strcmp(type, "cgroup")) {
		ret = cgroup__add(r, &rec, err, err_len);
	} else if (!strcmp(type, "system")) {
		ret = interval__end(r);
	} else if (!strcmp(type, "event")) {
		event__note(r, &rec);
	} else if (!strcmp(type, "session")) {
		double schema = num(json__get(&rec, "schema"));

		if (isfinite(schema) && schema != 1) {
			snprintf(err, err_len, "record schema %g, this pmbpf reads schema 1",
				 schema);
			ret = -EINVAL;
		}
	}
	json__free(&rec);
	r->records++;
	return ret;
}

static bool blank(const char *s, size_t n)
{
	while (n--)
		if (!strchr(" \t\r\n", *s++))
			return false;
	return true;
}

static int opt_cpu(const char *arg, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(arg, &end);
	if (errno || end == arg || *end || !(*out >= 0 && *out <= 4096)) {
		pr_err("invalid --min-cpu '%s': give CPUs from 0 to 4096, e.g. 0.05\n", arg);
		return -EINVAL;
	}
	return 0;
}

int cmd_cpi(int argc, char **argv)
{
	struct cpi_run r = {
		.o = { .window = CPI_WINDOW,
		       .k = CPI_K,
		       .min_cpu = CPI_MIN_CPU,
		       .max_suspects = CPI_SUSPECTS },
	};
	char err[256], *line = NULL;
	size_t cap = 0, lineno = 0;
	FILE *in = stdin;
	struct cmdopt_getopt g = {};
	int c, rc = 2, ret = 0;
	long n;

	while ((c = cmdopt__next(&cpi_cmdopts, &g, argc, argv)) != -1) {
		switch (c) {
		case 'o':
			if (strcmp(optarg, "table") && strcmp(optarg, "json")) {
				pr_err("unknown output format '%s': use table or json\n", optarg);
				return 2;
			}
			r.json = !strcmp(optarg, "json");
			break;
		case 'w':
			if (options__int("--window", optarg, CPI_MIN_BASELINE, CPI_MAX_WINDOW,
					 &r.o.window))
				return 2;
			break;
		case 'k':
			if (options__int("--intervals", optarg, 1, CPI_MAX_WINDOW, &r.o.k))
				return 2;
			break;
		case 'n':
			if (options__int("--suspects", optarg, 0, CPI_MAX_SUSPECTS,
					 &r.o.max_suspects))
				return 2;
			break;
		case OPT_MIN_CPU:
			if (opt_cpu(optarg, &r.o.min_cpu))
				return 2;
			break;
		default:
			cmdopt__default(&cpi_cmdopts, c);
			return 2;
		}
	}
	if (argc - optind > 1) {
		pr_err("give one file (or - for standard input): pmbpf cpi [FILE|-]\n");
		return 2;
	}
	if (r.o.k > r.o.window) {
		pr_err("--intervals %d is longer than --window %d\n", r.o.k, r.o.window);
		return 2;
	}
	r.label = "standard input";
	if (argc - optind == 1 && strcmp(argv[optind], "-")) {
		r.label = argv[optind];
		in = fopen(r.label, "re");
		if (!in) {
			pr_err("cannot open %s: %s\n", r.label, strerror(errno));
			return 2;
		}
	}
	r.det = cpi__new(&r.o);
	if (!r.det) {
		pr_err("%s\n", strerror(errno));
		goto out;
	}
	while ((n = file__getline(in, &line, &cap, INPUT_MAX_BYTES)) > 0) {
		lineno++;
		if (blank(line, n))
			continue;
		ret = line__read(&r, line, n, err, sizeof(err));
		if (ret == -EINVAL) {
			pr_err("%s:%zu: %s\n", r.label, lineno, err);
			goto out;
		}
		if (ret)
			break;
	}
	if (n == -EFBIG) {
		pr_err("%s:%zu: a line of more than %lu MiB: not a pmbpf record\n", r.label,
		       lineno + 1, INPUT_MAX_BYTES >> 20);
		goto out;
	}
	if (!ret && n < 0)
		ret = (int)n;
	if (!ret)
		ret = interval__end(&r);
	if (ret) {
		pr_err("reading %s: %s\n", r.label, strerror(-ret));
		goto out;
	}
	if (!r.records) {
		pr_err("%s is empty: give the output of pmbpf record -b cgroup -o json\n", r.label);
		goto out;
	}
	if (!r.cgroup_records) {
		pr_err("%s has no cgroup records: record with -b cgroup (or -b all) -o json\n",
		       r.label);
		goto out;
	}
	if (r.json) {
		struct json_writer w;

		jw_init(&w, stdout);
		jw_start_object(&w);
		jw_key(&w, "type");
		jw_string(&w, "cpi_summary");
		jw_key(&w, "intervals");
		jw_s64(&w, r.intervals);
		jw_key(&w, "judged");
		jw_s64(&w, cpi__judged(r.det));
		jw_key(&w, "outlier_intervals");
		jw_s64(&w, r.outliers);
		jw_key(&w, "episodes");
		jw_s64(&w, r.episodes);
		jw_end_object(&w);
		putchar('\n');
	} else {
		printf("# %lld intervals, %lld cgroup samples judged: %lld outlier intervals in %lld "
		       "episode%s\n",
		       r.intervals, cpi__judged(r.det), r.outliers, r.episodes,
		       r.episodes == 1 ? "" : "s");
	}
	rc = 0;
out:
	free(line);
	pending__clear(&r);
	free(r.p);
	free(r.time);
	cpi__free(r.det);
	if (in != stdin)
		fclose(in);
	return rc;
}
