// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * pmbpf stat -- CMD: totals for a command and all its children, for
 * comparing two runs in CI. The command runs in a cgroup of its own, so its
 * children are followed by the kernel (the in-kernel cgroup filter), however
 * short-lived. -r N repeats it (one BPF session, one child cgroup per run);
 * --ab alternates two commands and compares them.
 *
 * The report goes to stderr (or -O FILE), as perf stat's does, so that the
 * command's own stdout stays its own.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/utsname.h>
#include "catalog.h"
#include "cmdrun.h"
#include "commands.h"
#include "compare.h"
#include "host.h"
#include "json_writer.h"
#include "metrics.h"
#include "options.h"
#include "output.h"
#include "proctable.h"
#include "session.h"
#include "stat_report.h"
#include "util.h"

#define STAT_PREFIX "pmbpf-stat-"
#define MAX_RUNS    10000

enum { OPT_AB = OPT_COMMAND, OPT_MAX_RUNS };

static const struct cmdopt options[] = {
	{ OPTION_EVENTS },
	{ OPTION_METRICS },
	{ 'r', "repeat", "N", "run the command N times: mean, stddev, RSD, min, max" },
	{ OPT_AB, "ab", NULL,
	  "run COMMAND_A and COMMAND_B alternately (A B A B ...), N\n"
	  "times each (default 7), and compare them as 'pmbpf\n"
	  "compare' does" },
	{ 't', "threshold", "NAME=+P%", "with --ab: a regression threshold (see pmbpf compare)" },
	{ OPT_MAX_RUNS, "max-runs", "M",
	  "with --ab: while a metric is too noisy, add pairs of runs\n"
	  "as compare advises, up to M each (at most " STR(COMPARE_MAX_RUNS) ")" },
	{ 'o', "output", "FORMAT", "table (default) or json (one document, every run)" },
	{ 'O', "output-file", "FILE", "write the report to FILE instead of stderr ('-': stdout)" },
	{ 'i', "interval", "TIME", "how often to read the kernel's counts (default 0.5s)" },
	{ OPTION_MAX_PROCS },
	{ OPTION_VERBOSE },
	{ CMDOPT_HELP },
	{},
};

const struct cmdopts stat_cmdopts = {
	.cmd = "stat",
	.head = "Usage: pmbpf stat [OPTIONS] -- COMMAND [ARGS...]\n"
		"       pmbpf stat -r N --ab [OPTIONS] -- COMMAND_A [ARGS...] --- COMMAND_B [ARGS...]\n"
		"Run COMMAND and report the totals of it and all its children on stderr\n"
		"(the command's stdout and stderr stay its own).\n",
	.opts = options,
	.tail = "The exit code is the command's (128 + signal if it was killed); with -r N\n"
		"a failing run stops the series with its exit code and no report. With --ab:\n"
		"0 no regression of B against A, 1 a regression, 2 bad input.\n"
		"SIGINT or SIGTERM is passed on to the command; a second one kills it.\n"
		"One before the command starts stops pmbpf: no report, 128 + signal.\n",
};

struct stat_ctx {
	struct session_opts so;
	__u64 interval_ns;
	enum output_format format;
	const char *out_path;
	int out_fd;
	int repeat;
	int max_runs; /* --ab: runs a side that too noisy a verdict may grow repeat to */
	bool ab;
	struct threshold th[COMPARE_MAX_THRESHOLDS];
	int nr_th;
	char **argv_a, **argv_b;
	char cgroup[4096];
	struct session *s;
	struct snapshot snap;
	struct stat_run *runs;
	int nr_runs;
};

/* Sum this interval's figures of the run's cgroup; count its processes. */
static void accumulate(const struct snapshot *snap, __u64 cgid, struct figures *acc,
		       struct proctable *seen)
{
	size_t i;

	for (i = 0; i < snap->nr_cgroups; i++)
		if (snap->cgroups[i].id == cgid)
			figures__add(acc, &snap->cgroups[i].total);
	for (i = 0; i < snap->nr_rows; i++) {
		const struct proc_row *r = &snap->rows[i];
		struct pmbpf_key key = { .tgid = r->pid, .cgroup_id = r->start_ns };

		if (r->cgroup_id == cgid)
			proctable__get(seen, &key);
	}
}

