// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Workloads with known figures for the integration tests. Each prints one
 * JSON line with its pid and its own view of what it did (the ground truth).
 *
 *   work touch PAGES          touch PAGES fresh pages, once each
 *   work sleep K USEC         sleep K times for USEC microseconds
 *   work burn MS [SPREAD]     burn MS milliseconds of CPU time (plus a random
 *                             0-SPREAD more: noisy runs with no shell between)
 *   work spin SECONDS [TRACE] busy loop for SECONDS of wall time; with TRACE, write
 *                             "realtime_ns cpu_ns" to that file every millisecond
 *   work spawn N PAGES        N children in turn, each touches PAGES pages and exits;
 *                             prints each one's page faults and switches (wait4)
 *   work fleet N PAGES SECONDS
 *                             N children at once, each touches PAGES pages,
 *                             sleeps SECONDS and exits
 *   work migrate A B MS        burn MS ms of CPU in cgroup directory A, then MS in B
 *   work hop N MS             N times: pin itself to the other of the first two CPUs it
 *                             may run on, burn MS ms of CPU there; reports the kernel's
 *                             se.nr_migrations
 *   work writes N             N write() calls of one byte to /dev/null (then its
 *                             report: one more write, stdout being a pipe)
 *   work gate PAGES SECONDS   wait for a line on stdin, then touch PAGES pages
 *                             every 100 ms for SECONDS
 *   work threads N PAGES SECONDS
 *                             N threads each touch PAGES pages and then sleep; the
 *                             report comes once all have touched theirs, and the
 *                             process exits SECONDS later, its threads still asleep
 *   work pool PAGES,.. MS,.. SECONDS
 *                             a thread per pair: thread i names itself pool-i, touches
 *                             PAGES[i] pages, burns MS[i] ms of its own CPU time; thread
 *                             0 then exits, the others sleep. The report (once all
 *                             are done, thread 0 joined) lists each thread's tid, name
 *                             and own figures (getrusage(RUSAGE_THREAD), its CPU clock,
 *                             /proc/thread-self/schedstat); the process exits SECONDS
 *                             later
 *   work texec MS             a second thread burns MS ms of CPU and then execs
 *                             "work burn MS" (the kernel gives it the process's id);
 *                             the report is burn's, with "exec_tid": the thread's id
 *   work naps K MS,..         a thread per MS: thread i names itself nap-i, then K times
 *                             burns 1 ms of its CPU time and sleeps MS[i] ms. Each
 *                             thread's window runs from its first instruction to its
 *                             last figure read, after which it pauses for good: the
 *                             report (once all are done) lists each thread's wall and
 *                             CPU time (CLOCK_THREAD_CPUTIME_ID) over its window, their
 *                             difference (its time off the CPU), the most of it in one
 *                             step (barrier, burn and sleep, the last reads), and its
 *                             switches (getrusage(RUSAGE_THREAD), schedstat); the
 *                             process exits at the end of its stdin
 *   work movers A B N M       pinned to CPU A, two threads: hop pins itself to B, A,
 *                             B, .. N times, burning 1 ms of its CPU time after each
 *                             move; nap stays on A and sleeps 1 ms M times. The report
 *                             gives each one's moves and se.nr_migrations before and
 *                             after (/proc/thread-self/sched), then the process waits
 *                             for the end of its stdin, its threads paused
 *   work tchurn N US SECONDS  short-lived threads for SECONDS: N at a time, each burns US
 *                             microseconds of its own CPU time and exits, and the main
 *                             thread starts another in its place; reports how many ran
 *   work gaps MS              burn MS milliseconds of CPU time reading the clock in
 *                             a tight loop; every jump of the clock of 2 us or more
 *                             is time off the CPU (a wait in the run queue, for a
 *                             task that never sleeps, or an interrupt): reports
 *                             them in log2 microsecond slots, as pmbpf does, and
 *                             each one of 256 us or more
 *
 * Every report also gives the wall time since main() started, and the task's
 * /proc/self/schedstat (run-queue wait and run count) at main() and at the end.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>

static long page_size;
static double t_main, cpu_main;
static unsigned long long delay_main, runs_main;
static long faults_main; /* this process's faults before it was in $WORK_CGROUP */

#define GAP_SLOTS 24
static unsigned long long gap_hist[GAP_SLOTS], gap_count, gap_total_ns, gap_max_ns;
static int gaps_done;
#define MAX_LONG_GAPS 4096
static unsigned long long long_gaps[MAX_LONG_GAPS], nr_long_gaps; /* >= 256 us, in ns */

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
	/* one fault per page whatever the host's transparent huge pages say: with
	 * THP "always", 3,000 pages touched were 508 faults (2,144 on a CI host) */
	if (madvise((void *)p, pages * page_size, MADV_NOHUGEPAGE) && errno != EINVAL) {
		perror("madvise");
		exit(1);
	}
	for (i = 0; i < pages; i++)
		p[i * page_size] = 1;
	munmap((void *)p, pages * page_size);
}

