// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Workloads with known figures for the integration tests. Each prints one
 * JSON line with its pid and its own view of what it did (the ground truth).
 *
 *   work touch PAGES          touch PAGES fresh pages, once each
 *   work sleep K USEC         sleep K times for USEC microseconds
 *   work burn MS              burn MS milliseconds of CPU time
 *   work spin SECONDS         busy loop for SECONDS of wall time
 *   work spawn N PAGES        N children in turn, each touches PAGES pages and exits
 *   work fleet N PAGES SECONDS
 *                             N children at once, each touches PAGES pages,
 *                             sleeps SECONDS and exits
 *   work migrate A B MS        burn MS ms of CPU in cgroup directory A, then MS in B
 *   work writes N             N write() calls of one byte to /dev/null (then its
 *                             report: one more write, stdout being a pipe)
 *   work gate PAGES SECONDS   wait for a line on stdin, then touch PAGES pages
 *                             every 100 ms for SECONDS
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>

static long page_size;

static double now(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void touch(long pages)
{
	volatile char *p;
	long i;

	p = mmap(NULL, pages * page_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	for (i = 0; i < pages; i++)
		p[i * page_size] = 1;
	munmap((void *)p, pages * page_size);
}

static long status_field(const char *name)
{
	char line[256];
	long v = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, name, strlen(name)))
			v = atol(line + strlen(name) + 1);
	fclose(f);
	return v;
}

static void report(const char *what)
{
	struct rusage ru, kids;

	getrusage(RUSAGE_SELF, &ru);
	getrusage(RUSAGE_CHILDREN, &kids);
	printf("{\"pid\":%d,\"what\":\"%s\",\"minflt\":%ld,\"majflt\":%ld,"
	       "\"cpu_ns\":%.0f,\"nvcsw\":%ld,\"nivcsw\":%ld,\"children_cpu_ns\":%.0f}\n",
	       getpid(), what, ru.ru_minflt, ru.ru_majflt, now(CLOCK_PROCESS_CPUTIME_ID) * 1e9,
	       status_field("voluntary_ctxt_switches:"), status_field("nonvoluntary_ctxt_switches:"),
	       (kids.ru_utime.tv_sec + kids.ru_stime.tv_sec) * 1e9 +
		       (kids.ru_utime.tv_usec + kids.ru_stime.tv_usec) * 1e3);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	page_size = sysconf(_SC_PAGESIZE);
	if (argc < 3) {
		fprintf(stderr, "usage: work touch|sleep|burn|spin|spawn|gate ARGS\n");
		return 2;
	}
	if (!strcmp(argv[1], "touch")) {
		touch(atol(argv[2]));
		report("touch");
	} else if (!strcmp(argv[1], "sleep") && argc > 3) {
		long k = atol(argv[2]), i;
		struct timespec ts = { .tv_nsec = atol(argv[3]) * 1000L };

		for (i = 0; i < k; i++)
			nanosleep(&ts, NULL);
		report("sleep");
	} else if (!strcmp(argv[1], "burn")) {
		double end = now(CLOCK_PROCESS_CPUTIME_ID) + atol(argv[2]) / 1e3;
		volatile unsigned long x = 0;

		while (now(CLOCK_PROCESS_CPUTIME_ID) < end)
			x++;
		report("burn");
	} else if (!strcmp(argv[1], "spin")) {
		double end = now(CLOCK_MONOTONIC) + atof(argv[2]);
		volatile unsigned long x = 0;

		while (now(CLOCK_MONOTONIC) < end)
			for (int i = 0; i < 100000; i++)
				x++;
		report("spin");
	} else if (!strcmp(argv[1], "writes")) {
		long n = atol(argv[2]), i;
		int fd = open("/dev/null", O_WRONLY);

		if (fd < 0) {
			perror("/dev/null");
			return 1;
		}
		for (i = 0; i < n; i++)
			if (write(fd, "x", 1) != 1) {
				perror("write");
				return 1;
			}
		close(fd);
		report("writes");
	} else if (!strcmp(argv[1], "spawn") && argc > 3) {
		long n = atol(argv[2]), pages = atol(argv[3]), i;

		for (i = 0; i < n; i++) {
			pid_t pid = fork();

			if (pid < 0) {
				perror("fork");
				return 1;
			}
			if (!pid) {
				touch(pages);
				_exit(0);
			}
			printf("{\"child\":%d}\n", pid);
			waitpid(pid, NULL, 0);
		}
		report("spawn");
	} else if (!strcmp(argv[1], "fleet") && argc > 4) {
		long n = atol(argv[2]), pages = atol(argv[3]), i;
		struct timespec ts = { .tv_sec = atol(argv[4]) };

		for (i = 0; i < n; i++) {
			pid_t pid = fork();

			if (pid < 0) {
				perror("fork");
				return 1;
			}
			if (!pid) {
				touch(pages);
				nanosleep(&ts, NULL);
				_exit(0);
			}
			printf("{\"child\":%d}\n", pid);
		}
		while (wait(NULL) > 0)
			;
		report("fleet");
	} else if (!strcmp(argv[1], "migrate") && argc > 4) {
		double first;
		int phase;

		for (phase = 0; phase < 2; phase++) {
			char path[4096];
			FILE *f;
			double end;
			volatile unsigned long x = 0;

			snprintf(path, sizeof(path), "%s/cgroup.procs", argv[2 + phase]);
			f = fopen(path, "w");
			if (!f || fprintf(f, "%d\n", getpid()) < 0 || fclose(f)) {
				perror(path);
				return 1;
			}
			end = now(CLOCK_PROCESS_CPUTIME_ID) + atol(argv[4]) / 1e3;
			while (now(CLOCK_PROCESS_CPUTIME_ID) < end)
				x++;
			if (!phase)
				first = now(CLOCK_PROCESS_CPUTIME_ID);
		}
		printf("{\"first_cpu_ns\":%.0f}\n", first * 1e9);
		report("migrate");
	} else if (!strcmp(argv[1], "gate") && argc > 3) {
		double end;
		char buf[16];

		printf("{\"pid\":%d,\"what\":\"ready\"}\n", getpid());
		fflush(stdout);
		if (!fgets(buf, sizeof(buf), stdin))
			return 1;
		end = now(CLOCK_MONOTONIC) + atof(argv[3]);
		while (now(CLOCK_MONOTONIC) < end) {
			struct timespec ts = { .tv_nsec = 100000000L };

			touch(atol(argv[2]));
			nanosleep(&ts, NULL);
		}
		report("gate");
	} else {
		fprintf(stderr, "work: unknown workload %s\n", argv[1]);
		return 2;
	}
	return 0;
}
