// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Event names to perf_event_attr type/config, lists, and event states. */
#include <errno.h>
#include <string.h>
#include "check.h"
#include "events.h"
#include "pmu.h"

/* perf_event_attr.type values, spelled out as the ABI fixes them */
#define T_HW	0
#define T_SW	1
#define T_CACHE 3
#define T_RAW	4

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
		    !strcmp(tok, "hardware") || !strcmp(tok, "and") || !strcmp(tok, "rNNNN") ||
		    !strcmp(tok, "code,") || !strcmp(tok, "e.g.") || !strcmp(tok, "hex") ||
		    !strcmp(tok, "event"))
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
	list = "cycles,aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
	CHECK_EQ_INT(events__parse_list(list, specs, PMBPF_MAX_EVENTS, &bad, &bad_len), -EINVAL);
	CHECK(bad == list + 7);
	CHECK_EQ_INT(bad_len, (int)strlen(list) - 7);

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

static char fake_root[1024];

/* Point pmu.c at tests/unit/fake-sysfs/<name> (sysfs and its tracefs). */
static void use_fake(const char *name)
{
	char sys[1200], tr[1300];

	snprintf(sys, sizeof(sys), "%s/%s", fake_root, name);
	snprintf(tr, sizeof(tr), "%s/kernel/tracing", sys);
	pmu__set_roots(sys, tr);
}

struct attr_expect {
	const char *name;
	__u32 type;
	__u64 config, config1, config2;
	bool xu, xk, xh;
	__u32 kind;
};

/*
 * Expected encodings from the format/ files of the fake tree, which are
 * copies of real kernels' (Intel cpu, RAPL power): the same arithmetic perf
 * does in pmu_format_value().
 */
static const struct attr_expect x86[] = {
	{ "cpu/event=0x3c,umask=0x0/", 4, 0x3c },
	{ "cpu/event=0x3c/", 4, 0x3c },
	/* cmask 1 << 24, inv 1 << 23, edge 1 << 18 */
	{ "cpu/event=0xd1,umask=0x20,cmask=1,inv,edge/", 4, 0x18420d1 },
	{ "cpu/event=0xcd,umask=0x1,ldlat=3/", 4, 0x1cd, 3 },
	{ "cpu/event=0xc0,in_tx=1/", 4, 0x1000000c0ULL },
	{ "cpu/config=0x1234,config1=5,config2=6/", 4, 0x1234, 5, 6 },
	{ "cpu/event=0x3c/u", 4, 0x3c, 0, 0, false, true, true },
	{ "cpu/event=0x3c/:k", 4, 0x3c, 0, 0, true, false, true },
	{ "cpu/cpu-cycles/", 4, 0x3c, 0, 0, false, false, false, EVENT_HW | EVENT_CYCLES },
	{ "cpu-cycles", 0, 0, 0, 0, false, false, false, EVENT_HW | EVENT_CYCLES },
	{ "instructions:u", 0, 1, 0, 0, false, true, true, EVENT_HW | EVENT_INSTRUCTIONS },
	{ "topdown-fetch-bubbles", 4, 0x19c, 0, 0, false, false, false, EVENT_HW },
	{ "cpu/topdown-recovery-bubbles/", 4, 0x100030d, 0, 0, false, false, false, EVENT_HW },
	{ "mem-loads", 4, 0x1cd, 3, 0, false, false, false, EVENT_HW },
	{ "cpu/mem-loads,ldlat=0x10/", 4, 0x1cd, 0x13 },
	{ "energy-pkg", 11, 0x2 },
	{ "power/energy-pkg/:u", 11, 0x2, 0, 0, false, true, true },
	{ "sched:sched_switch", 2, 316 },
	{ "syscalls:sys_enter_write:k", 2, 840, 0, 0, true, false, true },
	{ "r01c2:uk", 4, 0x1c2, 0, 0, false, false, true, EVENT_HW },
	{ "LLC-load-misses:u", 3, 0x10002, 0, 0, false, true, true, EVENT_HW | EVENT_MISS },
};

