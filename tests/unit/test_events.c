// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Event names to perf_event_attr type/config, lists, and event states. */
#include <errno.h>
#include <string.h>
#include "check.h"
#include "events.h"

/* perf_event_attr.type values, spelled out as the ABI fixes them */
#define T_HW 0
#define T_SW 1
#define T_CACHE 3
#define T_RAW 4

struct expect {
	const char *name;
	__u32 type;
	__u64 config;
	__u32 kind;
};

static const struct expect known[] = {
	{ "cycles", T_HW, 0, EVENT_CYCLES | EVENT_HW },
	{ "cpu-cycles", T_HW, 0, EVENT_CYCLES | EVENT_HW },
	{ "instructions", T_HW, 1, EVENT_INSTRUCTIONS | EVENT_HW },
	{ "cache-misses", T_HW, 3, EVENT_MISS | EVENT_HW },
	{ "branch-misses", T_HW, 5, EVENT_MISS | EVENT_HW },
	{ "ref-cycles", T_HW, 9, EVENT_HW },
	{ "cpu-clock", T_SW, 0, EVENT_TIME },
	{ "task-clock", T_SW, 1, EVENT_TIME },
	{ "page-faults", T_SW, 2, 0 },
	{ "faults", T_SW, 2, 0 },
	{ "context-switches", T_SW, 3, 0 },
	{ "cs", T_SW, 3, 0 },
	{ "cpu-migrations", T_SW, 4, 0 },
	/* cache id | op << 8 | result << 16 */
	{ "LLC-load-misses", T_CACHE, 0x10002, EVENT_MISS | EVENT_HW },
	{ "LLC-loads", T_CACHE, 0x2, EVENT_HW },
	{ "LLC-store-misses", T_CACHE, 0x10102, EVENT_MISS | EVENT_HW },
	{ "dTLB-load-misses", T_CACHE, 0x10003, EVENT_MISS | EVENT_HW },
	{ "L1-dcache-loads", T_CACHE, 0x0, EVENT_HW },
	{ "L1-dcache-load-misses", T_CACHE, 0x10000, EVENT_MISS | EVENT_HW },
	{ "L1-icache-load-misses", T_CACHE, 0x10001, EVENT_MISS | EVENT_HW },
	{ "iTLB-load-misses", T_CACHE, 0x10004, EVENT_MISS | EVENT_HW },
	{ "branch-loads", T_CACHE, 0x5, EVENT_HW },
	{ "L1-dcache-stores", T_CACHE, 0x100, EVENT_HW },
	{ "L1-dcache-prefetches", T_CACHE, 0x200, EVENT_HW },
	{ "L1-dcache-prefetch-misses", T_CACHE, 0x10200, EVENT_MISS | EVENT_HW },
	{ "node-prefetch-misses", T_CACHE, 0x10206, EVENT_MISS | EVENT_HW },
	{ "r01c2", T_RAW, 0x1c2, EVENT_HW },
	{ "r0", T_RAW, 0, EVENT_HW },
	{ "rffffffffffffffff", T_RAW, 0xffffffffffffffffULL, EVENT_HW },
	{ "rABCDEF", T_RAW, 0xabcdef, EVENT_HW },
};

static void test_known(void)
{
	struct event_spec spec;
	size_t i;

	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		const struct expect *e = &known[i];

		if (!CHECK_EQ_INT(event__parse(e->name, &spec), 0)) {
			fprintf(stderr, "  (event %s)\n", e->name);
			continue;
		}
		CHECK_STR(spec.name, e->name);
		if (!CHECK_EQ_U64(spec.type, e->type) || !CHECK_EQ_U64(spec.config, e->config) ||
		    !CHECK_EQ_U64(spec.kind, e->kind))
			fprintf(stderr, "  (event %s)\n", e->name);
	}
}