/* Run argv once in a new child cgroup; the figures go to *run. */
static int run_once(struct stat_ctx *ctx, char **argv, struct stat_run *run, int index)
{
	struct proctable seen = {};
	struct figures before_exec = {};
	struct cmdrun r;
	__u64 next;
	int err;

	err = cmdrun__start(&r, ctx->cgroup, index, argv);
	/*
	 * The baseline: the counts of the child up to its stop go to an
	 * interval of their own, which is left out (but its process is seen).
	 */
	if (!err && !r.done) {
		err = session__collect(ctx->s, &ctx->snap);
		if (!err)
			accumulate(&ctx->snap, r.cgroup_id, &before_exec, &seen);
		else
			cmdrun__kill(&r); /* pmbpf cannot count: the command does not run */
	}
	err = err ?: cmdrun__go(&r);
	next = r.start_ns + ctx->interval_ns;
	while (!err && !r.done) {
		__u64 now = now_ns(CLOCK_MONOTONIC);
		/* at most SESSION_DRAIN_NS: exit records are taken on the way */
		__u64 wait_ns = now >= next ? 0 : next - now;
		int wait_ms =
			(int)(((wait_ns < SESSION_DRAIN_NS ? wait_ns : SESSION_DRAIN_NS) + 999999) /
			      1000000);
		bool done = cmdrun__wait(&r, -1, wait_ms);

		if (done || now_ns(CLOCK_MONOTONIC) >= next) {
			err = session__collect(ctx->s, &ctx->snap);
			if (!err)
				accumulate(&ctx->snap, r.cgroup_id, &run->f, &seen);
			next = now_ns(CLOCK_MONOTONIC) + ctx->interval_ns;
		} else {
			int n = session__drain(ctx->s);

			if (n < 0)
				err = n;
		}
		if (err)
			cmdrun__kill(&r); /* pmbpf cannot count: stop the command */
	}
	run->wall_ns = r.wall_ns;
	run->status = r.status;
	run->exit_code = wait_status__code(r.status);
	run->nr_procs = (unsigned int)seen.used;
	proctable__free(&seen);
	cmdrun__finish(&r);
	return err;
}

static const char *pmu_status(const struct session *s)
{
	if (session__hw_counting(s))
		return "counting";
	if (session__no_pmu(s))
		return "none";
	return "not-used"; /* no hardware event asked for */
}

/* What the report needs of the session and the runs, as plain data. */
static void report_of(const struct stat_ctx *ctx, struct stat_report *rep)
{
	*rep = (struct stat_report){ .metrics = ctx->snap.metrics,
				     .attach = session__attach_kind(ctx->s),
				     .pmu = pmu_status(ctx->s),
				     .argv_a = ctx->argv_a,
				     .argv_b = ctx->ab ? ctx->argv_b : NULL,
				     .repeat = ctx->repeat,
				     .runs = ctx->runs,
				     .nr_runs = ctx->nr_runs };
	rep->events = session__events(ctx->s, &rep->nr_events);
}

static char *join_argv(char **argv)
{
	size_t len = 1;
	char *s;
	int i;

	for (i = 0; argv[i]; i++)
		len += strlen(argv[i]) + 1;
	s = calloc(1, len);
	for (i = 0; s && argv[i]; i++) {
		if (i)
			strcat(s, " ");
		strcat(s, argv[i]);
	}
	return s;
}

