// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * pmbpf profile: stacks of a sampling event (on-CPU) or of off-CPU time,
 * aggregated in the kernel, symbolized at the end, written as folded stacks
 * or an SVG flame graph. Of every process, of one (-p), of a cgroup (-G), or
 * of a command and its children (-- COMMAND: run in a cgroup of its own, as
 * pmbpf stat runs it, until it exits).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <linux/perf_event.h>
#include <bpf/libbpf.h>
#include "cmdrun.h"
#include "commands.h"
#include "options.h"
#include "flamegraph.h"
#include "profile_sampler.h"
#include "util.h"

#define POLL_MS 200

/* --call-graph dwarf: the stack copied per sample, as perf's default. */
#define DWARF_SIZE_DEFAULT 8192

enum {
	OPT_FOLDED = OPT_COMMAND,
	OPT_SVG,
	OPT_OFFCPU,
	OPT_TITLE,
	OPT_CALL_GRAPH,
};

static const struct cmdopt options[] = {
	{ 'e', "event", "NAME",
	  "sampling event (default cycles; cpu-clock without a PMU);\n"
	  "a tracepoint (sys:name) is sampled at every hit" },
	{ 'F', "freq", "HZ", "samples per second on each CPU (default 99)" },
	{ 'c', "period", "N", "one sample every N events (instead of -F)" },
	{ 'd', "duration", "TIME", "stop after this long (default: at SIGINT or SIGTERM)" },
	{ 'p', "pid", "PID", "only this process (filtered in the kernel); stops when it exits" },
	{ OPTION_CGROUP },
	{ 'o', "output", "FILE", "write to FILE instead of standard output" },
	{ OPT_FOLDED, "folded", NULL, "folded stacks, 'comm;outer;...;inner COUNT' (default)" },
	{ OPT_SVG, "svg", NULL, "an interactive SVG flame graph" },
	{ OPT_OFFCPU, "off-cpu", NULL,
	  "time spent off the CPU (blocked or waiting for a CPU) by the\n"
	  "stack it left with, in microseconds, instead of samples" },
	{ OPT_TITLE, "title", "TEXT", "title of the flame graph" },
	{ OPT_CALL_GRAPH, "call-graph", "MODE",
	  "how user stacks are walked: fp (frame pointers, default) or\n"
	  "dwarf[,SIZE] (copy SIZE bytes of stack, default 8192, and unwind\n"
	  "with .eh_frame/.debug_frame: code without frame pointers)" },
	{ OPTION_RAW_TP },
	{ OPTION_VERBOSE },
	{ CMDOPT_HELP },
	{},
};

const struct cmdopts profile_cmdopts = {
	.cmd = "profile",
	.head = "Usage: pmbpf profile [OPTIONS]\n"
		"       pmbpf profile [OPTIONS] -- COMMAND [ARGS...]\n"
		"Sample stacks on a perf event (or measure off-CPU time by stack) and write\n"
		"folded stacks or an SVG flame graph: of every process, or of COMMAND and\n"
		"all its children until it exits.\n",
	.opts = options,
	.tail = "Kernel frames end in _[k]. Event names: pmbpf list.\n"
		"With COMMAND: the exit code is the command's (128 + signal if it was\n"
		"killed), or 1 if pmbpf failed; SIGINT or SIGTERM is passed on to the\n"
		"command, a second one kills it. The command's output is its own: give\n"
		"-o FILE to keep the profile apart from what it writes to stdout.\n",
};

static unsigned long long max_sample_rate(void)
{
	unsigned long long v = 100000;
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "re");

	if (f) {
		if (fscanf(f, "%llu", &v) != 1)
			v = 100000;
		fclose(f);
	}
	return v;
}