static void check_attr(const struct attr_expect *x, size_t n)
{
	struct event_spec spec;
	char msg[320];
	size_t i;

	for (i = 0; i < n; i++) {
		const struct attr_expect *e = &x[i];
		bool ok;

		if (!CHECK_EQ_INT(event__parse_msg(e->name, &spec, msg, sizeof(msg)), 0)) {
			fprintf(stderr, "  (event %s: %s)\n", e->name, msg);
			continue;
		}
		ok = CHECK_EQ_U64(spec.type, e->type);
		ok &= CHECK_EQ_U64(spec.config, e->config);
		ok &= CHECK_EQ_U64(spec.config1, e->config1);
		ok &= CHECK_EQ_U64(spec.config2, e->config2);
		ok &= CHECK_EQ_INT(spec.exclude_user, e->xu);
		ok &= CHECK_EQ_INT(spec.exclude_kernel, e->xk);
		ok &= CHECK_EQ_INT(spec.exclude_hv, e->xh);
		if (e->kind)
			ok &= CHECK_EQ_U64(spec.kind, e->kind);
		CHECK_STR(spec.name, e->name);
		if (!ok)
			fprintf(stderr, "  (event %s)\n", e->name);
	}
}

static void test_x86_encoding(void)
{
	struct event_spec spec;
	char msg[320];

	use_fake("x86");
	check_attr(x86, sizeof(x86) / sizeof(x86[0]));

	/* .scale and .unit of the alias */
	CHECK_EQ_INT(event__parse_msg("topdown-total-slots", &spec, msg, sizeof(msg)), 0);
	CHECK_NEAR(spec.scale, 2.0, 0);
	CHECK_EQ_INT(event__parse_msg("power/energy-pkg/", &spec, msg, sizeof(msg)), 0);
	CHECK_NEAR(spec.scale, 2.3283064365386962890625e-10, 1e-24);
	CHECK_STR(spec.unit, "Joules");
	CHECK_STR(event__class(&spec), "pmu");
	CHECK_EQ_INT(event__parse_msg("sched:sched_switch", &spec, msg, sizeof(msg)), 0);
	CHECK_STR(event__class(&spec), "tracepoint");
	CHECK_EQ_INT(event__parse_msg("cycles", &spec, msg, sizeof(msg)), 0);
	CHECK_EQ_INT(spec.nr_enc, 0);
}

struct bad_expect {
	const char *list;
	int err;
	const char *says;
};

static const struct bad_expect bad[] = {
	{ "cpu/event=/", -EINVAL, "missing value for term 'event' of cpu" },
	{ "cpu/bogus=1/", -EINVAL, "unknown term 'bogus' for PMU cpu (its terms: " },
	{ "cpu/event=0x100/", -EINVAL, "value 0x100 does not fit term 'event' of cpu" },
	{ "cpu/event=zz/", -EINVAL, "bad value 'zz' for term 'event'" },
	{ "cpu/event=-1/", -EINVAL, "bad value '-1'" },
	{ "cpu//", -EINVAL, "no terms between cpu/ and /" },
	{ "cpu/event=1", -EINVAL, "malformed PMU event" },
	{ "nopmu/event=1/", -ENOENT, "unknown PMU 'nopmu'" },
	{ "{cycles,instructions", -EINVAL, "unbalanced '{'" },
	{ "cycles}", -EINVAL, "'}' without '{'" },
	{ "{cycles,{instructions}}", -EINVAL, "nested '{'" },
	{ "{cycles}{instructions}", -EINVAL, "unexpected '{'" },
	{ "{cycles,instructions}:x", -EINVAL, "unknown group modifier" },
	{ "cycles:x", -EINVAL, "unknown modifier ':x'" },
	/* issue 34: a second modifier was taken for a tracepoint ("unknown tracepoint") */
	{ "task-clock:u:k", -EINVAL, "unknown modifier ':u:k' in 'task-clock:u:k'" },
	{ "cycles:k:u", -EINVAL, "unknown modifier ':k:u'" },
	{ "topdown-fetch-bubbles:u:k", -EINVAL, "unknown modifier ':u:k'" },
	{ "sched:sched_switch:u:k", -EINVAL,
	  "unknown modifier ':u:k' in 'sched:sched_switch:u:k'" },
	{ "sched:sched_switch:q", -EINVAL, "unknown modifier ':q'" },
	/* issue 34: the second of two terms was taken silently */
	{ "cpu/event=0x3c,event=0x3c/", -EINVAL,
	  "term 'event' given twice in cpu/event=0x3c,event=0x3c/" },
	{ "cpu/config=1,config=2/", -EINVAL, "term 'config' given twice" },
	{ "cpu/cpu-cycles,cpu-cycles/", -EINVAL, "term 'cpu-cycles' given twice" },
	{ "sched:nope", -ENOENT, "unknown tracepoint 'sched:nope'" },
	{ "sched:sched_swtich", -ENOENT, "did you mean 'sched:sched_switch'" },
	{ "cylces", -ENOENT, "unknown event 'cylces'; did you mean 'cycles'" },
	{ "topdown-fetch-bubles", -ENOENT, "did you mean 'topdown-fetch-bubbles'" },
	{ "zzzzzzzzzzzz", -ENOENT, "unknown event 'zzzzzzzzzzzz' (pmbpf list shows every name)" },
	{ "{cycles,cycles}", -EEXIST, "given twice" },
};