/* The runs of one group as columns. */
static int build_series(const struct stat_ctx *ctx, char group, struct series *s)
{
	struct stat_metric mv[SERIES_MAX_METRICS];
	struct stat_report rep;
	int i, j, n, k = 0;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < ctx->nr_runs; i++)
		s->n += ctx->runs[i].group == group;
	s->label = strdup(group == 'A' ? "A" : "B");
	s->command = join_argv(group == 'A' ? ctx->argv_a : ctx->argv_b);
	if (!s->label || !s->command)
		return -ENOMEM;
	report_of(ctx, &rep);
	for (i = 0; i < ctx->nr_runs; i++) {
		if (ctx->runs[i].group != group)
			continue;
		n = stat_run__metrics(&rep, &ctx->runs[i], mv);
		for (j = 0; j < n; j++) {
			struct metric_col *c = series__find(s, mv[j].name);

			if (!c)
				c = series__add(s, mv[j].name, mv[j].time);
			if (!c)
				return -ENOMEM;
			c->v[k] = mv[j].v;
		}
		k++;
	}
	return 0;
}

/* --max-runs: the runs a side that the pairs so far ask for (compare__runs_to_decide). */
static int runs_to_decide(const struct stat_ctx *ctx)
{
	struct series a = {}, b = {};
	struct compare_result *cmp = malloc(sizeof(*cmp));
	int want = ctx->repeat;
	char err[600];

	if (cmp && !build_series(ctx, 'A', &a) && !build_series(ctx, 'B', &b) &&
	    !compare__series(&a, &b, ctx->th, ctx->nr_th, cmp, err, sizeof(err)))
		want = compare__runs_to_decide(cmp, ctx->repeat, ctx->max_runs);
	free(cmp);
	series__free(&a);
	series__free(&b);
	return want;
}

/*
 * Build the report in memory and write it in one go: a write error is then
 * known exactly (ENOSPC on a file, EPIPE from a reader that left).
 */
static int report(struct stat_ctx *ctx, int *verdict_rc)
{
	struct series a = {}, b = {};
	struct compare_result *cmp = NULL;
	char err[600], *text = NULL;
	size_t len = 0;
	int ret;
	FILE *f;

	ret = build_series(ctx, 'A', &a);
	if (!ret && ctx->ab)
		ret = build_series(ctx, 'B', &b);
	if (ret)
		goto out;
	if (ctx->ab) {
		cmp = malloc(sizeof(*cmp));
		if (!cmp) {
			ret = -ENOMEM;
			goto out;
		}
		if (compare__series(&a, &b, ctx->th, ctx->nr_th, cmp, err, sizeof(err))) {
			pr_err("%s\n", err);
			*verdict_rc = 2;
			ret = -EINVAL;
			goto out;
		}
		*verdict_rc = cmp->counts[VERDICT_REGRESSION] ? 1 : 0;
	}
	f = open_memstream(&text, &len);
	if (!f) {
		ret = -errno;
		goto out;
	}
	if (ctx->format == OUTPUT_JSON) {
		struct stat_report rep;

		report_of(ctx, &rep);
		stat_report__json(f, &rep, &a, ctx->ab ? &b : NULL, cmp);
	} else if (ctx->nr_runs == 1) {
		struct snapshot snap = {};

		snap.events = session__events(ctx->s, &snap.nr_events);
		snap.metrics = ctx->snap.metrics;
		snap.interval_ns = ctx->runs[0].wall_ns;
		stat_report__run(f, &snap, &ctx->runs[0].f, ctx->argv_a, ctx->runs[0].status,
				 ctx->runs[0].nr_procs);
	} else {
		stat_report__table(f, &a, ctx->ab ? &b : NULL, cmp);
	}
	if (fclose(f)) {
		ret = -errno;
		goto out;
	}
	ret = report__write(ctx->out_fd, ctx->out_path ? ctx->out_path : "the report", text, len);
	if (ret == -EPIPE)
		ret = 0;
	if (!ret && ctx->out_path && ctx->out_fd != STDOUT_FILENO && close(ctx->out_fd)) {
		pr_err("cannot write %s: %s\n", ctx->out_path, strerror(errno));
		ret = -EIO;
	}
	ctx->out_fd = -1;
out:
	if (ret == -ENOMEM)
		pr_err("%s\n", strerror(ENOMEM));
	free(text);
	free(cmp);
	series__free(&a);
	series__free(&b);
	return ret;
}

