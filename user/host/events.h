/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef __PMBPF_EVENTS_H
#define __PMBPF_EVENTS_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>
#include "pmbpf.h"

#define EVENT_NAME_LEN 64
#define EVENT_MAX_ENC  4 /* one encoding per core PMU of a hybrid host */

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

/* An event's encoding on one PMU (its CPUs only). */
struct event_enc {
	int pmu; /* index in pmus__all() */
	__u32 type;
	__u64 config, config1, config2;
};

struct event_spec {
	char name[EVENT_NAME_LEN];
	__u32 type;
	__u64 config, config1, config2; /* the first encoding when there are several */
	__u32 kind;
	bool exclude_user, exclude_kernel, exclude_hv; /* :k, :u modifiers */
	int group; /* index of its {} group, -1 when ungrouped */
	bool leader; /* first of its group */
	/*
	 * PMU events (sysfs aliases, pmu/terms/): the encoding per PMU, each
	 * opened on that PMU's CPUs only. 0: generic, opened on every CPU.
	 */
	int nr_enc;
	struct event_enc enc[EVENT_MAX_ENC];
	double scale; /* the alias's .scale; 1 otherwise */
	char unit[16]; /* the alias's .unit */
};

/* Where a list failed to parse, and why (one line). */
struct events_error {
	const char *at; /* into the list */
	int len;
	char msg[320];
};

/*
 * Parse one perf-style event: a generic name ("cycles", "LLC-load-misses"),
 * a raw code ("r01c2"), a sysfs PMU alias ("inst_retired",
 * "armv8_pmuv3_0/inst_retired/"), PMU terms ("cpu/event=0x3c,umask=0/"),
 * a tracepoint ("sched:sched_switch"), each with an optional :u, :k or :uk.
 */
int event__parse(const char *name, struct event_spec *spec);
/* The same with a one-line reason (and up to three close names) in msg. */
int event__parse_msg(const char *name, struct event_spec *spec, char *msg, size_t len);
/*
 * Parse a list with groups: "a,b" or "{a,b},{c,d}:u". Returns the number of
 * events, or a negative errno with err filled.
 */
int events__parse(const char *list, struct event_spec *specs, int max, struct events_error *err);
/*
 * Parse a comma-separated list into specs (at most max). Returns the number
 * parsed, or a negative errno with *bad pointing into list at the bad name.
 */
int events__parse_list(const char *list, struct event_spec *specs, int max, const char **bad,
		       int *bad_len);
/* Print every generic name event__parse accepts. */
void events__print_names(FILE *f);
/* perf list: PMUs with their aliases, tracepoint subsystems, generic names; filtered by word. */
void events__list(FILE *f, const char *word);
/* The perf_event_attr fields of a spec, as perf stat -vv prints them. */
void event__print_attr(FILE *f, const struct event_spec *spec);
const char *event_state__str(enum event_state state);
/* "hardware", "software", "hw-cache", "raw" */
const char *event__class(const struct event_spec *spec);
/* Map a perf_event_open() errno to an event state. */
enum event_state event_state__from_errno(int err);

/* one group where the PMU has room (split when it has not) */
#define DEFAULT_EVENTS "{cycles,instructions,LLC-load-misses,dTLB-load-misses}"
/* perf stat's choice on a host without a PMU */
#define DEFAULT_SW_EVENTS "task-clock,page-faults,context-switches,cpu-migrations"

#endif
