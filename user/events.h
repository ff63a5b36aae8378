/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef __PMBPF_EVENTS_H
#define __PMBPF_EVENTS_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>
#include "pmbpf.h"

#define EVENT_NAME_LEN 32

enum event_kind {
	EVENT_CYCLES = 1 << 0,
	EVENT_INSTRUCTIONS = 1 << 1,
	EVENT_MISS = 1 << 2, /* a miss count: MPKI is shown for it */
	EVENT_TIME = 1 << 3, /* counts nanoseconds (cpu-clock, task-clock) */
	EVENT_HW = 1 << 4, /* needs a PMU */
};

enum event_state {
	EVENT_COUNTING,
	EVENT_NOT_SUPPORTED,
	EVENT_PERMISSION_DENIED,
	EVENT_INVALID,
	EVENT_ERROR,
};

struct event_spec {
	char name[EVENT_NAME_LEN];
	__u32 type;
	__u64 config;
	__u32 kind;
};

/* Parse one perf-style event name ("cycles", "LLC-load-misses", "r01c2"). */
int event__parse(const char *name, struct event_spec *spec);
/*
 * Parse a comma-separated list into specs (at most max). Returns the number
 * parsed, or a negative errno with *bad pointing into list at the bad name.
 */
int events__parse_list(const char *list, struct event_spec *specs, int max, const char **bad,
		       int *bad_len);
/* Print every name event__parse accepts. */
void events__print_names(FILE *f);
const char *event_state__str(enum event_state state);
/* "hardware", "software", "hw-cache", "raw" */
const char *event__class(const struct event_spec *spec);
/* Map a perf_event_open() errno to an event state. */
enum event_state event_state__from_errno(int err);

#define DEFAULT_EVENTS "cycles,instructions,LLC-load-misses,dTLB-load-misses"

#endif