static void test_bad_input(void)
{
	struct event_spec specs[PMBPF_MAX_EVENTS];
	struct events_error e;
	size_t i;
	int n;

	use_fake("x86");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		n = events__parse(bad[i].list, specs, PMBPF_MAX_EVENTS, &e);
		if (!CHECK_EQ_INT(n, bad[i].err) | !CHECK_SUBSTR(e.msg, bad[i].says))
			fprintf(stderr, "  (list %s)\n", bad[i].list);
		CHECK(!strchr(e.msg, '\n'));
	}
	/* at most three suggestions */
	n = events__parse("syscalls:sys_enter_writ", specs, PMBPF_MAX_EVENTS, &e);
	CHECK_EQ_INT(n, -ENOENT);
	CHECK_SUBSTR(e.msg, "'syscalls:sys_enter_write'");
}

static void test_groups(void)
{
	struct event_spec s[PMBPF_MAX_EVENTS];
	struct events_error e;

	use_fake("x86");
	CHECK_EQ_INT(events__parse("{cycles,instructions},{LLC-load-misses,instructions}", s,
				   PMBPF_MAX_EVENTS, &e),
		     4);
	CHECK_EQ_INT(s[0].group, 0);
	CHECK(s[0].leader);
	CHECK_EQ_INT(s[1].group, 0);
	CHECK(!s[1].leader);
	CHECK_EQ_INT(s[2].group, 1);
	CHECK(s[2].leader);
	CHECK_EQ_INT(s[3].group, 1);
	CHECK(!s[3].leader);

	CHECK_EQ_INT(events__parse("cs,{cpu/event=0x3c,umask=0/,cpu/event=0xc0/}:u,page-faults", s,
				   PMBPF_MAX_EVENTS, &e),
		     4);
	CHECK_EQ_INT(s[0].group, -1);
	CHECK_EQ_INT(s[1].group, 0);
	CHECK(s[1].exclude_kernel && !s[1].exclude_user);
	CHECK(s[2].exclude_kernel && !s[2].exclude_user);
	CHECK_EQ_U64(s[2].config, 0xc0);
	CHECK_EQ_INT(s[3].group, -1);
	CHECK(!s[3].exclude_kernel);

	CHECK_EQ_INT(events__parse("{sched:sched_switch,cs}", s, PMBPF_MAX_EVENTS, &e), 2);
	CHECK_EQ_U64(s[0].type, 2);
	CHECK(s[0].leader);
}