static long thread_pages;
static pthread_barrier_t threads_touched;

static void *touch_and_sleep(void *arg)
{
	touch(thread_pages);
	pthread_barrier_wait(&threads_touched);
	for (;;)
		pause();
	return NULL;
}

#define POOL_MAX 16

struct pool_thread {
	int i;
	long pages, ms;
	pid_t tid;
	struct rusage ru;
	double cpu_ns;
	unsigned long long delay, runs;
};

static struct pool_thread pool[POOL_MAX];
static pthread_barrier_t pool_done;

/*
 * /proc/self/schedstat (the process's main thread), or of the calling thread
 * with /proc/thread-self/schedstat: on-CPU ns, run-queue wait ns, times run
 */
static void schedstat_of(const char *path, unsigned long long *delay, unsigned long long *runs)
{
	unsigned long long oncpu = 0;
	FILE *f = fopen(path, "r");

	*delay = *runs = 0;
	if (!f)
		return;
	if (fscanf(f, "%llu %llu %llu", &oncpu, delay, runs) != 3)
		*delay = *runs = 0;
	fclose(f);
}

static void schedstat(unsigned long long *delay, unsigned long long *runs)
{
	schedstat_of("/proc/self/schedstat", delay, runs);
}

/* Burn ms milliseconds of CPU time by clock clk (the process's or the thread's). */
static void burn_cpu(clockid_t clk, long ms)
{
	double end = now(clk) + ms / 1e3;
	volatile unsigned long x = 0;

	while (now(clk) < end)
		x++;
}

static double churn_us;

static void *churn_work(void *arg)
{
	double end = now(CLOCK_THREAD_CPUTIME_ID) + churn_us / 1e6;
	volatile unsigned long x = 0;

	(void)arg;
	while (now(CLOCK_THREAD_CPUTIME_ID) < end)
		x++;
	return NULL;
}

static void *pool_work(void *arg)
{
	struct pool_thread *t = arg;
	char name[16];

	snprintf(name, sizeof(name), "pool-%d", t->i);
	pthread_setname_np(pthread_self(), name);
	t->tid = gettid();
	touch(t->pages);
	burn_cpu(CLOCK_THREAD_CPUTIME_ID, t->ms);
	getrusage(RUSAGE_THREAD, &t->ru);
	schedstat_of("/proc/thread-self/schedstat", &t->delay, &t->runs);
	t->cpu_ns = now(CLOCK_THREAD_CPUTIME_ID) * 1e9;
	if (t->i == 0)
		return NULL;
	pthread_barrier_wait(&pool_done);
	for (;;)
		pause();
	return NULL;
}

/*
 * naps and movers: a thread's figures at the end of its work; the process
 * exits only when its stdin ends, the threads paused for good (their last
 * switch-out never followed by a switch-in a recorder stopped before sees)
 */