/* --call-graph fp | dwarf[,SIZE], as perf spells it. */
static int parse_call_graph(const char *arg, struct profile_opts *o)
{
	const char *comma = strchr(arg, ',');
	size_t mode_len = comma ? (size_t)(comma - arg) : strlen(arg);
	unsigned long long size = DWARF_SIZE_DEFAULT;

	if (mode_len == 2 && !strncmp(arg, "fp", 2) && !comma) {
		o->dwarf = false;
		return 0;
	}
	if (mode_len != 5 || strncmp(arg, "dwarf", 5)) {
		pr_err("invalid --call-graph '%s': give fp or dwarf[,SIZE]\n", arg);
		return -EINVAL;
	}
	if (comma && (uint__parse(comma + 1, 8, PROFILE_DWARF_MAX_SIZE, &size) || size % 8)) {
		pr_err("invalid --call-graph size '%s': give a multiple of 8 from 8 to %u (bytes of stack per sample)\n",
		       comma + 1, PROFILE_DWARF_MAX_SIZE);
		return -EINVAL;
	}
	o->dwarf = true;
	o->dwarf_size = (unsigned int)size;
	return 0;
}

static int parse_args(int argc, char **argv, struct profile_opts *o)
{
	unsigned long long max_rate;
	struct cmdopt_getopt g = {};
	char msg[320];
	int c, err;

	while ((c = cmdopt__next(&profile_cmdopts, &g, argc, argv)) != -1) {
		switch (c) {
		case 'e':
			err = event__parse_msg(optarg, &o->event, msg, sizeof(msg));
			if (err) {
				pr_err("%s\n", msg);
				return -EINVAL;
			}
			o->event_given = true;
			break;
		case 'F':
			max_rate = max_sample_rate();
			if (uint__parse(optarg, 1, max_rate, &o->freq)) {
				pr_err("invalid frequency '%s': give 1 to %llu Hz (kernel.perf_event_max_sample_rate)\n",
				       optarg, max_rate);
				return -EINVAL;
			}
			break;
		case 'c':
			if (options__count("period", optarg, &o->period))
				return -EINVAL;
			break;
		case 'd':
			if (options__duration(optarg, &o->duration_ns))
				return -EINVAL;
			break;
		case 'p':
			if (options__pid(optarg, &o->pid))
				return -EINVAL;
			break;
		case 'G':
			if (cgroup__resolve(optarg, o->cgroup_path, sizeof(o->cgroup_path)))
				return -EINVAL;
			o->cgroup = o->cgroup_path;
			break;
		case 'o':
			o->output = optarg;
			break;
		case OPT_FOLDED:
			o->folded = true;
			break;
		case OPT_SVG:
			o->svg = true;
			break;
		case OPT_OFFCPU:
			o->offcpu = true;
			break;
		case OPT_TITLE:
			o->title = optarg;
			break;
		case OPT_CALL_GRAPH:
			if (parse_call_graph(optarg, o))
				return -EINVAL;
			break;
		case OPT_RAW_TP:
			o->raw_tp = true;
			break;
		case 'v':
			o->verbose = true;
			break;
		default:
			cmdopt__default(&profile_cmdopts, c);
			return -EINVAL;
		}
	}
	if (optind < argc)
		o->argv = argv + optind;
	if (o->argv && (o->pid || o->cgroup || o->duration_ns)) {
		pr_err("a COMMAND is profiled until it exits, with its children: it takes no -p, -G or -d\n");
		return -EINVAL;
	}
	if (o->freq && o->period) {
		pr_err("give either -F (frequency) or -c (period), not both\n");
		return -EINVAL;
	}
	if (o->pid && o->cgroup) {
		pr_err("give either -p (a process) or -G (a cgroup), not both\n");
		return -EINVAL;
	}
	if (o->folded && o->svg) {
		pr_err("give either --folded or --svg, not both\n");
		return -EINVAL;
	}
	/*
	 * A tracepoint's program runs at every hit, on every CPU, before perf
	 * would count a period: as perf record's default for tracepoints (-c 1).
	 */
	if (profile_opts__tracepoint(o) && (o->freq || o->period)) {
		pr_err("a tracepoint (%s) is sampled at every hit: it takes no -F or -c\n",
		       o->event.name);
		return -EINVAL;
	}
	if (o->offcpu && (o->event_given || o->freq || o->period)) {
		pr_err("--off-cpu measures time at context switches: it takes no -e, -F or -c\n");
		return -EINVAL;
	}
	if (o->offcpu && o->dwarf) {
		pr_err("--call-graph dwarf copies stacks at samples: it does not go with --off-cpu\n");
		return -EINVAL;
	}
	return 0;
}

