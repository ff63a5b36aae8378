// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A thread whose time has known parts, for the off-CPU split's ground truth
 * (tests/test_timesplit.py):
 *
 *   timesplit BURN_MS SLEEP_MS BLOCK_MS RUNQ_MS N [stop]
 *
 * A worker thread (named "split") in turn
 *   burn:    burns BURN_MS ms of its own CPU time;
 *   sleep:   sleeps N times SLEEP_MS / N ms (nanosleep: state S);
 *   blocked: N times, vfork()s a child that sleeps BLOCK_MS / N ms and
 *            exits: the parent waits for it in state D (TASK_KILLABLE);
 *   runq:    pins itself to the last CPU it may use, forks a spinner
 *            process there (inheriting the pin; the main thread reaps it), and burns RUNQ_MS ms of its CPU time:
 *            about as long again waiting on the run queue behind it;
 *   stop:    (with "stop") stops the process (SIGSTOP, state T) until the
 *            test sends SIGCONT.
 * Each phase is timed by the thread itself: its wall time and the growth of
 * its /proc/thread-self/schedstat (on-CPU ns, run-queue wait ns, runs). The
 * thread's window runs from just before pthread_create() (the main thread's
 * clock) to its last figure read, after which it pauses for good, so that
 * its last switch-out is never followed by a switch-in. The report (one
 * JSON line) comes once it is done; the process exits at the end of stdin.
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

enum { P_BURN, P_SLEEP, P_BLOCKED, P_RUNQ, P_STOP, P_NR };

static const char *const phase_names[P_NR] = { "burn", "sleep", "blocked", "runq", "stop" };

struct sched3 {
	unsigned long long oncpu, delay, runs;
};

struct phase {
	double wall_ns;
	double max_off_ns; /* its longest step off the CPU (mark()) */
	struct sched3 d; /* growth over the phase */
};

static long burn_ms, sleep_ms, block_ms, runq_ms, n_steps;
static int do_stop;
static struct phase phases[P_NR];
static double start_ns, end_ns, cpu_ns;
static struct sched3 end_st;
static pid_t worker_tid, spinner;
static int done;

static double now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void sched_now(struct sched3 *s)
{
	FILE *f = fopen("/proc/thread-self/schedstat", "r");

	memset(s, 0, sizeof(*s));
	if (!f)
		return;
	if (fscanf(f, "%llu %llu %llu", &s->oncpu, &s->delay, &s->runs) != 3)
		memset(s, 0, sizeof(*s));
	fclose(f);
}

/*
 * The most time off the CPU in one step (a burn loop's turn, a nap, a vfork
 * wait): wall less CPU time since the last mark. A switch pmbpf did not see
 * loses at most that much.
 */
static double max_off_ns, mark_wall, mark_cpu;
static int cur_phase = -1; /* the phase running, whose max_off_ns mark() keeps too */

static void mark(void)
{
	double wall = now_ns(CLOCK_MONOTONIC), cpu = now_ns(CLOCK_THREAD_CPUTIME_ID);

	double off = wall - mark_wall - (cpu - mark_cpu);

	if (mark_wall && off > max_off_ns)
		max_off_ns = off;
	if (mark_wall && cur_phase >= 0 && off > phases[cur_phase].max_off_ns)
		phases[cur_phase].max_off_ns = off;
	mark_wall = wall;
	mark_cpu = cpu;
}

static void burn(long ms)
{
	double end = now_ns(CLOCK_THREAD_CPUTIME_ID) + ms * 1e6;

	do
		mark();
	while (mark_cpu < end);
}

static void nap(long us)
{
	struct timespec ts = { .tv_sec = us / 1000000, .tv_nsec = us % 1000000 * 1000L };

	while (nanosleep(&ts, &ts))
		;
}

static void pin(pid_t pid, int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(pid, sizeof(set), &set)) {
		perror("sched_setaffinity");
		exit(1);
	}
}

/* The parent waits in D (TASK_KILLABLE) while the child sleeps ns and exits. */
static __attribute__((noinline)) void vfork_wait(long ns)
{
	struct timespec ts = { .tv_sec = ns / 1000000000L, .tv_nsec = ns % 1000000000L };
	pid_t child = vfork();

	if (child == 0) {
		nanosleep(&ts, NULL);
		_exit(0);
	}
	if (child < 0 || waitpid(child, NULL, 0) != child) {
		perror("vfork");
		exit(1);
	}
}

