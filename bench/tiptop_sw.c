// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * LD_PRELOAD shim that lets tiptop run on a host without a hardware PMU, so
 * that its cost model (per-task counters opened for every task, found by
 * scanning /proc) can be measured next to pmbpf's.
 *
 * tiptop probes PERF_TYPE_HARDWARE cycles at start and exits when it fails,
 * and its screens name hardware events. This shim turns every hardware and
 * hardware-cache event into a software one (cycles -> cpu-clock,
 * instructions -> task-clock, cache misses -> page-faults, branch misses ->
 * context-switches, ...) inside tiptop's syscall(__NR_perf_event_open, ...).
 * The per-task counter is opened, inherited, read and closed exactly as it
 * would be with a PMU; only what it counts differs.
 *
 * It also makes stdout line-buffered, so that the benchmark can count
 * tiptop's refreshes in its batch output as they happen.
 */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/perf_event.h>

typedef long (*syscall_fn)(long, ...);

static __u64 software_for(__u32 type, __u64 config)
{
	static const __u64 hw_map[] = {
		[PERF_COUNT_HW_CPU_CYCLES] = PERF_COUNT_SW_CPU_CLOCK,
		[PERF_COUNT_HW_INSTRUCTIONS] = PERF_COUNT_SW_TASK_CLOCK,
		[PERF_COUNT_HW_CACHE_REFERENCES] = PERF_COUNT_SW_PAGE_FAULTS_MIN,
		[PERF_COUNT_HW_CACHE_MISSES] = PERF_COUNT_SW_PAGE_FAULTS,
		[PERF_COUNT_HW_BRANCH_INSTRUCTIONS] = PERF_COUNT_SW_CPU_MIGRATIONS,
		[PERF_COUNT_HW_BRANCH_MISSES] = PERF_COUNT_SW_CONTEXT_SWITCHES,
	};

	if (type == PERF_TYPE_HARDWARE && config < sizeof(hw_map) / sizeof(hw_map[0]))
		return hw_map[config];
	return PERF_COUNT_SW_PAGE_FAULTS_MAJ;
}

__attribute__((constructor)) static void line_buffered(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
}

long syscall(long nr, ...)
{
	static syscall_fn real;
	long a[6];
	va_list ap;
	int i;

	va_start(ap, nr);
	for (i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (!real)
		real = (syscall_fn)dlsym(RTLD_NEXT, "syscall");

	if (nr == __NR_perf_event_open && a[0]) {
		struct perf_event_attr attr;
		const struct perf_event_attr *orig = (const void *)a[0];

		if (orig->type == PERF_TYPE_HARDWARE || orig->type == PERF_TYPE_HW_CACHE ||
		    orig->type == PERF_TYPE_RAW) {
			size_t size = orig->size ? orig->size : PERF_ATTR_SIZE_VER0;

			/* size 0 means the first ABI version, as the kernel reads it */
			memset(&attr, 0, sizeof(attr));
			memcpy(&attr, orig, size < sizeof(attr) ? size : sizeof(attr));
			attr.config = software_for(orig->type, orig->config);
			attr.type = PERF_TYPE_SOFTWARE;
			attr.size = sizeof(attr);
			return real(nr, &attr, a[1], a[2], a[3], a[4]);
		}
	}
	return real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}
