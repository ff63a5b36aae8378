// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* perf-style event names to perf_event_attr type and config. */
#include <ctype.h>
#include <stdarg.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <linux/perf_event.h>
#include "events.h"
#include "pmu.h"

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

static int parse_generic(const char *name, struct event_spec *spec)
{
	size_t i;

	for (i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
		if (strcmp(name, named[i].name))
			continue;
		spec->type = named[i].type;
		spec->config = named[i].config;
		spec->kind = named[i].kind;
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
		return 0;
	}

	return parse_cache(name, spec);
}

/* Kinds the derived figures look for, from a PMU alias's name. */
static __u32 alias_kind(const char *name, bool core)
{
	__u32 kind = core ? EVENT_HW : 0;

	if (!strcmp(name, "cpu_cycles") || !strcmp(name, "cpu-cycles") || !strcmp(name, "cycles"))
		kind |= EVENT_CYCLES;
	else if (!strcmp(name, "inst_retired") || !strcmp(name, "instructions"))
		kind |= EVENT_INSTRUCTIONS;
	else if (strstr(name, "miss") || strstr(name, "refill") || strstr(name, "mis_pred"))
		kind |= EVENT_MISS;
	return kind;
}

static void add_enc(struct event_spec *spec, const struct pmu *p, const __u64 cfg[3])
{
	int nr;
	const struct pmu *all = pmus__all(&nr);
	struct event_enc *e;

	if (spec->nr_enc == EVENT_MAX_ENC)
		return;
	e = &spec->enc[spec->nr_enc++];
	e->pmu = (int)(p - all);
	e->type = p->type;
	e->config = cfg[0];
	e->config1 = cfg[1];
	e->config2 = cfg[2];
	if (spec->nr_enc == 1) {
		spec->type = e->type;
		spec->config = e->config;
		spec->config1 = e->config1;
		spec->config2 = e->config2;
	}
}

static void set_alias(struct event_spec *spec, const struct pmu_alias *a)
{
	spec->scale = a->scale;
	snprintf(spec->unit, sizeof(spec->unit), "%s", a->unit);
}

/* "pmu/terms/" */
static int parse_pmu_terms(const char *name, struct event_spec *spec, char *msg, size_t len)
{
	const char *slash = strchr(name, '/');
	size_t plen = (size_t)(slash - name), n = strlen(name);
	char pname[PMU_NAME_LEN], terms[256];
	const struct pmu_alias *alias = NULL;
	const struct pmu *p;
	__u64 cfg[3] = {};
	int err;

	if (name[n - 1] != '/' || slash == name + n - 1 || plen >= sizeof(pname) ||
	    n - plen - 2 >= sizeof(terms)) {
		snprintf(msg, len, "malformed PMU event '%s': write pmu/term=value,.../", name);
		return -EINVAL;
	}
	memcpy(pname, name, plen);
	pname[plen] = '\0';
	memcpy(terms, slash + 1, n - plen - 2);
	terms[n - plen - 2] = '\0';
	if (strchr(terms, '/')) {
		snprintf(msg, len, "malformed PMU event '%s': write pmu/term=value,.../", name);
		return -EINVAL;
	}
	p = pmu__find(pname);
	if (!p) {
		snprintf(msg, len, "unknown PMU '%s' in '%s' (pmbpf list shows this host's PMUs)",
			 pname, name);
		return -ENOENT;
	}
	err = pmu__encode(p, terms, cfg, &alias, msg, len);
	if (err)
		return err;
	add_enc(spec, p, cfg);
	spec->kind = p->core ? EVENT_HW : 0;
	if (alias) {
		set_alias(spec, alias);
		if (!strchr(terms, ','))
			spec->kind = alias_kind(alias->name, p->core);
	}
	return 0;
}

