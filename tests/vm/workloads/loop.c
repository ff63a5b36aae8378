// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * loop [-w] ITERATIONS: runs spin() ITERATIONS times, so that it retires
 * 4 x ITERATIONS instructions plus a few thousand of start-up and exit (a
 * static binary: no dynamic loader). Prints its pid and the expected count
 * first, one line of key=value pairs. -w: wait for SIGUSR1 before the loop.
 */

#include "spin.h"

int main(int argc, char **argv)
{
	int wait = 0;
	uint64_t iters;

	if (argc > 1 && !strcmp(argv[1], "-w")) {
		wait = 1;
		argc--;
		argv++;
	}
	if (argc != 2) {
		fprintf(stderr, "usage: loop [-w] ITERATIONS\n");
		return 2;
	}
	iters = parse_count("loop", argv[1]);
	if (wait)
		gate_block();
	printf("loop pid=%d iterations=%llu insns_per_iter=%d expected_instructions=%llu\n",
	       (int)getpid(), (unsigned long long)iters, SPIN_INSNS_PER_ITER,
	       (unsigned long long)iters * SPIN_INSNS_PER_ITER);
	fflush(stdout);
	if (wait)
		gate_wait();
	spin(iters);
	return 0;
}
