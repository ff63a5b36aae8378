// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Workload for the stack profiler tests, built with frame pointers so that
 * its stacks unwind in the kernel. Prints one JSON line with its pid and
 * what it did.
 *
 *   profload hot SECONDS         burn CPU in prof_hot() (a share of it in
 *                                proflib_spin() of libprofhot.so) for SECONDS
 *   profload sleep MS N          sleep N times MS milliseconds in prof_sleeper()
 *   profload wait                print the JSON line, then wait for a line on
 *                                stdin, then run hot 1
 *   profload spin SECONDS        a fixed loop for SECONDS; prints its rate
 *                                (iterations per second), for overhead figures
 */
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

/* Most of the time in this function itself, some in the library. */
__attribute__((noinline)) double prof_hot(double seconds)
{
	volatile double x = 0;
	double end = now() + seconds;
	long i;

	while (now() < end) {
		for (i = 0; i < 2000000; i++)
			x = x * 0.999999 + i;
		x += proflib_spin(1000000);
	}
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
	} else if (argc >= 3 && !strcmp(argv[1], "spin")) {
		rate = prof_spin(atof(argv[2]));
	} else if (argc >= 2 && !strcmp(argv[1], "wait")) {
		char buf[16];

		printf("{\"pid\":%d,\"what\":\"ready\"}\n", getpid());
		fflush(stdout);
		if (!fgets(buf, sizeof(buf), stdin))
			return 1;
		prof_hot(1);
	} else {
		fprintf(stderr, "usage: profload hot SECONDS | sleep MS N | wait | spin SECONDS\n");
		return 2;
	}
	printf("{\"pid\":%d,\"what\":\"%s\",\"wall_s\":%.6f,\"iters_per_s\":%.0f}\n", getpid(),
	       argv[1], now() - t0, rate);
	return 0;
}
