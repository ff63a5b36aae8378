// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Workloads of the benchmark (bench/run.py). The timed ones print one JSON
 * line with their own wall time, so a wrapper's start-up is not counted.
 *
 *   workload spin PROCS ITERS      PROCS processes each run a busy loop of
 *                                  ITERS iterations (CPU-bound)
 *   workload forkexec PROCS N      PROCS processes each fork and exec
 *                                  /bin/true N times, one after another
 *   workload idlers N idle|ran MS  N live processes that sleep forever (idle)
 *                                  or wake every MS milliseconds (ran); prints
 *                                  "ready" when all exist, stops on SIGTERM
 *   workload threads N idle|ran MS the same with N threads of one process
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void spin(long iters)
{
	volatile unsigned long x = 0;
	long i;

	for (i = 0; i < iters; i++)
		x += i ^ (x >> 3);
}

static void forkexec(long n)
{
	char *const argv[] = { "true", NULL };
	long i;

	for (i = 0; i < n; i++) {
		pid_t pid = fork();
		int status;

		if (pid < 0) {
			perror("workload: fork");
			exit(1);
		}
		if (!pid) {
			execv("/bin/true", argv);
			_exit(127);
		}
		if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
			fprintf(stderr, "workload: /bin/true failed\n");
			exit(1);
		}
	}
}

/* Run fn(arg) in procs processes at once; return the wall time of all. */
static double in_parallel(int procs, void (*fn)(long), long arg)
{
	double t0 = now();
	int i, status, rc = 0;

	for (i = 0; i < procs; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("workload: fork");
			exit(1);
		}
		if (!pid) {
			fn(arg);
			_exit(0);
		}
	}
	while (wait(&status) > 0)
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			rc = 1;
	if (rc) {
		fprintf(stderr, "workload: a worker failed\n");
		exit(1);
	}
	return now() - t0;
}

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

static int idlers(long n, int ran, long period_ms)
{
	struct timespec period = { period_ms / 1000, (period_ms % 1000) * 1000000L };
	sigset_t block, old;
	pid_t parent = getpid();
	long i;

	setpgid(0, 0); /* the children are killed as a group at the end */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &old);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	for (i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("workload: fork");
			return 1;
		}
		if (!pid) {
			signal(SIGINT, SIG_DFL);
			signal(SIGTERM, SIG_DFL);
			sigprocmask(SIG_SETMASK, &old, NULL);
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() != parent)
				_exit(0);
			if (ran) {
				/* spread the wakeups over the period */
				long off_ns = (i % 1000) * period_ms * 1000L;
				struct timespec first = { off_ns / 1000000000L, off_ns % 1000000000L };

				nanosleep(&first, NULL);
				for (;;)
					nanosleep(&period, NULL);
			}
			for (;;)
				pause();
		}
	}
	printf("ready\n");
	fflush(stdout);
	while (!stop)
		sigsuspend(&old);
	signal(SIGTERM, SIG_IGN);
	kill(0, SIGTERM);
	while (wait(NULL) > 0)
		;
	return 0;
}
static struct timespec thread_period;

static void *idle_thread(void *arg)
{
	long i = (long)arg;

	if (thread_period.tv_sec || thread_period.tv_nsec) {
		long off_ns = (i % 1000) * (thread_period.tv_sec * 1000 +
					     thread_period.tv_nsec / 1000000) * 1000L;
		struct timespec first = { off_ns / 1000000000L, off_ns % 1000000000L };

		nanosleep(&first, NULL);
		for (;;)
			nanosleep(&thread_period, NULL);
	}
	for (;;)
		pause();
	return NULL;
}

/* N threads of this process that sleep (idle) or wake every period_ms (ran). */
static int threads(long n, int ran, long period_ms)
{
	pthread_attr_t attr;
	sigset_t block;
	long i;
	int sig;

	if (ran)
		thread_period = (struct timespec){ period_ms / 1000, (period_ms % 1000) * 1000000L };
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &block, NULL);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (i = 0; i < n; i++) {
		pthread_t t;
		int err = pthread_create(&t, &attr, idle_thread, (void *)i);

		if (err) {
			fprintf(stderr, "workload: thread %ld: %s\n", i, strerror(err));
			return 1;
		}
	}
	printf("ready\n");
	fflush(stdout);
	sigwait(&block, &sig);
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: workload spin PROCS ITERS | forkexec PROCS N | "
			"idlers N idle|ran PERIOD_MS | threads N idle|ran PERIOD_MS\n");
	exit(2);
}

int main(int argc, char **argv)
{
	double elapsed;

	if (argc == 4 && !strcmp(argv[1], "spin"))
		elapsed = in_parallel(atoi(argv[2]), spin, atol(argv[3]));
	else if (argc == 4 && !strcmp(argv[1], "forkexec"))
		elapsed = in_parallel(atoi(argv[2]), forkexec, atol(argv[3]));
	else if (argc == 5 && !strcmp(argv[1], "idlers"))
		return idlers(atol(argv[2]), !strcmp(argv[3], "ran"), atol(argv[4]));
	else if (argc == 5 && !strcmp(argv[1], "threads"))
		return threads(atol(argv[2]), !strcmp(argv[3], "ran"), atol(argv[4]));
	else
		usage();
	printf("{\"elapsed_s\": %.6f}\n", elapsed);
	return 0;
}