struct held_thread {
	int i;
	long steps, ms;
	pid_t tid;
	double wall_ns, cpu_ns, max_off_ns;
	long nvcsw, nivcsw, migrations_before, migrations_after;
	unsigned long long delay, runs, first_wait;
};

static struct held_thread held[POOL_MAX];
static pthread_barrier_t held_alive;
static int held_done;
static int held_cpu[2];

/* The value of field name in a /proc sched file (CONFIG_SCHED_DEBUG), or -1. */
static long sched_field(const char *path, const char *name)
{
	char line[256];
	long v = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, name, strlen(name)) && strchr(line, ':'))
			v = atol(strchr(line, ':') + 1);
	fclose(f);
	return v;
}

/* Done: the main thread polls the count (a wakeup could preempt this thread). */
static void held_finish(void)
{
	__atomic_fetch_add(&held_done, 1, __ATOMIC_RELEASE);
	for (;;)
		pause();
}

/* The thread's switches so far, its own count and the scheduler's. */
static void held_switches(struct held_thread *t)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	t->nvcsw = ru.ru_nvcsw;
	t->nivcsw = ru.ru_nivcsw;
	schedstat_of("/proc/thread-self/schedstat", &t->delay, &t->runs);
}

/* Wall time minus the thread's CPU time since it started: its time off the CPU. */
static double off_cpu_now(double wall0, double cpu0)
{
	double cpu = now(CLOCK_THREAD_CPUTIME_ID), wall = now(CLOCK_MONOTONIC);

	return (wall - wall0 - (cpu - cpu0)) * 1e9;
}

static void *nap_work(void *arg)
{
	double wall0 = now(CLOCK_MONOTONIC), cpu0 = now(CLOCK_THREAD_CPUTIME_ID);
	struct timespec nap;
	struct held_thread *t = arg;
	double off = 0, prev = 0;
	char name[16];
	long k;

	unsigned long long runs0;

	/* its wait from creation to its first run: off-CPU time for pmbpf, before wall0 */
	schedstat_of("/proc/thread-self/schedstat", &t->first_wait, &runs0);
	snprintf(name, sizeof(name), "nap-%d", t->i);
	pthread_setname_np(pthread_self(), name);
	t->tid = gettid();
	nap.tv_sec = t->ms / 1000;
	nap.tv_nsec = t->ms % 1000 * 1000000L;
	pthread_barrier_wait(&held_alive);
	for (k = 0; k <= t->steps; k++) {
		off = off_cpu_now(wall0, cpu0);
		if (off - prev > t->max_off_ns)
			t->max_off_ns = off - prev;
		prev = off;
		if (k == t->steps)
			break;
		burn_cpu(CLOCK_THREAD_CPUTIME_ID, 1);
		nanosleep(&nap, NULL);
	}
	held_switches(t);
	t->cpu_ns = (now(CLOCK_THREAD_CPUTIME_ID) - cpu0) * 1e9;
	t->wall_ns = (now(CLOCK_MONOTONIC) - wall0) * 1e9;
	if (t->wall_ns - t->cpu_ns - prev > t->max_off_ns)
		t->max_off_ns = t->wall_ns - t->cpu_ns - prev;
	held_finish();
	return NULL;
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		perror("sched_setaffinity");
		exit(1);
	}
}

/* The lowest two CPUs this thread may run on: a cpuset may not allow 0 and 1. */
static void allowed_pair(int cpus[2])
{
	cpu_set_t set;
	int cpu, n = 0;

	if (sched_getaffinity(0, sizeof(set), &set)) {
		perror("sched_getaffinity");
		exit(1);
	}
	for (cpu = 0; cpu < CPU_SETSIZE && n < 2; cpu++)
		if (CPU_ISSET(cpu, &set))
			cpus[n++] = cpu;
	if (n < 2) {
		fprintf(stderr, "work: needs two allowed CPUs\n");
		exit(1);
	}
}