/* A bare sysfs alias: every core PMU that has it (hybrid), else the first PMU that does. */
static int parse_alias(const char *name, struct event_spec *spec, char *msg, size_t len)
{
	const struct pmu *all;
	int nr, i, pass;

	all = pmus__all(&nr);
	for (pass = 0; pass < 2 && !spec->nr_enc; pass++) {
		for (i = 0; i < nr; i++) {
			const struct pmu_alias *a;
			__u64 cfg[3] = {};

			if (all[i].core != (pass == 0))
				continue;
			a = pmu__alias(&all[i], name);
			if (!a)
				continue;
			if (pmu__encode(&all[i], a->terms, cfg, NULL, msg, len))
				return -EINVAL;
			add_enc(spec, &all[i], cfg);
			set_alias(spec, a);
			spec->kind = alias_kind(name, all[i].core);
			if (pass == 1)
				break;
		}
	}
	return spec->nr_enc ? 0 : -ENOENT;
}

static int parse_tracepoint(const char *name, struct event_spec *spec, char *msg, size_t len)
{
	char sys[EVENT_NAME_LEN];
	const char *colon = strchr(name, ':');
	int id;

	snprintf(sys, sizeof(sys), "%.*s", (int)(colon - name), name);
	id = tracepoint__id(sys, colon + 1, msg, len);
	if (id < 0)
		return id;
	spec->type = PERF_TYPE_TRACEPOINT;
	spec->config = (__u64)id;
	return 0;
}

/*
 * Levenshtein distance, or limit + 1 when it is above limit: the lengths
 * differ by more, or a whole row of the table is above it (a row's least is
 * a floor of the distance). Suggestions weigh a bad name against every name
 * there is (thousands of tracepoints): most are left after a row or two.
 */
static int edit_distance(const char *a, const char *b, int limit)
{
	int la = (int)strlen(a), lb = (int)strlen(b), i, j;
	int row[EVENT_NAME_LEN + 1], prev, tmp;

	if (la > EVENT_NAME_LEN || lb > EVENT_NAME_LEN || la - lb > limit || lb - la > limit)
		return limit + 1;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		int least;

		prev = row[0];
		row[0] = i;
		least = i;
		for (j = 1; j <= lb; j++) {
			int best = prev + (a[i - 1] != b[j - 1]);

			tmp = row[j];
			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			prev = tmp;
			row[j] = best;
			if (best < least)
				least = best;
		}
		if (least > limit)
			return limit + 1;
	}
	return row[lb];
}

struct near {
	const char *word;
	char best[3][EVENT_NAME_LEN + PMU_NAME_LEN];
	int dist[3];
};

static void near_add(struct near *n, const char *cand)
{
	int d, i, k, limit;

	limit = (int)strlen(n->word) / 3;
	if (limit < 2)
		limit = 2;
	d = edit_distance(n->word, cand, limit);
	if (d > limit)
		return;
	for (i = 0; i < 3; i++)
		if (n->dist[i] && !strcmp(n->best[i], cand))
			return;
	for (i = 0; i < 3; i++) {
		if (n->dist[i] && d + 1 >= n->dist[i])
			continue;
		for (k = 2; k > i; k--) {
			n->dist[k] = n->dist[k - 1];
			memcpy(n->best[k], n->best[k - 1], sizeof(n->best[k]));
		}
		n->dist[i] = d + 1;
		snprintf(n->best[i], sizeof(n->best[i]), "%s", cand);
		return;
	}
}

static void near_tracepoint(const char *sys, const char *name, void *ctx)
{
	char full[EVENT_NAME_LEN * 2 + 2];

	snprintf(full, sizeof(full), "%s:%s", sys, name);
	near_add(ctx, full);
}

