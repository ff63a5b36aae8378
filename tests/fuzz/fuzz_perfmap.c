// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Perf maps (/tmp/perf-PID.map, written by JIT runtimes, and by anyone where
 * the owner check lets them): perf_map__read on any bytes, then lookups of
 * the addresses its lines name, around them and at the ends of the space.
 */
#include "fuzz.h"
#include "symbolize.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz__quiet();
	return 0;
}

static void look(const struct perf_map *pm, __u64 addr)
{
	const char *name = perf_map__find(pm, addr);

	if (name)
		(void)strlen(name);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *f;
	struct perf_map *pm;
	const char *p = (const char *)data, *end = p + size;

	if (!size)
		return 0;
	f = fmemopen((void *)data, size, "r");
	if (!f)
		return 0;
	pm = perf_map__read(f);
	fclose(f);
	if (!pm)
		return 0;
	look(pm, 0);
	look(pm, ~0ULL);
	/* each line's start, and one past its end */
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		char line[64];
		unsigned long long a, n;

		snprintf(line, sizeof(line), "%.*s", (int)((nl ? nl : end) - p), p);
		if (sscanf(line, "%llx %llx", &a, &n) == 2) {
			look(pm, a);
			look(pm, a - 1);
			look(pm, a + n);
			look(pm, a + n - 1);
		}
		p = nl ? nl + 1 : end;
	}
	perf_map__free(pm);
	return 0;
}
