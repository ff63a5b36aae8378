// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Workload of the --call-graph dwarf tests (tests/test_dwarf.py), built with
 * -fomit-frame-pointer (mk/profile.mk): stacks that frame pointers cannot walk.
 *
 *   dwarfload sort SECONDS        main -> sort_items -> libc qsort -> cmp_items (hot)
 *   dwarfload deep SECONDS DEPTH  main -> deep_recurse x DEPTH -> deep_spin (hot),
 *                                 each frame 512 bytes: DEPTH 64 is 32 KiB of stack
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct item {
	uint64_t key;
	uint64_t pad;
};

static volatile uint64_t sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The hot path: every comparison hashes both keys for a while. */
static __attribute__((noipa)) int cmp_items(const void *a, const void *b)
{
	uint64_t x = ((const struct item *)a)->key, y = ((const struct item *)b)->key;
	int i;

	for (i = 0; i < 200; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		y = y * 6364136223846793005ULL + 1442695040888963407ULL;
	}
	sink = x ^ y;
	return ((const struct item *)a)->key < ((const struct item *)b)->key ? -1 :
	       ((const struct item *)a)->key > ((const struct item *)b)->key;
}

/* Not a tail call: the frame stays on the stack under qsort. */
static __attribute__((noipa)) uint64_t sort_items(struct item *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_items);
	return v[0].key + v[n - 1].key;
}

static __attribute__((noipa)) uint64_t deep_spin(void)
{
	uint64_t x = sink;
	int i;

	for (i = 0; i < 1000000; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x;
}

static __attribute__((noipa)) uint64_t deep_recurse(int depth)
{
	volatile char frame[480];
	uint64_t r;

	frame[0] = (char)depth;
	frame[sizeof(frame) - 1] = (char)depth;
	r = depth > 1 ? deep_recurse(depth - 1) : deep_spin();
	return r + frame[0] + frame[sizeof(frame) - 1];
}

int main(int argc, char **argv)
{
	double end;
	size_t n = 2000, i;
	struct item *v;
	uint64_t seed = 1;

	if (argc < 3 || (strcmp(argv[1], "sort") && (strcmp(argv[1], "deep") || argc < 4))) {
		fprintf(stderr, "usage: dwarfload sort SECONDS | deep SECONDS DEPTH\n");
		return 2;
	}
	end = now() + atof(argv[2]);
	if (!strcmp(argv[1], "deep")) {
		int depth = atoi(argv[3]);

		while (now() < end)
			sink += deep_recurse(depth);
		return 0;
	}
	v = calloc(n, sizeof(*v));
	if (!v)
		return 1;
	while (now() < end) {
		for (i = 0; i < n; i++) {
			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			v[i].key = seed >> 16;
		}
		sink += sort_items(v, n);
	}
	free(v);
	return 0;
}