static void suggest(const char *word, char *msg, size_t len)
{
	struct near n = { .word = word };
	const struct pmu *all;
	size_t i, ci, oi, off;
	int nr, p, a;
	char buf[EVENT_NAME_LEN + 32];

	for (i = 0; i < sizeof(named) / sizeof(named[0]); i++)
		near_add(&n, named[i].name);
	for (ci = 0; ci < sizeof(cache_names) / sizeof(cache_names[0]); ci++)
		for (oi = 0; oi < sizeof(cache_ops) / sizeof(cache_ops[0]); oi++) {
			snprintf(buf, sizeof(buf), "%s-%s", cache_names[ci], cache_ops[oi][1]);
			near_add(&n, buf);
			snprintf(buf, sizeof(buf), "%s-%s-misses", cache_names[ci],
				 cache_ops[oi][0]);
			near_add(&n, buf);
		}
	all = pmus__all(&nr);
	for (p = 0; p < nr; p++)
		for (a = 0; a < all[p].nr_aliases; a++)
			near_add(&n, all[p].aliases[a].name);
	if (strchr(word, ':')) {
		char sys[EVENT_NAME_LEN];

		snprintf(sys, sizeof(sys), "%.*s", (int)(strchr(word, ':') - word), word);
		tracepoints__each(sys, near_tracepoint, &n);
		if (!n.dist[0])
			tracepoints__each(NULL, near_tracepoint, &n);
	}
	off = strlen(msg);
	for (i = 0; i < 3 && n.dist[i] && off < len; i++)
		off += snprintf(msg + off, len - off, "%s'%s'", i ? ", " : "; did you mean ",
				n.best[i]);
	if (off < len)
		snprintf(msg + off, len - off, "%s(pmbpf list shows every name)",
			 n.dist[0] ? "? " : " ");
}

/* :u, :k, :uk (perf: any modifier also excludes the hypervisor) */
static int apply_modifiers(const char *mods, struct event_spec *spec)
{
	bool u = false, k = false;

	for (; *mods; mods++) {
		if (*mods == 'u')
			u = true;
		else if (*mods == 'k')
			k = true;
		else
			return -EINVAL;
	}
	spec->exclude_user = !u;
	spec->exclude_kernel = !k;
	spec->exclude_hv = true;
	return 0;
}

static bool is_modifier(const char *s)
{
	return *s && strspn(s, "uk") == strlen(s);
}

static bool alias_exists(const char *name)
{
	const struct pmu *all;
	int nr, i;

	all = pmus__all(&nr);
	for (i = 0; i < nr; i++)
		if (pmu__alias(&all[i], name))
			return true;
	return false;
}

/*
 * Where base, its last modifier taken off, still has one ("task-clock:u" of
 * "task-clock:u:k", "sched:sched_switch:u"): the offset of that ':', or -1.
 */
static int modifier_left(char *base)
{
	char *colon = strchr(base, ':');
	struct event_spec tmp;
	bool event;

	if (!colon || strchr(base, '/'))
		return -1;
	if (strchr(colon + 1, ':'))
		return (int)(strchr(colon + 1, ':') - base);
	*colon = '\0';
	event = !parse_generic(base, &tmp) || alias_exists(base);
	*colon = ':';
	return event ? (int)(colon - base) : -1;
}

int event__parse_msg(const char *name, struct event_spec *spec, char *msg, size_t len)
{
	char base[EVENT_NAME_LEN];
	const char *colon;
	int err;

	memset(spec, 0, sizeof(*spec));
	spec->group = -1;
	spec->scale = 1.0;
	msg[0] = '\0';
	if (!name || !*name || strlen(name) >= EVENT_NAME_LEN) {
		snprintf(msg, len, "%s event name", name && *name ? "too long an" : "empty");
		return -EINVAL;
	}
	snprintf(base, sizeof(base), "%s", name);
	colon = strrchr(base, ':');
	if (colon && is_modifier(colon + 1) && colon > base) {
		apply_modifiers(colon + 1, spec);
		base[colon - base] = '\0';
	} else if (strchr(base, '/') && is_modifier(strrchr(base, '/') + 1)) {
		/* perf also takes cpu/event=0x3c/u */
		apply_modifiers(strrchr(base, '/') + 1, spec);
		strrchr(base, '/')[1] = '\0';
	}
	err = modifier_left(base);
	if (err >= 0) {
		snprintf(msg, len, "unknown modifier '%s' in '%s' (give one: :u, :k or :uk)",
			 name + err, name);
		return -EINVAL;
	}
	if (strchr(base, '/')) {
		err = parse_pmu_terms(base, spec, msg, len);
	} else if (strchr(base, ':')) {
		err = parse_tracepoint(base, spec, msg, len);
		if (err == -ENOENT)
			suggest(base, msg, len);
	} else {
		err = parse_generic(base, spec);
		if (err == -ENOENT)
			err = parse_alias(base, spec, msg, len);
		if (err == -ENOENT) {
			snprintf(msg, len, "unknown event '%s'", base);
			suggest(base, msg, len);
		} else if (err == -EINVAL && !msg[0]) {
			snprintf(msg, len, "bad event '%s'", base);
		}
	}
	if (err)
		return err;
	set_name(spec, name);
	return 0;
}