static int parse_args(int argc, char **argv, struct stat_ctx *ctx)
{
	struct cmdopt_getopt g = {};
	unsigned long long n;
	char *usage;
	size_t len;
	int c, err, i;

	while ((c = cmdopt__next(&stat_cmdopts, &g, argc, argv)) != -1) {
		err = options__session(c, optarg, &ctx->so, NULL, 0);
		if (err < 0)
			return 2;
		if (err)
			continue;
		switch (c) {
		case 'r':
			if (uint__parse(optarg, 1, MAX_RUNS, &n)) {
				pr_err("invalid --repeat '%s': give 1 to %d\n", optarg, MAX_RUNS);
				return 2;
			}
			ctx->repeat = (int)n;
			break;
		case OPT_AB:
			ctx->ab = true;
			break;
		case OPT_MAX_RUNS:
			if (uint__parse(optarg, 2, COMPARE_MAX_RUNS, &n)) {
				pr_err("invalid --max-runs '%s': give 2 to %d\n", optarg,
				       COMPARE_MAX_RUNS);
				return 2;
			}
			ctx->max_runs = (int)n;
			break;
		case 't':
			if (ctx->nr_th == COMPARE_MAX_THRESHOLDS ||
			    threshold__parse(optarg, &ctx->th[ctx->nr_th++])) {
				pr_err("invalid --threshold '%s': give NAME=+P%% or NAME=-P%% (0 < P < 1000)\n",
				       optarg);
				return 2;
			}
			break;
		case 'o':
			if (output_format__parse(optarg, &ctx->format) ||
			    ctx->format == OUTPUT_CSV) {
				pr_err("unknown output format '%s': use table or json (-O FILE names a file)\n",
				       optarg);
				return 2;
			}
			break;
		case 'O':
			ctx->out_path = optarg;
			break;
		case 'i':
			if (options__interval(optarg, 10000000ULL, 0, &ctx->interval_ns))
				return 2;
			break;
		case 'h':
			usage = cmdopt__usage(&stat_cmdopts, &len);
			if (!usage) {
				pr_err("%s\n", strerror(ENOMEM));
				return 1;
			}
			err = report__write(STDOUT_FILENO, "the help", usage, len);
			free(usage);
			return err == -EIO ? 1 : -1;
		default:
			pr_err("try 'pmbpf stat --help'\n");
			return 2;
		}
	}
	if (optind >= argc) {
		pr_err("no command given: pmbpf stat [OPTIONS] -- COMMAND\n");
		return 2;
	}
	ctx->argv_a = argv + optind;
	for (i = optind; i < argc; i++)
		if (!strcmp(argv[i], "---"))
			break;
	if (ctx->ab) {
		if (i == argc || i == optind || i + 1 == argc) {
			pr_err("--ab needs two commands: -- COMMAND_A [ARGS] --- COMMAND_B [ARGS]\n");
			return 2;
		}
		argv[i] = NULL;
		ctx->argv_b = argv + i + 1;
		if (!ctx->repeat)
			ctx->repeat = 7;
		if (ctx->repeat < 2) {
			pr_err("--ab needs -r 2 or more: a verdict needs the spread of the runs\n");
			return 2;
		}
		if (ctx->max_runs && ctx->max_runs < ctx->repeat) {
			pr_err("--max-runs %d is fewer than -r %d\n", ctx->max_runs, ctx->repeat);
			return 2;
		}
	} else if (ctx->nr_th || ctx->max_runs) {
		pr_err("%s goes with --ab (or pmbpf compare)\n",
		       ctx->nr_th ? "--threshold" : "--max-runs");
		return 2;
	}
	if (!ctx->repeat)
		ctx->repeat = 1;
	return 0;
}

