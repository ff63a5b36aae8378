// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * pmbpf stat -- CMD: totals for a command and all its children, for
 * comparing two runs in CI. The command runs in a cgroup of its own, so its
 * children are followed by the kernel (the in-kernel cgroup filter), however
 * short-lived.
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
#include <sys/wait.h>
#include "cgroup.h"
#include "commands.h"
#include "options.h"
#include "output.h"
#include "proctable.h"
#include "session.h"
#include "util.h"

static const char usage[] =
	"Usage: pmbpf stat [OPTIONS] -- COMMAND [ARGS...]\n"
	"Run COMMAND and print the totals of it and all its children.\n"
	"\n"
	"  -e, --events LIST     comma-separated perf event names (default " DEFAULT_EVENTS ",\n"
	"                        software events where there is no PMU)\n"
	"  -M, --metrics LIST    ipc, mpki, topdown: named metrics, each from one group\n"
	"  -o, --output FORMAT   table (default) or json (one record)\n"
	"  -i, --interval TIME   how often to read the kernel's counts (default 0.5s)\n"
	"  -m, --max-procs N     process entries in the kernel map (default 10240)\n"
	"  -v, --verbose         libbpf debug output\n"
	"  -h, --help            this help\n"
	"\n"
	"The exit code is the command's (128 + signal if it was killed).\n";

static const struct option long_opts[] = {
	{ "events", required_argument, NULL, 'e' },
	{ "metrics", required_argument, NULL, 'M' },
	{ "output", required_argument, NULL, 'o' },
	{ "interval", required_argument, NULL, 'i' },
	{ "max-procs", required_argument, NULL, 'm' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{},
};

/* The child: wait for the go, move into the cgroup, run the command. */
static void child(int go_fd, const char *cgroup, char **argv)
{
	char path[4200], c;
	FILE *f;

	if (read(go_fd, &c, 1) != 1)
		_exit(127); /* pmbpf failed to start: nothing to run */
	snprintf(path, sizeof(path), "%s/cgroup.procs", cgroup);
	f = fopen(path, "w");
	if (!f || fprintf(f, "0\n") < 0 || fclose(f)) {
		fprintf(stderr, "pmbpf: cannot move into %s: %s\n", cgroup, strerror(errno));
		_exit(127);
	}
	execvp(argv[0], argv);
	fprintf(stderr, "pmbpf: cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

/* Sum this interval's figures of the command's cgroup; count its processes. */
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

int cmd_stat(int argc, char **argv)
{
	struct session_opts so = {};
	struct output out = { .f = stdout, .format = OUTPUT_TABLE, .procs = true, .cgroups = true };
	__u64 interval_ns = 500000000ULL, cgid, t0;
	struct snapshot snap = {}, total = {};
	struct proctable seen = {};
	struct figures acc = {};
	struct session *s = NULL;
	char cgroup[4096];
	int go[2], c, err, status = 0, rc = 1;
	bool forwarded = false;
	pid_t pid;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+e:M:o:i:m:vh", long_opts, NULL)) != -1) {
		err = options__session(c, optarg, &so, NULL, 0);
		if (err < 0)
			return 2;
		if (err)
			continue;
		switch (c) {
		case 'o':
			if (output_format__parse(optarg, &out.format) || out.format == OUTPUT_CSV) {
				fprintf(stderr,
					"pmbpf: unknown output format '%s': use table or json\n",
					optarg);
				return 2;
			}
			break;
		case 'i':
			if (options__interval(optarg, 10000000ULL, 0, &interval_ns))
				return 2;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			fprintf(stderr, "pmbpf: try 'pmbpf stat --help'\n");
			return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "pmbpf: no command given: pmbpf stat [OPTIONS] -- COMMAND\n");
		return 2;
	}
	if (options__default_events(&so))
		return 2;
	if (privileges__check() || signals__setup())
		return 1;
	if (cgroup__create("pmbpf-stat", cgroup, sizeof(cgroup)))
		return 1;
	cgid = cgroup__id_of(cgroup);
	so.cgroup = cgroup;

	if (pipe(go)) {
		fprintf(stderr, "pmbpf: pipe: %s\n", strerror(errno));
		goto out_rmdir;
	}
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "pmbpf: fork: %s\n", strerror(errno));
		goto out_rmdir;
	}
	if (!pid) {
		close(go[1]);
		child(go[0], cgroup, argv + optind);
	}
	close(go[0]);

	err = session__open(&s, &so);
	if (err) {
		close(go[1]); /* the child exits without running anything */
		waitpid(pid, NULL, 0);
		if (err == -E2BIG) /* a group larger than the PMU: a usage error */
			rc = 2;
		goto out_rmdir;
	}
	t0 = now_ns(CLOCK_MONOTONIC);
	if (write(go[1], "g", 1) != 1) {
		fprintf(stderr, "pmbpf: cannot start the command: %s\n", strerror(errno));
		goto out_close;
	}
	close(go[1]);

	for (;;) {
		__u64 next = now_ns(CLOCK_MONOTONIC) + interval_ns;
		bool done = false;

		while (now_ns(CLOCK_MONOTONIC) < next) {
			struct timespec ts = { .tv_nsec = 20000000L };

			if (waitpid(pid, &status, WNOHANG) == pid) {
				done = true;
				break;
			}
			if (exiting && !forwarded) {
				kill(pid, SIGINT); /* like a terminal's ^C: the command decides */
				forwarded = true;
			}
			nanosleep(&ts, NULL);
		}
		err = session__collect(s, &snap);
		if (err)
			goto out_close;
		accumulate(&snap, cgid, &acc, &seen);
		if (done)
			break;
	}

	total.events = session__events(s, &total.nr_events);
	total.metrics = snap.metrics;
	total.interval_ns = now_ns(CLOCK_MONOTONIC) - t0;
	output__command(&out, &total, &acc, argv + optind,
			WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status),
			(unsigned int)seen.used);
	rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
out_close:
	session__close(s);
out_rmdir:
	snapshot__free(&snap);
	proctable__free(&seen);
	if (rmdir(cgroup) && errno == EBUSY)
		fprintf(stderr, "pmbpf: processes of the command are still running in %s\n",
			cgroup);
	return rc;
}