int event__parse(const char *name, struct event_spec *spec)
{
	char msg[320];

	return event__parse_msg(name, spec, msg, sizeof(msg));
}

static bool same_event(const struct event_spec *a, const struct event_spec *b)
{
	return a->type == b->type && a->config == b->config && a->config1 == b->config1 &&
	       a->config2 == b->config2 && a->exclude_user == b->exclude_user &&
	       a->exclude_kernel == b->exclude_kernel;
}

static int fail(struct events_error *e, const char *at, int len, int err, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static int fail(struct events_error *e, const char *at, int len, int err, const char *fmt, ...)
{
	va_list ap;

	e->at = at;
	e->len = len;
	if (fmt) {
		va_start(ap, fmt);
		vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
		va_end(ap);
	}
	return err;
}

/* Length of one event at p: up to a ',' or '}' outside pmu/.../ */
static size_t event_len(const char *p)
{
	size_t i;
	bool in_pmu = false;

	for (i = 0; p[i]; i++) {
		if (p[i] == '/')
			in_pmu = !in_pmu;
		else if (!in_pmu && (p[i] == ',' || p[i] == '}' || p[i] == '{'))
			break;
	}
	return i;
}

/*
 * The same event in two groups ({cycles,instructions},{LLC-load-misses,instructions}):
 * the second is named "instructions#2", so every output keys events by a unique name.
 */
static void uniq_name(struct event_spec *specs, int n)
{
	char base[EVENT_NAME_LEN];
	int i, k = 1;

	snprintf(base, sizeof(base), "%s", specs[n].name);
	for (i = 0; i < n; i++)
		if (!strcmp(specs[i].name, specs[n].name) ||
		    (!strncmp(specs[i].name, base, strlen(base)) &&
		     specs[i].name[strlen(base)] == '#'))
			k++;
	if (k > 1 && k <= PMBPF_MAX_EVENTS && strlen(base) + 3 < EVENT_NAME_LEN) {
		size_t l = strlen(base);

		specs[n].name[l] = '#';
		specs[n].name[l + 1] = (char)('0' + k);
		specs[n].name[l + 2] = '\0';
	}
}

int events__parse(const char *list, struct event_spec *specs, int max, struct events_error *e)
{
	const char *p = list, *group_start = NULL;
	char name[EVENT_NAME_LEN + 1];
	int n = 0, i, group = -1, nr_groups = 0, first_in_group = 0;

	memset(e, 0, sizeof(*e));
	if (!list || !*list)
		return fail(e, list, 0, -EINVAL, "empty event list");
	for (;;) {
		size_t len;
		int err;

		if (*p == '{') {
			if (group >= 0)
				return fail(e, p, 1, -EINVAL, "nested '{' in '%s'", list);
			group_start = p;
			group = nr_groups++;
			first_in_group = n;
			p++;
		}
		len = event_len(p);
		if (!len)
			return fail(e, p, 0, -EINVAL, "empty event name in '%s'", list);
		if (len > EVENT_NAME_LEN)
			return fail(e, p, (int)len, -EINVAL, "event name '%.*s' too long", (int)len,
				    p);
		if (n == max)
			return fail(e, p, (int)len, -E2BIG, "at most %d events at once", max);
		memcpy(name, p, len);
		name[len] = '\0';
		err = event__parse_msg(name, &specs[n], e->msg, sizeof(e->msg));
		if (err)
			return fail(e, p, (int)len, err, NULL);
		specs[n].group = group;
		specs[n].leader = group >= 0 && n == first_in_group;
		for (i = 0; i < n; i++)
			if (specs[i].group == group && same_event(&specs[i], &specs[n]))
				return fail(e, p, (int)len, -EEXIST,
					    "event '%s' given twice (or under another name)", name);
		uniq_name(specs, n);
		n++;
		p += len;
		if (*p == '}') {
			const char *mods = p + 1;
			size_t mlen;

			if (group < 0)
				return fail(e, p, 1, -EINVAL, "'}' without '{' in '%s'", list);
			p++;
			if (*p == ':') {
				mlen = strcspn(mods + 1, ",");
				snprintf(name, sizeof(name), "%.*s", (int)mlen, mods + 1);
				for (i = first_in_group; i < n; i++)
					if (!is_modifier(name) || apply_modifiers(name, &specs[i]))
						return fail(
							e, mods, (int)mlen + 1, -EINVAL,
							"unknown group modifier '%s' (use :u, :k or :uk)",
							name);
				p += mlen + 1;
			}
			group = -1;
		}
		if (!*p)
			break;
		if (*p != ',')
			return fail(e, p, 1, -EINVAL, "unexpected '%c' in '%s'", *p, list);
		p++;
		if (!*p)
			return fail(e, p, 0, -EINVAL, "empty event name in '%s'", list);
	}
	if (group >= 0)
		return fail(e, group_start, (int)strlen(group_start), -EINVAL,
			    "unbalanced '{' in '%s': close the group with '}'", list);
	return n;
}

int events__parse_list(const char *list, struct event_spec *specs, int max, const char **bad,
		       int *bad_len)
{
	struct events_error e;
	int n = events__parse(list, specs, max, &e);

	*bad = e.at;
	*bad_len = e.len;
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
	if (spec->nr_enc)
		return "pmu";
	switch (spec->type) {
	case PERF_TYPE_HARDWARE:
		return "hardware";
	case PERF_TYPE_SOFTWARE:
		return "software";
	case PERF_TYPE_HW_CACHE:
		return "hw-cache";
	case PERF_TYPE_RAW:
		return "raw";
	case PERF_TYPE_TRACEPOINT:
		return "tracepoint";
	}
	return "other";
}

static bool matches(const char *word, const char *a, const char *b)
{
	return !word || strcasestr(a, word) || (b && strcasestr(b, word));
}

struct list_ctx {
	FILE *f;
	const char *word;
	char sys[EVENT_NAME_LEN];
	int n;
};

static void list_tracepoint(const char *sys, const char *name, void *arg)
{
	struct list_ctx *c = arg;

	if (c->word) {
		char full[2 * EVENT_NAME_LEN + 2];

		snprintf(full, sizeof(full), "%s:%s", sys, name);
		if (!strcasestr(full, c->word))
			return;
		fprintf(c->f, "  %s\n", full);
		c->n++;
		return;
	}
	/* without a word: one line per subsystem with its number of tracepoints */
	if (strcmp(c->sys, sys)) {
		if (c->sys[0])
			fprintf(c->f, "  %s:* (%d)\n", c->sys, c->n);
		snprintf(c->sys, sizeof(c->sys), "%s", sys);
		c->n = 0;
	}
	c->n++;
}

void events__list(FILE *f, const char *word)
{
	struct list_ctx c = { .f = f, .word = word };
	const struct pmu *all;
	size_t i, ci, oi;
	char a[64], b[64];
	int nr, p, k, shown;

	fprintf(f, "Generic events (hardware, software, hw-cache):\n");
	for (i = 0; i < sizeof(named) / sizeof(named[0]); i++)
		if (matches(word, named[i].name, NULL))
			fprintf(f, "  %-28s [%s]\n", named[i].name,
				named[i].type == PERF_TYPE_HARDWARE ? "hardware" : "software");
	for (ci = 0; ci < sizeof(cache_names) / sizeof(cache_names[0]); ci++)
		for (oi = 0; oi < sizeof(cache_ops) / sizeof(cache_ops[0]); oi++) {
			snprintf(a, sizeof(a), "%s-%s", cache_names[ci], cache_ops[oi][1]);
			snprintf(b, sizeof(b), "%s-%s-misses", cache_names[ci], cache_ops[oi][0]);
			if (matches(word, a, NULL))
				fprintf(f, "  %-28s [hw-cache]\n", a);
			if (matches(word, b, NULL))
				fprintf(f, "  %-28s [hw-cache]\n", b);
		}
	if (matches(word, "rNNNN raw", NULL))
		fprintf(f, "  %-28s [raw: hex event code, e.g. r01c2]\n", "rNNNN");

	all = pmus__all(&nr);
	for (p = 0; p < nr; p++) {
		const struct pmu *pm = &all[p];
		bool whole = matches(word, pm->name, NULL);

		for (k = 0, shown = 0; k < pm->nr_aliases; k++)
			shown += whole || matches(word, pm->aliases[k].name, NULL);
		if (!whole && !shown)
			continue;
		fprintf(f, "\nPMU %s (type %u%s%s%s):", pm->name, pm->type,
			pm->core ? ", core" : "", pm->cpulist[0] ? ", cpus " : "", pm->cpulist);
		for (k = 0; k < pm->nr_formats; k++)
			fprintf(f, "%s%s", k ? "," : "  terms ", pm->formats[k].name);
		fputc('\n', f);
		for (k = 0; k < pm->nr_aliases; k++) {
			const struct pmu_alias *al = &pm->aliases[k];

			if (!whole && !matches(word, al->name, NULL))
				continue;
			fprintf(f, "  %-28s %s/%s/  [%s", al->name, pm->name, al->name, al->terms);
			if (al->scale != 1.0 || al->unit[0])
				fprintf(f, "; scale %g %s", al->scale, al->unit);
			fprintf(f, "]\n");
		}
	}
	fprintf(f, "\nTracepoints (subsystem:name)%s:\n",
		word ? "" : ", per subsystem; pmbpf list SUBSYSTEM shows its names");
	tracepoints__each(NULL, list_tracepoint, &c);
	if (!word && c.sys[0])
		fprintf(f, "  %s:* (%d)\n", c.sys, c.n);
	fprintf(f,
		"\nModifiers: EVENT:u (user only), EVENT:k (kernel only); groups: {a,b},{c,d}\n");
}

void event__print_attr(FILE *f, const struct event_spec *spec)
{
	int i;

	fprintf(f, "%s: type %u config 0x%llx config1 0x%llx config2 0x%llx", spec->name,
		spec->type, (unsigned long long)spec->config, (unsigned long long)spec->config1,
		(unsigned long long)spec->config2);
	fprintf(f, " exclude_user %d exclude_kernel %d exclude_hv %d", spec->exclude_user,
		spec->exclude_kernel, spec->exclude_hv);
	if (spec->group >= 0)
		fprintf(f, " group %d%s", spec->group, spec->leader ? " leader" : "");
	if (spec->scale != 1.0 || spec->unit[0])
		fprintf(f, " scale %g unit '%s'", spec->scale, spec->unit);
	for (i = 1; i < spec->nr_enc; i++)
		fprintf(f, " | type %u config 0x%llx", spec->enc[i].type,
			(unsigned long long)spec->enc[i].config);
	fputc('\n', f);
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
