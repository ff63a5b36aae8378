/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Command-line values shared by the subcommands. Each parser prints a
 * one-line error naming the option and the bad value, and returns -EINVAL.
 */
#ifndef __PMBPF_OPTIONS_H
#define __PMBPF_OPTIONS_H

#include <sys/types.h>
#include <linux/types.h>
#include "cmdopt.h"
#include "session.h"

/* Values of the long-only options (cmdopt.h): shared ones, then each command's. */
enum {
	OPT_RAW_TP = CMDOPT_LONG_ONLY, /* --raw-tp */
	OPT_HOT, /* --hot[=HZ] */
	OPT_DELAYS, /* --delays */
	OPT_NO_DELAYS, /* --no-delays */
	OPT_THREADS, /* --threads */
	OPT_CPI_WINDOW, /* --cpi-window N */
	OPT_CPI_K, /* --cpi-k K */
	OPT_THREAD_FOLD, /* --thread-fold MODE */
	OPT_WAKEUP_PROGS, /* --wakeup-progs */
	OPT_COMMAND, /* the first value free for a command's own */
};

struct cpi_opts;

/* -e LIST into s->events; an unknown name lists the valid ones. */
int options__events(const char *list, struct session_opts *s);
/*
 * Without -e: DEFAULT_EVENTS where a PMU counts, else (one line saying so)
 * DEFAULT_SW_EVENTS, as perf does.
 */
int options__default_events(struct session_opts *s);
/* An interval longer than an hour would show nothing for too long. */
#define INTERVAL_MAX_NS 3600000000000ULL
/* -i: a duration within [min_ns, max_ns] (max 0: INTERVAL_MAX_NS); -d: any duration. */
int options__interval(const char *arg, __u64 min_ns, __u64 max_ns, __u64 *ns);
int options__duration(const char *arg, __u64 *ns);
/* -p PID into *pid, which must be 0: one -p only. */
int options__pid(const char *arg, pid_t *pid);
int options__max_procs(const char *arg, __u32 *max);
/* A positive count (what: "count", "period" for the message) into *v. */
int options__count(const char *what, const char *arg, unsigned long long *v);
/* An integer from min to max, for option opt ("--window"). */
int options__int(const char *opt, const char *arg, int min, int max, int *out);
/*
 * top's and serve's live CPI outliers (cpi.h): --cpi-window and --cpi-k
 * into o. Returns 1 when c was one of them, 0 when not, -EINVAL on a bad value.
 */
int options__cpi(int c, const char *arg, struct cpi_opts *o);
/* -EINVAL (said in one line) when K is longer than the window. */
int options__cpi_check(const struct cpi_opts *o);
/* --thread-fold auto|on|off. */
int options__thread_fold(const char *arg, enum thread_fold *mode);
/* --hot[=HZ]: arg NULL for the default rate. */
int options__hot(const char *arg, __u32 *hz);
/*
 * The options every collecting subcommand takes the same way: -e, -p, -G
 * (resolved into cgroup_buf), -m, -M, --raw-tp, --hot, --thread-fold,
 * --wakeup-progs and -v. Returns 1 when c
 * was one of them, 0 when it is not, -EINVAL on a bad value.
 */
int options__session(int c, const char *arg, struct session_opts *s, char *cgroup_buf, size_t len);
/*
 * Their entries in a command's table (cmdopt.h), for the commands that word
 * them so: { OPTION_PID },
 */
#define OPTION_EVENTS                                                             \
	'e', "events", "LIST",                                                    \
		"comma-separated perf event names (default " DEFAULT_EVENTS ",\n" \
		"software events where there is no PMU)"
#define OPTION_METRICS \
	'M', "metrics", "LIST", "ipc, mpki, topdown: named metrics, each from one group"
#define OPTION_PID 'p', "pid", "PID", "only this process (filtered in the kernel)"
#define OPTION_CGROUP                                                               \
	'G', "cgroup", "PATH",                                                      \
		"only this cgroup v2 directory and its subtree, or a container's\n" \
		"(its id, or 12+ hex digits of it)"
#define OPTION_MAX_PROCS                                                       \
	'm', "max-procs", "N",                                                 \
		"process entries in the kernel map (default 65536; 10240 or\n" \
		"fewer for the per-CPU map of raw_tp, by possible CPUs)"
#define OPTION_RAW_TP  OPT_RAW_TP, "raw-tp", NULL, "use raw tracepoints even where tp_btf works"
#define OPTION_VERBOSE 'v', "verbose", NULL, "libbpf debug output"
#define OPTION_THREAD_FOLD                                                   \
	OPT_THREAD_FOLD, "thread-fold", "MODE",                              \
		"where switches credit counts: on or auto (the default:\n"   \
		"each thread's task storage, folded into the shared map),\n" \
		"off (the per-CPU map of the raw_tp flavour); for benchmarks"
#define OPTION_WAKEUP_PROGS                                             \
	OPT_WAKEUP_PROGS, "wakeup-progs", NULL,                         \
		"time run-queue waits with programs at sched_wakeup,\n" \
		"not from the scheduler's sched_info; for benchmarks"
#define OPTION_CPI_WINDOW                                              \
	OPT_CPI_WINDOW, "cpi-window", "N",                             \
		"CPI outliers: intervals of the baseline and of the\n" \
		"correlation (default 60, at least 20)"
#define OPTION_CPI_K \
	OPT_CPI_K, "cpi-k", "K", "CPI outliers: intervals in a row above mean + 2 sd (default 5)"
#define OPTION_HOT                                                       \
	OPT_HOT, "hot", "[=HZ]",                                         \
		"sample each process's hottest function at HZ per CPU\n" \
		"(default 19, 1 to 999; off by default)"

#define OPTION_DELAYS                                                       \
	OPT_DELAYS, "delays", NULL,                                         \
		"credit each run-queue wait to the processes that ran on\n" \
		"its CPU meanwhile (who delayed whom): the default, but\n"  \
		"with -p or -G only with this option"
#define OPTION_NO_DELAYS \
	OPT_NO_DELAYS, "no-delays", NULL, "do not credit run-queue waits (--delays)"
#define OPTION_THREADS                                                  \
	OPT_THREADS, "threads", NULL,                                   \
		"count each thread apart too (a kernel map entry per\n" \
		"thread): thread rows that sum to their process"

/*
 * The collection options record and top list in a row, in this order: one
 * line of their tables, "OPTIONS_COLLECTION,".
 */
/* clang-format off */
#define OPTIONS_COLLECTION		\
	{ OPTION_MAX_PROCS },		\
	{ OPTION_RAW_TP },		\
	{ OPTION_HOT },			\
	{ OPTION_DELAYS },		\
	{ OPTION_NO_DELAYS },		\
	{ OPTION_THREADS }
/* clang-format on */

struct cgroup_stats;
struct cgroup_row;

/*
 * The cgroups' own files (throttling, PSI) read into their rows of snap:
 * those shown(cg, ctx) says are shown or exported (shown NULL: all), then
 * the round's end.
 */
void cgroups__read_stats(struct cgroup_stats *s, struct snapshot *snap,
			 bool (*shown)(const struct cgroup_row *cg, const void *ctx),
			 const void *ctx);

#endif