static void run_phase(int p)
{
	struct sched3 a, b;
	double w0;
	long k;

	mark();
	cur_phase = p;
	sched_now(&a);
	w0 = now_ns(CLOCK_MONOTONIC);
	switch (p) {
	case P_BURN:
		burn(burn_ms);
		break;
	case P_SLEEP:
		for (k = 0; k < n_steps; k++) {
			nap(sleep_ms * 1000 / n_steps);
			mark();
		}
		break;
	case P_BLOCKED:
		for (k = 0; k < n_steps; k++) {
			vfork_wait(block_ms * 1000000L / n_steps);
			mark();
		}
		break;
	case P_RUNQ:
		burn(runq_ms);
		break;
	case P_STOP:
		/* to itself: the group stop starts here, on its way out of the call */
		tgkill(getpid(), gettid(), SIGSTOP);
		break;
	}
	phases[p].wall_ns = now_ns(CLOCK_MONOTONIC) - w0;
	sched_now(&b);
	mark();
	cur_phase = -1;
	phases[p].d.oncpu = b.oncpu - a.oncpu;
	phases[p].d.delay = b.delay - a.delay;
	phases[p].d.runs = b.runs - a.runs;
}

static void *work(void *arg)
{
	cpu_set_t set;
	int cpu, p;

	(void)arg;
	pthread_setname_np(pthread_self(), "split");
	mark_wall = start_ns; /* its first wait, from its creation, is a step */
	mark_cpu = 0;
	mark();
	worker_tid = gettid();
	for (p = 0; p < P_NR; p++) {
		if (p == P_RUNQ) {
			sched_getaffinity(0, sizeof(set), &set);
			for (cpu = CPU_SETSIZE - 1; cpu > 0 && !CPU_ISSET(cpu, &set); cpu--)
				;
			pin(0, cpu);
			spinner = fork(); /* inherits the pin */
			if (spinner == 0)
				for (;;)
					;
			if (spinner < 0) {
				perror("fork");
				exit(1);
			}
		}
		if (p == P_STOP && !do_stop)
			continue;
		run_phase(p);
		if (p == P_RUNQ)
			kill(spinner, SIGKILL); /* reaped by main: the thread sleeps only in naps */
	}
	mark();
	sched_now(&end_st);
	cpu_ns = now_ns(CLOCK_THREAD_CPUTIME_ID);
	end_ns = now_ns(CLOCK_MONOTONIC);
	__atomic_store_n(&done, 1, __ATOMIC_RELEASE);
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;
	char buf[64];
	int p;

	if (argc < 6) {
		fprintf(stderr, "usage: timesplit BURN_MS SLEEP_MS BLOCK_MS RUNQ_MS N [stop]\n");
		return 2;
	}
	burn_ms = atol(argv[1]);
	sleep_ms = atol(argv[2]);
	block_ms = atol(argv[3]);
	runq_ms = atol(argv[4]);
	n_steps = atol(argv[5]);
	do_stop = argc > 6 && !strcmp(argv[6], "stop");
	if (n_steps < 1)
		return 2;
	start_ns = now_ns(CLOCK_MONOTONIC);
	if (pthread_create(&t, NULL, work, NULL))
		return 1;
	while (!__atomic_load_n(&done, __ATOMIC_ACQUIRE))
		nap(5000);
	waitpid(spinner, NULL, 0);
	printf("{\"pid\":%d,\"tid\":%d,\"wall_ns\":%.0f,\"cpu_ns\":%.0f,\"oncpu_ns\":%llu,"
	       "\"run_delay_ns\":%llu,\"runs\":%llu,\"steps\":%ld,\"max_off_ns\":%.0f,"
	       "\"phases\":{",
	       getpid(), worker_tid, end_ns - start_ns, cpu_ns, end_st.oncpu, end_st.delay,
	       end_st.runs, n_steps, max_off_ns);
	for (p = 0; p < P_NR; p++)
		printf("%s\"%s\":{\"wall_ns\":%.0f,\"oncpu_ns\":%llu,\"run_delay_ns\":%llu,"
		       "\"runs\":%llu,\"max_off_ns\":%.0f}",
		       p ? "," : "", phase_names[p], phases[p].wall_ns, phases[p].d.oncpu,
		       phases[p].d.delay, phases[p].d.runs, phases[p].max_off_ns);
	printf("}}\n");
	fflush(stdout);
	while (fgets(buf, sizeof(buf), stdin))
		;
	return 0;
}