/* Thread 0 hops between the two CPUs, thread 1 naps on the first (inherited). */
static void *mover_work(void *arg)
{
	struct held_thread *t = arg;
	struct timespec nap = { .tv_nsec = 1000000L };
	long k;

	pthread_setname_np(pthread_self(), t->i ? "nap" : "hop");
	t->tid = gettid();
	t->migrations_before = sched_field("/proc/thread-self/sched", "se.nr_migrations");
	pthread_barrier_wait(&held_alive);
	for (k = 0; k < t->steps; k++) {
		if (t->i) {
			nanosleep(&nap, NULL);
			continue;
		}
		pin(held_cpu[(k + 1) % 2]);
		burn_cpu(CLOCK_THREAD_CPUTIME_ID, 1);
	}
	held_switches(t);
	t->migrations_after = sched_field("/proc/thread-self/sched", "se.nr_migrations");
	held_finish();
	return NULL;
}

/* Start n threads of fn on held[], wait until all are done, print the report's head. */
static int held_run(int n, void *(*fn)(void *), const char *what)
{
	pthread_t t;
	int i;

	pthread_barrier_init(&held_alive, NULL, n);
	for (i = 0; i < n; i++) {
		held[i].i = i;
		if (pthread_create(&t, NULL, fn, &held[i]))
			return -1;
	}
	while (__atomic_load_n(&held_done, __ATOMIC_ACQUIRE) < n) {
		struct timespec poll = { .tv_nsec = 10000000L };

		nanosleep(&poll, NULL);
	}
	printf("{\"pid\":%d,\"what\":\"%s\",\"threads\":[", getpid(), what);
	return 0;
}

/* The report's end; the process exits at the end of its stdin. */
static void held_end(void)
{
	char buf[64];

	printf("]}\n");
	fflush(stdout);
	while (fgets(buf, sizeof(buf), stdin))
		;
}

static char *const *texec_argv;

static void *texec_thread(void *arg)
{
	char tid[16], *const *argv = texec_argv;

	(void)arg;
	burn_cpu(CLOCK_THREAD_CPUTIME_ID, atol(argv[2]));
	snprintf(tid, sizeof(tid), "%d", (int)gettid());
	setenv("WORK_EXEC_TID", tid, 1);
	execl("/proc/self/exe", argv[0], "burn", argv[2], (char *)NULL);
	perror("execl");
	exit(1);
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
	unsigned long long delay, runs;
	int i;

	schedstat(&delay, &runs);
	getrusage(RUSAGE_SELF, &ru);
	getrusage(RUSAGE_CHILDREN, &kids);
	printf("{\"pid\":%d,\"what\":\"%s\",\"minflt\":%ld,\"majflt\":%ld,"
	       "\"cpu_ns\":%.0f,\"nvcsw\":%ld,\"nivcsw\":%ld,\"children_cpu_ns\":%.0f,"
	       "\"wall_ns\":%.0f,\"run_delay_ns\":%llu,\"runs\":%llu,"
	       "\"run_delay_main_ns\":%llu,\"runs_main\":%llu,\"cpu_main_ns\":%.0f,"
	       "\"children_faults\":%ld",
	       getpid(), what, ru.ru_minflt, ru.ru_majflt, now(CLOCK_PROCESS_CPUTIME_ID) * 1e9,
	       status_field("voluntary_ctxt_switches:"),
	       status_field("nonvoluntary_ctxt_switches:"),
	       (kids.ru_utime.tv_sec + kids.ru_stime.tv_sec) * 1e9 +
		       (kids.ru_utime.tv_usec + kids.ru_stime.tv_usec) * 1e3,
	       (now(CLOCK_MONOTONIC) - t_main) * 1e9, delay, runs, delay_main, runs_main,
	       cpu_main * 1e9, kids.ru_minflt + kids.ru_majflt);
	if (gaps_done) {
		printf(",\"gaps\":%llu,\"gaps_ns\":%llu,\"gap_max_ns\":%llu,\"gap_hist\":[",
		       gap_count, gap_total_ns, gap_max_ns);
		for (i = 0; i < GAP_SLOTS; i++)
			printf("%s%llu", i ? "," : "", gap_hist[i]);
		printf("],\"long_gaps_ns\":[");
		for (i = 0; i < (int)nr_long_gaps; i++)
			printf("%s%llu", i ? "," : "", long_gaps[i]);
		printf("]");
	}
	printf(",\"faults_main\":%ld", faults_main);
	if (getenv("WORK_EXEC_TID"))
		printf(",\"exec_tid\":%s", getenv("WORK_EXEC_TID"));
	printf("}\n");
	fflush(stdout);
}

