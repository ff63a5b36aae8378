// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Option values: the first byte picks the parser, the rest is its argument.
 * Durations and intervals (-i, -d, --grace), bounded integers (-m, -c, -r,
 * -k, --cpi-window, --cpi-k), PIDs, --hot=HZ, CPU lists, -M metrics, -e
 * through the session options (fake sysfs), compare's thresholds and formats.
 */
#include <errno.h>
#include <stdbool.h>
#include "fuzz.h"
#include "compare.h"
#include "compare_report.h"
#include "cpi.h"
#include "options.h"
#include "pmu.h"
#include "util.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz__quiet();
	pmu__set_roots(FUZZ_SYSFS "/x86", FUZZ_SYSFS "/x86/kernel/tracing");
	return 0;
}

static void parse(unsigned char which, const char *arg)
{
	static struct session_opts so;
	struct cpi_opts co = { .window = 60, .k = 5 };
	unsigned long long u;
	enum compare_format fmt;
	struct threshold th;
	bool cpus[512];
	__u64 ns = 0;
	__u32 v32;
	pid_t pid;
	int i;

	switch (which % 16) {
	case 0:
		if (!duration__parse(arg, &ns) && (!ns || ns > DURATION_MAX_NS))
			abort(); /* what it promises in util.h */
		break;
	case 1:
		if (!options__interval(arg, 1000000, 0, &ns) &&
		    (ns < 1000000 || ns > INTERVAL_MAX_NS))
			abort();
		break;
	case 2:
		options__duration(arg, &ns);
		break;
	case 3:
		if (!uint__parse(arg, 3, 1000, &u) && (u < 3 || u > 1000))
			abort();
		break;
	case 4:
		cpulist__parse(arg, cpus, 512);
		break;
	case 5:
		/* a PID is parsed, then looked for: only numbers up to pid_max get that far */
		options__pid(arg, &pid);
		break;
	case 6:
		options__max_procs(arg, &v32);
		break;
	case 7:
		if (!options__int("--n", arg, -5, 5, &i) && (i < -5 || i > 5))
			abort();
		break;
	case 8:
		options__hot(*arg ? arg : NULL, &v32);
		break;
	case 9:
		threshold__parse(arg, &th);
		break;
	case 10:
		compare_format__parse(arg, &fmt);
		break;
	case 11:
		options__cpi(OPT_CPI_WINDOW, arg, &co);
		options__cpi(OPT_CPI_K, arg, &co);
		options__cpi_check(&co);
		break;
	case 12:
		memset(&so, 0, sizeof(so));
		options__session('M', arg, &so, NULL, 0);
		break;
	case 13:
		memset(&so, 0, sizeof(so));
		options__session('e', arg, &so, NULL, 0);
		break;
	case 14:
		memset(&so, 0, sizeof(so));
		options__session(OPT_HOT, arg, &so, NULL, 0);
		options__session('m', arg, &so, NULL, 0);
		break;
	default:
		threshold__default(arg);
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s;

	if (!size || size > 1024)
		return -1;
	s = fuzz__str(data + 1, size - 1);
	parse(data[0], s);
	free(s);
	return 0;
}
