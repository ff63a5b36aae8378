// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * busy [-w] MILLISECONDS: keeps one CPU busy in user space for that long
 * (CLOCK_MONOTONIC, which in a guest with -icount is virtual time). Almost all
 * of its instructions are spin()'s, so its IPC is that of plain integer code.
 * -w: print the pid and wait for SIGUSR1 before starting.
 */
#include <time.h>

#include "spin.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	int wait = 0;
	uint64_t ms, end;

	if (argc > 1 && !strcmp(argv[1], "-w")) {
		wait = 1;
		argc--;
		argv++;
	}
	if (argc != 2) {
		fprintf(stderr, "usage: busy [-w] MILLISECONDS\n");
		return 2;
	}
	ms = parse_count("busy", argv[1]);
	if (wait)
		gate_block();
	printf("busy pid=%d ms=%llu\n", (int)getpid(), (unsigned long long)ms);
	fflush(stdout);
	if (wait)
		gate_wait();
	end = now_ns() + ms * 1000000u;
	/* 100k iterations between clock reads: about 0.4 ms at 1 GIPS. */
	while (now_ns() < end)
		spin(100000);
	return 0;
}
