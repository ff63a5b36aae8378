// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * pmucheck: perf_event_open(2) without perf, for static guests. It gives the
 * ground truth that pmbpf's figures are compared with inside the VMs.
 *
 *   pmucheck open EVENT...
 *	Opens each event on itself and prints one line per event:
 *	"OPEN name ok" or "OPEN name error ENOENT No such file or directory".
 *   pmucheck stat [-u] -e EVENT[,EVENT...] -- CMD [ARG...]
 *	Runs CMD (and its children) with each event counted on its own (no
 *	groups, so more events than counters are multiplexed) from its exec to
 *	its exit, then prints one line per event:
 *	"STAT name count time_enabled_ns time_running_ns" (count unscaled) or
 *	"STAT name error ERRNO text". -u counts user space only.
 *	Exits with CMD's exit status.
 *
 * EVENT is a perf name (cycles, instructions, LLC-load-misses, page-faults,
 * ...) or rHEX for a raw PMU event code.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_EVENTS 32

struct event_name {
	const char *name;
	__u32 type;
	__u64 config;
};

#define HW_CACHE(cache, op, result)                                    \
	((PERF_COUNT_HW_CACHE_##cache) | (PERF_COUNT_HW_CACHE_OP_##op << 8) | \
	 (PERF_COUNT_HW_CACHE_RESULT_##result << 16))

static const struct event_name event_names[] = {
	{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
	{ "cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES },
	{ "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
	{ "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
	{ "bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES },
	{ "ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES },
	{ "stalled-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
	{ "stalled-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND },
	{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
	{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	{ "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN },
	{ "major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ },
	{ "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "L1-dcache-loads", PERF_TYPE_HW_CACHE, HW_CACHE(L1D, READ, ACCESS) },
	{ "L1-dcache-load-misses", PERF_TYPE_HW_CACHE, HW_CACHE(L1D, READ, MISS) },
	{ "LLC-loads", PERF_TYPE_HW_CACHE, HW_CACHE(LL, READ, ACCESS) },
	{ "LLC-load-misses", PERF_TYPE_HW_CACHE, HW_CACHE(LL, READ, MISS) },
	{ "dTLB-loads", PERF_TYPE_HW_CACHE, HW_CACHE(DTLB, READ, ACCESS) },
	{ "dTLB-load-misses", PERF_TYPE_HW_CACHE, HW_CACHE(DTLB, READ, MISS) },
	{ "iTLB-load-misses", PERF_TYPE_HW_CACHE, HW_CACHE(ITLB, READ, MISS) },
	{ "branch-load-misses", PERF_TYPE_HW_CACHE, HW_CACHE(BPU, READ, MISS) },
};

struct counter {
	const char *name;
	struct perf_event_attr attr;
	int fd;
	int err;
};

static int event_parse(const char *name, struct perf_event_attr *attr)
{
	size_t i;
	char *end;

	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	if (name[0] == 'r' && name[1]) {
		errno = 0;
		attr->config = strtoull(name + 1, &end, 16);
		if (!errno && !*end) {
			attr->type = PERF_TYPE_RAW;
			return 0;
		}
	}
	for (i = 0; i < sizeof(event_names) / sizeof(event_names[0]); i++) {
		if (!strcmp(name, event_names[i].name)) {
			attr->type = event_names[i].type;
			attr->config = event_names[i].config;
			return 0;
		}
	}
	fprintf(stderr, "pmucheck: unknown event '%s'\n", name);
	return -EINVAL;
}

static int perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu)
{
	return syscall(SYS_perf_event_open, attr, pid, cpu, -1, 0);
}

static const char *errno_name(int err)
{
	switch (err) {
	case ENOENT: return "ENOENT";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case EINVAL: return "EINVAL";
	case EACCES: return "EACCES";
	case EPERM: return "EPERM";
	case ENODEV: return "ENODEV";
	case EBUSY: return "EBUSY";
	default: return "E?";
	}
}

static int cmd_open(int argc, char **argv)
{
	struct perf_event_attr attr;
	int i, fd;

	if (argc < 2) {
		fprintf(stderr, "usage: pmucheck open EVENT...\n");
		return 2;
	}
	for (i = 1; i < argc; i++) {
		if (event_parse(argv[i], &attr))
			return 2;
		attr.disabled = 1;
		fd = perf_event_open(&attr, 0, -1);
		if (fd < 0) {
			printf("OPEN %s error %s %s\n", argv[i], errno_name(errno), strerror(errno));
			continue;
		}
		printf("OPEN %s ok\n", argv[i]);
		close(fd);
	}
	return 0;
}

static int cmd_stat(int argc, char **argv)
{
	struct counter counters[MAX_EVENTS];
	int ncounters = 0, user_only = 0, opt, status, i, go[2];
	char *list = NULL, *tok, *save;
	pid_t child;
	__u64 val[3];
	char c = 0;

	while ((opt = getopt(argc, argv, "+ue:")) != -1) {
		switch (opt) {
		case 'u': user_only = 1; break;
		case 'e': list = optarg; break;
		default: goto usage;
		}
	}
	argc -= optind;
	argv += optind;
	if (!list || argc < 1)
		goto usage;

	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (ncounters == MAX_EVENTS) {
			fprintf(stderr, "pmucheck: at most %d events\n", MAX_EVENTS);
			return 2;
		}
		counters[ncounters].name = tok;
		if (event_parse(tok, &counters[ncounters].attr))
			return 2;
		ncounters++;
	}

	/* The child waits on a pipe until its counters are open, then execs. */
	if (pipe(go)) {
		perror("pmucheck: pipe");
		return 1;
	}
	child = fork();
	if (child < 0) {
		perror("pmucheck: fork");
		return 1;
	}
	if (child == 0) {
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		execvp(argv[0], argv);
		fprintf(stderr, "pmucheck: exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(go[0]);

	for (i = 0; i < ncounters; i++) {
		struct counter *ctr = &counters[i];

		ctr->attr.disabled = 1;
		ctr->attr.enable_on_exec = 1;
		ctr->attr.inherit = 1;
		ctr->attr.exclude_kernel = user_only;
		ctr->attr.exclude_hv = 1;
		ctr->fd = perf_event_open(&ctr->attr, child, -1);
		ctr->err = ctr->fd < 0 ? errno : 0;
	}
	if (write(go[1], &c, 1) != 1) {
		perror("pmucheck: start child");
		return 1;
	}
	close(go[1]);
	if (waitpid(child, &status, 0) < 0) {
		perror("pmucheck: waitpid");
		return 1;
	}

	for (i = 0; i < ncounters; i++) {
		struct counter *ctr = &counters[i];

		if (ctr->fd < 0) {
			printf("STAT %s error %s %s\n", ctr->name, errno_name(ctr->err),
			       strerror(ctr->err));
			continue;
		}
		if (read(ctr->fd, val, sizeof(val)) != sizeof(val)) {
			printf("STAT %s error %s %s\n", ctr->name, errno_name(errno),
			       strerror(errno));
			continue;
		}
		printf("STAT %s %llu %llu %llu\n", ctr->name, (unsigned long long)val[0],
		       (unsigned long long)val[1], (unsigned long long)val[2]);
		close(ctr->fd);
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);

usage:
	fprintf(stderr, "usage: pmucheck stat [-u] -e EVENT[,EVENT...] -- CMD [ARG...]\n");
	return 2;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "open"))
		return cmd_open(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "stat"))
		return cmd_stat(argc - 1, argv + 1);
	fprintf(stderr, "usage: pmucheck open EVENT...\n"
			"       pmucheck stat [-u] -e EVENT[,EVENT...] -- CMD [ARG...]\n");
	return 2;
}