/* What is profiled, in words: "process 42", "command 'make -j2' and its children". */
static void scope_str(const struct profile_opts *o, char *buf, size_t len)
{
	size_t n;
	int i;

	if (o->argv) {
		n = (size_t)snprintf(buf, len, "command '");
		for (i = 0; o->argv[i] && n < len; i++)
			n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? " " : "", o->argv[i]);
		if (n < len)
			snprintf(buf + n, len - n, "' and its children");
	} else if (o->pid) {
		snprintf(buf, len, "process %d", o->pid);
	} else if (o->cgroup) {
		snprintf(buf, len, "cgroup %s", o->cgroup);
	} else {
		snprintf(buf, len, "all processes");
	}
}

static void title_make(struct profile *p, __u64 elapsed_ns, char *title, size_t tlen, char *sub,
		       size_t slen)
{
	struct profile_opts *o = p->o;
	char scope[4200], rate[64];

	scope_str(o, scope, sizeof(scope));
	if (o->offcpu) {
		snprintf(title, tlen, "%s", o->title ? o->title : "Off-CPU Time Flame Graph");
		snprintf(sub, slen, "off-CPU time in microseconds, %s, %.1f s", scope,
			 elapsed_ns / 1e9);
		return;
	}
	if (profile_opts__tracepoint(o))
		snprintf(rate, sizeof(rate), "every hit");
	else if (o->period)
		snprintf(rate, sizeof(rate), "every %llu events", o->period);
	else
		snprintf(rate, sizeof(rate), "%llu Hz", o->freq ? o->freq : PROFILE_DEFAULT_FREQ);
	snprintf(title, tlen, "%s", o->title ? o->title : "Flame Graph");
	snprintf(sub, slen, "%s samples (%s), %s, %.1f s", o->event.name, rate, scope,
		 elapsed_ns / 1e9);
	if (o->dwarf) {
		size_t l = strlen(sub);

		snprintf(sub + l, slen - l,
			 ", dwarf unwinding (%u-byte stacks): %llu of %llu truncated",
			 o->dwarf_size, (unsigned long long)p->dw.truncated,
			 (unsigned long long)p->dw.samples);
	}
}

static int write_output(struct profile *p, FILE *f, const struct folded *lines, size_t n,
			__u64 elapsed_ns)
{
	char title[256], sub[4400];
	struct flame_opts fo = { .title = title, .subtitle = sub };
	int err, werr;

	errno = 0;
	if (!p->o->svg) {
		err = folded__write(f, lines, n);
	} else {
		title_make(p, elapsed_ns, title, sizeof(title), sub, sizeof(sub));
		fo.units = p->o->offcpu ? "us" : "samples";
		err = flamegraph__write(f, lines, n, &fo);
	}
	werr = stream__error(f);
	return werr ?: err;
}