static void test_hybrid(void)
{
	const struct pmu *core, *atom;
	struct event_spec spec;
	char msg[320];

	use_fake("hybrid");
	CHECK_EQ_INT(pmus__nr_core(), 2);
	core = pmu__find("cpu_core");
	atom = pmu__find("cpu_atom");
	if (!CHECK(core && atom))
		return;
	CHECK(core->core && atom->core);
	CHECK(pmu__core_of_cpu(0) == core);
	CHECK(pmu__core_of_cpu(3) == core);
	CHECK(pmu__core_of_cpu(4) == atom);
	CHECK(pmu__core_of_cpu(7) == atom);
	CHECK(pmu__core_of_cpu(8) == NULL);
	CHECK(!pmu__has_cpu(core, 4));
	CHECK(!pmu__has_cpu(atom, 3));
	CHECK_EQ_INT(core->num_counters, 8);
	CHECK_EQ_INT(atom->num_counters, 6);

	/* a bare alias both core types have: one encoding per core PMU */
	CHECK_EQ_INT(event__parse_msg("cpu-cycles", &spec, msg, sizeof(msg)), 0);
	CHECK_EQ_INT(spec.type, 0); /* the generic name wins: opened per CPU by its PMU */
	CHECK_EQ_INT(event__parse_msg("instructions", &spec, msg, sizeof(msg)), 0);
	CHECK_EQ_INT(spec.nr_enc, 0);
	/* an alias only the atom cores have */
	CHECK_EQ_INT(event__parse_msg("ld_head_any", &spec, msg, sizeof(msg)), 0);
	CHECK_EQ_INT(spec.nr_enc, 1);
	CHECK_EQ_U64(spec.type, 10);
	/* split range config:0-7,32-35: 0x105 -> 0x05 | 0x1 << 32 */
	CHECK_EQ_U64(spec.config, 0x100000005ULL | 0xff00);
	CHECK(spec.enc[0].pmu >= 0);
	CHECK_EQ_INT(event__parse_msg("cpu_atom/event=0xabc,offcore=0x12345,xtra=1/", &spec, msg,
				      sizeof(msg)),
		     0);
	CHECK_EQ_U64(spec.config, 0xbc | (0xaULL << 32));
	CHECK_EQ_U64(spec.config1, 0x2345 | (0x1ULL << 32));
	CHECK_EQ_U64(spec.config2, 1ULL << 63);
	CHECK_EQ_INT(event__parse_msg("cpu_atom/event=0x1000/", &spec, msg, sizeof(msg)), -EINVAL);
	CHECK_SUBSTR(msg, "does not fit");
	/* an alias of both, by PMU */
	CHECK_EQ_INT(event__parse_msg("cpu_core/slots/", &spec, msg, sizeof(msg)), 0);
	CHECK_EQ_U64(spec.config, 0x400);
	CHECK_EQ_U64(spec.type, 4);
	CHECK_EQ_INT(event__parse_msg("cpu_atom/slots/", &spec, msg, sizeof(msg)), -EINVAL);
}

static void test_list_fake(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	use_fake("x86");
	if (!CHECK(f))
		return;
	events__list(f, NULL);
	fclose(f);
	CHECK_SUBSTR(buf, "PMU cpu (type 4, core)");
	CHECK_SUBSTR(buf, "topdown-fetch-bubbles");
	CHECK_SUBSTR(buf, "cpu/topdown-fetch-bubbles/");
	CHECK_SUBSTR(buf, "sched:* (2)");
	CHECK_SUBSTR(buf, "syscalls:* (2)");
	CHECK_SUBSTR(buf, "LLC-load-misses");
	free(buf);

	buf = NULL;
	f = open_memstream(&buf, &len);
	if (!CHECK(f))
		return;
	events__list(f, "energy");
	fclose(f);
	CHECK_SUBSTR(buf, "energy-pkg");
	CHECK(!strstr(buf, "topdown"));
	CHECK(!strstr(buf, "LLC-load-misses"));
	free(buf);
}

int main(int argc, char **argv)
{
	const char *src = __FILE__, *slash = strrchr(src, '/');

	snprintf(fake_root, sizeof(fake_root), "%.*s/fake-sysfs", slash ? (int)(slash - src) : 1,
		 slash ? src : ".");
	/* the generic names need no sysfs: start from an empty tree */
	use_fake("none");
	test_known();
	test_invalid();
	test_kinds();
	test_print_names_roundtrip();
	test_list();
	test_states();
	test_x86_encoding();
	test_bad_input();
	test_groups();
	test_hybrid();
	test_list_fake();
	return check_summary();
}
