// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * pagetouch [-w] PAGES: maps PAGES fresh anonymous pages and writes one byte
 * to each, so that it takes PAGES page faults (plus a few dozen of start-up).
 * -w: print the pid and wait for SIGUSR1 before touching.
 */
#include <errno.h>
#include <errno.h>
#include <sys/mman.h>

#include "spin.h"

int main(int argc, char **argv)
{
	int wait = 0;
	uint64_t pages, i;
	long page_size = sysconf(_SC_PAGESIZE);
	volatile char *mem;

	if (argc > 1 && !strcmp(argv[1], "-w")) {
		wait = 1;
		argc--;
		argv++;
	}
	if (argc != 2) {
		fprintf(stderr, "usage: pagetouch [-w] PAGES\n");
		return 2;
	}
	pages = parse_count("pagetouch", argv[1]);
	if (wait)
		gate_block();
	printf("pagetouch pid=%d pages=%llu expected_page_faults=%llu\n", (int)getpid(),
	       (unsigned long long)pages, (unsigned long long)pages);
	fflush(stdout);
	if (wait)
		gate_wait();
	mem = mmap(NULL, pages * page_size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		fprintf(stderr, "pagetouch: mmap of %llu pages: %s\n",
			(unsigned long long)pages, strerror(errno));
		return 1;
	}
	for (i = 0; i < pages; i++)
		mem[i * page_size] = 1;
	return 0;
}
