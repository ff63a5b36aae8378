// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Workload for the stack profiler tests, built with frame pointers so that
 * its stacks unwind in the kernel. Prints one JSON line with its pid and
 * what it did.
 *
 *   profload hot SECONDS         burn SECONDS of CPU time in prof_hot() (a share
 *                                of it in proflib_spin() of libprofhot.so)
 *   profload sleep MS N          sleep N times MS milliseconds in prof_sleeper()
 *   profload wait                print the JSON line, then wait for a line on
 *                                stdin, then run hot 1
 *   profload wait-split ROUNDS A B
 *                                the same, then run split ROUNDS A B
 *   profload late LIB SECONDS    burn 50 ms of CPU time, then load LIB (a copy of
 *                                libprofhot.so) with dlopen() and burn SECONDS of
 *                                CPU time in its proflib_spin(), from prof_late()
 *   profload split ROUNDS A B    ROUNDS times A iterations of a loop in prof_a()
 *                                then B of the same loop in prof_b(): their
 *                                shares are A/(A+B), B/(A+B)
 *   profload spin SECONDS        a fixed loop for SECONDS; prints its rate
 *                                (iterations per second), for overhead figures
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

double proflib_spin(long n);

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Most of the time in this function itself, some in the library: SECONDS of
 * CPU time (not of wall time: the same work, and so about the same number of
 * samples, on a busy machine).
 */
__attribute__((noinline)) double prof_hot(double seconds)
{
	volatile double x = 0;
	double end = cpu_now() + seconds;
	long i;

	while (cpu_now() < end) {
		for (i = 0; i < 2000000; i++)
			x = x * 0.999999 + i;
		x += proflib_spin(1000000);
	}
	return x;
}

/*
 * The loop of prof_a() and prof_b(): one function, so the very same code at
 * the same address runs for both (two copies of a loop can run at different
 * speeds, by their alignment alone); its caller tells them apart.
 */
__attribute__((noinline)) unsigned long prof_work(long n)
{
	volatile unsigned long x = 0;
	long i;

	for (i = 0; i < n; i++)
		x += i;
	return x;
}

/* Not tail calls: the caller's frame stays on the stack. */
__attribute__((noinline)) unsigned long prof_a(long n)
{
	return prof_work(n) + 1;
}

__attribute__((noinline)) unsigned long prof_b(long n)
{
	return prof_work(n) + 2;
}

/*
 * A and B iterations in turn, ROUNDS times (fixed work, and no system call in
 * the loop: on some hypervisors a pending timer interrupt is delivered at the
 * next system call, which would favour the code right after it). Each round
 * is scaled by a pseudo-random factor from 1/2 to 3/2, the same for A and B:
 * a round of fixed length would alias with the sampling period (a round of
 * 1/8 ms and a period of 1.001 ms put most samples at one place in it).
 */
static double prof_split(long rounds, long a, long b)
{
	unsigned long long seed = 0x9e3779b97f4a7c15ULL;
	long i;

	for (i = 0; i < rounds; i++) {
		double u;

		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		u = 0.5 + (double)(seed >> 11) / (double)(1ULL << 53);
		prof_a((long)(a * u));
		prof_b((long)(b * u));
	}
	return rounds;
}

/* Call a library loaded after the process began (and after its first samples). */
__attribute__((noinline)) double prof_late(const char *lib, double seconds)
{
	double (*spin)(long), x = 0, end;
	void *h;

	end = cpu_now() + 0.05;
	while (cpu_now() < end)
		prof_work(100000);
	h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	spin = h ? (double (*)(long))dlsym(h, "proflib_spin") : NULL;
	if (!spin) {
		fprintf(stderr, "profload: %s\n", dlerror());
		exit(1);
	}
	end = cpu_now() + seconds;
	while (cpu_now() < end)
		x += spin(1000000);
	return x;
}

/*
 * The system call is made from this very function (not from a libc wrapper
 * built without frame pointers), so that its frame is on the off-CPU stack.
 */
static inline __attribute__((always_inline)) long sleep_here(const struct timespec *ts)
{
#if defined(__x86_64__)
	long ret;

	asm volatile("syscall"
		     : "=a"(ret)
		     : "0"((long)SYS_nanosleep), "D"(ts), "S"(0L)
		     : "rcx", "r11", "memory");
	return ret;
#elif defined(__aarch64__)
	register long x8 asm("x8") = SYS_nanosleep;
	register long x0 asm("x0") = (long)ts;
	register long x1 asm("x1") = 0;

	asm volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1) : "memory");
	return x0;
#else
	return nanosleep(ts, NULL);
#endif
}

__attribute__((noinline)) void prof_sleeper(long ms, long n)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };
	long i;

	for (i = 0; i < n; i++)
		sleep_here(&ts);
}

/* Loop rounds of fixed work until the time is up: rounds per second. */
__attribute__((noinline)) double prof_spin(double seconds)
{
	volatile unsigned long x = 0;
	double t0 = now(), t;
	unsigned long rounds = 0;
	long i;

	do {
		for (i = 0; i < 100000; i++)
			x += i;
		rounds++;
		t = now();
	} while (t < t0 + seconds);
	return rounds * 100000.0 / (t - t0);
}

int main(int argc, char **argv)
{
	double t0 = now(), rate = 0;

	if (argc >= 3 && !strcmp(argv[1], "hot")) {
		prof_hot(atof(argv[2]));
	} else if (argc >= 4 && !strcmp(argv[1], "sleep")) {
		prof_sleeper(atol(argv[2]), atol(argv[3]));
	} else if (argc >= 4 && !strcmp(argv[1], "late")) {
		prof_late(argv[2], atof(argv[3]));
	} else if (argc >= 5 && !strcmp(argv[1], "split")) {
		rate = prof_split(atol(argv[2]), atol(argv[3]), atol(argv[4]));
	} else if (argc >= 3 && !strcmp(argv[1], "spin")) {
		rate = prof_spin(atof(argv[2]));
	} else if (argc >= 2 && !strcmp(argv[1], "wait")) {
		char buf[16];

		printf("{\"pid\":%d,\"what\":\"ready\"}\n", getpid());
		fflush(stdout);
		if (!fgets(buf, sizeof(buf), stdin))
			return 1;
		prof_hot(1);
	} else if (argc >= 5 && !strcmp(argv[1], "wait-split")) {
		char buf[16];

		printf("{\"pid\":%d,\"what\":\"ready\"}\n", getpid());
		fflush(stdout);
		if (!fgets(buf, sizeof(buf), stdin))
			return 1;
		rate = prof_split(atol(argv[2]), atol(argv[3]), atol(argv[4]));
	} else {
		fprintf(stderr, "usage: profload hot SECONDS | sleep MS N | wait | spin SECONDS | "
				"split ROUNDS A B | late LIB SECONDS\n");
		return 2;
	}
	printf("{\"pid\":%d,\"what\":\"%s\",\"wall_s\":%.6f,\"cpu_s\":%.6f,\"iters_per_s\":%.0f}\n",
	       getpid(), argv[1], now() - t0, cpu_now(), rate);
	return 0;
}
