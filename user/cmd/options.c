// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include "cgroup.h"
#include "cpi.h"
#include "hot.h"
#include "options.h"
#include "pmu.h"
#include "util.h"

int options__events(const char *list, struct session_opts *s)
{
	struct events_error e;
	int n;

	n = events__parse(list, s->events, PMBPF_MAX_EVENTS, &e);
	if (n >= 0) {
		s->nr_events = n;
		return 0;
	}
	pr_err("%s\n", e.msg[0] ? e.msg : strerror(-n));
	return -EINVAL;
}

/* Append each -M metric's group to the events (a metric this CPU lacks adds none). */
static int add_metric_events(struct session_opts *s)
{
	struct event_spec specs[PMBPF_MAX_EVENTS];
	struct events_error e;
	int u, i, n, groups = 0;

	metrics__resolve(&s->metrics);
	for (i = 0; i < s->nr_events; i++)
		if (s->events[i].group >= groups)
			groups = s->events[i].group + 1;
	for (u = 0; u < s->metrics.nr; u++) {
		struct metric_use *mu = &s->metrics.m[u];

		if (!mu->def)
			continue;
		n = events__parse(mu->def->events, specs, PMBPF_MAX_EVENTS, &e);
		if (n < 0) {
			snprintf(mu->why, sizeof(mu->why), "%.150s", e.msg);
			mu->def = NULL;
			continue;
		}
		if (s->nr_events + n > PMBPF_MAX_EVENTS) {
			pr_err("-M %s needs %d more events: at most %d at once with -e (fewer -e events, or -M alone)\n",
			       mu->name, n, PMBPF_MAX_EVENTS);
			return -E2BIG;
		}
		mu->first = s->nr_events;
		mu->nr_events = n;
		for (i = 0; i < n; i++) {
			specs[i].group = groups;
			s->events[s->nr_events++] = specs[i];
		}
		groups++;
	}
	return 0;
}

int options__default_events(struct session_opts *s)
{
	int err = 0;

	if (!s->nr_events && !s->metrics.nr) {
		s->default_events = true;
		if (pmu__available())
			err = options__events(DEFAULT_EVENTS, s);
		else /* session__open says so, once the other options are known to be good */
			err = options__events(DEFAULT_SW_EVENTS, s);
	}
	if (!err && s->metrics.nr)
		err = add_metric_events(s);
	return err;
}

static void fmt_ns(char *buf, size_t len, __u64 ns)
{
	if (ns >= 3600000000000ULL && ns % 3600000000000ULL == 0)
		snprintf(buf, len, "%lluh", (unsigned long long)(ns / 3600000000000ULL));
	else if (ns >= 1000000000ULL && ns % 1000000000ULL == 0)
		snprintf(buf, len, "%llus", (unsigned long long)(ns / 1000000000ULL));
	else
		snprintf(buf, len, "%llums", (unsigned long long)(ns / 1000000ULL));
}

int options__interval(const char *arg, __u64 min_ns, __u64 max_ns, __u64 *ns)
{
	char lo[32], hi[32];

	if (!max_ns)
		max_ns = INTERVAL_MAX_NS;
	if (!duration__parse(arg, ns) && *ns >= min_ns && (!max_ns || *ns <= max_ns))
		return 0;
	fmt_ns(lo, sizeof(lo), min_ns);
	fmt_ns(hi, sizeof(hi), max_ns);
	pr_err("invalid interval '%s': give seconds (1, 0.5), 500ms, 2m or 1h, from %s to %s\n",
	       arg, lo, hi);
	return -EINVAL;
}

int options__duration(const char *arg, __u64 *ns)
{
	if (!duration__parse(arg, ns))
		return 0;
	pr_err("invalid duration '%s': give 10, 10s, 500ms, 2m, 1h or 1d, at most 366 days (366d)\n",
	       arg);
	return -EINVAL;
}

int options__count(const char *what, const char *arg, unsigned long long *v)
{
	if (!uint__parse(arg, 1, ULLONG_MAX, v))
		return 0;
	pr_err("invalid %s '%s': give a positive integer\n", what, arg);
	return -EINVAL;
}

int options__pid(const char *arg, pid_t *pid)
{
	unsigned long long v;

	if (*pid) {
		pr_err("-p given twice (%d, then %s): pmbpf follows one process; -G CGROUP takes a group\n",
		       *pid, arg);
		return -EINVAL;
	}
	if (uint__parse(arg, 1, INT_MAX, &v)) {
		pr_err("invalid PID '%s'\n", arg);
		return -EINVAL;
	}
	*pid = (pid_t)v;
	return 0;
}