static void raise_fd_limit(void)
{
	struct rlimit rl;

	/* One descriptor per mapped file stays open until symbolization. */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static int profile_run(struct profile *p)
{
	struct profile_opts *o = p->o;
	__u64 start = now_ns(CLOCK_MONOTONIC), now;
	int err = 0, timeout;

	while (!exiting) {
		timeout = POLL_MS;
		if (o->duration_ns) {
			now = now_ns(CLOCK_MONOTONIC);
			if (now >= start + o->duration_ns)
				break;
			if (start + o->duration_ns - now < (__u64)POLL_MS * 1000000)
				timeout = (int)((start + o->duration_ns - now) / 1000000) + 1;
		}
		timeout = profile__recheck_due(p, timeout);
		err = profile__poll(p, timeout);
		if (err == -EINTR) {
			err = 0;
			continue;
		}
		if (err < 0) {
			pr_err("cannot read the ring buffer: %s\n", strerror(-err));
			return err;
		}
		err = 0;
		if (o->pid && process__state(o->pid) != PROCESS_RUNNING) {
			pr_err("process %d exited\n", o->pid);
			break;
		}
	}
	return err;
}

/*
 * -- COMMAND: until the command has ended, reading the ring buffers as they
 * fill (signals are passed on to the command, which decides when to end).
 */
static int profile_run_command(struct profile *p, struct cmdrun *r)
{
	int fd = profile__epoll_fd(p), err;

	while (!r->done) {
		cmdrun__wait(r, fd, profile__recheck_due(p, POLL_MS));
		err = profile__consume(p);
		if (err < 0 && err != -EINTR) {
			pr_err("cannot read the ring buffer: %s\n", strerror(-err));
			cmdrun__kill(r);
			return err;
		}
	}
	return 0;
}

/* One line on stderr once everything is attached: profiling has begun. */
static void announce(const struct profile_opts *o)
{
	char what[128], scope[4200], until[64];

	if (o->offcpu)
		snprintf(what, sizeof(what), "off-CPU time");
	else if (profile_opts__tracepoint(o))
		snprintf(what, sizeof(what), "%s at every hit", o->event.name);
	else if (o->period)
		snprintf(what, sizeof(what), "%s every %llu events", o->event.name, o->period);
	else
		snprintf(what, sizeof(what), "%s at %llu Hz", o->event.name,
			 o->freq ? o->freq : PROFILE_DEFAULT_FREQ);
	scope_str(o, scope, sizeof(scope));
	if (o->argv)
		snprintf(until, sizeof(until), "until it exits");
	else if (o->duration_ns)
		snprintf(until, sizeof(until), "for %.3g s", o->duration_ns / 1e9);
	else
		snprintf(until, sizeof(until), "until SIGINT");
	pr_err("profiling %s, %s, %s\n", what, scope, until);
}

int cmd_profile(int argc, char **argv)
{
	struct profile_opts o = {};
	struct profile p = { .o = &o };
	struct cmdrun run = { .pidfd = -1 };
	struct folded *lines = NULL;
	size_t nr_lines = 0, i;
	bool *online = NULL;
	FILE *out = stdout;
	__u64 start, elapsed;
	int err, code = 0;

	if (parse_args(argc, argv, &o))
		return 2;
	if (o.pid && process__check_running(&o.pid))
		return 1;
	if (o.output) {
		out = fopen(o.output, "we");
		if (!out) {
			pr_err("cannot write %s: %s\n", o.output, strerror(errno));
			return 1;
		}
	}
	if (privileges__check() || (o.argv ? cmdrun__signals_setup() : signals__setup())) {
		err = -EPERM;
		goto cleanup;
	}
	if (out != stdout)
		signals__watch_output(fileno(out));
	/* -- COMMAND: the command's cgroup is made first, for the filter */
	if (o.argv) {
		err = cmdrun__create_cgroup(o.cgroup_path, sizeof(o.cgroup_path));
		if (err)
			goto cleanup;
		o.cgroup = o.cgroup_path;
	}
	libbpf__set_verbose(o.verbose);
	raise_fd_limit();
	p.nr_cpus = libbpf_num_possible_cpus();
	if (p.nr_cpus <= 0) {
		err = p.nr_cpus ? p.nr_cpus : -EINVAL;
		pr_err("cannot count CPUs: %s\n", strerror(-err));
		goto cleanup;
	}
	online = calloc(p.nr_cpus, sizeof(*online));
	if (!online) {
		err = -ENOMEM;
		goto cleanup;
	}
	err = cpus__online(online, p.nr_cpus);
	if (err) {
		pr_err("cannot read online CPUs: %s\n", strerror(-err));
		goto cleanup;
	}
	err = profile__open(&p, online);
	if (err)
		goto cleanup;

	announce(&o);
	start = now_ns(CLOCK_MONOTONIC);
	if (o.argv) {
		/*
		 * Nothing passes the filter until it is set: what the child
		 * does before its exec is pmbpf's, as perf counts from the
		 * exec (enable_on_exec).
		 */
		err = cmdrun__start(&run, o.cgroup, 1, o.argv);
		if (!err && !run.done) {
			err = profile__set_cgroup_filter(&p);
			if (err)
				cmdrun__kill(&run);
		}
		err = err ?: cmdrun__go(&run);
		err = err ?: profile_run_command(&p, &run);
		code = run.done ? wait_status__code(run.status) : 0;
	} else {
		err = profile_run(&p);
	}
	elapsed = now_ns(CLOCK_MONOTONIC) - start;
	profile__detach(&p);
	if (err)
		goto cleanup;
	profile__read_stats(&p);

	err = profile__fold(&p, &lines, &nr_lines);
	if (err)
		goto cleanup;
	nr_lines = folded__merge(lines, nr_lines);
	/* Off-CPU weights are nanoseconds in the kernel, microseconds out. */
	if (o.offcpu)
		for (i = 0; i < nr_lines; i++)
			lines[i].weight = (lines[i].weight + 500) / 1000;
	err = write_output(&p, out, lines, nr_lines, elapsed);
	if (err) {
		/* stdout's write errors are reported once, at exit */
		if (out != stdout && err != -EPIPE)
			pr_err("cannot write %s: %s\n", o.output, strerror(-err));
		goto cleanup;
	}
	if (o.offcpu)
		pr_err("%llu us off-CPU in %llu switches, %llu ns lost (map full), %llu stack errors, %zu stacks\n",
		       (unsigned long long)(p.stats[PROFILE_STAT_WEIGHT] / 1000),
		       (unsigned long long)p.stats[PROFILE_STAT_SWITCHES_OUT],
		       (unsigned long long)p.stats[PROFILE_STAT_LOST],
		       (unsigned long long)p.stats[PROFILE_STAT_STACK_ERRORS], nr_lines);
	else
		pr_err("%llu samples of %s, %llu lost (map full), %llu stack errors, %zu stacks\n",
		       (unsigned long long)p.stats[PROFILE_STAT_SAMPLES], o.event.name,
		       (unsigned long long)(p.stats[PROFILE_STAT_LOST] +
					    p.stats[PROFILE_STAT_USTACKS_LOST] + p.dw.lost),
		       (unsigned long long)p.stats[PROFILE_STAT_STACK_ERRORS], nr_lines);
	if (o.dwarf)
		pr_err("dwarf: %llu stacks unwound (%.1f us each), %llu truncated at %u bytes, %llu lost (ring buffer full), %llu unreadable\n",
		       (unsigned long long)p.dw.samples,
		       p.dw.samples ? p.dw.unwind_ns / 1e3 / p.dw.samples : 0.0,
		       (unsigned long long)p.dw.truncated, o.dwarf_size,
		       (unsigned long long)p.stats[PROFILE_STAT_USTACKS_LOST],
		       (unsigned long long)p.stats[PROFILE_STAT_USTACKS_UNREAD]);

cleanup:
	for (i = 0; i < nr_lines; i++)
		free(lines[i].stack);
	free(lines);
	free(online);
	profile__close(&p);
	if (o.argv && o.cgroup) {
		cmdrun__finish(&run);
		cmdrun__remove_cgroup(o.cgroup_path);
	}
	if (out != stdout && fclose(out) && !err) {
		err = -errno;
		if (err != -EPIPE)
			pr_err("cannot write %s: %s\n", o.output, strerror(-err));
	}
	write_error__exit(err);
	return code ?: (err ? 1 : 0);
}
