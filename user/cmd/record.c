// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* pmbpf record: one row per process that ran, every interval. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cgroup.h"
#include "commands.h"
#include "options.h"
#include "output.h"
#include "session.h"
#include "util.h"

static const struct cmdopt options[] = {
	{ OPTION_EVENTS },
	{ OPTION_METRICS },
	{ 'i', "interval", "TIME", "interval: 1, 1s, 500ms (default 1s)" },
	{ 'd', "duration", "TIME", "stop after this long" },
	{ 'c', "count", "N", "stop after N intervals" },
	{ OPTION_PID },
	{ OPTION_CGROUP },
	{ 'o', "output", "FORMAT", "table (default), json (JSON Lines) or csv" },
	{ 'b', "by", "WHAT",
	  "rows per process, thread (implies --threads), cgroup or\n"
	  "all (default: process, thread with --threads; all for\n"
	  "json; csv takes one of process, thread, cgroup)" },
	OPTIONS_COLLECTION,
	{ OPTION_THREAD_FOLD },
	{ OPTION_WAKEUP_PROGS },
	{ OPTION_VERBOSE },
	{ CMDOPT_HELP },
	{},
};

const struct cmdopts record_cmdopts = {
	.cmd = "record",
	.head = "Usage: pmbpf record [OPTIONS]\n"
		"Print per-process counts, IPC and miss rates every interval.\n",
	.opts = options,
	.tail = "Event names: pmbpf list.\n",
};

struct record_opts {
	struct session_opts s;
	__u64 interval_ns;
	__u64 duration_ns;
	unsigned long long count;
	enum output_format format;
	const char *by;
	char cgroup_path[4096];
};

static int parse_args(int argc, char **argv, struct record_opts *o)
{
	struct cmdopt_getopt g = {};
	int c, err;

	while ((c = cmdopt__next(&record_cmdopts, &g, argc, argv)) != -1) {
		err = options__session(c, optarg, &o->s, o->cgroup_path, sizeof(o->cgroup_path));
		if (err < 0)
			return -EINVAL;
		if (err)
			continue;
		switch (c) {
		case 'i':
			err = options__interval(optarg, 10000000ULL, 0, &o->interval_ns);
			break;
		case 'd':
			err = options__duration(optarg, &o->duration_ns);
			break;
		case 'c':
			err = options__count("count", optarg, &o->count);
			break;
		case 'o':
			if (output_format__parse(optarg, &o->format)) {
				pr_err("unknown output format '%s': use table, json or csv\n",
				       optarg);
				return -EINVAL;
			}
			break;
		case 'b':
			if (strcmp(optarg, "process") && strcmp(optarg, "thread") &&
			    strcmp(optarg, "cgroup") && strcmp(optarg, "all")) {
				pr_err("invalid --by '%s': use process, thread, cgroup or all\n",
				       optarg);
				return -EINVAL;
			}
			o->by = optarg;
			if (!strcmp(optarg, "thread"))
				o->s.threads = true;
			break;
		default:
			cmdopt__default(&record_cmdopts, c);
			return -EINVAL;
		}
		if (err)
			return -EINVAL; /* said by the parser */
	}
	if (o->by && o->format == OUTPUT_CSV && !strcmp(o->by, "all")) {
		pr_err("csv holds one kind of row: use --by process, thread or cgroup\n");
		return -EINVAL;
	}
	if (optind < argc) {
		pr_err("unexpected argument '%s'; try 'pmbpf record --help'\n", argv[optind]);
		return -EINVAL;
	}
	return 0;
}

/* Common checks of a session's targets, before anything is loaded. */
static int targets__check(struct session_opts *s)
{
	return s->pid ? process__check_running(&s->pid) : 0;
}

