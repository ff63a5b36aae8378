// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * -e event lists and single event names (events__parse, event__parse_msg,
 * events__parse_list) against tests/unit/fake-sysfs/x86: PMU terms and
 * aliases, tracepoints, groups, modifiers, the "did you mean" suggestions.
 * The fake tree is read once (pmu.c keeps the PMUs and the tracepoint
 * names), so the harness runs at memory speed. PMBPF_FUZZ_HOST_SYSFS=1 runs
 * it on this host's /sys and tracefs instead (to compare).
 */
#include "fuzz.h"
#include "events.h"
#include "pmu.h"

/* fuzz_events_hybrid.c includes this file with "hybrid" (cpu_core and cpu_atom) */
#ifndef EVENTS_TREE
#define EVENTS_TREE "x86"
#endif

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz__quiet();
	if (getenv("PMBPF_FUZZ_HOST_SYSFS"))
		return 0;
	pmu__set_roots(FUZZ_SYSFS "/" EVENTS_TREE, FUZZ_SYSFS "/" EVENTS_TREE "/kernel/tracing");
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct event_spec specs[64];
	struct events_error e;
	const char *bad = NULL;
	char msg[320], *s;
	int bad_len = 0, n, i;

	if (size > 4096)
		return -1;
	s = fuzz__str(data, size);
	n = events__parse(s, specs, 64, &e);
	if (n < 0 && e.at && (e.at < s || e.at + e.len > s + size))
		abort(); /* the error must point into the list */
	for (i = 0; i < n; i++)
		if (!event__class(&specs[i]))
			abort();
	event__parse_msg(s, &specs[0], msg, sizeof(msg));
	if (!memchr(msg, '\0', sizeof(msg)))
		abort();
	n = events__parse_list(s, specs, 8, &bad, &bad_len);
	if (n < 0 && bad && (bad < s || bad + bad_len > s + size))
		abort();
	free(s);
	return 0;
}