static unsigned int log2_slot(unsigned long long v)
{
	unsigned int r = 0;

	while (v >>= 1)
		r++;
	return r;
}

static void gaps(long ms)
{
	struct timespec ts;
	unsigned long long t, last, end, n = 0;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	last = ts.tv_sec * 1000000000ULL + ts.tv_nsec;
	end = (unsigned long long)((now(CLOCK_PROCESS_CPUTIME_ID) + ms / 1e3) * 1e9);
	for (;;) {
		unsigned long long gap;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		t = ts.tv_sec * 1000000000ULL + ts.tv_nsec;
		gap = t - last;
		last = t;
		if (gap >= 2000) {
			unsigned int slot = log2_slot(gap / 1000);

			gap_hist[slot < GAP_SLOTS ? slot : GAP_SLOTS - 1]++;
			gap_count++;
			gap_total_ns += gap;
			if (gap > gap_max_ns)
				gap_max_ns = gap;
			if (gap >= 256000 && nr_long_gaps < MAX_LONG_GAPS)
				long_gaps[nr_long_gaps++] = gap;
		}
		/*
		 * The CPU clock now and then only: it is a system call, and one
		 * that can end the slice (the kernel updates the task's runtime),
		 * so the wait that follows is in the next jump, measured from
		 * before it.
		 */
		if (!(++n & 1023) && now(CLOCK_PROCESS_CPUTIME_ID) * 1e9 >= end)
			break;
	}
	gaps_done = 1;
}