int options__hot(const char *arg, __u32 *hz)
{
	unsigned long long v = HOT_DEFAULT_HZ;

	if (arg && uint__parse(arg, 1, HOT_MAX_HZ, &v)) {
		pr_err("invalid --hot '%s': give a rate of 1 to %d (Hz)\n", arg, HOT_MAX_HZ);
		return -EINVAL;
	}
	*hz = (__u32)v;
	return 0;
}

int options__thread_fold(const char *arg, enum thread_fold *mode)
{
	if (!strcmp(arg, "auto"))
		*mode = THREAD_FOLD_AUTO;
	else if (!strcmp(arg, "on"))
		*mode = THREAD_FOLD_ON;
	else if (!strcmp(arg, "off"))
		*mode = THREAD_FOLD_OFF;
	else {
		pr_err("unknown --thread-fold mode '%s': use auto, on or off\n", arg);
		return -EINVAL;
	}
	return 0;
}

int options__session(int c, const char *arg, struct session_opts *s, char *cgroup_buf, size_t len)
{
	switch (c) {
	case 'e':
		return options__events(arg, s) ?: 1;
	case 'p':
		return options__pid(arg, &s->pid) ?: 1;
	case 'G':
		if (cgroup__resolve(arg, cgroup_buf, len))
			return -EINVAL;
		s->cgroup = cgroup_buf;
		return 1;
	case 'm':
		return options__max_procs(arg, &s->max_procs) ?: 1;
	case 'M':
		return metrics__parse(arg, &s->metrics) ?: 1;
	case OPT_RAW_TP:
		s->force_raw_tp = true;
		return 1;
	case OPT_HOT:
		return options__hot(arg, &s->hot_hz) ?: 1;
	case OPT_DELAYS:
		s->delays = DELAYS_ON;
		return 1;
	case OPT_NO_DELAYS:
		s->delays = DELAYS_OFF;
		return 1;
	case OPT_THREADS:
		s->threads = true;
		return 1;
	case OPT_THREAD_FOLD:
		return options__thread_fold(arg, &s->thread_fold) ?: 1;
	case OPT_WAKEUP_PROGS:
		s->wakeup_progs = true;
		return 1;
	case 'v':
		s->verbose = true;
		return 1;
	}
	return 0;
}

int options__max_procs(const char *arg, __u32 *max)
{
	unsigned long long v;

	if (uint__parse(arg, 16, 1U << 22, &v)) {
		pr_err("invalid --max-procs '%s': give 16 to 4194304\n", arg);
		return -EINVAL;
	}
	*max = (__u32)v;
	return 0;
}

int options__int(const char *opt, const char *arg, int min, int max, int *out)
{
	unsigned long long v;

	if (uint__parse(arg, min, max, &v)) {
		pr_err("invalid %s '%s': give an integer from %d to %d\n", opt, arg, min, max);
		return -EINVAL;
	}
	*out = (int)v;
	return 0;
}

int options__cpi(int c, const char *arg, struct cpi_opts *o)
{
	switch (c) {
	case OPT_CPI_WINDOW:
		return options__int("--cpi-window", arg, CPI_MIN_BASELINE, CPI_MAX_WINDOW, &o->window) ?:
			       1;
	case OPT_CPI_K:
		return options__int("--cpi-k", arg, 1, CPI_MAX_WINDOW, &o->k) ?: 1;
	}
	return 0;
}

int options__cpi_check(const struct cpi_opts *o)
{
	if (o->k <= o->window)
		return 0;
	pr_err("--cpi-k %d is longer than --cpi-window %d\n", o->k, o->window);
	return -EINVAL;
}

void cgroups__read_stats(struct cgroup_stats *s, struct snapshot *snap,
			 bool (*shown)(const struct cgroup_row *cg, const void *ctx),
			 const void *ctx)
{
	size_t i;

	for (i = 0; i < snap->nr_cgroups; i++) {
		struct cgroup_row *cg = &snap->cgroups[i];

		if (!shown || shown(cg, ctx))
			cgroup_stats__read(s, cg->id, cg->path, &cg->stat);
	}
	cgroup_stats__end(s);
}