int cmd_stat(int argc, char **argv)
{
	struct stat_ctx ctx = { .interval_ns = 500000000ULL,
				.format = OUTPUT_TABLE,
				.out_fd = STDERR_FILENO };
	int i, g, err, rc = 1, verdict_rc = 0;

	rc = parse_args(argc, argv, &ctx);
	if (rc)
		return rc < 0 ? 0 : rc;
	rc = 1;
	if (options__default_events(&ctx.so))
		return 2;
	if (ctx.out_path && strcmp(ctx.out_path, "-")) {
		ctx.out_fd = open(ctx.out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (ctx.out_fd < 0) {
			pr_err("cannot create %s: %s\n", ctx.out_path, strerror(errno));
			return 1;
		}
	} else if (ctx.out_path) {
		ctx.out_fd = STDOUT_FILENO;
	}
	ctx.runs = calloc((size_t)ctx.repeat * (ctx.ab ? 2 : 1), sizeof(*ctx.runs));
	if (!ctx.runs) {
		pr_err("%s\n", strerror(ENOMEM));
		goto out_close;
	}
	if (privileges__check() || cmdrun__signals_setup())
		goto out_close;
	if (cmdrun__create_cgroup(ctx.cgroup, sizeof(ctx.cgroup)))
		goto out_close;
	ctx.so.cgroup = ctx.cgroup;
	err = session__open(&ctx.s, &ctx.so);
	if (err) {
		if (err == -E2BIG) /* a group larger than the PMU: a usage error */
			rc = 2;
		goto out_rmdir;
	}

	for (i = 0; i < ctx.repeat && !exiting; i++) {
		for (g = 0; g < (ctx.ab ? 2 : 1) && !exiting; g++) {
			struct stat_run *r = &ctx.runs[ctx.nr_runs];

			r->group = g ? 'B' : 'A';
			err = run_once(&ctx, g ? ctx.argv_b : ctx.argv_a, r, ctx.nr_runs + 1);
			if (err)
				goto out_session;
			ctx.nr_runs++;
			if (ctx.repeat == 1 && !ctx.ab)
				continue;
			if (r->exit_code) {
				char how[64];

				if (WIFEXITED(r->status))
					snprintf(how, sizeof(how), "exited with %d", r->exit_code);
				else
					snprintf(how, sizeof(how), "was killed by SIG%s",
						 sigabbrev_np(WTERMSIG(r->status)) ?: "?");
				pr_err("run %d (%c) %s: no %s\n", ctx.nr_runs, r->group, how,
				       ctx.ab ? "comparison" : "report");
				rc = r->exit_code;
				goto out_session;
			}
		}
		if (i + 1 == ctx.repeat && ctx.max_runs > ctx.repeat && !exiting) {
			int want = runs_to_decide(&ctx);
			struct stat_run *more;

			if (want > ctx.repeat) {
				more = realloc(ctx.runs, sizeof(*more) * 2 * want);
				if (!more) {
					pr_err("%s\n", strerror(ENOMEM));
					goto out_session;
				}
				memset(more + ctx.nr_runs, 0,
				       sizeof(*more) * (2 * want - ctx.nr_runs));
				ctx.runs = more;
				ctx.repeat = want;
			}
		}
	}
	/*
	 * Stopped between runs, or before the first one (a signal while the
	 * session opens): what did run is not the series asked for, and a
	 * report of 0 runs would say nothing. As a stopped pmbpf does, 128 +
	 * the signal.
	 */
	if (exiting && (ctx.repeat > 1 || ctx.ab || !ctx.nr_runs)) {
		if (ctx.nr_runs)
			pr_err("interrupted after %d of %d runs: no report\n", ctx.nr_runs,
			       ctx.repeat * (ctx.ab ? 2 : 1));
		else
			pr_err("interrupted before the command ran: no report\n");
		rc = 128 + cmdrun__last_signal();
		goto out_session;
	}
	err = report(&ctx, &verdict_rc);
	if (ctx.ab)
		rc = err && !verdict_rc ? 1 : verdict_rc;
	else
		rc = ctx.runs[0].exit_code ?: (err ? 1 : 0);
out_session:
	session__close(ctx.s);
	snapshot__free(&ctx.snap);
out_rmdir:
	cmdrun__remove_cgroup(ctx.cgroup);
out_close:
	if (ctx.out_fd > STDERR_FILENO)
		close(ctx.out_fd);
	free(ctx.runs);
	return rc;
}