static void test_invalid(void)
{
	char long_name[EVENT_NAME_LEN + 8];
	struct event_spec spec;

	CHECK_EQ_INT(event__parse("nope", &spec), -ENOENT);
	CHECK_EQ_INT(event__parse("Cycles", &spec), -ENOENT);
	CHECK_EQ_INT(event__parse("cycles ", &spec), -ENOENT);
	CHECK_EQ_INT(event__parse("LLC-load", &spec), -ENOENT);
	CHECK_EQ_INT(event__parse("LLC-loads-miss", &spec), -ENOENT);
	CHECK_EQ_INT(event__parse("LLC-loads-missesx", &spec), -ENOENT);
	CHECK_EQ_INT(event__parse("LLC-", &spec), -ENOENT);
	CHECK_EQ_INT(event__parse("XYZ-load-misses", &spec), -ENOENT);
	CHECK_EQ_INT(event__parse("dTLB-flush-misses", &spec), -ENOENT);
	CHECK_EQ_INT(event__parse("rzz", &spec), -ENOENT);
	CHECK_EQ_INT(event__parse("r01c2g", &spec), -ENOENT);
	CHECK_EQ_INT(event__parse("r-1", &spec), -ENOENT);
	CHECK(event__parse("r", &spec) < 0);
	/* 17 hex digits do not fit a u64 config */
	CHECK_EQ_INT(event__parse("r10000000000000000", &spec), -EINVAL);
	CHECK_EQ_INT(event__parse("r00000000000000001", &spec), -EINVAL);
	CHECK_EQ_INT(event__parse("", &spec), -EINVAL);
	CHECK_EQ_INT(event__parse(NULL, &spec), -EINVAL);

	memset(long_name, 'a', sizeof(long_name));
	long_name[EVENT_NAME_LEN] = '\0';
	CHECK_EQ_INT(event__parse(long_name, &spec), -EINVAL);
	/* the longest that fits: 31 characters, a raw code */
	memset(long_name, '0', EVENT_NAME_LEN - 1);
	long_name[0] = 'r';
	long_name[EVENT_NAME_LEN - 1] = '\0';
	CHECK(event__parse(long_name, &spec) < 0);
	memset(long_name, '0', EVENT_NAME_LEN);
	long_name[0] = 'r';
	long_name[17] = '\0';
	CHECK_EQ_INT(event__parse(long_name, &spec), 0);
	CHECK_EQ_U64(spec.config, 0);
}

static void test_kinds(void)
{
	struct event_spec spec;

	event__parse("cycles", &spec);
	CHECK(spec.kind & EVENT_CYCLES);
	CHECK(!(spec.kind & EVENT_INSTRUCTIONS));
	event__parse("instructions", &spec);
	CHECK(spec.kind & EVENT_INSTRUCTIONS);
	CHECK(!(spec.kind & EVENT_CYCLES));
	event__parse("ref-cycles", &spec);
	CHECK(!(spec.kind & EVENT_CYCLES));
	event__parse("dTLB-load-misses", &spec);
	CHECK(spec.kind & EVENT_MISS);
	event__parse("dTLB-loads", &spec);
	CHECK(!(spec.kind & EVENT_MISS));
	event__parse("task-clock", &spec);
	CHECK(spec.kind & EVENT_TIME);
	CHECK(!(spec.kind & EVENT_HW));
	event__parse("page-faults", &spec);
	CHECK(!(spec.kind & (EVENT_HW | EVENT_MISS | EVENT_TIME)));
	event__parse("r01c2", &spec);
	CHECK(spec.kind & EVENT_HW);
}

/* Every name events__print_names lists is accepted by event__parse. */
static void test_print_names_roundtrip(void)
{
	struct event_spec spec;
	char *buf = NULL, *words, *tok, *save;
	size_t len = 0;
	int names = 0, bad = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!CHECK(f))
		return;
	events__print_names(f);
	fclose(f);
	words = strdup(buf);
	if (!CHECK(words))
		return;
	for (tok = strtok_r(words, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save)) {
		if (strchr(tok, ':') || strchr(tok, '(') || strchr(tok, ')') ||
		    !strcmp(tok, "hardware") || !strcmp(tok, "and") ||
		    !strcmp(tok, "rNNNN") || !strcmp(tok, "code,") || !strcmp(tok, "e.g.") ||
		    !strcmp(tok, "hex") || !strcmp(tok, "event"))
			continue;
		names++;
		if (event__parse(tok, &spec)) {
			fprintf(stderr, "  listed but not accepted: %s\n", tok);
			bad++;
		}
	}
	CHECK(names > 40);
	CHECK_EQ_INT(bad, 0);
	/* perf's spelling of the hardware cache events */
	CHECK(strstr(buf, " LLC-loads ") || strstr(buf, " LLC-loads\n"));
	CHECK(strstr(buf, " LLC-load-misses ") || strstr(buf, " LLC-load-misses\n"));
	CHECK(strstr(buf, " dTLB-load-misses ") || strstr(buf, " dTLB-load-misses\n"));
	free(words);
	free(buf);
}