int cmd_record(int argc, char **argv)
{
	struct record_opts o = { .interval_ns = 1000000000ULL,
				 .format = OUTPUT_TABLE,
				 .s.delays = DELAYS_AUTO };
	struct output out = { .f = stdout };
	struct snapshot snap = {};
	struct session *s = NULL;
	struct cgroup_stats *cgs = NULL;
	struct timespec next;
	const struct event_info *ev;
	__u64 start, n = 0;
	int err, nr;

	if (parse_args(argc, argv, &o))
		return 2;
	if (options__default_events(&o.s))
		return 2;
	out.format = o.format;
	if (!o.by)
		o.by = o.format == OUTPUT_JSON ? "all" : o.s.threads ? "thread" : "process";
	out.procs = !strcmp(o.by, "process") || !strcmp(o.by, "all");
	out.threads = o.s.threads && (!strcmp(o.by, "thread") || !strcmp(o.by, "all"));
	out.cgroups = !strcmp(o.by, "cgroup") || !strcmp(o.by, "all");
	o.s.interval_ns = o.interval_ns;
	if (targets__check(&o.s))
		return 1;
	if (privileges__check())
		return 1;
	if (signals__setup())
		return 1;

	err = session__open(&s, &o.s);
	if (err)
		return err == -E2BIG ? 2 : 1; /* -E2BIG: a group larger than the PMU */
	ev = session__events(s, &nr);
	err = output__start(&out, ev, nr, session__no_pmu(s), session__attach_kind(s),
			    (int)sysconf(_SC_NPROCESSORS_ONLN));
	if (err)
		goto cleanup;

	/* the cgroups' own files (throttling, PSI): read where cgroup records show them */
	if (out.cgroups && (out.format == OUTPUT_JSON ||
			    (out.format == OUTPUT_CSV && !out.procs && !out.threads))) {
		cgs = cgroup_stats__new(CGROUP_STATS_KEEP);
		if (!cgs) {
			err = -ENOMEM;
			goto cleanup;
		}
		cgroup_stats__prime(cgs, o.s.cgroup);
	}
	start = now_ns(CLOCK_MONOTONIC);
	clock_gettime(CLOCK_MONOTONIC, &next);
	/*
	 * Always one collection, so that a signal right after start loses
	 * nothing; and one more when a signal comes during a collection or
	 * its output (a blocked write), so the last interval is not lost.
	 */
	for (;;) {
		bool last;
		__u64 t;

		t = (__u64)next.tv_sec * 1000000000ULL + next.tv_nsec + o.interval_ns;
		/*
		 * Behind (a collection or its output took longer than an
		 * interval): collect now, and go on from there. Catching up on
		 * the missed ends would give intervals of a few ms at once.
		 */
		if (t < now_ns(CLOCK_MONOTONIC))
			t = now_ns(CLOCK_MONOTONIC);
		if (o.duration_ns && t > start + o.duration_ns)
			t = start + o.duration_ns;
		next.tv_sec = t / 1000000000ULL;
		next.tv_nsec = t % 1000000000ULL;
		/* wait for the interval's end, taking exit records on the way */
		while (!exiting) {
			__u64 now = now_ns(CLOCK_MONOTONIC), wake = now + SESSION_DRAIN_NS;
			struct timespec w;

			if (now >= t)
				break;
			if (wake > t)
				wake = t;
			w.tv_sec = wake / 1000000000ULL;
			w.tv_nsec = wake % 1000000000ULL;
			if (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &w, NULL) == EINTR)
				continue;
			if (wake < t && session__drain(s) < 0)
				break;
		}
		last = exiting;
		err = session__collect(s, &snap);
		if (err)
			break;
		if (cgs)
			cgroups__read_stats(cgs, &snap, NULL, NULL);
		snapshot__sort_cpu(&snap);
		snapshot__sort_cgroups(&snap);
		/* A write that failed (a reader gone, a full disk) ends the run. */
		err = output__snapshot(&out, &snap);
		if (err)
			break;
		n++;
		if (last || (o.count && n >= o.count))
			break;
		if (o.duration_ns && now_ns(CLOCK_MONOTONIC) >= start + o.duration_ns)
			break;
		if (o.s.pid && process__state(o.s.pid) != PROCESS_RUNNING) {
			/* One more read so that its exit record is shown. */
			err = session__collect(s, &snap);
			if (!err && cgs)
				cgroups__read_stats(cgs, &snap, NULL, NULL);
			if (!err && snap.nr_rows) {
				snapshot__sort_cpu(&snap);
				snapshot__sort_cgroups(&snap);
				err = output__snapshot(&out, &snap);
			}
			pr_err("process %d exited\n", o.s.pid);
			break;
		}
	}
cleanup:
	cgroup_stats__free(cgs);
	snapshot__free(&snap);
	session__close(s);
	return err ? 1 : 0;
}