int main(int argc, char **argv)
{
	/* $WORK_CGROUP: join that cgroup first, and report (faults_main) the
	 * faults made before, so that a test can compare the cgroup's figure with
	 * what this process did in it: a preexec_fn's Python child makes hundreds of
	 * copy-on-write faults, a varying number, before its cgroup write */
	if (getenv("WORK_CGROUP")) {
		char path[4096];
		struct rusage ru;
		FILE *f;

		snprintf(path, sizeof(path), "%s/cgroup.procs", getenv("WORK_CGROUP"));
		f = fopen(path, "w");
		if (!f || fprintf(f, "%d\n", getpid()) < 0 || fclose(f)) {
			perror(path);
			return 1;
		}
		getrusage(RUSAGE_SELF, &ru);
		faults_main = ru.ru_minflt + ru.ru_majflt;
	}
	t_main = now(CLOCK_MONOTONIC);
	cpu_main = now(CLOCK_PROCESS_CPUTIME_ID);
	schedstat(&delay_main, &runs_main);
	page_size = sysconf(_SC_PAGESIZE);
	if (argc < 3) {
		fprintf(stderr,
			"usage: work touch|sleep|burn|spin|gaps|spawn|fleet|migrate|hop|gate|threads|tchurn|pool|naps|movers ARGS\n");
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
	} else if (!strcmp(argv[1], "texec") && argc > 2) {
		pthread_t t;

		texec_argv = argv;
		if (pthread_create(&t, NULL, texec_thread, NULL))
			return 1;
		pthread_join(t, NULL); /* the exec ends this thread */
		return 1;
	} else if (!strcmp(argv[1], "burn")) {
		long ms = atol(argv[2]);

		if (argc > 3) {
			unsigned int r = 0;

			if (getrandom(&r, sizeof(r), 0) != sizeof(r))
				return 1;
			ms += r % (atol(argv[3]) + 1);
		}
		burn_cpu(CLOCK_PROCESS_CPUTIME_ID, ms);
		report("burn");
	} else if (!strcmp(argv[1], "spin")) {
		double end = now(CLOCK_MONOTONIC) + atof(argv[2]), t, last = 0;
		volatile unsigned long x = 0;
		FILE *trace = argc > 3 ? fopen(argv[3], "w") : NULL;

		if (argc > 3 && !trace) {
			perror(argv[3]);
			return 1;
		}
		while ((t = now(CLOCK_MONOTONIC)) < end) {
			for (int i = 0; i < 100000; i++)
				x++;
			/* buffered: written out at the end */
			if (trace && t - last >= 1e-3) {
				fprintf(trace, "%.0f %.0f\n", now(CLOCK_REALTIME) * 1e9,
					now(CLOCK_PROCESS_CPUTIME_ID) * 1e9);
				last = t;
			}
		}
		if (trace)
			fclose(trace);
		report("spin");
	} else if (!strcmp(argv[1], "gaps")) {
		gaps(atol(argv[2]));
		report("gaps");
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
		struct rusage ru;

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
			wait4(pid, NULL, 0, &ru);
			printf("{\"child\":%d,\"minflt\":%ld,\"majflt\":%ld,\"nvcsw\":%ld,\"nivcsw\":%ld}\n",
			       pid, ru.ru_minflt, ru.ru_majflt, ru.ru_nvcsw, ru.ru_nivcsw);
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
			fflush(stdout); /* each child's line as it is forked */
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
	} else if (!strcmp(argv[1], "hop") && argc > 3) {
		long n = atol(argv[2]), i, migrations;
		int cpus[2];

		allowed_pair(cpus);
		for (i = 0; i < n; i++) {
			pin(cpus[i % 2]);
			burn_cpu(CLOCK_PROCESS_CPUTIME_ID, atol(argv[3]));
		}
		/* the scheduler's own count of this thread's moves (CONFIG_SCHED_DEBUG) */
		migrations = sched_field("/proc/self/sched", "se.nr_migrations");
		if (migrations >= 0)
			printf("{\"nr_migrations\":%ld}\n", migrations);
		report("hop");
	} else if (!strcmp(argv[1], "tchurn") && argc > 4) {
		int n = atoi(argv[2]), i;
		double end = now(CLOCK_MONOTONIC) + atof(argv[4]);
		pthread_t t[POOL_MAX];
		long started = 0;

		churn_us = atof(argv[3]);
		if (n < 1 || n > POOL_MAX)
			return 2;
		for (i = 0; i < n; i++, started++)
			if (pthread_create(&t[i], NULL, churn_work, NULL))
				return 1;
		for (i = 0; now(CLOCK_MONOTONIC) < end; i = (i + 1) % n, started++) {
			pthread_join(t[i], NULL);
			if (pthread_create(&t[i], NULL, churn_work, NULL))
				return 1;
		}
		for (i = 0; i < n; i++)
			pthread_join(t[i], NULL);
		printf("{\"threads\":%ld}\n", started);
		report("tchurn");
	} else if (!strcmp(argv[1], "threads") && argc > 4) {
		int n = atoi(argv[2]), i;
		struct timespec hold = { .tv_sec = atol(argv[4]) };
		pthread_t t;

		thread_pages = atol(argv[3]);
		pthread_barrier_init(&threads_touched, NULL, n + 1);
		for (i = 0; i < n; i++)
			if (pthread_create(&t, NULL, touch_and_sleep, NULL))
				return 1;
		pthread_barrier_wait(&threads_touched);
		report("threads");
		nanosleep(&hold, NULL);
	} else if (!strcmp(argv[1], "pool") && argc > 4) {
		struct timespec hold = { .tv_sec = atol(argv[4]) };
		char *pages = argv[2], *ms = argv[3];
		pthread_t t[POOL_MAX];
		int n = 0, i;

		while (n < POOL_MAX && *pages && *ms) {
			pool[n].i = n;
			pool[n].pages = strtol(pages, &pages, 10);
			pool[n].ms = strtol(ms, &ms, 10);
			n++;
			if (*pages == ',')
				pages++;
			if (*ms == ',')
				ms++;
		}
		pthread_barrier_init(&pool_done, NULL, n);
		for (i = 0; i < n; i++)
			if (pthread_create(&t[i], NULL, pool_work, &pool[i]))
				return 1;
		pthread_join(t[0], NULL);
		pthread_barrier_wait(&pool_done);
		printf("{\"pid\":%d,\"what\":\"pool\",\"threads\":[", getpid());
		for (i = 0; i < n; i++)
			printf("%s{\"tid\":%d,\"comm\":\"pool-%d\",\"pages\":%ld,\"ms\":%ld,"
			       "\"minflt\":%ld,\"majflt\":%ld,\"nvcsw\":%ld,\"nivcsw\":%ld,"
			       "\"cpu_ns\":%.0f,\"run_delay_ns\":%llu,\"runs\":%llu}",
			       i ? "," : "", pool[i].tid, i, pool[i].pages, pool[i].ms,
			       pool[i].ru.ru_minflt, pool[i].ru.ru_majflt, pool[i].ru.ru_nvcsw,
			       pool[i].ru.ru_nivcsw, pool[i].cpu_ns, pool[i].delay, pool[i].runs);
		printf("]}\n");
		fflush(stdout);
		nanosleep(&hold, NULL);
	} else if (!strcmp(argv[1], "naps") && argc > 3) {
		char *ms = argv[3];
		int n = 0, i;

		while (n < POOL_MAX && *ms) {
			held[n].steps = atol(argv[2]);
			held[n++].ms = strtol(ms, &ms, 10);
			if (*ms == ',')
				ms++;
		}
		if (held_run(n, nap_work, "naps"))
			return 1;
		for (i = 0; i < n; i++)
			printf("%s{\"tid\":%d,\"comm\":\"nap-%d\",\"naps\":%ld,\"ms\":%ld,"
			       "\"wall_ns\":%.0f,\"cpu_ns\":%.0f,\"offcpu_ns\":%.0f,"
			       "\"max_off_ns\":%.0f,\"nvcsw\":%ld,\"nivcsw\":%ld,"
			       "\"run_delay_ns\":%llu,\"runs\":%llu,\"first_wait_ns\":%llu}",
			       i ? "," : "", held[i].tid, i, held[i].steps, held[i].ms,
			       held[i].wall_ns, held[i].cpu_ns, held[i].wall_ns - held[i].cpu_ns,
			       held[i].max_off_ns, held[i].nvcsw, held[i].nivcsw, held[i].delay,
			       held[i].runs, held[i].first_wait);
		held_end();
	} else if (!strcmp(argv[1], "movers") && argc > 5) {
		int i;

		held_cpu[0] = atoi(argv[2]);
		held_cpu[1] = atoi(argv[3]);
		held[0].steps = atol(argv[4]);
		held[1].steps = atol(argv[5]);
		pin(held_cpu[0]);
		if (held_run(2, mover_work, "movers"))
			return 1;
		for (i = 0; i < 2; i++)
			printf("%s{\"tid\":%d,\"comm\":\"%s\",\"moves\":%ld,\"naps\":%ld,"
			       "\"nr_migrations\":%ld,\"nvcsw\":%ld,\"nivcsw\":%ld,\"runs\":%llu}",
			       i ? "," : "", held[i].tid, i ? "nap" : "hop", i ? 0 : held[i].steps,
			       i ? held[i].steps : 0,
			       held[i].migrations_after - held[i].migrations_before, held[i].nvcsw,
			       held[i].nivcsw, held[i].runs);
		held_end();
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