static void test_list(void)
{
	struct event_spec specs[PMBPF_MAX_EVENTS];
	const char *bad = NULL, *list;
	int bad_len = -1;

	list = DEFAULT_EVENTS;
	CHECK_EQ_INT(events__parse_list(list, specs, PMBPF_MAX_EVENTS, &bad, &bad_len), 4);
	CHECK_STR(specs[0].name, "cycles");
	CHECK_STR(specs[1].name, "instructions");
	CHECK_STR(specs[2].name, "LLC-load-misses");
	CHECK_STR(specs[3].name, "dTLB-load-misses");
	CHECK_EQ_U64(specs[2].config, 0x10002);

	CHECK_EQ_INT(events__parse_list("cs", specs, PMBPF_MAX_EVENTS, &bad, &bad_len), 1);

	list = "cycles,bogus,instructions";
	CHECK_EQ_INT(events__parse_list(list, specs, PMBPF_MAX_EVENTS, &bad, &bad_len), -ENOENT);
	CHECK(bad == list + 7);
	CHECK_EQ_INT(bad_len, 5);

	list = "cycles,instructions,cycles";
	CHECK_EQ_INT(events__parse_list(list, specs, PMBPF_MAX_EVENTS, &bad, &bad_len), -EEXIST);
	CHECK(bad == list + 20);
	CHECK_EQ_INT(bad_len, 6);

	list = "cycles,,instructions";
	CHECK_EQ_INT(events__parse_list(list, specs, PMBPF_MAX_EVENTS, &bad, &bad_len), -EINVAL);
	CHECK(bad == list + 7);
	CHECK_EQ_INT(bad_len, 0);

	list = "cycles,";
	CHECK_EQ_INT(events__parse_list(list, specs, PMBPF_MAX_EVENTS, &bad, &bad_len), -EINVAL);
	CHECK(bad == list + 7);
	CHECK_EQ_INT(bad_len, 0);

	list = ",cycles";
	CHECK_EQ_INT(events__parse_list(list, specs, PMBPF_MAX_EVENTS, &bad, &bad_len), -EINVAL);
	CHECK(bad == list);
	CHECK_EQ_INT(bad_len, 0);

	list = "";
	CHECK_EQ_INT(events__parse_list(list, specs, PMBPF_MAX_EVENTS, &bad, &bad_len), -EINVAL);
	CHECK_EQ_INT(bad_len, 0);

	/* a name longer than any event: refused, the whole name reported */
	list = "cycles,aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
	CHECK_EQ_INT(events__parse_list(list, specs, PMBPF_MAX_EVENTS, &bad, &bad_len), -EINVAL);
	CHECK(bad == list + 7);
	CHECK_EQ_INT(bad_len, 40);

	list = "cycles,r10000000000000000";
	CHECK(events__parse_list(list, specs, PMBPF_MAX_EVENTS, &bad, &bad_len) < 0);
	CHECK(bad == list + 7);
	CHECK_EQ_INT(bad_len, 18);

	list = "cycles,instructions,cache-misses,branch-misses,cs,faults,cpu-clock,task-clock";
	CHECK_EQ_INT(events__parse_list(list, specs, PMBPF_MAX_EVENTS, &bad, &bad_len), 8);
	CHECK_STR(specs[7].name, "task-clock");

	list = "cycles,instructions,cache-misses,branch-misses,cs,faults,cpu-clock,task-clock,"
	       "ref-cycles";
	CHECK_EQ_INT(events__parse_list(list, specs, PMBPF_MAX_EVENTS, &bad, &bad_len), -E2BIG);
	CHECK(bad == strstr(list, "ref-cycles"));

	/* max smaller than the array */
	CHECK_EQ_INT(events__parse_list("cycles,instructions", specs, 1, &bad, &bad_len), -E2BIG);
	CHECK(bad && !strncmp(bad, "instructions", 12));
}

static void test_states(void)
{
	CHECK_EQ_INT(event_state__from_errno(0), EVENT_COUNTING);
	CHECK_EQ_INT(event_state__from_errno(ENOENT), EVENT_NOT_SUPPORTED);
	CHECK_EQ_INT(event_state__from_errno(EOPNOTSUPP), EVENT_NOT_SUPPORTED);
	CHECK_EQ_INT(event_state__from_errno(ENODEV), EVENT_NOT_SUPPORTED);
	CHECK_EQ_INT(event_state__from_errno(EACCES), EVENT_PERMISSION_DENIED);
	CHECK_EQ_INT(event_state__from_errno(EPERM), EVENT_PERMISSION_DENIED);
	CHECK_EQ_INT(event_state__from_errno(EINVAL), EVENT_INVALID);
	CHECK_EQ_INT(event_state__from_errno(EBUSY), EVENT_ERROR);
	CHECK_EQ_INT(event_state__from_errno(EMFILE), EVENT_ERROR);

	CHECK_STR(event_state__str(EVENT_COUNTING), "counting");
	CHECK_STR(event_state__str(EVENT_NOT_SUPPORTED), "not-supported");
	CHECK_STR(event_state__str(EVENT_PERMISSION_DENIED), "permission-denied");
	CHECK_STR(event_state__str(EVENT_INVALID), "invalid");
	CHECK_STR(event_state__str(EVENT_ERROR), "error");
	CHECK_STR(event_state__str((enum event_state)42), "error");
}

int main(void)
{
	test_known();
	test_invalid();
	test_kinds();
	test_print_names_roundtrip();
	test_list();
	test_states();
	return check_summary();
}
