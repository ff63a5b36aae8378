// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* perf-style event names to perf_event_attr type and config. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <linux/perf_event.h>
#include "events.h"

struct named_event {
	const char *name;
	__u32 type;
	__u64 config;
	__u32 kind;
};

static const struct named_event named[] = {
	{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, EVENT_CYCLES | EVENT_HW },
	{ "cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, EVENT_CYCLES | EVENT_HW },
	{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS,
	  EVENT_INSTRUCTIONS | EVENT_HW },
	{ "cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES, EVENT_HW },
	{ "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, EVENT_MISS | EVENT_HW },
	{ "branch-instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, EVENT_HW },
	{ "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, EVENT_HW },
	{ "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, EVENT_MISS | EVENT_HW },
	{ "bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES, EVENT_HW },
	{ "stalled-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND,
	  EVENT_HW },
	{ "stalled-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND,
	  EVENT_HW },
	{ "ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES, EVENT_HW },
	{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, EVENT_TIME },
	{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, EVENT_TIME },
	{ "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, 0 },
	{ "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, 0 },
	{ "minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN, 0 },
	{ "major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ, 0 },
	{ "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, 0 },
	{ "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, 0 },
	{ "cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, 0 },
	{ "migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, 0 },
	{ "alignment-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS, 0 },
	{ "emulation-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS, 0 },
};

static const char *const cache_names[] = {
	[PERF_COUNT_HW_CACHE_L1D] = "L1-dcache", [PERF_COUNT_HW_CACHE_L1I] = "L1-icache",
	[PERF_COUNT_HW_CACHE_LL] = "LLC",	 [PERF_COUNT_HW_CACHE_DTLB] = "dTLB",
	[PERF_COUNT_HW_CACHE_ITLB] = "iTLB",	 [PERF_COUNT_HW_CACHE_BPU] = "branch",
	[PERF_COUNT_HW_CACHE_NODE] = "node",
};

/* perf's spelling: "<cache>-loads" for accesses, "<cache>-load-misses" for misses */
static const char *const cache_ops[][2] = {
	[PERF_COUNT_HW_CACHE_OP_READ] = { "load", "loads" },
	[PERF_COUNT_HW_CACHE_OP_WRITE] = { "store", "stores" },
	[PERF_COUNT_HW_CACHE_OP_PREFETCH] = { "prefetch", "prefetches" },
};

static void set_name(struct event_spec *spec, const char *name)
{
	snprintf(spec->name, sizeof(spec->name), "%s", name);
}

static int parse_cache(const char *name, struct event_spec *spec)
{
	size_t ci, oi, len;
	const char *rest;

	for (ci = 0; ci < sizeof(cache_names) / sizeof(cache_names[0]); ci++) {
		len = strlen(cache_names[ci]);
		if (strncmp(name, cache_names[ci], len) || name[len] != '-')
			continue;
		rest = name + len + 1;
		for (oi = 0; oi < sizeof(cache_ops) / sizeof(cache_ops[0]); oi++) {
			size_t olen = strlen(cache_ops[oi][0]);
			int miss;

			if (!strcmp(rest, cache_ops[oi][1]))
				miss = 0;
			else if (!strncmp(rest, cache_ops[oi][0], olen) &&
				 !strcmp(rest + olen, "-misses"))
				miss = 1;
			else
				continue;
			spec->type = PERF_TYPE_HW_CACHE;
			spec->config = ci | (oi << 8) |
				       ((__u64)(miss ? PERF_COUNT_HW_CACHE_RESULT_MISS :
						       PERF_COUNT_HW_CACHE_RESULT_ACCESS)
					<< 16);
			spec->kind = EVENT_HW | (miss ? EVENT_MISS : 0);
			set_name(spec, name);
			return 0;
		}
	}
	return -ENOENT;
}

int event__parse(const char *name, struct event_spec *spec)
{
	size_t i;

	memset(spec, 0, sizeof(*spec));
	if (!name || !*name || strlen(name) >= EVENT_NAME_LEN)
		return -EINVAL;

	for (i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
		if (strcmp(name, named[i].name))
			continue;
		spec->type = named[i].type;
		spec->config = named[i].config;
		spec->kind = named[i].kind;
		set_name(spec, name);
		return 0;
	}

	if (name[0] == 'r' && name[1]) {
		char *end;

		for (i = 1; name[i]; i++)
			if (!isxdigit((unsigned char)name[i]))
				return -ENOENT;
		if (strlen(name + 1) > 16)
			return -EINVAL;
		errno = 0;
		spec->config = strtoull(name + 1, &end, 16);
		if (errno || *end)
			return -EINVAL;
		spec->type = PERF_TYPE_RAW;
		spec->kind = EVENT_HW;
		set_name(spec, name);
		return 0;
	}

	return parse_cache(name, spec);
}

int events__parse_list(const char *list, struct event_spec *specs, int max, const char **bad,
		       int *bad_len)
{
	const char *p = list, *comma;
	char name[EVENT_NAME_LEN + 1];
	int n = 0, err, i;

	if (!list || !*list) {
		*bad = list;
		*bad_len = 0;
		return -EINVAL;
	}
	for (;;) {
		size_t len;

		comma = strchr(p, ',');
		len = comma ? (size_t)(comma - p) : strlen(p);
		*bad = p;
		*bad_len = (int)len;
		if (!len || len > EVENT_NAME_LEN)
			return -EINVAL;
		memcpy(name, p, len);
		name[len] = '\0';
		if (n == max)
			return -E2BIG;
		err = event__parse(name, &specs[n]);
		if (err)
			return err;
		for (i = 0; i < n; i++)
			if (specs[i].type == specs[n].type && specs[i].config == specs[n].config)
				return -EEXIST;
		n++;
		if (!comma)
			break;
		p = comma + 1;
	}
	return n;
}

void events__print_names(FILE *f)
{
	size_t i, ci, oi;

	fprintf(f, "hardware and software:");
	for (i = 0; i < sizeof(named) / sizeof(named[0]); i++)
		fprintf(f, " %s", named[i].name);
	fprintf(f, "\nhardware cache:");
	for (ci = 0; ci < sizeof(cache_names) / sizeof(cache_names[0]); ci++)
		for (oi = 0; oi < sizeof(cache_ops) / sizeof(cache_ops[0]); oi++)
			fprintf(f, " %s-%s %s-%s-misses", cache_names[ci], cache_ops[oi][1],
				cache_names[ci], cache_ops[oi][0]);
	fprintf(f, "\nraw: rNNNN (hex event code, e.g. r01c2)\n");
}

const char *event__class(const struct event_spec *spec)
{
	switch (spec->type) {
	case PERF_TYPE_HARDWARE:
		return "hardware";
	case PERF_TYPE_SOFTWARE:
		return "software";
	case PERF_TYPE_HW_CACHE:
		return "hw-cache";
	case PERF_TYPE_RAW:
		return "raw";
	}
	return "other";
}

const char *event_state__str(enum event_state state)
{
	switch (state) {
	case EVENT_COUNTING:
		return "counting";
	case EVENT_NOT_SUPPORTED:
		return "not-supported";
	case EVENT_PERMISSION_DENIED:
		return "permission-denied";
	case EVENT_INVALID:
		return "invalid";
	case EVENT_ERROR:
		break;
	}
	return "error";
}

enum event_state event_state__from_errno(int err)
{
	switch (err) {
	case 0:
		return EVENT_COUNTING;
	case ENOENT:
	case EOPNOTSUPP:
	case ENODEV:
		return EVENT_NOT_SUPPORTED;
	case EACCES:
	case EPERM:
		return EVENT_PERMISSION_DENIED;
	case EINVAL:
		return EVENT_INVALID;
	default:
		return EVENT_ERROR;
	}
}
