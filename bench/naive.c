// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Loader of the benchmark's reference programs (naive.bpf.c).
 *
 *   naive -p PROG[,PROG...] [-n N]
 *
 * opens N software counters per CPU (cpu-clock, task-clock, page-faults,
 * context-switches, cpu-migrations, minor-faults, major-faults,
 * alignment-faults, in that order), loads and attaches only the programs
 * named (see naive.bpf.c), prints "ready", and waits for SIGINT or SIGTERM.
 * For example: -p empty; -p naive_switch -n 4;
 * -p naive_switch_rq,naive_wakeup,naive_wake_new -n 4; -p micro_read1 -n 1.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "naive.skel.h"

#define NAIVE_MAX_EVENTS 8

/* Software events in the order the benchmark adds them (1, 2, 4, 8). */
static const __u64 sw_configs[NAIVE_MAX_EVENTS] = {
	PERF_COUNT_SW_CPU_CLOCK,       PERF_COUNT_SW_TASK_CLOCK,	 PERF_COUNT_SW_PAGE_FAULTS,
	PERF_COUNT_SW_CONTEXT_SWITCHES, PERF_COUNT_SW_CPU_MIGRATIONS, PERF_COUNT_SW_PAGE_FAULTS_MIN,
	PERF_COUNT_SW_PAGE_FAULTS_MAJ, PERF_COUNT_SW_ALIGNMENT_FAULTS,
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	return level == LIBBPF_DEBUG ? 0 : vfprintf(stderr, fmt, args);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: naive -p PROG[,PROG...] [-n EVENTS(0-%d)]\n", NAIVE_MAX_EVENTS);
}

static int open_counters(struct naive_bpf *skel, int nr_cpus, int nr_events, int *fds)
{
	int map_fd = bpf_map__fd(skel->maps.events), i, cpu, err;

	for (i = 0; i < nr_events; i++) {
		for (cpu = 0; cpu < nr_cpus; cpu++) {
			struct perf_event_attr attr = {
				.size = sizeof(attr),
				.type = PERF_TYPE_SOFTWARE,
				.config = sw_configs[i],
				.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED |
					       PERF_FORMAT_TOTAL_TIME_RUNNING,
			};
			__u32 idx = i * nr_cpus + cpu;
			long fd;

			fd = syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
			if (fd < 0) {
				if (errno == ENODEV)
					continue; /* offline CPU */
				err = -errno;
				fprintf(stderr, "naive: cannot open software event %d on CPU %d: %s\n",
					i, cpu, strerror(errno));
				return err;
			}
			fds[idx] = (int)fd;
			if (bpf_map_update_elem(map_fd, &idx, &fds[idx], BPF_ANY)) {
				err = -errno;
				fprintf(stderr, "naive: cannot store counter fd: %s\n", strerror(errno));
				return err;
			}
		}
	}
	return 0;
}

/* Is name one of the comma-separated names in list? */
static bool listed(const char *list, const char *name)
{
	size_t len = strlen(name);
	const char *p = list;

	while ((p = strstr(p, name))) {
		if ((p == list || p[-1] == ',') && (p[len] == ',' || !p[len]))
			return true;
		p += len;
	}
	return false;
}

/* Autoload exactly the listed programs; all of them must exist. */
static int select_programs(struct naive_bpf *skel, const char *list)
{
	struct bpf_program *prog;
	int found = 0, wanted = 1;
	const char *c;

	for (c = list; *c; c++)
		wanted += *c == ',';
	bpf_object__for_each_program(prog, skel->obj)
	{
		bool on = listed(list, bpf_program__name(prog));

		bpf_program__set_autoload(prog, on);
		found += on;
	}
	if (found != wanted) {
		fprintf(stderr, "naive: unknown program in '%s' (see bench/naive.bpf.c)\n", list);
		return -EINVAL;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct naive_bpf *skel = NULL;
	const char *progs = NULL;
	int nr_events = 0, nr_cpus, *fds = NULL, err = 0, opt, i;
	sigset_t block, old;

	while ((opt = getopt(argc, argv, "p:n:h")) != -1) {
		switch (opt) {
		case 'p':
			progs = optarg;
			break;
		case 'n':
			nr_events = atoi(optarg);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!progs || !*progs || nr_events < 0 || nr_events > NAIVE_MAX_EVENTS || optind != argc) {
		usage(stderr);
		return 2;
	}

	libbpf_set_print(libbpf_print);
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &old);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	nr_cpus = libbpf_num_possible_cpus();
	if (nr_cpus <= 0) {
		fprintf(stderr, "naive: cannot count CPUs: %s\n", strerror(-nr_cpus));
		return 1;
	}
	fds = malloc(sizeof(*fds) * NAIVE_MAX_EVENTS * nr_cpus);
	if (!fds) {
		fprintf(stderr, "naive: out of memory\n");
		return 1;
	}
	for (i = 0; i < NAIVE_MAX_EVENTS * nr_cpus; i++)
		fds[i] = -1;

	skel = naive_bpf__open();
	if (!skel) {
		err = -errno;
		fprintf(stderr, "naive: cannot open BPF object: %s\n", strerror(errno));
		goto cleanup;
	}
	skel->rodata->nr_cpus = nr_cpus;
	skel->rodata->nr_events = nr_events;
	bpf_map__set_max_entries(skel->maps.events, nr_cpus * (nr_events ? nr_events : 1));
	err = select_programs(skel, progs);
	if (err)
		goto cleanup;

	err = naive_bpf__load(skel);
	if (err) {
		fprintf(stderr, "naive: cannot load BPF programs: %s\n", strerror(-err));
		goto cleanup;
	}
	err = open_counters(skel, nr_cpus, nr_events, fds);
	if (err)
		goto cleanup;
	err = naive_bpf__attach(skel);
	if (err) {
		fprintf(stderr, "naive: cannot attach: %s\n", strerror(-err));
		goto cleanup;
	}
	printf("ready\n");
	fflush(stdout);
	while (!stop)
		sigsuspend(&old); /* signals are blocked in between: no lost wakeup */

cleanup:
	naive_bpf__destroy(skel);
	for (i = 0; i < NAIVE_MAX_EVENTS * nr_cpus; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(fds);
	return err ? 1 : 0;
}
